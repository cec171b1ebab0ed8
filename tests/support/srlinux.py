"""The srlinux platform tests' fabrics: example intents with their switches on srlinux; and
the SR Linux YANG oracle with /system in its scope (the ECMP hash options)."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import re
import shutil
from functools import cache
from pathlib import Path
from typing import Any

from flatfab.platforms.srlinux.render import as_tree
from flatfab.platforms.srlinux.sections import entries_of
from tests.support.on_platform import balancing_for
from tests.support.oracles import SRLINUX, SRLINUX_YANG, usable
from tests.support.paths import ROOT


def srlinux_intent(name: str, tmp: Path, family: str = "tomahawk-4",
                   leaves_only: bool = False) -> Path:
    """An example intent with its switches on srlinux (only its leaves with leaves_only)."""
    folder = tmp / f"{name}-{family}-{leaves_only}"
    if folder.exists():
        return folder
    shutil.copytree(ROOT / "intents" / name, folder)
    text = (folder / "fabric.yaml").read_text()
    if leaves_only:
        text = re.sub(r"(?m)^(  - name: leaf\d+)$", r"\1\n    platform: srlinux", text)
    else:
        text = re.sub(r"(?m)^platform: \w+", "platform: srlinux", text)
    (folder / "fabric.yaml").write_text(balancing_for(text, "srlinux"))
    qos = folder / "qos.yaml"
    body = qos.read_text() if qos.exists() else ""
    # SR Linux's deadlock recovery forwards (ignores pause frames): it is refused the default
    # drop action, so its switches say forward (EOS, which only drops, keeps drop)
    if "platform: eos" in text:
        body += ("overrides:\n  - devices: [\"leaf*\"]\n"
                 "    watchdog: {enabled: true, action: forward}\n")
    elif re.search(r"(?m)^pfc:", body):
        body = body.replace("action: drop", "action: forward")
    else:
        body += "pfc:\n  watchdog: {action: forward}\n"
    entry = f"  srlinux: {{family: {family}}}\n"
    body = (re.sub(r"(?m)^asics:\n", f"asics:\n{entry}", body) if "asics:" in body
            else body + f"asics:\n{entry}")
    qos.write_text(body)
    return folder


_BALANCING = re.compile(r"(?ms)^load_balancing:\n(?:[ #].*?\n|\n)*")


def balanced_intent(tmp: Path, example: str, balancing: str | None,
                    family: str = "tomahawk-4") -> Path:
    """`srlinux_intent` of `example` with its `load_balancing` replaced by `balancing` (YAML
    text; None: as the example has it), one folder per section."""
    base = srlinux_intent(example, tmp, family=family)
    if balancing is None:
        return base
    folder = tmp / f"{base.name}-{hashlib.sha256(balancing.encode()).hexdigest()[:12]}"
    if not folder.exists():
        shutil.copytree(base, folder)
        fabric = folder / "fabric.yaml"
        fabric.write_text(_BALANCING.sub("", fabric.read_text()) + balancing)
    return folder


# The shared validator judges interface, network-instance, routing-policy and qos and drops
# other top-level trees with a note; /system (srl_nokia-system, augmented by
# srl_nokia-load-balancing) is among its models, so a copy of it with /system in its scope
# judges the hash options by the same YANG and feature set (7220 IXR-H4).
SYSTEM_SCOPE = ("srl_nokia-system", "system")


@cache
def _with_system() -> Any:
    spec = importlib.util.spec_from_file_location("srlinux_yang_validate_system",
                                                  SRLINUX_YANG / "validate.py")
    assert spec is not None and spec.loader is not None
    module: Any = importlib.util.module_from_spec(spec)  # the validator's own names
    spec.loader.exec_module(module)
    module.SCOPE = {*module.SCOPE, SYSTEM_SCOPE}  # this copy's own: the shared one is untouched
    return module.Oracle(SRLINUX_YANG / "yang", SRLINUX_YANG / "features-off.txt")


def system_violations(text: str) -> list[str]:
    """Nokia's YANG verdict on a rendered config's /system replaces (skips the calling test
    where the oracle cannot run, as `usable` does)."""
    usable(SRLINUX)
    tree = as_tree(entries_of(json.loads(text)))
    if "system" not in tree:
        return []
    violations, _ = _with_system().validate({"system": tree["system"]})
    return list(violations)
