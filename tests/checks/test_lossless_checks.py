"""The lossless check catalog: clean plans pass, each fault in an intent is named statically,
drift in collected state is named live (and marked virtual where the lab's ASIC holds it),
and every check stays linear in the size of the fabric."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from flatfab.checks import CATALOG, CheckContext, Finding, Stage, run_checks
from flatfab.checks.base import Scope, Severity
from flatfab.intent.loader import load_intent
from flatfab.model.state import DeviceState, FabricState, Role
from flatfab.plan.planner import plan
from tests.support.checks import PLAN as LAB
from tests.support.checks import healthy
from tests.support.lossless import LOSSLESS, collected, live, nic_of, qos_of
from tests.support.paths import ROOT

SWITCH_PORTS = frozenset((d.name, i.name) for d in LAB.devices.values() if d.role is not Role.HOST
                         for i in d.interfaces.values() if i.qos is not None)


def static(state: FabricState) -> list[Finding]:
    return run_checks(CheckContext(state=state, plan=state, stage=Stage.STATIC), only=LOSSLESS)


def test_the_catalog_has_every_lossless_check() -> None:
    assert sorted(LOSSLESS) == sorted([
        "qos.trust", "qos.class_chain", "qos.pfc_maps", "pfc.link_symmetry", "pfc.lossy_class",
        "host.agreement", "ecn.attached", "ecn.thresholds", "ecn.before_pfc", "buffer.headroom",
        "buffer.profile", "buffer.coverage", "buffer.budget", "mtu.roce_chain",
        "sched.cnp_strict", "sched.lossless_bandwidth", "pfc.watchdog", "fabric.nonblocking",
        "ecn.pause_without_marks", "qos.dscp_map", "host.intent", "pfc.intent", "state.unknown",
        "ecn.intent", "buffer.intent", "pfc.lossy_fabric", "trim.dscp", "trim.queue",
        "trim.intent", "llr.link"])
    for check_id in LOSSLESS:
        item = CATALOG[check_id]
        # counters exist only on a running switch; a device differs from its plan only live
        live_only = check_id in ("ecn.pause_without_marks", "host.intent", "pfc.intent",
                                 "state.unknown", "ecn.intent", "buffer.intent",
                                 "trim.intent")
        want = {Stage.LIVE} if live_only else {Stage.STATIC, Stage.LIVE}
        assert item.stages == want, check_id
        assert item.title.startswith("Every") and len(item.title) <= 70, check_id


@pytest.mark.parametrize("fabric", ["lab", "numbered", "lab4x16"])
def test_clean_plans_have_no_findings(fabric: str) -> None:
    state = LAB if fabric == "lab" else plan(load_intent(ROOT / "intents" / fabric))
    assert state.lossless is not None
    assert run_checks(CheckContext(state=state, plan=state, stage=Stage.STATIC)) == []


def test_the_lab_as_collected_has_no_lossless_findings() -> None:
    assert live(healthy()) == []
    assert live(collected()) == []


# -- static: faults written into the intent -------------------------------------------------

FABRIC_LINKS = "links:\n" + "".join(
    f"  - {{leaf: leaf{leaf}, spine: spine{spine}"
    f"{', class: short' if (leaf, spine) == (4, 2) else ''}}}\n"
    for leaf in range(1, 5) for spine in (1, 2))
ECN_LINE = "  default: {min_bytes: 150000, max_bytes: 1500000, probability: 10}\n"


@dataclass(frozen=True)
class Fault:
    id: str
    check: str
    named: frozenset[tuple[str, str]]  # exactly the (device, port) pairs the check names
    qos: str = ""  # appended to intents/lab/qos.yaml
    ecn: str = ""  # replaces the ECN default line of intents/lab/qos.yaml
    fabric: bool = False  # one leaf-spine link in a class with MTU 4000
    also: frozenset[str] = field(default_factory=frozenset)  # checks that rightly fire too


def _overrides(*lines: str) -> str:
    return "overrides:\n" + "".join(f"  - {line}\n" for line in lines)


def _on(device: str, *ports: str) -> frozenset[tuple[str, str]]:
    return frozenset((device, port) for port in ports)


SPINE_PORTS = ("swp1", "swp2", "swp3", "swp4")
LEAF_PORTS = ("swp1", "swp2", "swp51", "swp52")
FAULTS = [
    Fault("pfc off on one end", "pfc.link_symmetry", _on("leaf1", "swp51"),
          qos=_overrides("{devices: [leaf1], ports: [swp51], pfc: []}"),
          also=frozenset({"qos.class_chain"})),
    Fault("pfc priority mismatch", "pfc.link_symmetry", _on("spine1", "swp1"),
          qos=_overrides("{devices: [spine1], ports: [swp1], pfc: [4]}"),
          also=frozenset({"qos.class_chain", "pfc.lossy_class"})),
    Fault("dscp to tc on one spine", "qos.class_chain", _on("spine2", *SPINE_PORTS),
          qos=_overrides("{devices: [spine2], dscp_to_tc: {26: 0}}")),
    Fault("ecn min above max", "ecn.thresholds", SWITCH_PORTS,
          ecn="  default: {min_bytes: 2000000, max_bytes: 1000000}\n"),
    Fault("ecn max above xoff", "ecn.before_pfc", SWITCH_PORTS,
          ecn="  default: {min_bytes: 150000, max_bytes: 30000000}\n"),
    Fault("headroom below requirement", "buffer.headroom", _on("leaf2", "swp52"),
          qos=_overrides("{devices: [leaf2], ports: [swp52], xoff_bytes: 20000}")),
    Fault("cnp not strict", "sched.cnp_strict", _on("leaf3", *LEAF_PORTS),
          qos=_overrides("{devices: [leaf3], strict: []}")),
    Fault("host pfc differs", "pfc.link_symmetry", _on("leaf1-h1", "eth1"),
          qos=_overrides("{devices: [leaf1-h1], nic: {pfc: [3, 4]}}"),
          also=frozenset({"pfc.lossy_class"})),
    Fault("host trusts pcp", "host.agreement", _on("leaf2-h1", "eth1"),
          qos=_overrides("{devices: [leaf2-h1], nic: {trust: pcp}}"),
          also=frozenset({"qos.trust"})),
    Fault("one hop mtu too small", "mtu.roce_chain",
          _on("leaf4", "swp52", "swp52.100", "swp52.200")
          | _on("spine2", "swp4", "swp4.100", "swp4.200"), fabric=True),
    Fault("watchdog off", "pfc.watchdog", _on("spine1", *SPINE_PORTS),
          qos=_overrides("{devices: [spine1], watchdog: {enabled: false}}")),
    Fault("pfc on a lossy class", "pfc.lossy_class", _on("leaf4", "swp1") | _on("leaf4-h1", "eth1"),
          qos=_overrides("{devices: [leaf4], ports: [swp1], pfc: [0, 3]}",
                         "{devices: [leaf4-h1], nic: {pfc: [0, 3]}}")),
]


def faulty_intent(tmp_path: Path, fault: Fault) -> Path:
    target = tmp_path / "lab"
    shutil.copytree(ROOT / "intents" / "lab", target)
    qos = (target / "qos.yaml").read_text()
    if fault.ecn:
        assert ECN_LINE in qos
        qos = qos.replace(ECN_LINE, fault.ecn)
    (target / "qos.yaml").write_text(qos + fault.qos)
    if fault.fabric:
        text = (target / "fabric.yaml").read_text()
        host_class = "  host: {speed: 100G, cable_m: 2, mtu: 9000}\n"
        assert host_class in text
        text = text.replace(host_class,
                            host_class + "  short: {speed: 100G, cable_m: 3, mtu: 4000}\n")
        (target / "fabric.yaml").write_text(text + FABRIC_LINKS)
    return target


@pytest.mark.parametrize("fault", FAULTS, ids=[f.id for f in FAULTS])
def test_each_intent_fault_is_named_statically(tmp_path: Path, fault: Fault) -> None:
    findings = static(plan(load_intent(faulty_intent(tmp_path, fault))))
    assert {(f.device, f.port) for f in findings if f.check == fault.check} == fault.named
    assert {f.check for f in findings} <= {fault.check} | fault.also
    assert not [f for f in static(LAB) if f.check == fault.check]


@pytest.mark.parametrize("fault", FAULTS, ids=[f.id for f in FAULTS])
def test_findings_carry_expected_and_actual(tmp_path: Path, fault: Fault) -> None:
    findings = static(plan(load_intent(faulty_intent(tmp_path, fault))))
    assert findings
    for finding in findings:
        assert finding.expected and finding.actual and finding.expected != finding.actual
        assert finding.device and finding.port and finding.device in finding.message
        assert not finding.virtual  # a plan is not the lab's virtual ASIC
        if CATALOG[finding.check].scope is Scope.LINK:
            assert finding.link in {link.id for link in LAB.links}


def test_a_lossless_cnp_class_is_named_once_for_the_fabric(tmp_path: Path) -> None:
    target = faulty_intent(tmp_path, Fault("x", "x", frozenset()))
    (target / "qos.yaml").write_text("pfc: {priorities: [3, 6]}\n")
    findings = [f for f in static(plan(load_intent(target))) if f.check == "sched.cnp_strict"]
    assert [(f.device, f.port, f.expected) for f in findings] == [(None, None, "6 lossy")]


def test_a_port_keeps_its_own_headroom_when_another_port_has_a_smaller_mtu(
        tmp_path: Path) -> None:
    target = faulty_intent(tmp_path, next(f for f in FAULTS if f.fabric))
    text = (target / "fabric.yaml").read_text()
    # the short link on leaf2's first uplink: swp52 must not inherit its smaller profile
    for before, after in (("leaf4, spine: spine2, class: short", "leaf4, spine: spine2"),
                          ("leaf2, spine: spine1", "leaf2, spine: spine1, class: short")):
        text = text.replace(f"{{leaf: {before}}}", f"{{leaf: {after}}}")
    (target / "fabric.yaml").write_text(text)
    findings = static(plan(load_intent(target)))
    assert ("leaf2", "swp51") in {(f.device, f.port) for f in findings
                                  if f.check == "mtu.roce_chain"}
    assert [f for f in findings if f.check == "buffer.headroom"] == []


# -- live: drift in collected state ---------------------------------------------------------

def _spine_pfc_off(s: FabricState) -> None:
    qos_of(s, "spine1", "swp1").pfc = []


def _vrf_sub_link_map(s: FabricState) -> None:
    qos_of(s, "spine2", "swp3.100").maps.dscp_to_tc[26] = 0


def _leaf_trusts_pcp(s: FabricState) -> None:
    qos_of(s, "leaf2", "swp1").trust = "pcp"


def _host_tos(s: FabricState) -> None:
    nic_of(s, "leaf3-h1").roce_tos = 98


def _no_ecn(s: FabricState) -> None:
    qos_of(s, "leaf3", "swp52").queues[3].ecn = None


def _pfc_stops_wrong_queue(s: FabricState) -> None:
    qos_of(s, "leaf1", "swp1").maps.pfc_to_queue[3] = 0


def _watchdog_alerts(s: FabricState) -> None:
    watchdog = qos_of(s, "spine2", "swp2").watchdog
    assert watchdog is not None
    watchdog.action = "alert"


def _watchdog_forwards(s: FabricState) -> None:
    watchdog = qos_of(s, "leaf3", "swp1").watchdog
    assert watchdog is not None
    watchdog.action = "forward"  # valid, and what pfc.watchdog accepts: not what the intent says


def _watchdog_slow(s: FabricState) -> None:
    watchdog = qos_of(s, "spine1", "swp4").watchdog
    assert watchdog is not None
    watchdog.detect_ms, watchdog.restore_ms = 400, 800


def _watchdog_on_lossy(s: FabricState) -> None:
    qos = qos_of(s, "leaf2", "swp51")
    assert qos.watchdog is not None
    qos.watchdog.priorities = [3, 4]


def _host_mtu(s: FabricState) -> None:
    s.devices["leaf4-h2"].interfaces["eth1"].mtu = 1500


def _small_headroom(s: FabricState) -> None:
    leaf = s.devices["leaf1"].qos
    assert leaf is not None
    leaf.profiles[qos_of(s, "leaf1", "swp51").pgs[3]].xoff = 50_000  # both uplinks' profile


def _host_ecn_off(s: FabricState) -> None:
    nic_of(s, "leaf2-h2").ecn_rp = []


def _profile_size(s: FabricState) -> None:
    leaf = s.devices["leaf2"].qos
    assert leaf is not None
    leaf.profiles[qos_of(s, "leaf2", "swp1").pgs[3]].size = 1000  # the host ports' profile


def _pool_shrunk(s: FabricState) -> None:
    spine = s.devices["spine2"].qos
    assert spine is not None
    spine.pools["ingress_lossless"].size -= 1_000_000


def _small_asic(s: FabricState) -> None:
    spine = s.devices["spine1"].qos
    assert spine is not None
    spine.asic.buffer_bytes = 50_000_000


def _weights(s: FabricState) -> None:
    qos_of(s, "leaf1", "swp2").queues[0].weight = 60


def _slow_uplinks(s: FabricState) -> None:
    for port in ("swp51", "swp52"):
        s.devices["leaf3"].interfaces[port].speed_mbps = 25_000


def _ecn_probability(s: FabricState) -> None:
    ecn = qos_of(s, "spine1", "swp3").queues[3].ecn
    assert ecn is not None
    ecn.probability = 0


def _nic_cnp_not_strict(s: FabricState) -> None:
    nic_of(s, "leaf1-h2").strict_tcs = []


def _nic_no_storm_guard(s: FabricState) -> None:
    nic_of(s, "leaf2-h1").pfc_prevention_ms = 0


def _no_lossy_pg(s: FabricState) -> None:
    del qos_of(s, "leaf4", "swp2").pgs[0]


LIVE: list[tuple[str, Callable[[FabricState], None], set[tuple[str, str | None, str | None,
                                                             bool]]]] = [
    ("spine pfc off", _spine_pfc_off, {("pfc.link_symmetry", "spine1", "swp1", True),
                                       ("qos.class_chain", "spine1", "swp1", True),
                                       ("buffer.coverage", "spine1", "swp1", True),
                                       ("pfc.intent", "spine1", "swp1", True)}),
    ("vrf sub-link map", _vrf_sub_link_map, {("qos.class_chain", "spine2", "swp3.100", False)}),
    ("leaf trusts pcp", _leaf_trusts_pcp, {("qos.trust", "leaf2", "swp1", True),
                                           ("host.agreement", "leaf2", "swp1", True)}),
    ("host marks wrong tos", _host_tos, {("host.agreement", "leaf3-h1", "eth1", False)}),
    ("ecn off", _no_ecn, {("ecn.attached", "leaf3", "swp52", True),
                          ("qos.class_chain", "leaf3", "swp52", True)}),
    ("pfc map", _pfc_stops_wrong_queue, {("qos.pfc_maps", "leaf1", "swp1", True)}),
    ("watchdog alerts", _watchdog_alerts, {("pfc.watchdog", "spine2", "swp2", True),
                                           ("pfc.intent", "spine2", "swp2", True)}),
    ("watchdog forwards", _watchdog_forwards, {("pfc.intent", "leaf3", "swp1", True)}),
    ("watchdog slower", _watchdog_slow, {("pfc.intent", "spine1", "swp4", True)}),
    ("watchdog beyond pfc", _watchdog_on_lossy, {("pfc.watchdog", "leaf2", "swp51", True),
                                                 ("pfc.intent", "leaf2", "swp51", True)}),
    ("host mtu", _host_mtu, {("mtu.roce_chain", "leaf4-h2", "eth1", False)}),
    ("headroom", _small_headroom, {("buffer.headroom", "leaf1", "swp51", True),
                                   ("buffer.headroom", "leaf1", "swp52", True),
                                   ("buffer.intent", "leaf1", None, True)}),
    ("host ecn off", _host_ecn_off, {("host.agreement", "leaf2-h2", "eth1", True),
                                     ("host.intent", "leaf2-h2", "eth1", True)}),
    ("profile size", _profile_size, {("buffer.profile", "leaf2", None, True),
                                     ("buffer.intent", "leaf2", None, True)}),
    ("pool shrunk", _pool_shrunk, {("buffer.intent", "spine2", None, True)}),
    ("buffer budget", _small_asic, {("buffer.budget", "spine1", None, True)}),
    ("dwrr weights", _weights, {("sched.lossless_bandwidth", "leaf1", "swp2", True)}),
    ("slow uplinks", _slow_uplinks, {("fabric.nonblocking", "leaf3", None, False)}),
    # an insane probability is also not the intent's
    ("ecn probability", _ecn_probability, {("ecn.thresholds", "spine1", "swp3", True),
                                           ("ecn.intent", "spine1", "swp3", True)}),
    ("nic cnp not strict", _nic_cnp_not_strict, {("sched.cnp_strict", "leaf1-h2", "eth1",
                                                  True),
                                                 ("host.intent", "leaf1-h2", "eth1", True)}),
    ("nic storm guard", _nic_no_storm_guard, {("pfc.watchdog", "leaf2-h1", "eth1", True),
                                              ("host.intent", "leaf2-h1", "eth1", True)}),
    ("no lossy pg", _no_lossy_pg, {("buffer.coverage", "leaf4", "swp2", True)}),
]


@pytest.mark.parametrize(("fault", "expected"), [(f, e) for _, f, e in LIVE],
                         ids=[name for name, _, _ in LIVE])
def test_live_drift_is_named_and_marked_virtual(
        fault: Callable[[FabricState], None],
        expected: set[tuple[str, str | None, str | None, bool]]) -> None:
    state = collected()
    fault(state)
    assert {(f.check, f.device, f.port, f.virtual) for f in live(state)} == expected


def test_a_shrunk_pool_is_named_as_the_pool_with_both_sizes() -> None:
    state = collected()
    _pool_shrunk(state)
    [finding] = [f for f in live(state) if f.check == "buffer.intent"]
    assert finding.message == ("spine2 pool ingress_lossless size is 47000000 B, the intent "
                               "sets 48000000 B")
    assert (finding.expected, finding.actual) == ("48000000 B", "47000000 B")


def test_a_link_whose_ends_both_drifted_is_one_finding_naming_both() -> None:
    state = collected()
    qos_of(state, "leaf1", "swp51").pfc = []
    qos_of(state, "spine1", "swp1").pfc = [4]
    [finding] = [f for f in live(state) if f.check == "pfc.link_symmetry"]
    assert (finding.device, finding.port, finding.link) == ("leaf1", "swp51",
                                                            "leaf1:swp51--spine1:swp1")
    assert "leaf1:swp51 on none, spine1:swp1 on 4 (both ends differ" in finding.message
    assert (finding.expected, finding.actual) == ("3", "none")


def test_findings_are_not_virtual_on_hardware_state() -> None:
    state = collected()
    for device in state.devices.values():
        if device.qos is not None:
            device.qos.virtual = False
    _spine_pfc_off(state)
    qos_of(state, "spine1", "swp1").maps.dscp_to_tc[26] = 0
    findings = live(state)
    assert {f.check for f in findings} >= {"pfc.link_symmetry", "qos.class_chain"}
    assert not any(f.virtual for f in findings)


def test_the_dscp_map_is_never_virtual_the_rest_of_the_chain_is() -> None:
    state = collected()
    qos_of(state, "spine1", "swp2").maps.dscp_to_tc[26] = 0
    qos_of(state, "spine1", "swp2").queues[3].profile = "egress_lossy"
    chain = {f.actual: f.virtual for f in live(state) if f.check == "qos.class_chain"}
    assert chain == {"TC 0": False, "egress_lossy": True}


def test_an_unreachable_device_gets_no_lossless_findings() -> None:
    state = collected()
    spine = state.devices["spine1"]
    state.devices["spine1"] = DeviceState(name=spine.name, role=spine.role,
                                          platform=spine.platform, reachable=False,
                                          errors=["timeout"])
    assert live(state) == []


# -- cost ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class CountingContext(CheckContext):
    """Counts device look-ups: a check that loops over host pairs would need many more."""

    lookups: list[int] = field(default_factory=lambda: [0])

    def observed(self, name: str) -> DeviceState | None:
        self.lookups[0] += 1
        return super().observed(name)


@pytest.mark.parametrize("check_id", LOSSLESS)
def test_each_check_is_linear_in_devices_and_links(check_id: str) -> None:
    state = plan(load_intent(ROOT / "intents" / "lab4x16"))
    ctx = CountingContext(state=state, plan=state, stage=Stage.STATIC)
    assert run_checks(ctx, only=[check_id]) == []
    assert ctx.lookups[0] <= 2 * (len(state.devices) + len(state.links))


def test_a_forwarding_watchdog_is_named_with_the_intent_action() -> None:
    state = collected()
    _watchdog_forwards(state)
    [found] = [f for f in live(state) if f.check == "pfc.intent"]
    assert found.message == ("leaf3:swp1 PFC watchdog action is forward, the intent says drop")
    assert (found.expected, found.actual) == ("drop", "forward")


def test_what_a_device_does_not_state_is_reported_unknown_not_judged() -> None:
    """A switch on SONiC's dynamic buffer model (PG profile NULL, pools without a size) and
    a watchdog whose action and timers no row gives: nothing is judged as zero."""
    state = collected()
    port = qos_of(state, "leaf3", "swp1")
    del port.pgs[3]
    port.unknown["pgs.3"] = "BUFFER_PG|swp1|3 has profile NULL (dynamic buffer model)"
    assert port.watchdog is not None
    port.watchdog.action, port.watchdog.detect_ms, port.watchdog.poll_ms = None, 0, 0
    port.watchdog.unknown.update({"action": "PFC_WD|swp1 has no action",
                                  "detect_ms": "PFC_WD|swp1 has no detection_time",
                                  "poll_ms": "PFC_WD|GLOBAL has no POLL_INTERVAL"})
    device = state.devices["leaf3"].qos
    assert device is not None
    device.pools["ingress_lossless"].size = 0
    device.unknown["pools.ingress_lossless.size"] = "BUFFER_POOL|ingress_lossless_pool has no size"
    found = live(state)
    assert [f for f in found if f.severity is not Severity.NOT_JUDGED] == []
    assert sorted((f.check, f.device, f.port or "", f.message) for f in found) == [
        ("state.unknown", "leaf3", "", "leaf3 pools.ingress_lossless.size is not judged: "
         "BUFFER_POOL|ingress_lossless_pool has no size"),
        ("state.unknown", "leaf3", "swp1", "leaf3:swp1 pgs.3 is not judged: BUFFER_PG|swp1|3 "
         "has profile NULL (dynamic buffer model)"),
        ("state.unknown", "leaf3", "swp1", "leaf3:swp1 watchdog.action is not judged: "
         "PFC_WD|swp1 has no action"),
        ("state.unknown", "leaf3", "swp1", "leaf3:swp1 watchdog.detect_ms is not judged: "
         "PFC_WD|swp1 has no detection_time"),
        ("state.unknown", "leaf3", "swp1", "leaf3:swp1 watchdog.poll_ms is not judged: "
         "PFC_WD|GLOBAL has no POLL_INTERVAL"),
    ]
