"""The lossless plane: qos.yaml loading, the plan, CONFIG_DB and kernel-queue round trips."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from flatfab.checks.lossless.ecn import _ecn_text
from flatfab.errors import InputError
from flatfab.intent.loader import load_intent
from flatfab.intent.qos import EcnIntent, EcnThresholds
from flatfab.model.state import EcnProfile, FabricState, IfKind, Role
from flatfab.plan.planner import plan
from flatfab.platforms import configdb
from flatfab.platforms.frr import kernel_qos
from flatfab.qos.ecn_delay import delay_us
from tests.support.paths import ROOT

LAB = plan(load_intent(ROOT / "intents" / "lab"))


def with_qos(tmp_path: Path, text: str) -> Path:
    target = tmp_path / "lab"
    shutil.copytree(ROOT / "intents" / "lab", target)
    (target / "qos.yaml").write_text(text)
    return target


def test_no_qos_file_gives_the_canonical_profile(tmp_path: Path) -> None:
    target = with_qos(tmp_path, "")
    (target / "qos.yaml").unlink()
    assert plan(load_intent(target)) == LAB  # intents/lab/qos.yaml spells out the defaults
    assert LAB.lossless is not None
    assert (LAB.lossless.roce_dscp, LAB.lossless.lossless, LAB.lossless.cnp_dscp,
            LAB.lossless.cnp_priority, LAB.lossless.roce_tos) == ([26], [3], [48], 6, 106)


def test_every_switch_port_and_nic_has_lossless_state() -> None:
    for device in LAB.devices.values():
        for iface in device.interfaces.values():
            if device.role is Role.HOST and iface.kind is IfKind.NIC:
                assert iface.nic is not None and iface.nic.pfc == [3]
            elif iface.kind is IfKind.HOST_PORT or (iface.kind is IfKind.FABRIC
                                                    and iface.parent is None):
                assert iface.qos is not None and iface.qos.pfc == [3], (device.name, iface.name)
                assert iface.qos.maps.dscp_to_tc[26] == 3 and iface.qos.maps.dscp_to_tc[48] == 6


def test_headroom_profiles_follow_cable_length() -> None:
    leaf = LAB.devices["leaf1"]
    assert leaf.qos is not None
    host_pg = leaf.qos.profiles["lossless_100000_2m_mtu9000"]
    fabric_pg = leaf.qos.profiles["lossless_100000_3m_mtu9216"]
    assert 0 < host_pg.xoff < fabric_pg.xoff and fabric_pg.size == fabric_pg.xon + fabric_pg.xoff


@pytest.mark.parametrize(("text", "path", "reason"), [
    ("roce: {dscp: [64], priority: 3}\n", "roce.dscp[0]", "less than or equal to 63"),
    ("cnp: {dscp: [26], priority: 6}\n", "", "DSCP 26 is both a RoCE and a CNP code point"),
    ("cnp: {dscp: [48], priority: 3}\n", "", "share priority 3"),
    ("ets: {weights: {0: 60, 3: 50}}\n", "ets", "must sum to 100"),
    ("ets: {strict: [3], weights: {0: 50, 3: 50}}\n", "ets", "both strict and weighted"),
    ("ecn: {per_speed: {300G: {min_bytes: 1, max_bytes: 2}}}\n", "ecn.per_speed",
     "unknown speed '300G'"),
    ("ecn: {default: {min_us: 5}}\n", "ecn.default", "no maximum: give `max_bytes` or "
     "`max_us`"),
    ("ecn: {per_speed: {100G: {min_us: 5, min_bytes: 9000, max_us: 50}}}\n",
     "ecn.per_speed.100G", "the minimum twice: `min_bytes` or `min_us`, not both"),
    ("ecn: {default: {min_us: 0, max_us: 50}}\n", "ecn.default.min_us", "greater than 0"),
    ("asics: {frr: {family: tomahawk9}}\n", "asics.frr.family", "unknown ASIC family"),
    ("pfc: {watchdog: {detect_ms: 50}}\n", "pfc.watchdog.detect_ms", "greater than or equal"),
    ("pfc: {priorities: [8]}\n", "pfc.priorities[0]", "less than or equal to 7"),
    ("hosts: {trusst: dscp}\n", "hosts.trusst", "unknown key 'trusst'"),
])
def test_impossible_qos_values_are_rejected(tmp_path: Path, text: str, path: str,
                                            reason: str) -> None:
    with pytest.raises(InputError) as caught:
        load_intent(with_qos(tmp_path, text))
    problem = caught.value.problems[0]
    assert problem.file.endswith("qos.yaml")
    assert problem.path == path and reason in problem.reason


def _queue_ecn(fabric: FabricState, device: str, port: str) -> tuple[int, int, int]:
    qos = fabric.devices[device].interfaces[port].qos
    assert qos is not None and qos.queues[3].ecn is not None
    return qos.speed_mbps, qos.queues[3].ecn.min_bytes, qos.queues[3].ecn.max_bytes


def test_ecn_in_microseconds_is_taken_at_each_port_speed(tmp_path: Path) -> None:
    # the lab's host ports and fabric links run at 100G: 5 us = 62,500 B there; the override
    # gives its ports bytes at the low end and time at the high end
    text = ("ecn:\n  default: {min_us: 5, max_us: 50.5, probability: 20}\n"
            "overrides:\n  - {devices: [leaf1], ports: [swp1], ecn: {min_bytes: 20000, "
            "max_us: 10}}\n")
    fabric = plan(load_intent(with_qos(tmp_path, text)))
    assert _queue_ecn(fabric, "leaf2", "swp1") == (100_000, 62_500, 631_250)
    assert _queue_ecn(fabric, "spine1", "swp1") == (100_000, 62_500, 631_250)
    assert _queue_ecn(fabric, "leaf1", "swp1") == (100_000, 20_000, 125_000)
    qos = fabric.devices["leaf2"].interfaces["swp1"].qos
    assert qos is not None and qos.queues[3].ecn is not None
    assert qos.queues[3].ecn.probability == 20


@pytest.mark.parametrize(("speed", "min_bytes", "max_bytes"), [
    (25_000, 15_625, 156_250), (100_000, 62_500, 625_000), (400_000, 250_000, 2_500_000),
    (800_000, 500_000, 5_000_000)])
def test_one_delay_is_four_times_the_bytes_at_four_times_the_speed(
        speed: int, min_bytes: int, max_bytes: int) -> None:
    thresholds = EcnIntent(default=EcnThresholds(min_us=5, max_us=50)).for_speed(speed)
    assert thresholds.bytes == (min_bytes, max_bytes)
    assert EcnIntent(per_speed={"400g": EcnThresholds(min_bytes=1, max_us=1)}).for_speed(
        400_000).bytes == (1, 50_000)


def test_a_mismatch_names_the_thresholds_in_bytes_and_in_delay() -> None:
    ecn = EcnProfile(min_bytes=62_500, max_bytes=625_000, probability=10)
    assert _ecn_text(ecn, 100_000) == ("min 62500 B (5 µs), max 625000 B (50 µs) at 100G, "
                                       "10 %")
    assert _ecn_text(ecn, None) == "min 62500 B, max 625000 B, 10 %"
    assert delay_us(2_500_000, 400_000) == 50


def test_config_db_round_trip_gives_back_the_planned_state() -> None:
    for name in ("leaf1", "spine2"):
        device = LAB.devices[name]
        db = configdb.load(configdb.dump(configdb.to_config_db(device)))
        qos, ports = configdb.from_config_db(db, virtual=True)
        assert qos == device.qos.model_copy(update={"virtual": True})  # type: ignore[union-attr]
        assert ports == {n: i.qos for n, i in device.interfaces.items() if i.qos is not None}


def test_config_db_dangling_references_are_errors() -> None:
    db = configdb.to_config_db(LAB.devices["leaf1"])
    db["PORT_QOS_MAP"]["swp51"]["dscp_to_tc_map"] = "MISSING"
    with pytest.raises(configdb.ConfigDbError, match=r"DSCP_TO_TC_MAP\|MISSING, which does not"):
        configdb.from_config_db(db, virtual=True)


def test_kernel_rows_cover_ports_and_their_vrf_sub_links() -> None:
    rows = kernel_qos.kernel_rows(LAB.devices["leaf1"], 48_000_000, 4_000_000)
    assert sorted(rows) == ["swp1", "swp2", "swp51", "swp51.100", "swp51.200", "swp52",
                            "swp52.100", "swp52.200"]
    assert rows["swp51.100"]["vrf"] == "blue" and rows["swp51"]["dscp_to_tc"] == "26:3,48:6"
    assert kernel_qos.dscp_to_tc(rows["swp1"]) == LAB.devices["leaf1"].interfaces[
        "swp1"].qos.maps.dscp_to_tc  # type: ignore[union-attr]


def test_tc_readback_parses_what_tc_ops_installs() -> None:
    """Output recorded from tc after running tc_ops for one row (iproute2 6.x)."""
    qdisc = ('[{"kind":"htb","handle":"1:","root":true,"options":{"r2q":1000000,'
             '"default":"0x10"},"bytes":0,"packets":0,"drops":0},'
             + ",".join(f'{{"kind":"bfifo","handle":"1{t}:","parent":"1:1{t}","options":'
                        f'{{"limit":{16000000 if t == 3 else 4000000}}},"bytes":{t},'
                        f'"packets":{t},"drops":0}}' for t in range(8)) + "]")
    filters = ('[{"parent":"1:","kind":"u32"},{"parent":"1:","kind":"u32","options":'
               '{"fh":"800::800","flowid":"1:13","match":{"value":"680000","mask":"fc0000",'
               '"offmask":"","off":0}}},{"parent":"1:","kind":"u32","options":{"fh":"800::801",'
               '"flowid":"1:16","match":{"value":"c00000","mask":"fc0000","offmask":"",'
               '"off":0}}}]')
    classes = "\n".join(
        ["class htb 1:10 parent 1:1 prio 1 rate 50Gbit ceil 100Gbit burst 1037500b",
         "class htb 1:1 root rate 100Gbit ceil 100Gbit burst 1025000b cburst 1025000b"]
        + [f"class htb 1:1{t} parent 1:1 leaf 1{t}: prio {0 if t == 6 else 1} rate "
           f"{'50Gbit' if t == 3 else '1Mbit'} ceil 100Gbit" for t in range(1, 8)])
    row, counters = kernel_qos.parse_link("swp51", "default", qdisc, filters, classes)
    assert row == {"vrf": "default", "speed_mbps": "100000", "default_tc": "0",
                   "dscp_to_tc": "26:3,48:6", "strict": "6", "weights": "0:50,3:50",
                   "queue_bytes": ",".join(f"{t}:{16000000 if t == 3 else 4000000}"
                                           for t in range(8))}
    assert counters[3] == {"bytes": 3, "packets": 3, "drops": 0}


def test_a_link_without_flatfab_queues_has_no_row() -> None:
    noqueue = '[{"kind":"noqueue","handle":"0:","root":true,"options":{}}]'
    assert kernel_qos.parse_link("swp1", "blue", noqueue, "[]", "") == (None, {})


def test_dcb_commands_follow_the_port_state() -> None:
    from flatfab.platforms.frr import dcb  # noqa: PLC0415

    leaf = LAB.devices["leaf1"]
    assert leaf.qos is not None
    ports = {n: i.qos for n, i in leaf.interfaces.items() if i.qos is not None}
    cmds = dcb.device_commands(ports, leaf.qos, devlink="pci/0000:01:00.0")
    assert "devlink sb pool set pci/0000:01:00.0 pool 0 size 48000000 thtype dynamic" in cmds
    swp51 = dcb.port_commands("swp51", ports["swp51"], leaf.qos)
    assert swp51 == [
        "dcb apptrust set dev swp51 order dscp",
        "dcb app flush dev swp51 dscp-prio",
        "dcb app add dev swp51 dscp-prio 26:3 48:6",
        # TC 7 and 6 strict (mlxsw: the first bands), then DWRR quanta for TC 5..0
        "tc qdisc replace dev swp51 root handle 1: ets bands 8 strict 2 quanta 100 100 5000 "
        "100 100 5000 priomap 7 6 5 4 3 2 1 0",
        "tc qdisc replace dev swp51 parent 1:5 handle 15: red limit 3000000 avpkt 1000 "
        "min 150000 max 1500000 probability 0.1 ecn nodrop",
        "dcb pfc set dev swp51 prio-pfc all:off 3:on",
        "dcb buffer set dev swp51 prio-buffer all:0 3:3 buffer-size all:0 3:132096",
    ]


def test_dump_is_canonical_json() -> None:
    """The fast writer gives exactly json.dumps(indent=1, sort_keys=True)."""
    import json  # noqa: PLC0415

    for device in LAB.devices.values():
        db = configdb.to_config_db(device)
        assert configdb.dump(db) == json.dumps(db, indent=1, sort_keys=True) + "\n"
    odd = {"A": {}, "B": {'k"x': {"f": "v\n"}, "e": {}}}
    assert configdb.dump(odd) == json.dumps(odd, indent=1, sort_keys=True) + "\n"
    assert configdb.dump({}) == "{}\n"
