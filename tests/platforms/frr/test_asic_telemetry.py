"""The lab switch's telemetry source: the kernel's queues read, the virtual ASIC's PFC, ECN and
watchdog counters derived from them and from its tables."""

from __future__ import annotations

import json
import os
import subprocess
import uuid
from pathlib import Path

import pytest

from flatfab.lab import hardware
from flatfab.platforms.frr.asic_telemetry import (
    ClassStats,
    KernelReading,
    LabSwitchCounters,
    PhyFile,
    VirtualAsic,
    class_stats,
    parse_classes,
    parse_limits,
    phy_leaves,
    read_kernel,
)
from flatfab.telemetry import paths
from flatfab.telemetry.samples import Metric
from tests.support.telemetry_streams import lab_plan

# `tc -s class show dev swp1` as iproute2 6.1 printed it on a lab leaf during a flood
CLASSES = """\
class htb 1:13 parent 1:1 leaf 13: prio 1 rate 10Mbit ceil 10Mbit burst 15Kb cburst 15Kb
 Sent 2614378 bytes 2509 pkt (dropped 221375, overlimits 2494 requeues 0)
 backlog 0b 0p requeues 0
 lended: 2509 borrowed: 0 giants: 0
 tokens: -12761 ctokens: -12761

class htb 1:10 parent 1:1 leaf 10: prio 1 rate 50Gbit ceil 100Gbit burst 1037500b cburst 1025000b
 Sent 3062 bytes 19 pkt (dropped 0, overlimits 0 requeues 0)
 backlog 0b 0p requeues 0

class htb 1:1 root rate 100Gbit ceil 100Gbit burst 1025000b cburst 1025000b
 Sent 2617440 bytes 2528 pkt (dropped 0, overlimits 0 requeues 0)
"""
QDISCS = [
    {"kind": "htb", "handle": "1:", "dev": "swp1", "root": True, "options": {}},
    {"kind": "bfifo", "handle": "13:", "dev": "swp1", "parent": "1:13",
     "options": {"limit": 100000}, "packets": 2509, "drops": 221375},
    {"kind": "bfifo", "handle": "10:", "dev": "swp1", "parent": "1:10",
     "options": {"limit": 21333333}},
    {"kind": "noqueue", "handle": "0:", "dev": "br100", "root": True},
]
DB = {
    "PORT_QOS_MAP": {"swp1": {"pfc_enable": "3", "pfcwd_sw_enable": "3",
                              "tc_to_queue_map": "AI", "pfc_to_queue_map": "AI"}},
    "TC_TO_QUEUE_MAP": {"AI": {str(i): str(i) for i in range(8)}},
    "MAP_PFC_PRIORITY_TO_QUEUE": {"AI": {str(i): str(i) for i in range(8)}},
    "QUEUE": {"swp1|0-2": {"scheduler": "S"}, "swp1|3": {"wred_profile": "ECN"}},
    "WRED_PROFILE": {"ECN": {"ecn": "ecn_all", "green_min_threshold": "150000"}},
    "PFC_WD": {"swp1": {"detection_time": "200", "action": "drop"}},
}


def test_class_statistics_are_read_from_tc_text() -> None:
    assert parse_classes(CLASSES) == {3: (2509, 221375, 2494), 0: (19, 0, 0)}


def test_queue_limits_come_only_from_links_with_flatfab_queues() -> None:
    assert parse_limits(json.dumps(QDISCS)) == {"swp1": {3: 100000, 0: 21333333}}


def _reading(over: int, drops: int = 0, limit: int = 48_000_000) -> KernelReading:
    return KernelReading({"swp1": True}, {"swp1": {3: ClassStats(100, drops, over, limit),
                                                   0: ClassStats(5, 0, 0, limit)}})


def _leaf(leaves: list[tuple[str, int | str]], metric: Metric, key: int) -> int | str:
    return dict(leaves)[paths.leaf_path(metric, "swp1", key)]


def test_a_held_lossless_class_is_paused_and_marks_ecn() -> None:
    asic = VirtualAsic()
    asic.step(_reading(over=10), DB, 0.0)
    leaves = asic.step(_reading(over=510, drops=7), DB, 1.0)
    assert _leaf(leaves, Metric.PFC_RX, 3) == 500
    assert _leaf(leaves, Metric.QUEUE_ECN, 3) == 500
    assert _leaf(leaves, Metric.QUEUE_DROPS, 3) == 7  # the kernel's own drops, as they are
    assert _leaf(leaves, Metric.QUEUE_ECN, 0) == 0  # no WRED profile on the lossy queue
    assert paths.leaf_path(Metric.PFC_RX, "swp1", 0) not in dict(leaves)  # PFC off on 0
    assert not any("tx-pause-frames" in p for p, _ in leaves)  # not modelled, not served


