"""The lossless plane on the live lab: applied, read back, traffic followed by class
counters, and a fault matrix where each injected fault is found by the right check, on the
right device and port. Every fault is repaired by a rollout, which must bring it back.

The faults go in batches whose faults touch no common node, nor the two ends of one link
(so none can hide another's finding): a batch is injected at once, one verify must name each
of its faults by check, device and port (a test per fault), and one rollout must repair them
all, which the batch's last test proves with a clean verify."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from tests.support.checks import PLAN
from tests.support.lab import Lab

pytestmark = pytest.mark.live
NIC = "/var/lib/flatfab/nic/qos.conf"


def _json(result: Any) -> dict[str, Any]:
    assert result.code in (0, 1), result.stderr
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def _named(data: dict[str, Any], check: str) -> set[tuple[str, str | None]]:
    return {(f["device"], f["port"]) for f in data["findings"] if f["check"] == check}


@pytest.fixture(scope="module")
def rolled_out(lab: Lab) -> Lab:
    result = lab.cli("rollout", "--format", "json")
    assert result.code == 0, result.stdout[-2000:] + result.stderr
    return lab


def _repair(lab: Lab) -> None:
    result = lab.cli("rollout", "--format", "json")
    assert result.code == 0, result.stdout[-2000:] + result.stderr


def test_traffic_is_queued_in_its_class_on_every_hop(rolled_out: Lab) -> None:
    data = _json(rolled_out.cli("verify", "--traffic", "--no-probes", "--format", "json"))
    assert data["passed"], data["findings"]
    assert data["timings"]["traffic_packets"] > 0
    assert {"traffic.class", "traffic.lossless_drops"} <= set(data["checks"])
    # the spread of RoCE flows over the spines into each target leaf, measured: the lab's
    # 5-tuple hash leaves no spine short of an even share's floor (else a warning fails)
    spread = [f for f in data["findings"] if f["check"] == "traffic.ecmp_spread"]
    assert [f["severity"] for f in spread] == ["info"], spread
    assert spread[0]["message"].startswith("tier 3 (spines into the target leaf): RoCE flows")


def test_a_spine_that_classifies_roce_into_the_wrong_class_is_named(rolled_out: Lab) -> None:
    rolled_out.sh("spine2", "tc -n blue filter replace dev swp3.100 parent 1: protocol ip "
                            "prio 1 handle 800::800 u32 match ip dsfield 0x68 0xfc flowid 1:10")
    try:
        data = _json(rolled_out.cli("verify", "--traffic", "--no-probes", "--format", "json"))
        assert not data["passed"]
        assert ("spine2", "swp3.100") in _named(data, "traffic.class")
        assert all(f["device"] == "spine2" for f in data["findings"]
                   if f["check"] == "traffic.class")
        # the kernel drift is in the config diff too, and a rollout repairs it
        dry = rolled_out.cli("rollout", "--dry-run")
        assert '-   "dscp_to_tc": "26:0,48:6",' in dry.stdout
    finally:
        _repair(rolled_out)
    data = _json(rolled_out.cli("verify", "--traffic", "--no-probes", "--format", "json"))
    assert data["passed"], data["findings"]


def test_a_host_that_marks_roce_wrong_is_caught_on_its_path(rolled_out: Lab) -> None:
    rolled_out.sh("leaf3-h1", "nft flush chain inet flatfab roce_marking")
    try:
        data = _json(rolled_out.cli("verify", "--traffic", "--no-probes", "--format", "json"))
        assert not data["passed"]
        assert ("leaf3", "swp51.100,swp52.100") in _named(data, "traffic.class")
    finally:
        _repair(rolled_out)


def _edit_asic(lab: Lab, node: str, mutation: str) -> None:
    lab.edit_asic(node, mutation)


@dataclass(frozen=True)
class LiveFault:
    name: str
    node: str
    inject: str  # python mutating `d` (virtual ASIC), or a shell command when shell=True
    check: str
    named: set[tuple[str, str | None]]
    shell: bool = False
    virtual: bool = True
    also_asic: tuple[str, str] | None = None  # (node, mutation): a second hand on a switch


LIVE_FAULTS = [
    LiveFault("pfc-off-on-one-end", "leaf1", "d['PORT_QOS_MAP']['swp51'].pop('pfc_enable')",
              "pfc.link_symmetry", {("leaf1", "swp51")}),
    # a port row that binds no DSCP map: a stated value (every packet to TC 0), never unknown
    LiveFault("dscp-map-removed-from-the-port-row", "leaf1",
              "d['PORT_QOS_MAP']['swp51'].pop('dscp_to_tc_map')", "qos.trust",
              {("leaf1", "swp51")}),
    LiveFault("pfc-priority-mismatch", "spine1", "d['PORT_QOS_MAP']['swp1']['pfc_enable'] = '4'",
              "pfc.link_symmetry", {("spine1", "swp1")}),
    LiveFault("dscp-to-tc-mismatch-on-a-spine", "spine2",
              "tc filter replace dev swp3 parent 1: protocol ip prio 1 handle 800::800 u32 "
              "match ip dsfield 0x68 0xfc flowid 1:10", "qos.class_chain", {("spine2", "swp3")},
              shell=True, virtual=False),
    LiveFault("ecn-min-above-max", "leaf2",
              "w = d['WRED_PROFILE']['ECN_150000_1500000_10']\n"
              "w['green_min_threshold'], w['green_max_threshold'] = '2000000', '1000000'",
              "ecn.thresholds", {("leaf2", "swp51"), ("leaf2", "swp1")}),
    LiveFault("ecn-max-above-xoff", "leaf3",
              "d['WRED_PROFILE']['ECN_150000_1500000_10']['green_max_threshold'] = '30000000'",
              "ecn.before_pfc", {("leaf3", "swp52")}),
    LiveFault("headroom-below-requirement", "leaf4",
              "d['BUFFER_PROFILE']['pg_lossless_100000_3m_mtu9216_profile']['xoff'] = '20000'",
              "buffer.headroom", {("leaf4", "swp51"), ("leaf4", "swp52")}),
    LiveFault("cnp-not-strict", "spine1",
              "d['QUEUE']['swp2|6']['scheduler'] = 'SCHED_DWRR_BEST_EFFORT'",
              "sched.cnp_strict", {("spine1", "swp2")}),
    LiveFault("host-pfc-vector-differs", "leaf1-h1",
              f"sed -i 's/ pfc 3 / pfc 3,4 /' {NIC}", "pfc.link_symmetry",
              {("leaf1-h1", "eth1")}, shell=True),
    LiveFault("host-trusts-pcp", "leaf2-h1", f"sed -i 's/ trust dscp / trust pcp /' {NIC}",
              "host.agreement", {("leaf2-h1", "eth1")}, shell=True),
    LiveFault("hop-mtu-below-roce", "leaf3", "ip link set swp51 mtu 4000", "mtu.roce_chain",
              {("leaf3", "swp51")}, shell=True, virtual=False),
    LiveFault("watchdog-off", "spine2", "d['PFC_WD'].pop('swp1')\n"
              "d['PORT_QOS_MAP']['swp1'].pop('pfcwd_sw_enable')", "pfc.watchdog",
              {("spine2", "swp1")}),
    # valid values pfc.watchdog accepts, but not the intent's: a storming queue passes on
    LiveFault("watchdog-forwards", "leaf3", "d['PFC_WD']['swp1']['action'] = 'forward'",
              "pfc.intent", {("leaf3", "swp1")}),
    LiveFault("watchdog-detects-late", "spine1",
              "d['PFC_WD']['swp2']['detection_time'] = '400'\n"
              "d['PFC_WD']['swp2']['restoration_time'] = '800'", "pfc.intent",
              {("spine1", "swp2")}),
    LiveFault("pfc-on-a-lossy-class", "leaf4", "d['PORT_QOS_MAP']['swp1']['pfc_enable'] = '0,3'",
              "pfc.lossy_class", {("leaf4", "swp1")}),
    # a best-effort code point (AF11) classified into the lossless class by the kernel
    LiveFault("best-effort-dscp-in-the-lossless-class", "leaf2",
              "tc filter add dev swp51 parent 1: protocol ip prio 1 u32 "
              "match ip dsfield 0x28 0xfc flowid 1:13", "qos.dscp_map", {("leaf2", "swp51")},
              shell=True, virtual=False),
    LiveFault("roce-class-strict", "leaf1", "d['QUEUE']['swp1|3']['scheduler'] = 'SCHED_STRICT'",
              "sched.lossless_bandwidth", {("leaf1", "swp1")}),
    LiveFault("pool-below-reserved", "spine1",
              "d['BUFFER_POOL']['ingress_lossless_pool']['size'] = '100000'",
              "buffer.budget", {("spine1", None)}),
    # a lossless pool shrunk by hand, still above what its PGs reserve: named as the pool
    LiveFault("lossless-pool-shrunk", "spine2",
              "d['BUFFER_POOL']['ingress_lossless_pool']['size'] = '47000000'",
              "buffer.intent", {("spine2", None)}),
    # RoCE leaving the NIC not ECN-capable: no switch can mark it, DCQCN never slows down
    LiveFault("host-roce-not-ect", "leaf4-h2",
              "nft flush chain inet flatfab roce_marking && nft add rule inet flatfab "
              "roce_marking oifname eth1 udp dport 4791 @th,64,8 0x81 ip dscp set 48 accept && "
              "nft add rule inet flatfab roce_marking oifname eth1 udp dport 4791 "
              "ip dscp set 26 ip ecn set not-ect",
              "host.agreement", {("leaf4-h2", "eth1")}, shell=True, virtual=False),
    LiveFault("host-dcqcn-off", "leaf3-h1", f"sed -i 's/ dcqcn on / dcqcn off /' {NIC}",
              "host.intent", {("leaf3-h1", "eth1")}, shell=True),
    LiveFault("host-reaction-point-on-a-lossy-priority", "leaf1-h2",
              f"sed -i 's/ ecn-rp 3 / ecn-rp 0,3 /' {NIC}", "host.intent",
              {("leaf1-h2", "eth1")}, shell=True),
    # NIC and leaf port drifted together: they agree with each other, not with the intent
    LiveFault("host-and-leaf-trust-pcp", "leaf2-h2",
              f"sed -i 's/ trust dscp / trust pcp /' {NIC}", "host.intent",
              {("leaf2-h2", "eth1")}, shell=True,
              also_asic=("leaf2", "d['PORT_QOS_MAP']['swp2'].pop('dscp_to_tc_map')")),
    LiveFault("host-mtu-differs", "leaf3-h2", "ip link set eth1 mtu 8000", "interface.mtu",
              {("leaf3-h2", "eth1")}, shell=True, virtual=False),
]


def test_verify_lossless_passes_on_the_clean_lab(rolled_out: Lab) -> None:
    data = _json(rolled_out.cli("verify", "--lossless", "--no-probes", "--format", "json"))
    assert data["passed"], data["findings"]
    assert {"pfc.link_symmetry", "buffer.headroom", "host.agreement"} <= set(data["checks"])


def _touched(fault: LiveFault) -> set[str]:
    """The nodes a fault changes and the far ends of the ports it is named on."""
    nodes = {fault.node, *(device for device, _ in fault.named)}
    if fault.also_asic is not None:
        nodes.add(fault.also_asic[0])
    for device, port in fault.named:
        for name in (port or "").split(","):
            iface = PLAN.devices[device].interfaces.get(name.split(".")[0])
            if iface is not None and iface.peer is not None:
                nodes.add(iface.peer.device)
    return nodes


def _batches(faults: list[LiveFault]) -> list[list[LiveFault]]:
    """First fit: each fault joins the first batch that touches none of its nodes."""
    batches: list[tuple[list[LiveFault], set[str]]] = []
    for fault in faults:
        nodes = _touched(fault)
        batch = next((b for b in batches if not b[1] & nodes), None)
        if batch is None:
            batches.append(([fault], nodes))
        else:
            batch[0].append(fault)
            batch[1].update(nodes)
    return [faults for faults, _ in batches]


BATCHES = _batches(LIVE_FAULTS)
BATCH_OF = {fault.name: index for index, batch in enumerate(BATCHES) for fault in batch}


@dataclass
class Injected:
    """The batch of faults now on the lab, and what verify said about it."""

    batch: int | None = None
    findings: list[dict[str, Any]] = field(default_factory=list)


@pytest.fixture(scope="module")
def injected(rolled_out: Lab) -> Iterator[Injected]:
    state = Injected()
    yield state
    if state.batch is not None:  # a batch whose last test did not run (-k): repaired here
        _repair(rolled_out)


def _inject(lab: Lab, fault: LiveFault) -> None:
    if fault.shell:
        lab.sh(fault.node, fault.inject)
    else:
        _edit_asic(lab, fault.node, fault.inject)
    if fault.also_asic is not None:
        _edit_asic(lab, *fault.also_asic)


def test_the_fault_batches_hold_every_fault_once() -> None:
    assert sorted(f.name for batch in BATCHES for f in batch) == sorted(
        f.name for f in LIVE_FAULTS)
    for batch in BATCHES:
        touched = [_touched(fault) for fault in batch]
        assert all(not a & b for i, a in enumerate(touched) for b in touched[i + 1:])


@pytest.mark.parametrize("fault", [f for batch in BATCHES for f in batch],
                         ids=[f.name for batch in BATCHES for f in batch])
def test_each_injected_fault_is_named_by_its_check(rolled_out: Lab, injected: Injected,
                                                   fault: LiveFault) -> None:
    batch = BATCHES[BATCH_OF[fault.name]]
    try:
        if injected.batch != BATCH_OF[fault.name]:
            if injected.batch is not None:
                _repair(rolled_out)
            injected.batch = BATCH_OF[fault.name]
            for member in batch:
                _inject(rolled_out, member)
            data = _json(rolled_out.cli("verify", "--lossless", "--no-probes", "--format",
                                        "json"))
            assert not data["passed"]
            injected.findings = data["findings"]
        hits = [f for f in injected.findings if f["check"] == fault.check
                and (f["device"], f["port"]) in fault.named]
        assert fault.named <= {(f["device"], f["port"]) for f in hits}, injected.findings
        assert all(f["virtual"] is fault.virtual for f in hits)
        assert all(f["expected"] and f["actual"] for f in hits)
    finally:
        if fault is batch[-1]:  # one rollout repairs the whole batch
            injected.batch = None
            _repair(rolled_out)
    if fault is batch[-1]:
        data = _json(rolled_out.cli("verify", "--lossless", "--no-probes", "--format", "json"))
        assert data["passed"], data["findings"]
