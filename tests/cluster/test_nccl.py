"""The NCCL settings a GPU server needs: computed from a planned host (intents/rail, server
su1-s1 with eth1-eth4 on rails 1-4), rendered as /etc/nccl.conf, parsed back, and judged
against what a host uses (tests/fixtures/rdma: RDMA devices that do not follow the rails)."""

from __future__ import annotations

import shutil
from functools import cache
from pathlib import Path

import pytest

from flatfab.cluster.nccl import (
    GID_INDEX,
    HCA,
    QPS,
    SOCKET_IFNAME,
    TC,
    NcclConfError,
    NcclError,
    NcclSettings,
    found_gid_index,
    judge_gid_index,
    judge_nccl,
    nccl_settings,
    parse_nccl_conf,
    render_nccl_conf,
    settings_in_use,
)
from flatfab.cluster.rdma import (
    GidTable,
    Mismatch,
    NoRdma,
    RdmaLink,
    RdmaPort,
    netdev_map,
    parse_rdma_link_json,
    read_gid_tables,
)
from flatfab.intent.loader import load_intent
from flatfab.model.state import DeviceState, FabricState, Role
from flatfab.plan.planner import plan

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "rdma"
SERVER = "su1-s1"
GOOD = {HCA: "=mlx5_2:1,mlx5_0:1,mlx5_3:1,mlx5_1:1", TC: "106", SOCKET_IFNAME: "=eno1"}


@cache
def _rail() -> FabricState:
    return plan(load_intent(ROOT / "intents" / "rail"))


def _host() -> DeviceState:
    return _rail().devices[SERVER].model_copy(deep=True)


def _links() -> list[RdmaLink]:
    links = parse_rdma_link_json((FIXTURES / "rdma_link.json").read_text(encoding="utf-8"))
    assert not isinstance(links, NoRdma)
    return links


def _tables(sysfs: Path = FIXTURES / "sysfs_rail_server") -> list[GidTable]:
    tables = read_gid_tables(sysfs)
    assert not isinstance(tables, NoRdma)
    return tables


def _settings(host: DeviceState | None = None, *, bootstrap: str | None = "eno1",
              gid_index: int | None = None) -> NcclSettings:
    return nccl_settings(host or _host(), netdev_map(_links()), bootstrap=bootstrap,
                         gid_index=gid_index)


def _judge(env: dict[str, str], *, gids: list[GidTable] | None = None,
           links: list[RdmaLink] | None = None) -> list[Mismatch]:
    return judge_nccl(_settings(), settings_in_use(env), gids=gids, links=links)


# --- what the plan asks for -----------------------------------------------------------------


def test_the_traffic_class_is_the_planned_roce_tos() -> None:
    lossless = _rail().lossless
    assert lossless is not None
    settings = _settings()
    assert settings.traffic_class == lossless.roce_tos == 106  # DSCP 26 << 2 | ECT(0)
    assert settings.variables()[TC] == "106"


def test_hcas_follow_the_rails_not_the_device_numbers() -> None:
    settings = _settings()
    assert [(h.rail, h.nic, str(h.rdma)) for h in settings.hcas] == [
        (1, "eth1", "mlx5_2:1"), (2, "eth2", "mlx5_0:1"), (3, "eth3", "mlx5_3:1"),
        (4, "eth4", "mlx5_1:1")]
    assert [h.address for h in settings.hcas] == [f"10.100.{r}.11" for r in range(1, 5)]
    assert settings.variables() == GOOD  # exact names: mlx5_1 alone would match mlx5_10


def test_an_inventorys_device_names_work_without_ports() -> None:
    names = {"eth1": "mlx5_2", "eth2": "mlx5_0", "eth3": "mlx5_3", "eth4": "mlx5_1"}
    settings = nccl_settings(_host(), names, bootstrap="eno1")
    assert settings.variables()[HCA] == "=mlx5_2,mlx5_0,mlx5_3,mlx5_1"