def test_ecn_thresholds_above_the_queue_limit_never_mark() -> None:
    db = json.loads(json.dumps(DB))
    db["WRED_PROFILE"]["ECN"]["green_min_threshold"] = "60000000"  # above the 48 MB queue
    asic = VirtualAsic()
    asic.step(_reading(over=0), db, 0.0)
    leaves = asic.step(_reading(over=400), db, 1.0)
    assert _leaf(leaves, Metric.PFC_RX, 3) == 400
    assert _leaf(leaves, Metric.QUEUE_ECN, 3) == 0


def test_ecn_on_a_lossy_queue_marks_it() -> None:
    db = json.loads(json.dumps(DB))
    db["QUEUE"]["swp1|0-2"]["wred_profile"] = "ECN"
    asic = VirtualAsic()
    asic.step(KernelReading({}, {"swp1": {0: ClassStats(0, 0, 0, 21_000_000)}}), db, 0.0)
    leaves = asic.step(KernelReading({}, {"swp1": {0: ClassStats(9, 0, 40, 21_000_000)}}),
                       db, 1.0)
    assert _leaf(leaves, Metric.QUEUE_ECN, 0) == 40


def test_the_watchdog_fires_once_per_storm_of_continuous_pauses() -> None:
    asic = VirtualAsic()
    storms = []
    for t, over in enumerate([0, 100, 200, 300, 400, 400, 500, 600]):
        leaves = asic.step(_reading(over=over), DB, float(t))
        storms.append(_leaf(leaves, Metric.WATCHDOG, 3))
    # paused from t=1; fires at t=2 (paused through two samples >= 200 ms apart); quiet at
    # t=5 restores it; the next storm fires at t=7
    assert storms == [0, 0, 1, 1, 1, 1, 1, 2]


def test_sub_links_count_in_their_port_and_the_source_reads_every_namespace() -> None:
    calls: list[list[str]] = []
    link = [{"ifname": "swp1", "operstate": "UP"}, {"ifname": "eth0", "operstate": "UP"},
            {"ifname": "br100", "operstate": "UP", "linkinfo": {"info_kind": "bridge"}},
            {"ifname": "swp51.100", "operstate": "UP"}]
    sub = [{"kind": "htb", "dev": "swp51.100", "root": True},
           {"kind": "bfifo", "dev": "swp51.100", "parent": "1:13", "options": {"limit": 9}}]
    port = [{"kind": "htb", "dev": "swp51", "root": True},
            {"kind": "bfifo", "dev": "swp51", "parent": "1:13", "options": {"limit": 9}}]

    def run(args: list[str], stdin: str | None = None) -> str:
        calls.append(args)
        if args[:3] == ["ip", "netns", "list"]:
            return "blue (id: 7)\n"
        if args[0] == "ip":
            return json.dumps(link if "blue" in args else [{"ifname": "swp51",
                                                             "operstate": "DOWN"}])
        if "qdisc" in args:
            return json.dumps(sub if "blue" in args else port)
        return CLASSES.replace("2509 pkt", "10 pkt" if "swp51" in args else "20 pkt")

    reading = read_kernel(run)
    assert reading.oper_up == {"swp51": False, "swp1": True}
    assert reading.classes["swp51"][3].packets == 30  # swp51 and swp51.100 together
    assert all(args[0] in {"ip", "tc"} for args in calls)  # read-only commands only


def _layout(dev: str, packets: int) -> str:
    """`tc -s class show dev X` of flatfab's layout (root 1:1, leaves 1:10-1:17), in the hash
    order the kernel lists them, TC 3 with `packets`."""
    blocks = [f"class htb 1:1{tc} parent 1:1 leaf 1{tc}: prio 1 rate 1Gbit ceil 1Gbit\n"
              f" Sent 0 bytes {packets if tc == 3 else tc} pkt (dropped {tc}, overlimits 0 "
              "requeues 0)\n backlog 0b 0p requeues 0\n" for tc in (3, 0, 7, 1, 5)]
    blocks.insert(2, "class htb 1:1 root rate 100Gbit ceil 100Gbit\n Sent 0 bytes 9 pkt "
                     "(dropped 0, overlimits 0 requeues 0)\n")
    blocks += [f"class htb 1:1{tc} parent 1:1 leaf 1{tc}: prio 1 rate 1Gbit ceil 1Gbit\n"
               f" Sent 0 bytes {tc} pkt (dropped {tc}, overlimits 0 requeues 0)\n"
               for tc in (2, 4, 6)]
    return "\n".join(blocks) + "\n"


