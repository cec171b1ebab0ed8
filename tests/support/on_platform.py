"""Example intents planned with their switches on one platform (the per-platform tests'
golden fabrics): every switch that does not name its own platform runs it."""

from __future__ import annotations

import re
import shutil
from functools import cache
from pathlib import Path
from tempfile import TemporaryDirectory

import yaml

from flatfab.intent.loader import load_intent
from flatfab.model.state import DeviceState, FabricState, HashField
from flatfab.plan.planner import plan
from flatfab.platforms.registry import PLATFORMS
from tests.support.paths import ROOT


def intent_on(source: Path, target: Path, platform: str, family: str) -> None:
    """Copy the intent in `source` to `target` with the fabric's platform and its ASIC
    family set; `qos.buffers` and `load_balancing` go where the platform (or family) refuses
    them at load."""
    for file in source.glob("*.yaml"):
        shutil.copy(file, target / file.name)
    fabric = yaml.safe_load((target / "fabric.yaml").read_text())
    fabric["platform"] = platform  # devices that name their own platform keep it (mixed)
    caps = PLATFORMS[platform].facts.capabilities
    if "ecmp_hash" in caps.unsupported:
        fabric.pop("load_balancing", None)  # refused at load there: the switch's own hashing
    elif "ecmp_hash_seed" in caps.unsupported and fabric.get("load_balancing"):
        fabric["load_balancing"].pop("seeds", None)  # the hash fields render, a seed cannot
    if caps.hash_fields is not None and fabric.get("load_balancing"):
        fabric["load_balancing"]["hash_fields"] = _fields_of(platform)  # a fixed set only
    (target / "fabric.yaml").write_text(yaml.safe_dump(fabric))
    qos_file = target / "qos.yaml"
    qos = (yaml.safe_load(qos_file.read_text()) if qos_file.exists() else None) or {}
    qos.setdefault("asics", {})[platform] = {"family": family}
    if "buffers" in caps.unsupported or "buffers" in caps.family_limits(family):
        qos.pop("buffers", None)  # refused at load there: the switch keeps its defaults
    qos_file.write_text(yaml.safe_dump(qos))


def _fields_of(platform: str) -> list[str]:
    """The first hash field list a platform with fixed lists renders, in the model's order."""
    allowed = PLATFORMS[platform].facts.capabilities.hash_fields
    assert allowed is not None
    return [f.value for f in HashField if f in allowed.sets[0]]


def balancing_for(text: str, platform: str) -> str:
    """fabric.yaml's text without `load_balancing` where some switches run a platform
    flatfab renders no hashing for (refused at load there), with the hash fields a platform
    of fixed lists takes."""
    caps = PLATFORMS[platform].facts.capabilities
    if "ecmp_hash" in caps.unsupported:
        text = re.sub(r"(?ms)^load_balancing:\n(?:[ #].*?\n|\n)*", "", text)
    elif caps.hash_fields is not None:
        text = re.sub(r"(?m)^(  hash_fields: ).*$",
                      lambda m: m.group(1) + "[" + ", ".join(_fields_of(platform)) + "]", text)
    return text


def fabric_text_on(text: str, platform: str) -> str:
    """fabric.yaml's text with `platform` for its switches (`balancing_for` it)."""
    return balancing_for(re.sub(r"(?m)^platform: \S+", f"platform: {platform}", text),
                         platform)


@cache
def fabric_on(name: str, platform: str, family: str) -> FabricState:
    """intents/<name> planned with its switches on `platform`."""
    with TemporaryDirectory() as tmp:
        intent_on(ROOT / "intents" / name, Path(tmp), platform, family)
        return plan(load_intent(Path(tmp), known_platforms=PLATFORMS))


def switches_on(state: FabricState, platform: str) -> list[DeviceState]:
    return [d for d in state.devices.values() if d.platform == platform]
