"""linux_host's nccl.conf (config lines, the file the driver writes and reads back) and its
read of a GPU server's RDMA state, on the documented outputs of tests/fixtures/rdma/."""

from __future__ import annotations

import json

import pytest

from flatfab.intent.loader import load_intent
from flatfab.model.state import DeviceState, HostRdma
from flatfab.plan.planner import plan
from flatfab.platforms.linux_host import nccl_conf, rdma_state, rdma_sysfs
from flatfab.platforms.linux_host.collect import collect
from flatfab.platforms.linux_host.config import format_config, parse_config
from flatfab.platforms.linux_host.driver import LinuxHostDriver
from flatfab.platforms.linux_host.render import host_config, render
from tests.doubles.frr import FakeShell, Reply
from tests.doubles.linux_host import host_answers
from tests.support.paths import FIXTURES, ROOT

RDMA = FIXTURES / "rdma"
SYSFS = RDMA / "sysfs_rail_server" / "class" / "infiniband"
# su1-s1's RDMA devices as the fixtures' `rdma link` shows them (not in rail order)
DEVICES = {"eth1": "mlx5_2", "eth2": "mlx5_0", "eth3": "mlx5_3", "eth4": "mlx5_1"}


def gpu_server(bootstrap: str | None = "eno1") -> DeviceState:
    host = plan(load_intent(ROOT / "intents" / "rail")).devices["su1-s1"]
    host.rdma = HostRdma(bootstrap=bootstrap)
    return host


def fixture(name: str) -> str:
    return (RDMA / name).read_text(encoding="utf-8")


def reads(**changes: str | None) -> rdma_state.RdmaReads:
    values: dict[str, str | None] = {
        "nccl": None, "sysfs": json.dumps(rdma_sysfs.main(str(SYSFS))),
        "rdma_link": fixture("rdma_link.json"), "ibv_devinfo": fixture("ibv_devinfo.txt")}
    values.update(changes)
    return rdma_state.RdmaReads(nccl_path="/etc/nccl.conf", nccl=values["nccl"],
                                sysfs=values["sysfs"] or "", rdma_link=values["rdma_link"] or "",
                                ibv_devinfo=values["ibv_devinfo"] or "")


# --- render and the config lines ----------------------------------------------------------


def test_a_gpu_server_renders_its_nccl_lines_in_rail_order_and_parses_back() -> None:
    host = gpu_server()
    text = render(host)
    lines = [line for line in text.splitlines() if line.startswith("nccl ")]
    assert lines == ["nccl hca eth1,eth2,eth3,eth4", "nccl NCCL_IB_TC=106",
                     "nccl NCCL_SOCKET_IFNAME==eno1"]
    assert parse_config(text).nccl == host_config(host).nccl
    assert format_config(parse_config(text)) == text


def test_queue_pairs_above_one_are_rendered_and_a_host_without_nccl_renders_none() -> None:
    host = gpu_server(bootstrap=None)
    for iface in host.interfaces.values():
        assert iface.nic is not None
        iface.nic = iface.nic.model_copy(update={"queue_pairs": 4})
    lines = [line for line in render(host).splitlines() if line.startswith("nccl ")]
    assert lines == ["nccl hca eth1,eth2,eth3,eth4", "nccl NCCL_IB_QPS_PER_CONNECTION=4",
                     "nccl NCCL_IB_TC=106"]
    host.rdma = None
    assert "nccl" not in render(host)