def test_every_links_classes_are_read_in_one_tc_batch_and_split_by_their_ids() -> None:
    limits = {dev: dict.fromkeys(range(8), 1000) for dev in ("swp1", "swp2", "swp51")}
    calls: list[tuple[list[str], str | None]] = []

    def run(args: list[str], stdin: str | None = None) -> str:
        calls.append((args, stdin))
        if "-batch" in args:
            return "".join(_layout(dev, n) for dev, n in (("swp1", 11), ("swp2", 22),
                                                          ("swp51", 33)))
        return _layout(args[-1], {"swp1": 11, "swp2": 22, "swp51": 33}[args[-1]])

    stats = class_stats(run, ["-n", "blue"], limits)
    assert [stats[dev][3][0] for dev in ("swp1", "swp2", "swp51")] == [11, 22, 33]
    assert stats["swp2"][6] == (6, 6, 0)
    assert calls == [(["tc", "-n", "blue", "-s", "-batch", "-"],
                      "class show dev swp1\nclass show dev swp2\nclass show dev swp51\n")]
    # a link whose classes are not flatfab's layout: read link by link, as before
    limits["swp2"] = {3: 1000}
    calls.clear()
    assert class_stats(run, [], limits)["swp51"][3][0] == 33
    assert [args[-1] for args, _ in calls[1:]] == ["swp1", "swp2", "swp51"]


@pytest.mark.skipif(os.geteuid() != 0, reason="a network namespace of its own needs root")
def test_the_batch_reads_what_tc_per_link_reads_on_a_real_kernel() -> None:
    """Two veths with flatfab's layout and traffic in one class: one `tc -batch` reads each
    link's classes as one `tc class show` per link does."""
    ns = f"ffcls{uuid.uuid4().hex[:6]}"
    sh = ["ip", "netns", "exec", ns, "sh", "-ec"]
    # no IPv6: its link-local chatter (router solicitations, MLD) would count between reads
    script = ["sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1",
              "ip link add xa type veth peer name xb", "ip link add xc type veth peer name xd"]
    for dev in ("xa", "xc"):
        script += [f"ip link set {dev} up", f"tc qdisc add dev {dev} root handle 1: htb "
                   "default 13", f"tc class add dev {dev} parent 1: classid 1:1 htb rate 1gbit"]
        for tc in range(8):
            script += [f"tc class add dev {dev} parent 1:1 classid 1:1{tc} htb rate 10mbit",
                       f"tc qdisc add dev {dev} parent 1:1{tc} handle 1{tc}: bfifo limit 9000"]
    script += ["ip link set xb up", "ip link set xd up", "ip addr add 192.0.2.1/30 dev xa",
               # a neighbour of its own: the pings leave by xa without waiting on ARP
               "ip neigh add 192.0.2.2 lladdr 02:00:00:00:00:02 dev xa nud permanent",
               "ping -c 3 -i 0.01 -W 1 192.0.2.2 >/dev/null 2>&1 || true"]
    subprocess.run(["ip", "netns", "add", ns], check=True)
    try:
        subprocess.run([*sh, " && ".join(script)], check=True, capture_output=True)

        asked: list[list[str]] = []

        def run(args: list[str], stdin: str | None = None) -> str:
            asked.append(args)
            return subprocess.run(["ip", "netns", "exec", ns, *args], input=stdin, text=True,
                                  capture_output=True, check=True).stdout

        limits = parse_limits(run(["tc", "-j", "qdisc", "show"]))
        assert sorted(limits) == ["xa", "xc"]
        batched = class_stats(run, [], limits)
        assert asked[1:] == [["tc", "-s", "-batch", "-"]]  # one tc, not one per link
        one_by_one = {dev: parse_classes(run(["tc", "-s", "class", "show", "dev", dev]))
                      for dev in limits}
        assert batched == one_by_one and batched["xa"][3][0] >= 3
    finally:
        subprocess.run(["ip", "netns", "del", ns], check=False)


def test_a_reading_is_reused_briefly_and_a_fresh_switch_has_no_tables(tmp_path) -> None:  # type: ignore[no-untyped-def]
    count = 0

    def run(args: list[str], stdin: str | None = None) -> str:
        nonlocal count
        count += 1
        return "" if args[:3] == ["ip", "netns", "list"] else "[]"

    source = LabSwitchCounters(str(tmp_path), min_age_s=60, run=run)
    assert source() == [] and source() == []
    assert count == 3  # netns list, link, qdisc: once


