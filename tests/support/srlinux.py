"""The srlinux platform tests' fabrics: example intents with their switches on srlinux."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from tests.support.on_platform import balancing_for
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
