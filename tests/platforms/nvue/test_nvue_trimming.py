"""Packet trimming on nvue: qos.yaml `profile: lossy-trimming` rendered as `system forwarding
packet-trim` (state, size, switch-priority, remark dscp), each port's `packet-trim
egress-eligibility traffic-class` and, where a switch's ports re-mark trimmed packets
differently, `qos remark` profiles bound per port; judged by nvueschema on every release of
the target line, pushed through the double and read back into `DeviceQos.trimming`,
`PortQos.trim_dscp` and the RoCE queue's trimming profile, so `trim.dscp`, `trim.queue` and
`trim.intent` judge an nvue switch.

NVUE facts: the Cumulus Linux user guide's "Packet Trimming" page (5.14-5.19: global and port
level remarking, remark profiles without `rewrite`, sizes 256-1024 in steps of 4, Spectrum-4
and later, NVUE's default profile) and the NVUE reference's "Packet Trimming" set commands;
key names, value types and the releases that have them: nvueschema `models/v5_14.py`..
`v5_18.py` (`/system/forwarding/packet-trim`, `/interface/{id}/packet-trim`,
`/qos/remark/{profile}`; none before 5.14).
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

import pytest
import yaml

from flatfab.checks import CheckContext, Finding, Stage, run_checks
from flatfab.errors import InputError
from flatfab.intent.loader import load_intent
from flatfab.model.state import (
    PROFILE_EGRESS_LOSSY,
    PROFILE_EGRESS_TRIM,
    TRIM,
    DeviceState,
    FabricState,
    Trimming,
)
from flatfab.plan.planner import plan
from flatfab.platforms.nvue import PLATFORM
from flatfab.platforms.nvue.collect import TRIM_SHOWN
from flatfab.platforms.nvue.oracle import violations
from flatfab.platforms.nvue.render import RELEASES, NvueRenderError, render, tree
from flatfab.platforms.registry import PLATFORMS
from tests.doubles.nvue import FIXTURES, NvueDouble, double_for, synthesized
from tests.support.checks import live_findings
from tests.support.nvue import collected, push, switches, writable_driver
from tests.support.on_platform import fabric_on, intent_on
from tests.support.oracles import ORACLES, usable
from tests.support.paths import ROOT

TRIM_CHECKS = ["trim.dscp", "trim.queue", "trim.intent"]
ROCE_QUEUE = 3  # the lab's RoCE priority and queue
DEFAULT_PROFILE = FIXTURES / "variants" / "trim_default_profile"


def _write_trimming(target: Path, family: str, trimming: dict[str, Any] | None = None) -> Path:
    """The lab on nvue in profile lossy-trimming (as test_congestion_profile_renders.py's
    `_trimming_intent`), with `trimming` keys of its own."""
    intent_on(ROOT / "intents" / "lab", target, "nvue", family)
    qos = yaml.safe_load((target / "qos.yaml").read_text())
    qos["profile"] = "lossy-trimming"
    qos["pfc"].pop("priorities")
    qos["ets"].pop("strict")  # the profile's own: CNP's and the trim TC
    if trimming:
        qos["trimming"] = trimming
    (target / "qos.yaml").write_text(yaml.safe_dump(qos))
    return target


@cache
def _fabric(family: str = "spectrum-4", symmetric: bool = False) -> FabricState:
    with TemporaryDirectory() as tmp:
        keys = {"dscp_to_hosts": 45, "dscp_to_fabric": 45} if symmetric else None
        return plan(load_intent(_write_trimming(Path(tmp), family, keys),
                                known_platforms=PLATFORMS))




def _pushed(device: DeviceState) -> NvueDouble:
    return double_for(device, outputs=synthesized(device))


def _findings(plan_: FabricState, seen: DeviceState) -> list[Finding]:
    return [f for f in live_findings(plan_, seen, only=TRIM_CHECKS) if f.device == seen.name]


def _ports(device: DeviceState) -> list[str]:
    return sorted(n for n, i in device.interfaces.items()
                  if i.qos is not None and i.parent is None)


# ---- render, judged by nvueschema ---------------------------------------------------------


@pytest.mark.parametrize("family", ["spectrum-4", "spectrum-5"])
def test_every_switch_renders_trimming_the_oracle_accepts(family: str) -> None:
    fabric = _fabric(family)
    oracle = usable(ORACLES["nvue"])
    for device in switches(fabric):
        text = PLATFORM.render(device)
        found = oracle.validate(device.name, text, device)
        assert found == [], "\n".join(found)
        assert "packet-trim" in text and "egress-eligibility" in text


def test_a_leaf_remarks_per_port_and_a_spine_globally() -> None:
    fabric = _fabric()
    leaf = tree(fabric.devices["leaf1"], PLATFORM.names)
    assert leaf["system"]["forwarding"]["packet-trim"] == {
        "state": "enabled", "size": 256, "switch-priority": 7, "remark": {"dscp": "port-level"}}
    remark = leaf["qos"]["remark"]
    marked = {}
    for port in _ports(fabric.devices["leaf1"]):
        entry = leaf["interface"][port]
        # the RoCE queue is the one eligible class: it trims, the others drop
        assert entry["packet-trim"] == {"egress-eligibility": {
            "traffic-class": {str(ROCE_QUEUE): {}}}}
        profile = remark[entry["qos"]["remark"]["profile"]]
        assert "rewrite" not in profile  # the page: a trimming remark profile sets none
        marked[port] = profile["switch-priority"]["7"]["dscp"]
    assert marked == {"swp1": 44, "swp2": 44, "swp51": 45, "swp52": 45}
    assert len(remark) == 2
    spine = tree(fabric.devices["spine1"], PLATFORM.names)
    assert spine["system"]["forwarding"]["packet-trim"]["remark"] == {"dscp": 45}
    assert "remark" not in spine["qos"]  # every port towards leaves: one DSCP
    assert all("remark" not in e.get("qos", {}) for e in spine["interface"].values())


def test_symmetric_trim_dscps_remark_globally_on_every_switch() -> None:
    fabric = _fabric(symmetric=True)
    oracle = usable(ORACLES["nvue"])
    for device in switches(fabric):
        nvue = tree(device, PLATFORM.names)
        assert nvue["system"]["forwarding"]["packet-trim"]["remark"] == {"dscp": 45}
        assert "remark" not in nvue["qos"]
        assert oracle.validate(device.name, PLATFORM.render(device), device) == []


def test_the_lossless_lab_renders_no_trimming() -> None:
    for device in switches(fabric_on("lab", "nvue", "spectrum-4")):
        text = PLATFORM.render(device)
        assert "packet-trim" not in text and "remark" not in text


def test_the_static_checks_find_nothing() -> None:
    fabric = _fabric()
    found = list(run_checks(CheckContext(state=fabric, plan=fabric, stage=Stage.STATIC)))
    assert found == [], [(f.check, f.message) for f in found]


def test_the_oracle_refuses_a_trim_key_or_value_nvue_does_not_have() -> None:
    nvue = tree(_fabric().devices["leaf1"], PLATFORM.names)
    trim = nvue["system"]["forwarding"]["packet-trim"]
    trim["state"] = "on"  # not packet-trim's word in any release
    assert any("packet-trim" in v for v in violations(nvue, "v5_15"))
    trim["state"] = "enabled"
    trim["size"] = 1028
    assert any("size" in v for v in violations(nvue, "v5_18"))
    trim["size"] = 256
    trim["remark"]["dscp"] = "per-port"
    assert any("remark" in v for v in violations(nvue, "v5_16"))
    trim["remark"]["dscp"] = "port-level"
    assert violations(nvue, "v5_17") == []


def test_packet_trim_came_in_5_14() -> None:
    """The trimming keys alone: 5.14's schema has them in the words flatfab writes (its
    `state` is enabled/disabled already), 5.13's has none."""
    nvue = tree(_fabric().devices["leaf1"], PLATFORM.names)
    alone = {"system": {"forwarding": {"packet-trim": nvue["system"]["forwarding"][
                 "packet-trim"]}},
             "interface": {"swp1": {"type": "swp", "packet-trim": nvue["interface"]["swp1"][
                 "packet-trim"]}},
             "qos": {"remark": nvue["qos"]["remark"]}}
    assert violations(alone, "v5_14") == []
    assert violations(alone, "v5_13") == ["/system/forwarding/packet-trim: dropped",
                                          "/interface/swp1/packet-trim: dropped"]


