"""The readers of a host's RDMA state (sysfs GID tables, `rdma link`, `ibv_devinfo`) on
outputs shaped after their documentation (tests/fixtures/rdma/README.md), and the RDMA MTU
judge."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from flatfab.cluster.rdma import (
    ROCE_V1,
    ROCE_V2,
    GidTable,
    IbvPort,
    NoRdma,
    RdmaLink,
    RdmaOutputError,
    RdmaPort,
    judge_rdma_mtu,
    netdev_map,
    parse_ibv_devinfo,
    parse_rdma_link_json,
    parse_rdma_link_text,
    read_gid_tables,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "rdma"
SYSFS = FIXTURES / "sysfs_rail_server"
NICS = {"eth1": RdmaPort("mlx5_2", 1), "eth2": RdmaPort("mlx5_0", 1),
        "eth3": RdmaPort("mlx5_3", 1), "eth4": RdmaPort("mlx5_1", 1)}


def _text(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def _tables(sysfs: Path = SYSFS) -> list[GidTable]:
    tables = read_gid_tables(sysfs)
    assert not isinstance(tables, NoRdma)
    return tables


def _links(name: str = "rdma_link.json") -> list[RdmaLink]:
    links = parse_rdma_link_json(_text(name))
    assert not isinstance(links, NoRdma)
    return links


def _ports(name: str = "ibv_devinfo.txt") -> list[IbvPort]:
    ports = parse_ibv_devinfo(_text(name))
    assert not isinstance(ports, NoRdma)
    return ports


# --- sysfs GID tables ---------------------------------------------------------------------


def test_gid_tables_list_every_device_port_without_unused_entries() -> None:
    tables = _tables()
    assert [(t.device, t.port) for t in tables] == [(f"mlx5_{n}", 1) for n in range(5)]
    assert all([e.index for e in t.entries] == [0, 1, 2, 3] for t in tables)
    assert all(not t.unreadable for t in tables)


def test_a_gid_entry_has_its_type_netdev_and_address() -> None:
    table = _tables()[2]  # mlx5_2 is eth1, rail 1
    v1_link_local, v2_link_local, v1_ipv4, v2_ipv4 = table.entries
    assert (v1_link_local.type, v1_link_local.netdev) == (ROCE_V1, "eth1")
    assert v2_link_local.roce_v2 and v2_link_local.link_local and v2_link_local.ipv4 is None
    assert not v1_ipv4.roce_v2 and v1_ipv4.ipv4 == "10.100.1.11"
    assert v2_ipv4.type == ROCE_V2 and v2_ipv4.ipv4 == "10.100.1.11"
    assert not v2_ipv4.link_local
    assert table.roce_v2_of("10.100.1.11", "eth1") == v2_ipv4
    assert table.roce_v2_of("10.100.1.11", "eth2") is None
    assert v2_ipv4.describe() == "3 (RoCE v2 ::ffff:10.100.1.11 on eth1)"


def test_devices_sort_naturally(tmp_path: Path) -> None:
    base = tmp_path / "class" / "infiniband"
    for device in ("mlx5_10", "mlx5_2"):
        shutil.copytree(SYSFS / "class" / "infiniband" / "mlx5_0", base / device)
    assert [t.device for t in _tables(tmp_path)] == ["mlx5_2", "mlx5_10"]


def test_an_unreadable_gid_attribute_is_named_never_guessed(tmp_path: Path) -> None:
    shutil.copytree(SYSFS, tmp_path, dirs_exist_ok=True)
    port = tmp_path / "class" / "infiniband" / "mlx5_2" / "ports" / "1"
    (port / "gid_attrs" / "types" / "3").unlink()
    table = _tables(tmp_path)[2]
    entry = table.at(3)
    assert entry is not None and entry.type is None and entry.netdev == "eth1"
    assert [path for path, _ in table.unreadable] == ["gid_attrs/types/3"]
    why = table.unread(3)
    assert why is not None and why.startswith("gid_attrs/types/3: ")
    assert table.roce_v2_of("10.100.1.11") is None  # an unknown type is never taken as v2


def test_a_malformed_gid_is_an_error_naming_its_file(tmp_path: Path) -> None:
    shutil.copytree(SYSFS, tmp_path, dirs_exist_ok=True)
    gid = tmp_path / "class" / "infiniband" / "mlx5_1" / "ports" / "1" / "gids" / "2"
    gid.write_text("not-a-gid\n")
    with pytest.raises(RdmaOutputError, match=r"mlx5_1/ports/1/gids/2: 'not-a-gid'"):
        read_gid_tables(tmp_path)


def test_a_machine_without_rdma_devices_is_no_rdma(tmp_path: Path) -> None:
    missing = read_gid_tables(tmp_path)
    assert isinstance(missing, NoRdma) and "no such directory" in missing.why
    (tmp_path / "class" / "infiniband").mkdir(parents=True)
    assert isinstance(read_gid_tables(tmp_path), NoRdma)


# --- rdma link ------------------------------------------------------------------------------


def test_rdma_link_json_gives_device_port_state_and_netdev() -> None:
    links = _links()
    assert links[0] == RdmaLink("mlx5_0", 1, "ACTIVE", "LINK_UP", "eth2")
    assert all(link.active for link in links)
    assert netdev_map(links) == {**NICS, "eno1": RdmaPort("mlx5_4", 1)}


def test_rdma_link_text_reads_as_the_json() -> None:
    assert parse_rdma_link_text(_text("rdma_link.txt")) == _links()


def test_rdma_link_details_skip_the_caps_lines() -> None:
    links = parse_rdma_link_text(_text("rdma_link_details.txt"))
    assert links == _links()[:2]


def test_the_first_rdma_tools_forms_are_read_too() -> None:
    expected = [RdmaLink("mlx5_0", 1, "ACTIVE", "LINK_UP", "eth2")]
    assert _links("rdma_link_iproute2_old.json") == expected
    assert parse_rdma_link_text(_text("rdma_link_iproute2_old.txt")) == expected


def test_rdma_link_printing_nothing_is_no_rdma() -> None:
    assert isinstance(parse_rdma_link_text(_text("rdma_link_empty.txt")), NoRdma)
    assert isinstance(parse_rdma_link_json(_text("rdma_link_empty.json")), NoRdma)
    assert isinstance(parse_rdma_link_json(""), NoRdma)


@pytest.mark.parametrize(("text", "message"), [
    ("{not json", r"rdma -j link show: not JSON \(line 1"),
    ('{"ifname": "mlx5_0"}', "not a JSON array"),
    ('[{"ifname": "mlx5_0", "port": 1, "state": "ACTIVE"}]',
     r"\[0\] \(mlx5_0/1\): no 'state' or 'physical_state'"),
    ('[{"port": 1}]', r"\[0\]: no 'ifname'"),
    ('[{"ifname": "mlx5_0", "port": "1", "state": "ACTIVE", "physical_state": "LINK_UP"}]',
     "no integer 'port'"),
])
def test_malformed_rdma_link_json_is_one_clear_error(text: str, message: str) -> None:
    with pytest.raises(RdmaOutputError, match=message):
        parse_rdma_link_json(text)


@pytest.mark.parametrize(("text", "message"), [
    ("link mlx5_0/1 state ACTIVE physical_state LINK_UP\nrdma: command not found\n",
     "line 2: 'rdma: command not found' is not a link line"),
    ("link mlx5_0 state ACTIVE physical_state LINK_UP\n", "line 1: 'mlx5_0' is not DEVICE/PORT"),
    ("link mlx5_0/1 state ACTIVE physical_state\n", "line 1: .* a key without its value"),
    ("link mlx5_0/1 netdev eth1\n", "line 1: mlx5_0/1: no state"),
])
def test_malformed_rdma_link_text_names_the_line(text: str, message: str) -> None:
    with pytest.raises(RdmaOutputError, match=message):
        parse_rdma_link_text(text)


# --- ibv_devinfo ----------------------------------------------------------------------------


def test_ibv_devinfo_gives_state_mtu_and_link_layer_per_port() -> None:
    ports = _ports()
    assert [(p.device, p.port) for p in ports] == [(f"mlx5_{n}", 1) for n in range(5)]
    assert ports[0] == IbvPort("mlx5_0", 1, "PORT_ACTIVE", 4096, "Ethernet")
    assert ports[4].active_mtu == 1024


def test_ibv_devinfo_without_devices_is_no_rdma() -> None:
    assert isinstance(parse_ibv_devinfo(_text("ibv_devinfo_none.txt")), NoRdma)
    assert isinstance(parse_ibv_devinfo("No IB devices found\n"), NoRdma)


def test_an_invalid_mtu_is_unknown_not_a_number() -> None:
    text = _text("ibv_devinfo.txt").replace("active_mtu:\t\t4096 (5)", "active_mtu:\t\tinvalid "
                                            "MTU (6)", 1)
    assert _ports_of(text)[0].active_mtu is None


def _ports_of(text: str) -> list[IbvPort]:
    ports = parse_ibv_devinfo(text)
    assert not isinstance(ports, NoRdma)
    return ports


@pytest.mark.parametrize(("text", "message"), [
    ("bash: ibv_devinfo: command not found\n", "line 1: .* before any hca_id"),
    ("hca_id:\tmlx5_0\n\t\tport:\tone\n", "line 2: port 'one' is not a number"),
    ("hca_id:\tmlx5_0\n\tphys_port_cnt:\t\t\t1\n", "devices without any port section"),
    ("hca_id:\tmlx5_0\n\t\tport:\t1\n\t\t\tstate:\t\t\tPORT_ACTIVE (4)\n",
     r"line 2 \(mlx5_0 port 1\): no active_mtu, link_layer"),
    ("hca_id:\tmlx5_0\n\t\tport:\t1\n\t\t\tstate:\t\t\tactive\n\t\t\tactive_mtu:\t\t4096 (5)\n"
     "\t\t\tlink_layer:\t\tEthernet\n", "state 'active' is not NAME"),
])
def test_malformed_ibv_devinfo_names_where(text: str, message: str) -> None:
    with pytest.raises(RdmaOutputError, match=message):
        parse_ibv_devinfo(text)


# --- the RDMA MTU against the fabric's RoCE MTU ---------------------------------------------


def test_fabric_nics_at_the_roce_mtu_pass() -> None:
    assert judge_rdma_mtu("su1-s1", _ports(), 4096, NICS) == []


def test_an_mtu_mismatch_and_a_down_port_are_named() -> None:
    found = judge_rdma_mtu("su1-s1", _ports("ibv_devinfo_degraded.txt"), 4096, NICS)
    assert not isinstance(found, NoRdma)
    assert [(m.nic, m.rdma, m.setting, m.expected, m.actual) for m in found] == [
        ("eth3", "mlx5_3/1", "active_mtu", "4096", "2048"),
        ("eth4", "mlx5_1/1", "state", "PORT_ACTIVE", "PORT_DOWN")]
    assert str(found[0]).startswith("su1-s1 eth3 mlx5_3/1: active_mtu is 2048 (ibv_devinfo), "
                                    "expected 4096")


def test_without_the_nic_map_every_ethernet_port_is_judged() -> None:
    found = judge_rdma_mtu("su1-s1", _ports(), 4096)
    assert not isinstance(found, NoRdma)
    assert [(m.rdma, m.actual) for m in found] == [("mlx5_4/1", "1024")]


def test_a_fabric_nic_missing_from_ibv_devinfo_is_named() -> None:
    found = judge_rdma_mtu("su1-s1", _ports()[:4], 4096, {"eth5": RdmaPort("mlx5_9")})
    assert not isinstance(found, NoRdma)
    assert [(m.nic, m.setting, m.actual) for m in found] == [("eth5", "rdma device", "absent")]


def test_a_host_without_rdma_is_not_judged() -> None:
    none = parse_ibv_devinfo("")
    assert isinstance(none, NoRdma)
    assert judge_rdma_mtu("su1-s1", none, 4096, NICS) is none


def test_a_gid_file_that_is_not_text_is_named(tmp_path: Path) -> None:
    shutil.copytree(SYSFS, tmp_path, dirs_exist_ok=True)
    gid = tmp_path / "class" / "infiniband" / "mlx5_0" / "ports" / "1" / "gids" / "0"
    gid.write_bytes(b"\xff\xfe")
    with pytest.raises(RdmaOutputError, match="mlx5_0/ports/1/gids/0: not ASCII text"):
        read_gid_tables(tmp_path)