def test_a_nic_without_an_rdma_device_is_named() -> None:
    links = {k: v for k, v in netdev_map(_links()).items() if k != "eth3"}
    with pytest.raises(NcclError, match="su1-s1: no RDMA device known for eth3"):
        nccl_settings(_host(), links, bootstrap="eno1")


def test_the_bootstrap_is_never_a_data_nic() -> None:
    with pytest.raises(NcclError, match="bootstrap eth1 is a fabric data NIC"):
        _settings(bootstrap="eth1")
    assert SOCKET_IFNAME not in _settings(bootstrap=None).variables()


def test_only_a_host_has_nccl_settings() -> None:
    with pytest.raises(NcclError, match="not a host"):
        leaf = next(d for d in _rail().devices.values() if d.role is Role.LEAF)
        nccl_settings(leaf, {}, bootstrap="eno1")


def test_queue_pairs_are_set_only_above_one() -> None:
    assert QPS not in _settings().variables()
    host = _host()
    for nic in host.interfaces.values():
        if nic.nic is not None:
            nic.nic.queue_pairs = 4
    assert _settings(host).variables()[QPS] == "4"


def test_nics_that_disagree_on_the_tos_cannot_share_one_nccl_ib_tc() -> None:
    host = _host()
    nic = host.interfaces["eth3"].nic
    assert nic is not None
    host.interfaces["eth3"].nic = nic.model_copy(update={"roce_tos": 98})  # NICs share one
    with pytest.raises(NcclError, match=r"disagree on RoCE ToS \(eth1 106, .*eth3 98"):
        _settings(host)


def test_the_gid_index_found_is_the_one_every_nic_shares() -> None:
    settings = _settings()
    assert found_gid_index(settings, _tables()) == 3
    assert _settings(gid_index=3).variables()[GID_INDEX] == "3"


# --- /etc/nccl.conf -------------------------------------------------------------------------


def test_the_render_is_deterministic_with_a_header() -> None:
    text = render_nccl_conf(_settings())
    assert text == render_nccl_conf(_settings())
    assert text.startswith("# NCCL settings of su1-s1, written by flatfab")
    assert text.endswith("NCCL_IB_HCA==mlx5_2:1,mlx5_0:1,mlx5_3:1,mlx5_1:1\nNCCL_IB_TC=106\n"
                         "NCCL_SOCKET_IFNAME==eno1\n")
    comments = [line for line in text.splitlines() if line.startswith("#")]
    assert comments and not any("=" in line for line in comments)  # older NCCL reads them


@pytest.mark.parametrize(("gid_index", "bootstrap"), [(None, "eno1"), (3, None)])
def test_render_and_parse_round_trip(gid_index: int | None, bootstrap: str | None) -> None:
    settings = _settings(gid_index=gid_index, bootstrap=bootstrap)
    conf = parse_nccl_conf(render_nccl_conf(settings))
    assert conf.values == settings.variables()
    assert _judge_conf(settings, conf.values) == []


def _judge_conf(settings: NcclSettings, values: dict[str, str]) -> list[Mismatch]:
    return judge_nccl(settings, settings_in_use(values), gids=_tables(), links=_links())


def test_parse_skips_comments_and_blanks_and_keeps_a_keys_first_line() -> None:
    conf = parse_nccl_conf((FIXTURES / "nccl" / "site.conf").read_text(), "site.conf")
    assert conf.values == {"NCCL_DEBUG": "WARN", HCA: "mlx5", TC: "0", SOCKET_IFNAME: "=eno1"}
    assert conf.lines[TC] == 6


@pytest.mark.parametrize(("name", "message"), [
    ("spaces.conf", "spaces.conf:2: whitespace around the key or '='"),
    ("no_equals.conf", "no_equals.conf:4: 'NCCL_IB_GID_INDEX 3' is not KEY=VALUE"),
])
def test_a_line_nccl_would_misread_names_its_line(name: str, message: str) -> None:
    text = (FIXTURES / "nccl" / name).read_text()
    with pytest.raises(NcclConfError, match=message):
        parse_nccl_conf(text, name)