@pytest.mark.parametrize(("line", "problem"), [
    ("nccl hca eth1,eth1", "distinct NIC names"),
    ("nccl NCCL_IB_TC 106", "cannot parse"),
    ("nccl ib_tc=106", "cannot parse"),
    ("nccl hca eth9", "no `nic` line"),
])
def test_a_bad_nccl_line_is_refused(line: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        parse_config(f"nic eth1 mtu 9000 up\n{line}\n")


# --- the file -----------------------------------------------------------------------------


def test_the_file_lists_the_rdma_devices_exactly_and_reads_back_as_written() -> None:
    config = host_config(gpu_server()).nccl
    assert config is not None
    text = nccl_conf.file_text(config, DEVICES)
    assert "NCCL_IB_HCA==mlx5_2,mlx5_0,mlx5_3,mlx5_1\n" in text
    assert all("=" not in line for line in text.splitlines() if line.startswith("#"))
    assert nccl_conf.owned(text)
    assert nccl_conf.read_file(text, "/etc/nccl.conf", DEVICES) == config
    # another map: the devices no longer name the NICs, so drift shows the line as written
    moved = nccl_conf.read_file(text, "/etc/nccl.conf", {**DEVICES, "eth1": "mlx5_7"})
    assert moved != config and ("NCCL_IB_HCA", "=mlx5_2,mlx5_0,mlx5_3,mlx5_1") in moved.variables


def test_without_rdma_devices_the_file_says_why_hca_is_left_out_and_reads_back() -> None:
    config = host_config(gpu_server()).nccl
    assert config is not None
    text = nccl_conf.file_text(config, {})
    assert "NCCL_IB_HCA" not in [line.split("=")[0] for line in text.splitlines()
                                 if not line.startswith("#")]
    assert "no RDMA device known for eth1 eth2 eth3 eth4" in text
    assert nccl_conf.read_file(text, "p", {}) == config
    # once the inventory names the devices, the file no longer says all flatfab can write
    assert nccl_conf.read_file(text, "p", DEVICES).hca == ()


# --- the driver ---------------------------------------------------------------------------


def _driver(**options: object) -> tuple[LinuxHostDriver, FakeShell]:
    driver = LinuxHostDriver("192.0.2.17", "ff-admin", None, optional_args=dict(options))
    shell = FakeShell(host_answers())
    driver.session = shell
    return driver, shell


CANDIDATE = ("nic eth1 mtu 9000 up\naddress eth1 10.0.1.11/24\nnccl hca eth1\n"
             "nccl NCCL_IB_TC=106\nnccl NCCL_SOCKET_IFNAME==eth0\n")


def _script(shell: FakeShell) -> str:
    return "\n".join(stdin or "" for _, stdin in shell.applied)


def test_the_lab_backend_writes_nccl_conf_in_the_state_dir_never_in_etc() -> None:
    driver, shell = _driver()
    assert driver.nccl_path == "/var/lib/flatfab/nccl.conf"
    driver.load_replace_candidate(config=CANDIDATE)
    driver.commit_config()
    script = _script(shell) + "\n".join(command for command, _ in shell.applied)
    assert "mv -f /var/lib/flatfab/nccl.conf.flatfab-new /var/lib/flatfab/nccl.conf" in script
    assert "/etc/nccl.conf" not in script
    assert "left out (NICs eth1): no RDMA device known for eth1" in script


def test_connectx_writes_etc_nccl_conf_with_its_devices_keeping_anothers_file() -> None:
    driver, _ = _driver(nic_backend="connectx", rdma_devices={"eth1": "mlx5_0"})
    assert driver.nccl_path == "/etc/nccl.conf"
    driver.load_replace_candidate(config=CANDIDATE)
    forward = driver._transition(driver._read_state(), driver._desired_state(
        driver._read_state(), CANDIDATE, merge=False), merge=False, tag="candidate")
    assert "NCCL_IB_HCA==mlx5_0" in forward
    assert "cp -p /etc/nccl.conf /var/lib/flatfab/nic/nccl.conf.before" in forward
    # and back: another's file is put back, flatfab's removed, never another's deleted
    back = driver._transition(driver._desired_state(driver._read_state(), CANDIDATE,
                                                    merge=False),
                              driver._read_state(), merge=False, tag="rollback")
    assert "mv -f /var/lib/flatfab/nic/nccl.conf.before /etc/nccl.conf" in back
    assert back.count("rm -f /etc/nccl.conf") == 1 and "if [ \"$(head -n 1" in back


def test_only_flatfabs_file_is_read_back_as_config() -> None:
    driver, shell = _driver(nic_backend="connectx", rdma_devices={"eth1": "mlx5_0"})
    config = parse_config(CANDIDATE).nccl
    assert config is not None
    ours = nccl_conf.file_text(config, driver.rdma_devices)
    shell.answers[rdma_state.file_command("/etc/nccl.conf")] = Reply(ours)
    assert driver.read_host_state().nccl == config
    shell.answers[rdma_state.file_command("/etc/nccl.conf")] = Reply(fixture("nccl/site.conf"))
    state = driver.read_host_state()
    assert state.nccl is None and state.nccl_owner == "other"


def test_a_management_nic_in_nccl_hca_is_refused() -> None:
    driver, _ = _driver()
    with pytest.raises(Exception, match="management NIC"):
        driver.load_replace_candidate(config="nic eth0 mtu 1500 up\nnccl hca eth0\n")
        driver.commit_config()


# --- collect: the RDMA reads --------------------------------------------------------------


def test_the_documented_outputs_become_each_ports_state() -> None:
    found = rdma_state.host_rdma(reads(nccl=fixture("nccl/site.conf")))
    assert found.none_why is None and found.unread == {}
    assert [f"{p.device}/{p.port}" for p in found.ports] == [
        "mlx5_0/1", "mlx5_1/1", "mlx5_2/1", "mlx5_3/1", "mlx5_4/1"]
    eth1 = next(p for p in found.ports if p.netdev == "eth1")
    assert (eth1.device, eth1.state, eth1.ibv_state, eth1.active_mtu, eth1.link_layer) == (
        "mlx5_2", "ACTIVE", "PORT_ACTIVE", 4096, "Ethernet")
    assert eth1.gids is not None and [(g.index, g.type) for g in eth1.gids] == [
        (0, "IB/RoCE v1"), (1, "RoCE v2"), (2, "IB/RoCE v1"), (3, "RoCE v2")]
    assert found.nccl_conf is not None and "NCCL_IB_TC" in found.nccl_conf


def test_a_host_without_rdma_devices_says_so() -> None:
    found = rdma_state.host_rdma(reads(
        sysfs=json.dumps(rdma_sysfs.main("/nonexistent/class/infiniband")),
        rdma_link=fixture("rdma_link_empty.json"),
        ibv_devinfo="No IB devices found\n" + rdma_state.FAILED + " 255\n"))
    assert found.ports == []
    assert found.none_why is not None and "registered no RDMA device" in found.none_why
    assert "ibv_devinfo: no IB devices found" in found.none_why


def test_a_missing_tool_is_a_fact_not_a_crash() -> None:
    found = rdma_state.host_rdma(reads(ibv_devinfo=rdma_state.MISSING + "\n",
                                       rdma_link="rdma: unknown option\n"
                                                 + rdma_state.FAILED + " 1\n"))
    assert found.unread == {"ibv_devinfo": "not installed (rdma-core's ibv_devinfo "
                                           "(ibverbs-utils))",
                            "rdma link": "exit 1: rdma: unknown option"}
    assert all(p.ibv_state is None and p.state is None for p in found.ports)
    assert found.none_why is None


def test_collect_reads_rdma_only_where_the_plan_manages_nccl() -> None:
    class Reader:
        def __init__(self) -> None:
            driver, _ = _driver()
            self.inner = driver

        def read_host_state(self):  # type: ignore[no-untyped-def]
            return self.inner.read_host_state()

        def read_rdma(self) -> rdma_state.RdmaReads:
            return reads()

    planned = plan(load_intent(ROOT / "intents" / "lab")).devices["leaf1-h1"]
    assert collect(Reader(), planned, []).rdma is None  # type: ignore[arg-type]
    planned.rdma = HostRdma(bootstrap="eth0")
    observed = collect(Reader(), planned, []).rdma  # type: ignore[arg-type]
    assert observed is not None and len(observed.ports) == 5