def _phy(node: str = "leaf1") -> str:
    text = hardware.node_file(lab_plan(), node)
    assert text is not None
    return hardware.stamped(text, 1_764_000_000.0)


def test_the_physical_layer_is_served_from_the_nodes_phy_json() -> None:
    leaves = dict(phy_leaves(_phy()))
    for port in ("swp1", "swp2", "swp51", "swp52"):  # leaf1's cabled ports
        assert leaves[paths.leaf_path(Metric.FEC_CORRECTED, port)] == 0
        assert leaves[paths.leaf_path(Metric.FEC_UNCORRECTABLE, port)] == 0
        assert leaves[paths.leaf_path(Metric.CARRIER_TRANSITIONS, port)] == 0
        ber = leaves[paths.leaf_path(Metric.PRE_FEC_BER, port)]
        assert isinstance(ber, float) and ber == 1e-9
    assert len(leaves) == 16
    assert paths.leaf_path(Metric.PRE_FEC_BER, "swp51") == (
        "/components/component[name=swp51]/transceiver/state/pre-fec-ber/instant")


def test_what_phy_json_does_not_state_is_not_served() -> None:
    doc = json.loads(_phy())
    entry = doc["ports"]["swp51"]
    entry.pop("flaps")
    entry["fec_counters"] = {"uncorrectable": 7}
    leaves = dict(phy_leaves(json.dumps(doc)))
    assert leaves[paths.leaf_path(Metric.FEC_UNCORRECTABLE, "swp51")] == 7
    for metric in (Metric.FEC_CORRECTED, Metric.PRE_FEC_BER, Metric.CARRIER_TRANSITIONS):
        assert paths.leaf_path(metric, "swp51") not in leaves  # absent, never a zero
        assert paths.leaf_path(metric, "swp52") in leaves


def test_each_lanes_receive_power_is_served_where_the_module_states_it() -> None:
    # the lab's DACs keep no diagnostics (no leaf); an optic's lanes, counted from 1
    doc = json.loads(_phy())
    doc["ports"]["swp51"]["diagnostics"] = {"lanes": [
        {"rx_power_dbm": -1.5}, {"rx_power_dbm": -12.25}, {"tx_power_dbm": 0.5},
        {"rx_power_dbm": -2.0}]}
    leaves = dict(phy_leaves(json.dumps(doc)))
    assert {lane: leaves.get(paths.leaf_path(Metric.RX_POWER, "swp51", lane))
            for lane in (1, 2, 3, 4)} == {1: -1.5, 2: -12.25, 3: None, 4: -2.0}
    assert paths.leaf_path(Metric.RX_POWER, "swp51", 2) == (
        "/components/component[name=swp51]/transceiver/physical-channels/channel[index=2]"
        "/state/input-power/instant")
    assert not any("physical-channels" in path for path in dict(phy_leaves(_phy())))


def test_phy_json_is_read_again_when_it_changes_and_a_bad_one_serves_nothing(
        tmp_path: Path) -> None:
    file = tmp_path / hardware.FILE
    source = PhyFile(file)
    assert source() == []  # a node without the file (no physical link)
    file.write_text(_phy(), encoding="utf-8")
    first = source()
    assert len(first) == 16 and source() is first  # unchanged: not parsed again
    doc = json.loads(_phy())
    doc["ports"]["swp1"]["fec_counters"]["pre_fec_ber"] = 3e-6
    file.write_text(json.dumps(doc, indent=2), encoding="utf-8")
    assert dict(source())[paths.leaf_path(Metric.PRE_FEC_BER, "swp1")] == 3e-6
    file.write_text("{ not json", encoding="utf-8")
    assert source() == []  # unread: no physical leaf, not zeros


def test_the_lab_switchs_source_serves_its_phy_json_beside_the_kernels_counters(
        tmp_path: Path) -> None:
    (tmp_path / hardware.FILE).write_text(_phy(), encoding="utf-8")

    def run(args: list[str], stdin: str | None = None) -> str:
        return "" if args[:3] == ["ip", "netns", "list"] else "[]"

    served = dict(LabSwitchCounters(str(tmp_path), min_age_s=0, run=run)())
    assert served[paths.leaf_path(Metric.FEC_UNCORRECTABLE, "swp52")] == 0