def test_a_bad_variable_name_names_its_line() -> None:
    with pytest.raises(NcclConfError, match=r"nccl.conf:2: '1NCCL' is not a variable name"):
        parse_nccl_conf("NCCL_DEBUG=WARN\n1NCCL=1\n")


def test_the_environment_wins_and_the_users_file_before_the_systems() -> None:
    user = parse_nccl_conf("NCCL_IB_TC=104\nNCCL_IB_HCA==mlx5_0\n", "~/.nccl.conf")
    system = parse_nccl_conf("NCCL_IB_TC=0\nNCCL_DEBUG=WARN\n", "/etc/nccl.conf")
    in_use = settings_in_use({TC: "106", "HOME": "/root"}, [user, system])
    assert in_use.values == {TC: ("106", "environment"), HCA: ("=mlx5_0", "~/.nccl.conf:2"),
                             "NCCL_DEBUG": ("WARN", "/etc/nccl.conf:2")}


# --- the judge ------------------------------------------------------------------------------


def test_settings_that_agree_have_no_mismatch() -> None:
    assert _judge(GOOD, gids=_tables(), links=_links()) == []


def test_the_sites_file_is_judged_setting_by_setting() -> None:
    conf = parse_nccl_conf((FIXTURES / "nccl" / "site.conf").read_text(), "site.conf")
    found = judge_nccl(_settings(), settings_in_use(None, [conf]), links=_links())
    assert [(m.setting, m.nic, m.rdma, m.actual, m.where) for m in found] == [
        (HCA, None, None, "mlx5", "site.conf:4"),  # a prefix
        (HCA, "eno1", "mlx5_4/1", "mlx5", "site.conf:4"),  # the management NIC's device
        (TC, None, None, "0", "site.conf:6")]
    assert found[2].expected == "106" and found[2].server == SERVER
    assert str(found[2]) == ("su1-s1: NCCL_IB_TC is 0 (site.conf:6), expected 106: the "
                             "fabric makes only the planned RoCE ToS lossless")


def test_unset_traffic_class_and_hcas_are_mismatches() -> None:
    found = _judge({SOCKET_IFNAME: "=eno1"})
    assert [(m.setting, m.actual) for m in found] == [(HCA, "unset"), (TC, "unset")]


def test_an_hca_list_missing_a_rail_names_its_nic() -> None:
    found = _judge({**GOOD, HCA: "=mlx5_2:1,mlx5_0:1,mlx5_1:1"})
    assert [(m.setting, m.nic, m.rdma) for m in found] == [(HCA, "eth3", "mlx5_3/1")]


def test_a_socket_interface_list_selecting_data_nics_names_them() -> None:
    found = _judge({**GOOD, SOCKET_IFNAME: "eth"})
    assert [(m.setting, m.nic) for m in found] == [
        (SOCKET_IFNAME, None), *((SOCKET_IFNAME, f"eth{r}") for r in range(1, 5))]


def test_queue_pairs_other_than_planned_are_named() -> None:
    found = _judge({**GOOD, QPS: "4"})
    assert [(m.setting, m.expected, m.actual) for m in found] == [(QPS, "1", "4")]


# --- the GID index --------------------------------------------------------------------------


def _gid_mismatches(index: str | None, tables: list[GidTable] | None = None,
                    **env: str) -> list[Mismatch]:
    values = {**env, **({GID_INDEX: index} if index is not None else {})}
    found = judge_gid_index(_settings(), settings_in_use(values), tables or _tables())
    assert not isinstance(found, NoRdma)
    return found


def test_the_roce_v2_ipv4_gid_passes() -> None:
    assert _gid_mismatches("3") == []
    assert _gid_mismatches(None) == []  # NCCL's own choice finds it on every NIC


