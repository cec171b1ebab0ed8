"""The static lossless catalog catches a disagreement across every vendor boundary of the
multivendor fabric: one switch of each newer OS given another PFC set is named, with the
link to its other-vendor neighbour, before anything is pushed."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from flatfab.checks import CheckContext, Stage, run_checks
from flatfab.intent.loader import load_intent
from flatfab.model.state import FabricState
from flatfab.plan.planner import plan
from flatfab.platforms.registry import PLATFORMS
from tests.support.paths import ROOT

FABRIC = ROOT / "intents" / "multivendor"


def _plan(folder: Path) -> FabricState:
    return plan(load_intent(folder, known_platforms=PLATFORMS))


def _static(state: FabricState) -> list[tuple[str, str | None]]:
    found = run_checks(CheckContext(state=state, plan=state, stage=Stage.STATIC))
    return sorted({(f.check, f.device) for f in found})


def test_every_switch_platform_is_in_the_fabric_and_it_is_clean() -> None:
    state = _plan(FABRIC)
    switches = {d.platform for d in state.devices.values() if d.role.value != "host"}
    assert switches == {n for n, p in PLATFORMS.items() if p.facts.role == "switch"}
    assert _static(state) == []


@pytest.mark.parametrize("device", ["spine1", "spine2", "leaf4", "leaf5"])
def test_a_pfc_disagreement_on_a_newer_os_is_named_across_the_boundary(
        tmp_path: Path, device: str) -> None:
    folder = tmp_path / "multivendor"
    shutil.copytree(FABRIC, folder)
    qos = folder / "qos.yaml"
    text = qos.read_text(encoding="utf-8")
    # PFC on 3 and 4 on this switch alone: its neighbours of other vendors pause on 3 only
    text = text.replace("overrides:\n", f"overrides:\n  - devices: [{device}]\n"
                        "    pfc: [3, 4]\n", 1)
    qos.write_text(text, encoding="utf-8")
    state = _plan(folder)
    platform = state.devices[device].platform
    found = run_checks(CheckContext(state=state, plan=state, stage=Stage.STATIC),
                       only=["pfc.link_symmetry"])
    # every fabric link of the switch is named, each to a switch of another OS
    fabric_links = {link.id for link in state.links
                    if link.kind.value == "fabric" and link.parent is None
                    and device in (link.a.device, link.b.device)}
    named = {f.link for f in found}
    assert fabric_links and fabric_links <= named, (platform, fabric_links - named)
    for link in state.links:
        if link.id in fabric_links:
            other = link.b.device if link.a.device == device else link.a.device
            assert state.devices[other].platform != platform, link.id
