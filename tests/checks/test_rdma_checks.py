"""host.nccl, host.rdma_gid, host.rdma_port and host.rdma_unread: a GPU server's nccl.conf and
RDMA devices against the fabric, each mismatch named at the server and NIC with the setting;
a host without RDMA devices (the lab) not judged, never failed, never passed."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from pydantic import ValidationError

from flatfab.checks import CheckContext, Finding, Severity, Stage, run_checks
from flatfab.checks.base import fails, unread_settings
from flatfab.intent.loader import load_intent
from flatfab.intent.models import HostsIntent
from flatfab.model.state import FabricState, HostRdma
from flatfab.plan.planner import plan
from flatfab.platforms.linux_host import nccl_conf, rdma_state, rdma_sysfs
from flatfab.platforms.linux_host.render import nccl_config
from tests.support.paths import FIXTURES, ROOT

RDMA = FIXTURES / "rdma"
SYSFS = RDMA / "sysfs_rail_server" / "class" / "infiniband"
DEVICES = {"eth1": "mlx5_2", "eth2": "mlx5_0", "eth3": "mlx5_3", "eth4": "mlx5_1"}
HOST = "su1-s1"
IDS = ("host.nccl", "host.rdma_gid", "host.rdma_port", "host.rdma_unread")


def fixture(name: str) -> str:
    return (RDMA / name).read_text(encoding="utf-8")


def planned() -> FabricState:
    fabric = plan(load_intent(ROOT / "intents" / "rail"))
    fabric.devices[HOST].rdma = HostRdma(bootstrap="eno1")
    return fabric


def the_file(fabric: FabricState, devices: dict[str, str] = DEVICES) -> str:
    config = nccl_config(fabric.devices[HOST])
    assert config is not None
    return nccl_conf.file_text(config, devices)


def observed(fabric: FabricState, *, nccl: str | None, **outputs: str) -> FabricState:
    seen = fabric.model_copy(deep=True)
    values = {"sysfs": json.dumps(rdma_sysfs.main(str(SYSFS))),
              "rdma_link": fixture("rdma_link.json"), "ibv_devinfo": fixture("ibv_devinfo.txt"),
              **outputs}
    seen.devices[HOST].rdma = rdma_state.host_rdma(rdma_state.RdmaReads(
        nccl_path="/etc/nccl.conf", nccl=nccl, **values))
    return seen


def live(fabric: FabricState, seen: FabricState) -> list[Finding]:
    ctx = CheckContext(state=seen, plan=fabric, stage=Stage.LIVE)
    return [f for f in run_checks(ctx, IDS) if f.device == HOST]


def test_a_server_as_planned_is_clean() -> None:
    fabric = planned()
    assert live(fabric, observed(fabric, nccl=the_file(fabric))) == []


def test_each_mismatch_names_the_server_nic_and_setting() -> None:
    fabric = planned()
    text = the_file(fabric).replace("NCCL_IB_TC=106", "NCCL_IB_TC=96")
    found = live(fabric, observed(fabric, nccl=text,
                                  ibv_devinfo=fixture("ibv_devinfo_degraded.txt")))
    shown = {(f.check, f.port, f.expected, f.actual) for f in found}
    assert ("host.nccl", None, "106", "96") in shown
    assert ("host.rdma_port", "eth4", "PORT_ACTIVE", "PORT_DOWN") in shown
    assert ("host.rdma_port", "eth3", "4096", "2048") in shown
    assert all(f.device == HOST and f.severity is Severity.ERROR for f in found)
    assert any("NCCL_IB_TC" in f.message for f in found)


def test_a_prefix_hca_list_and_no_file_are_named() -> None:
    fabric = planned()
    prefix = the_file(fabric).replace("NCCL_IB_HCA==", "NCCL_IB_HCA=")
    found = live(fabric, observed(fabric, nccl=prefix))
    assert [f.check for f in found] == ["host.nccl"] and "prefixes" in found[0].message
    missing = live(fabric, observed(fabric, nccl=None))
    assert {f.actual for f in missing if f.check == "host.nccl"} >= {"unset"}
    assert all("there is no /etc/nccl.conf" in f.message for f in missing
               if f.check == "host.nccl")


def test_a_gid_index_that_picks_roce_v1_is_named_at_each_nic() -> None:
    fabric = planned()
    text = the_file(fabric) + "NCCL_IB_GID_INDEX=2\n"
    found = [f for f in live(fabric, observed(fabric, nccl=text)) if f.check == "host.rdma_gid"]
    assert sorted(f.port or "" for f in found) == ["eth1", "eth2", "eth3", "eth4"]
    assert all("RoCE v1" in f.message for f in found)


def test_a_line_nccl_misreads_is_named() -> None:
    fabric = planned()
    found = live(fabric, observed(fabric, nccl=fixture("nccl/spaces.conf")))
    assert [f.check for f in found] == ["host.nccl"]
    assert "whitespace" in found[0].message


def test_a_host_without_rdma_devices_is_not_judged_but_its_file_is() -> None:
    fabric = planned()
    seen = observed(fabric, nccl=the_file(fabric, {}),
                    sysfs=json.dumps(rdma_sysfs.main("/nonexistent/infiniband")),
                    rdma_link=fixture("rdma_link_empty.json"),
                    ibv_devinfo=rdma_state.MISSING)
    found = live(fabric, seen)
    assert {f.check for f in found} == {"host.nccl", "host.rdma_gid", "host.rdma_port"}
    assert all(f.severity is Severity.NOT_JUDGED and "no RDMA devices" in f.message
               for f in found)
    assert not fails(found) and not unread_settings(found)
    # the file itself is still judged
    wrong = observed(fabric, nccl=the_file(fabric, {}).replace("==eno1", "==eth1"),
                     sysfs=json.dumps(rdma_sysfs.main("/nonexistent/infiniband")),
                     rdma_link=fixture("rdma_link_empty.json"), ibv_devinfo=rdma_state.MISSING)
    assert fails(live(fabric, wrong))


def test_a_source_not_read_is_named_not_judged() -> None:
    fabric = planned()
    found = live(fabric, observed(fabric, nccl=the_file(fabric),
                                  ibv_devinfo=rdma_state.MISSING))
    assert [(f.check, f.severity) for f in found] == [("host.rdma_unread",
                                                       Severity.NOT_JUDGED)]
    assert "ibv_devinfo" in found[0].message


def test_unmanaged_and_unplanned_hosts_are_not_judged(tmp_path: Path) -> None:
    fabric = planned()
    fabric.devices[HOST].managed = False
    ctx = CheckContext(state=fabric, plan=fabric, stage=Stage.LIVE)
    found = [f for f in run_checks(ctx, IDS) if f.device == HOST]
    assert {f.check for f in found} == set(IDS)
    assert all(f.actual == "unmanaged" for f in found)
    unmanaged = tmp_path / "rail"  # the rail example without `nccl:`: nothing judged
    shutil.copytree(ROOT / "intents" / "rail", unmanaged)
    hosts = unmanaged / "hosts.yaml"
    hosts.write_text(re.sub(r"(?m)^nccl:.*\n", "", hosts.read_text()))
    plain = plan(load_intent(unmanaged))
    assert all(d.rdma is None for d in plain.devices.values())
    assert run_checks(CheckContext(state=plain, plan=plain, stage=Stage.LIVE), IDS) == []


def test_the_plan_cannot_give_one_traffic_class_for_nics_that_disagree() -> None:
    fabric = planned()
    nic = fabric.devices[HOST].interfaces["eth3"].nic
    assert nic is not None
    fabric.devices[HOST].interfaces["eth3"].nic = nic.model_copy(update={"roce_tos": 98})
    found = run_checks(CheckContext(state=fabric, plan=fabric, stage=Stage.STATIC),
                       ["host.nccl"])
    assert [(f.device, f.severity) for f in found] == [(HOST, Severity.ERROR)]
    assert "RoCE ToS" in found[0].message


def test_the_intent_refuses_a_fabric_nic_as_bootstrap_and_a_bootstrap_unmanaged() -> None:
    profiles = {"gpu": {"nics": {"count": 4, "name": "eth{n}"}}}
    with pytest.raises(ValidationError, match="eth3 is a fabric data NIC"):
        HostsIntent.model_validate({"profiles": profiles,
                                    "nccl": {"manage": True, "socket_ifname": "eth3"}})
    with pytest.raises(ValidationError, match="only with manage: true"):
        HostsIntent.model_validate({"nccl": {"socket_ifname": "eno1"}})
    assert HostsIntent.model_validate(
        {"profiles": profiles, "nccl": {"manage": True, "socket_ifname": "eno1"}}).nccl.manage
