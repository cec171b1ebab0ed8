"""The mixed fabric (EOS spines, SONiC and FRR leaves, Linux hosts): one plan, one catalog.

The lossless catalog judges both ends of every link whatever their vendors, so a spine and a
leaf of different OSes that disagree on one link are named, by check, device and port.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from flatfab.checks import CheckContext, Finding, Stage, run_checks
from flatfab.intent.loader import load_intent
from flatfab.model.state import FabricState
from flatfab.plan.planner import plan
from flatfab.platforms.registry import PLATFORMS
from tests.support.paths import ROOT

MIXED = ROOT / "intents" / "mixed"


def _plan(tmp_path: Path, qos_extra: str = "") -> FabricState:
    target = tmp_path / "mixed"
    shutil.copytree(MIXED, target)
    if qos_extra:
        with (target / "qos.yaml").open("a", encoding="utf-8") as handle:
            handle.write(qos_extra)
    return plan(load_intent(target, known_platforms=PLATFORMS))


def _static(state: FabricState) -> list[Finding]:
    return run_checks(CheckContext(state=state, plan=state, stage=Stage.STATIC))


def test_every_vendor_is_in_the_mixed_fabric(tmp_path: Path) -> None:
    state = _plan(tmp_path)
    assert {d.platform for d in state.devices.values()} == {"eos", "sonic", "frr",
                                                            "linux_host"}
    spine = state.devices["spine1"]
    assert "Loopback0" in spine.interfaces and "Ethernet1" in spine.interfaces
    assert "Ethernet256" in state.devices["leaf1"].interfaces  # SONiC: 8 lanes a port
    assert "swp33" in state.devices["leaf3"].interfaces
    assert _static(state) == []


def test_a_pfc_priority_that_differs_across_vendors_is_named(tmp_path: Path) -> None:
    state = _plan(tmp_path, "overrides:\n  - devices: [spine1]\n    pfc: [4]\n")
    findings = [f for f in _static(state) if f.check == "pfc.link_symmetry"]
    assert findings, "an EOS spine with PFC 4 facing SONiC leaves with PFC 3 must be found"
    named = {(f.device, f.port) for f in findings}
    assert ("spine1", "Ethernet1") in named or ("leaf1", "Ethernet256") in named
    assert all(f.device in {"spine1", "leaf1", "leaf2", "leaf3", "leaf4"} for f in findings)


@pytest.mark.parametrize("device", ["spine2", "leaf2"])
def test_a_dscp_map_that_differs_on_one_vendor_is_named(tmp_path: Path, device: str) -> None:
    state = _plan(tmp_path, f"overrides:\n  - devices: [{device}]\n    dscp_to_tc: {{26: 0}}\n")
    findings = [f for f in _static(state) if f.device == device]
    assert {f.check for f in findings} & {"qos.class_chain", "qos.dscp_map"}