# ---- refused ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("family", "why"), [
    ("spectrum-3", "Cumulus Linux trims packets on Spectrum-4 and Spectrum-5 only, not "
                   "Spectrum-3"),
    ("spectrum-1", "Cumulus Linux trims packets on Spectrum-4 and Spectrum-5 only, not "
                   "Spectrum-1"),
    ("generic", "family 'generic' names no ASIC; Cumulus Linux trims packets on Spectrum-4 "
                "and Spectrum-5 only"),
])
def test_trimming_before_spectrum_4_is_refused_at_load(tmp_path: Path, family: str,
                                                       why: str) -> None:
    with pytest.raises(InputError) as caught:
        load_intent(_write_trimming(tmp_path, family), known_platforms=PLATFORMS)
    [problem] = caught.value.problems
    assert problem.file.endswith("qos.yaml") and problem.path == "profile"
    assert problem.reason == (f"platform nvue on {family} hardware cannot do this "
                              f"(packet_trimming): {why}")


def test_the_5_14_line_refuses_trimming_with_why() -> None:
    """5.14 has packet-trim, but its spelling is also 5.6-5.13's, which have none."""
    device = _fabric().devices["leaf1"]
    with pytest.raises(NvueRenderError, match=r"^leaf1: Cumulus Linux has packet trimming from "
                                              r"5\.14 on; the 5\.14 spelling is also that of "
                                              r"5\.6-5\.13, which have none$"):
        render(device, PLATFORM.names, RELEASES["5.14"])


