"""linux_host `nic_backend: connectx`: collect reads each NIC back from the hardware
(mlnx_qos, sysfs ECN and CNP files, the RDMA-CM ToS, ethtool), not flatfab's qos.conf.

Fixtures: tests/fixtures/linux_host/variants/mlnx_qos_*.json, derived from NVIDIA's
documentation (each names its MLNX_OFED / DOCA-OFED release).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from flatfab.checks import CheckContext, Finding, Stage, run_checks
from flatfab.model.state import DeviceState
from flatfab.platforms.linux_host import nic_qos
from flatfab.platforms.linux_host.collect import collect
from flatfab.platforms.linux_host.driver import LinuxHostDriver
from tests.doubles.frr import FakeShell, Reply
from tests.doubles.linux_host import STATE_DIR, host_answers
from tests.support.checks import PLAN as LAB
from tests.support.lossless import LOSSLESS, collected
from tests.support.paths import FIXTURES

VARIANTS = FIXTURES / "linux_host" / "variants"
NAMES = sorted(p.name for p in VARIANTS.glob("mlnx_qos_*.json"))
HOST = "leaf1-h1"


def variant(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((VARIANTS / name).read_text(encoding="utf-8"))
    return data


def answers_for(out: dict[str, Any]) -> dict[str, str]:
    """Batch key -> output, as connectx_read_commands names them for eth1."""
    result = {"mlnx_qos eth1": out["mlnx_qos"], "cnp_dscp eth1": out["cnp_dscp"],
              "cnp_802p_prio eth1": out["cnp_802p_prio"], "tos eth1": out["default_roce_tos"],
              "prevention eth1": out["pfc_prevention"]}
    for point in ("np", "rp"):
        for prio, value in enumerate(out[f"ecn_{point}"]):
            result[f"ecn {point} eth1 {prio}"] = str(value)
    return result


def cx_driver(name: str, **changed: Any) -> LinuxHostDriver:
    planned = LAB.devices[HOST].interfaces["eth1"].nic
    assert planned is not None
    driver = LinuxHostDriver("192.0.2.17", "ff-admin", None, optional_args={
        "read_only": True, "nic_backend": "connectx"})
    answers = host_answers()
    answers[f"cat {STATE_DIR}/nic/qos.conf 2>/dev/null || true"] = Reply(
        nic_qos.from_model(planned).line("eth1") + "\n")
    out = answers_for(variant(name)["output"] | changed)
    for key, command in nic_qos.connectx_read_commands("eth1").items():
        answers[command] = Reply(out[key] + "\n")
    driver.session = FakeShell(answers)
    return driver


def seen_host(driver: LinuxHostDriver) -> DeviceState:
    return collect(driver, LAB.devices[HOST], [])


def live(host: DeviceState) -> list[Finding]:
    state = collected()
    state.devices[HOST] = host
    return run_checks(CheckContext(state=state, plan=LAB, stage=Stage.LIVE), only=LOSSLESS)


@pytest.mark.parametrize("name", NAMES)
def test_mlnx_qos_parser_reads_every_variant(name: str) -> None:
    data = variant(name)
    assert "derived from documentation" in data["source"] and data["release"]
    qos, why = nic_qos.parse_mlnx_qos(data["output"]["mlnx_qos"])
    assert why is None
    assert (qos["trust"], qos["pfc"], qos["strict_tcs"]) == ("dscp", [3], [6])
    assert qos["dscp_to_priority"][26] == 3 and qos["dscp_to_priority"][48] == 6


@pytest.mark.parametrize("name", NAMES)
def test_collect_reads_the_nic_not_the_stored_file(name: str) -> None:
    seen = seen_host(cx_driver(name))
    nic = seen.interfaces["eth1"].nic
    planned = LAB.devices[HOST].interfaces["eth1"].nic
    assert nic is not None and planned is not None
    assert seen.errors == [] and not nic.virtual and nic.unknown == {}
    assert nic.model_dump(exclude={"virtual"}) == planned.model_dump(exclude={"virtual"})
    assert [f for f in live(seen) if f.device == HOST] == []


def test_dcqcn_rp_off_in_sysfs_is_named_by_host_intent() -> None:
    name = NAMES[0]
    seen = seen_host(cx_driver(name, ecn_rp=[0] * 8))
    found = [f for f in live(seen) if f.device == HOST]
    intent = {f.message for f in found if f.check == "host.intent"}
    assert f"{HOST}:eth1 has ECN reaction point priorities none, the intent says 3" in intent
    assert all(not f.virtual for f in found)


def test_an_unreadable_sysfs_file_is_unknown_not_judged() -> None:
    name = NAMES[-1]
    missing = "cat: /sys/class/net/eth1/ecn/roce_np/cnp_dscp: No such file or directory"
    seen = seen_host(cx_driver(name, cnp_dscp=missing))
    nic = seen.interfaces["eth1"].nic
    assert nic is not None and set(nic.unknown) == {"cnp_dscp"}
    found = [f for f in live(seen) if f.device == HOST]
    assert [(f.check, f.message) for f in found] == [
        ("state.unknown", f"{HOST}:eth1 cnp_dscp is not judged: /sys/class/net/eth1/ecn/"
         f"roce_np/cnp_dscp cannot be read: {missing}")]


def test_an_unreadable_mlnx_qos_is_an_error_and_the_nic_is_not_judged() -> None:
    seen = seen_host(cx_driver(NAMES[0], mlnx_qos="sh: 1: mlnx_qos: not found"))
    assert seen.interfaces["eth1"].nic is None
    assert seen.errors == ["qos eth1: `mlnx_qos` printed no trust state, PFC table or 8 TCs: "
                           "sh: 1: mlnx_qos: not found"]


def test_the_lab_backend_still_reports_the_virtual_nic() -> None:
    driver = cx_driver(NAMES[0])
    driver.nic_backend = "lab"
    nic = seen_host(driver).interfaces["eth1"].nic
    assert nic is not None and nic.virtual and nic.unknown == {}
    assert not any("mlnx_qos" in e.command for e in driver.session.log)


def test_an_unreadable_storm_prevention_timeout_is_unknown_not_judged() -> None:
    """`ethtool --get-tunable pfc-prevention-tout` unsupported (an older driver): the
    timeout is unknown, and pfc.watchdog does not judge the placeholder."""
    said = "netlink error: Operation not supported"
    seen = seen_host(cx_driver(NAMES[-1], pfc_prevention=said))
    nic = seen.interfaces["eth1"].nic
    assert nic is not None and set(nic.unknown) == {"pfc_prevention_ms"}
    found = [f for f in live(seen) if f.device == HOST]
    assert [f.check for f in found] == ["state.unknown"]
    assert "pfc_prevention_ms is not judged" in found[0].message