def test_a_roce_v1_index_is_named_on_every_nic() -> None:
    found = _gid_mismatches("2")
    assert [(m.nic, m.rdma) for m in found] == [
        ("eth1", "mlx5_2/1"), ("eth2", "mlx5_0/1"), ("eth3", "mlx5_3/1"), ("eth4", "mlx5_1/1")]
    first = found[0]
    assert first.setting == GID_INDEX and "IB/RoCE v1 GID, not RoCE v2" in first.why
    assert first.expected == "3 (RoCE v2 ::ffff:10.100.1.11 on eth1)"
    assert first.actual == "2 (IB/RoCE v1 ::ffff:10.100.1.11 on eth1)"


def test_a_link_local_index_is_named() -> None:
    found = _gid_mismatches("1")
    assert len(found) == 4 and all("link-local" in m.why for m in found)
    assert found[0].actual.startswith("1 (RoCE v2 fe80::ac0:ebff:fe12:3401")


def test_an_empty_or_unreadable_index_is_named(tmp_path: Path) -> None:
    assert all(m.why == "no GID at that index" for m in _gid_mismatches("5"))
    shutil.copytree(FIXTURES / "sysfs_rail_server", tmp_path, dirs_exist_ok=True)
    port = tmp_path / "class" / "infiniband" / "mlx5_0" / "ports" / "1"
    (port / "gid_attrs" / "types" / "3").unlink()
    found = _gid_mismatches("3", _tables(tmp_path))
    assert [(m.nic, m.why.split(" (")[0]) for m in found] == [("eth2", "unreadable")]


def test_left_to_nccl_a_missing_roce_v2_gid_and_a_v1_choice_are_named(tmp_path: Path) -> None:
    shutil.copytree(FIXTURES / "sysfs_rail_server", tmp_path, dirs_exist_ok=True)
    port = tmp_path / "class" / "infiniband" / "mlx5_1" / "ports" / "1"
    (port / "gid_attrs" / "types" / "3").write_text("IB/RoCE v1\n")
    found = _gid_mismatches("-1", _tables(tmp_path), NCCL_IB_ROCE_VERSION_NUM="1")
    assert [(m.setting, m.nic, m.actual) for m in found] == [
        ("NCCL_IB_ROCE_VERSION_NUM", None, "1"), (GID_INDEX, "eth4", "-1")]


def test_gid_tables_of_a_host_without_rdma_judge_nothing(tmp_path: Path) -> None:
    none = read_gid_tables(tmp_path)
    assert isinstance(none, NoRdma)
    assert judge_gid_index(_settings(), settings_in_use(GOOD), none) is none
    assert judge_nccl(_settings(), settings_in_use(GOOD), gids=none) == []


def test_a_gid_table_missing_for_a_nic_is_named() -> None:
    tables = [t for t in _tables() if t.device != "mlx5_3"]
    found = _gid_mismatches("3", tables)
    assert [(m.nic, m.why) for m in found] == [("eth3", "no GID table in sysfs")]


def test_an_rdma_port_without_a_number_matches_any_port() -> None:
    settings = nccl_settings(_host(), {f"eth{r}": RdmaPort(d) for r, d in
                                       ((1, "mlx5_2"), (2, "mlx5_0"), (3, "mlx5_3"),
                                        (4, "mlx5_1"))}, bootstrap="eno1")
    found = judge_nccl(settings, settings_in_use({**GOOD, HCA: "=mlx5_2,mlx5_0,mlx5_3,mlx5_1"}),
                       gids=_tables(), links=_links())
    assert found == []


def test_a_nic_without_a_fabric_ipv4_address_is_named() -> None:
    host = _host()
    host.interfaces["eth2"].addresses = []
    settings = nccl_settings(host, netdev_map(_links()), bootstrap="eno1")
    found = judge_gid_index(settings, settings_in_use({GID_INDEX: "3"}), _tables())
    assert not isinstance(found, NoRdma)
    assert [(m.nic, m.why) for m in found] == [("eth2", "no fabric IPv4 address planned")]