def test_a_size_nvue_cannot_take_is_refused_at_load(tmp_path: Path) -> None:
    folder = _write_trimming(tmp_path, "spectrum-4", {"size": 258})
    with pytest.raises(InputError) as caught:
        load_intent(folder, known_platforms=PLATFORMS)
    [problem] = caught.value.problems
    assert problem.file.endswith("qos.yaml") and problem.path == "trimming.size"
    assert "steps of 4" in problem.reason


def test_a_size_that_reaches_the_render_is_one_render_error(tmp_path: Path) -> None:
    # planned without the platforms' capability check: the render still refuses it
    fabric = plan(load_intent(_write_trimming(tmp_path, "spectrum-4", {"size": 258})))
    with pytest.raises(NvueRenderError, match=r"^leaf1: NVUE trims packets to a size in steps "
                                              r"of 4 bytes; the plan gives 258$"):
        PLATFORM.render(fabric.devices["leaf1"])


def test_a_trim_queue_other_than_the_priority_s_class_is_one_render_error() -> None:
    device = _fabric().devices["leaf1"].model_copy(deep=True)
    assert device.qos is not None
    device.qos.trimming = Trimming(size=256, tc=7, queue=6)
    with pytest.raises(NvueRenderError, match=r"^leaf1: NVUE sends trimmed packets \(switch "
                                              r"priority 7\) in traffic class 7, the plan in "
                                              r"queue 6$"):
        PLATFORM.render(device)


# ---- read back ------------------------------------------------------------------------------


@pytest.mark.parametrize("symmetric", [False, True], ids=["asymmetric", "symmetric"])
def test_every_switch_reads_back_as_planned_and_the_trim_checks_pass(symmetric: bool) -> None:
    fabric = _fabric(symmetric=symmetric)
    for device in switches(fabric):
        double = _pushed(device)
        seen = collected(device, double)
        assert seen.errors == [], seen.errors
        assert seen.qos is not None and device.qos is not None
        assert seen.qos.trimming == device.qos.trimming == Trimming(size=256, tc=7, queue=7)
        assert seen.qos.profiles[PROFILE_EGRESS_TRIM].discard == TRIM
        for port in _ports(device):
            got, want = seen.interfaces[port].qos, device.interfaces[port].qos
            assert got is not None and want is not None
            assert got.trim_dscp == want.trim_dscp, port
            assert got.queues == want.queues, port
            assert got.queues[ROCE_QUEUE].profile == PROFILE_EGRESS_TRIM
        assert TRIM_SHOWN not in double.commands  # the applied config states every field
        assert _findings(fabric, seen) == []


def test_the_lossless_lab_reads_back_no_trimming() -> None:
    lab = fabric_on("lab", "nvue", "spectrum-4")
    leaf1 = lab.devices["leaf1"]
    seen = collected(leaf1, double_for(leaf1))
    assert seen.qos is not None and seen.qos.trimming is None
    assert PROFILE_EGRESS_TRIM not in seen.qos.profiles
    assert all(i.qos.trim_dscp is None for i in seen.interfaces.values() if i.qos)


def test_a_switch_that_trims_otherwise_is_named_by_the_trim_checks() -> None:
    fabric = _fabric()
    leaf1 = fabric.devices["leaf1"]
    double = _pushed(leaf1)
    trim = double.applied["system"]["forwarding"]["packet-trim"]
    trim["size"] = 512
    host = double.applied["interface"]["swp1"]["qos"]["remark"]["profile"]
    double.applied["qos"]["remark"][host]["switch-priority"]["7"]["dscp"] = 26  # RoCE's
    del double.applied["interface"]["swp51"]["packet-trim"]
    seen = collected(leaf1, double)
    assert seen.qos is not None and seen.qos.trimming == Trimming(size=512, tc=7, queue=7)
    swp51 = seen.interfaces["swp51"].qos
    assert swp51 is not None and swp51.queues[ROCE_QUEUE].profile == PROFILE_EGRESS_LOSSY
    found = {(f.check, f.message) for f in _findings(fabric, seen)}
    assert ("trim.intent", "leaf1 trims 512 B into TC 7, queue 7, the intent says 256 B into "
            "TC 7, queue 7") in found
    assert {f for f in found if f[0] == "trim.dscp" and "swp1" in f[1] and "26" in f[1]}
    assert {f for f in found if f[0] == "trim.queue" and "swp51" in f[1]
            and "drops what it cannot admit" in f[1]}
    assert not {f for f in found if f[0] == "trim.queue" and "swp52" in f[1]}


def test_a_switch_with_trimming_disabled_does_not_trim() -> None:
    fabric = _fabric()
    spine1 = fabric.devices["spine1"]
    double = _pushed(spine1)
    double.applied["system"]["forwarding"]["packet-trim"]["state"] = "disabled"
    seen = collected(spine1, double)
    assert seen.qos is not None and seen.qos.trimming is None
    port = seen.interfaces["swp1"].qos
    assert port is not None and port.trim_dscp is None
    assert port.queues[ROCE_QUEUE].profile == PROFILE_EGRESS_LOSSY
    assert seen.qos.profiles[PROFILE_EGRESS_TRIM].discard is None  # planned, not held
    checks = {f.check for f in _findings(fabric, seen)}
    assert checks == {"trim.queue", "trim.intent"}


def test_nvue_s_default_profile_is_read_from_nv_show() -> None:
    """An operator's `packet-trim profile packet-trim-default` and nothing else: what the
    profile sets (on, 256 bytes, switch priority 4, DSCP 11, classes 1-3 of every port) is
    read from `nv show system forwarding packet-trim`, asked only then."""
    fabric = _fabric()
    spine1 = fabric.devices["spine1"]
    double = _pushed(spine1)
    applied = json.loads((DEFAULT_PROFILE / "applied_packet-trim.json").read_text())
    double.applied["system"]["forwarding"]["packet-trim"] = applied["system"]["forwarding"][
        "packet-trim"]
    for entry in double.applied["interface"].values():
        entry.pop("packet-trim", None)
    shown = DEFAULT_PROFILE / "nv_show_system_forwarding_packet-trim.json"
    double.outputs[TRIM_SHOWN] = shown.read_text(encoding="utf-8")
    seen = collected(spine1, double)
    assert seen.errors == [] and TRIM_SHOWN in double.commands
    assert seen.qos is not None and seen.qos.trimming == Trimming(size=256, tc=4, queue=4)
    port = seen.interfaces["swp1"].qos
    assert port is not None and port.trim_dscp == 11
    assert {q for q, s in port.queues.items() if s.profile == PROFILE_EGRESS_TRIM} == {1, 2, 3}
    # trims into TC 4 (not strict, not the intent's 7) with DSCP 11, not the planned 45
    found = {(f.check, f.message) for f in _findings(fabric, seen)}
    assert {check for check, _ in found} == {"trim.queue", "trim.intent"}
    assert ("trim.intent", "spine1 trims 256 B into TC 4, queue 4, the intent says 256 B "
            "into TC 7, queue 7") in found


def test_an_unreadable_default_profile_is_not_judged_with_why() -> None:
    spine1 = _fabric().devices["spine1"]
    double = _pushed(spine1)
    double.applied["system"]["forwarding"]["packet-trim"] = {"state": "enabled"}
    double.outputs[TRIM_SHOWN] = "Error: nvued is busy\n"
    seen = collected(spine1, double)
    why = f"{TRIM_SHOWN}: no JSON in the output ('Error: nvued is busy')"
    assert [e for e in seen.errors if e.startswith("trimming: ")] == [
        f"trimming: {why}: the packet trimming is not judged"]
    assert seen.qos is not None and seen.qos.unknown["trimming"] == why
    double.outputs[TRIM_SHOWN] = json.dumps({"state": "enabled", "size": 256})
    seen = collected(spine1, double)
    assert any("states packet-trim switch-priority" in e for e in seen.errors)
    assert seen.qos is not None and "switch-priority" in seen.qos.unknown["trimming"]


# ---- push, drift and change notes -----------------------------------------------------------




def test_a_push_turns_trimming_on_and_a_lossless_plan_takes_it_away() -> None:
    leaf1 = _fabric().devices["leaf1"]
    lossless = fabric_on("lab", "nvue", "spectrum-4").devices["leaf1"]
    double = double_for(lossless)  # the lossless lab, pushed
    intended = PLATFORM.render(leaf1)
    notes = PLATFORM.change_notes(*PLATFORM.drift_texts(writable_driver(double), intended))
    assert any(n.startswith("system forwarding packet-trim enabled: NVUE recirculates")
               for n in notes)
    push(double, intended)
    running, wanted = PLATFORM.drift_texts(writable_driver(double), intended)
    assert running == wanted
    assert double.applied["system"]["forwarding"]["packet-trim"]["state"] == "enabled"
    # drift in the trimming is drift of the system section
    double.applied["system"]["forwarding"]["packet-trim"]["size"] = 512
    running, wanted = PLATFORM.drift_texts(writable_driver(double), intended)
    drifted = {name for name, lines in PLATFORM.sections(running).items()
               if lines != PLATFORM.sections(wanted).get(name)}
    assert drifted == {"system"}
    back = PLATFORM.render(lossless)
    notes = PLATFORM.change_notes(*PLATFORM.drift_texts(writable_driver(double), back))
    assert any(n.startswith("system forwarding packet-trim removed") for n in notes)
    push(double, back)
    assert "packet-trim" not in double.applied["system"]["forwarding"]
    assert all("packet-trim" not in e for e in double.applied["interface"].values())
    assert "remark" not in double.applied["qos"]
    running, wanted = PLATFORM.drift_texts(writable_driver(double), back)
    assert running == wanted


def test_a_plan_without_hashing_still_owns_the_trimming() -> None:
    """A plan without `load_balancing` leaves the switch's ECMP hash alone, not its
    trimming: drift compares `packet-trim` and keeps the operator's hash out."""
    leaf1 = _fabric().devices["leaf1"].model_copy(update={"lb": None})
    double = double_for(leaf1)
    double.applied["system"]["forwarding"]["ecmp-hash"] = {"source-port": "disabled"}
    intended = PLATFORM.render(leaf1)
    running, wanted = PLATFORM.drift_texts(writable_driver(double), intended)
    assert running == wanted
    push(double, intended)
    forwarding = double.applied["system"]["forwarding"]
    assert forwarding["ecmp-hash"] == {"source-port": "disabled"}
    assert forwarding["packet-trim"]["state"] == "enabled"
