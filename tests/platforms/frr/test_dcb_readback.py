"""frr `qos_backend: dcb`: collect reads each port back from the hardware (dcb, tc, devlink).

Fixtures: tests/fixtures/frr/variants/dcb_*.json, derived from the iproute2 man pages (each
names its release); the driver runs against FakeShell, which answers the batched commands.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from flatfab.checks import CheckContext, Finding, Stage, run_checks
from flatfab.model.state import DeviceState
from flatfab.platforms import configdb
from flatfab.platforms.frr import dcb
from flatfab.platforms.frr import links as links_mod
from flatfab.platforms.frr.collect import collect
from flatfab.platforms.frr.driver import FrrDriver
from tests.doubles.frr import (
    LEAF1,
    LLDP_SOCKET,
    STATE_DIR,
    FakeShell,
    Reply,
    leaf1_answers,
)
from tests.support.checks import PLAN as LAB
from tests.support.lossless import LOSSLESS, collected
from tests.support.paths import FIXTURES

VARIANTS = FIXTURES / "frr" / "variants"
NAMES = sorted(p.name for p in VARIANTS.glob("dcb_*.json"))


def variant(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((VARIANTS / name).read_text(encoding="utf-8"))
    return data


def text(output: Any) -> str:
    return output if isinstance(output, str) else json.dumps(output, indent=1) + "\n"


def outputs(name: str, port: str = "swp51") -> dict[str, str]:
    out = variant(name)["output"]
    return {f"dcb {what} {port}": text(out[what]) for what in ("pfc", "app", "apptrust",
                                                               "buffer")} | {
        f"qdisc {port}": text(out["qdisc"])}


def dcb_driver(name: str, **changed: Any) -> tuple[FrrDriver, FakeShell]:
    """leaf1 on the dcb backend: its stored tables are the plan's, every physical port's
    hardware answers with the variant (`changed` replaces some of its outputs)."""
    driver = FrrDriver("192.0.2.13", "ff-admin", None, optional_args={
        "lldp_socket": LLDP_SOCKET, "read_only": True, "mgmt_interfaces": ["eth0"],
        "qos_backend": "dcb"})
    answers = leaf1_answers()
    db = configdb.to_config_db(LAB.devices["leaf1"])
    db.pop("FLATFAB_KERNEL_QUEUES", None)
    answers[f"cat {STATE_DIR}/asic/config_db.json 2>/dev/null || true"] = Reply(
        configdb.dump(db))
    links = links_mod.from_ip_json(
        {vrf: (LEAF1 / f"ip_link_{vrf}.json").read_text() for vrf in ("default", "blue", "red")},
        {"eth0"})
    ports = [n for n, spec in links.items() if not spec.bridge and "." not in n]
    out = variant(name)["output"] | changed
    for key, command in dcb.readback_commands(ports).items():
        what = key.split()[1] if key.startswith("dcb ") else "qdisc"
        answers[command] = Reply(text(out[what]))
    shell = FakeShell(answers)
    driver.session = shell
    return driver, shell


def live(leaf1: DeviceState) -> list[Finding]:
    state = collected()
    state.devices["leaf1"] = leaf1
    return run_checks(CheckContext(state=state, plan=LAB, stage=Stage.LIVE), only=LOSSLESS)


@pytest.mark.parametrize("name", NAMES)
def test_parsers_read_every_variant(name: str) -> None:
    data, out = variant(name), variant(name)["output"]
    assert "derived from documentation" in data["source"] and data["release"]
    assert dcb.parse_pfc(text(out["pfc"])) == (data["expect"]["pfc"], None)
    assert dcb.parse_app(text(out["app"])) == ({26: 3, 48: 6}, None)
    sched, why = dcb.parse_qdiscs(text(out["qdisc"]))
    assert why is None and sched is not None
    assert (sched.strict, sched.priomap[3], sorted(sched.red)) == (2, 4, [4])
    trust, why = dcb.parse_apptrust(text(out["apptrust"]))
    assert (trust is None) == ("5.15" in data["release"]) == (why is not None)


@pytest.mark.parametrize("name", NAMES)
def test_collect_reads_the_hardware_not_the_stored_file(name: str) -> None:
    driver, _ = dcb_driver(name)
    seen = collect(driver, LAB.devices["leaf1"], [])
    assert seen.errors == []
    assert seen.qos is not None and not seen.qos.virtual
    qos = seen.interfaces["swp51"].qos
    plan = LAB.devices["leaf1"].interfaces["swp51"].qos
    assert qos is not None and plan is not None
    assert (qos.trust, qos.pfc) == (variant(name)["expect"]["trust"], [3])
    assert qos.maps.dscp_to_tc == plan.maps.dscp_to_tc
    assert {q: (s.strict, s.weight, s.ecn) for q, s in qos.queues.items() if q != 7} == {
        q: (s.strict, s.weight, s.ecn) for q, s in plan.queues.items() if q != 7}
    assert qos.queues[7].strict  # mlxsw makes every band above the lowest strict one strict
    assert sorted(qos.unknown) == variant(name)["expect"]["unknown"]
    assert qos.watchdog is not None and qos.watchdog.action is None
    assert set(qos.watchdog.unknown) == set(dcb.WATCHDOG_FIELDS)
    found = live(seen)
    judged = [f for f in found if f.device == "leaf1" and f.check != "state.unknown"]
    assert judged == []
    unknown = {f.message for f in found if f.check == "state.unknown" and f.device == "leaf1"}
    assert f"leaf1:swp51 watchdog.action is not judged: {dcb.WATCHDOG_UNREAD}" in unknown
    assert f"leaf1 pools.ingress_lossless.size is not judged: {dcb.POOL_UNREAD}" in unknown
    if "pgs.3" in variant(name)["expect"]["unknown"]:
        assert any(m.startswith("leaf1:swp51 pgs.3 is not judged: `dcb -j buffer show` "
                                "lacks") for m in unknown)


def test_pfc_off_in_hardware_is_named_by_pfc_intent_and_link_symmetry() -> None:
    name = "dcb_iproute2_6_1.json"
    pfc = variant(name)["output"]["pfc"] | {"prio_pfc": {str(p): False for p in range(8)}}
    driver, _ = dcb_driver(name, pfc=pfc)
    seen = collect(driver, LAB.devices["leaf1"], [])
    found = live(seen)
    checks = {f.check for f in found if f.device == "leaf1" and f.port == "swp51"}
    assert {"pfc.intent", "pfc.link_symmetry"} <= checks
    [intent] = [f for f in found if f.check == "pfc.intent" and f.port == "swp51"]
    assert (intent.expected, intent.actual, intent.virtual) == ("3", "none", False)


def test_an_unreadable_port_is_an_error_not_a_judged_default() -> None:
    name = "dcb_iproute2_5_15.json"
    driver, _ = dcb_driver(name, qdisc="Cannot find device \"swp51\"\n")
    seen = collect(driver, LAB.devices["leaf1"], [])
    assert seen.interfaces["swp51"].qos is None
    assert "lossless: port swp51: `tc -j qdisc show` printed no JSON: Cannot find device " \
        "\"swp51\"" in seen.errors


def test_devlink_pools_are_read_when_the_handle_is_known() -> None:
    handle = "pci/0000:01:00.0"
    rows = [{"sb": 0, "pool": n, "type": "ingress" if n < 4 else "egress", "size": 1000 + n,
             "thtype": "dynamic", "cell_size": 144} for n in range(8)]
    stored = configdb.from_config_db(configdb.to_config_db(LAB.devices["leaf1"]),
                                     virtual=False)[0]
    assert stored is not None
    read = dcb.read_device(stored, {"devlink sb pool": json.dumps({"pool": {handle: rows}})},
                           handle)
    assert (read.pools["ingress_lossless"].size, read.pools["egress_lossless"].size) == (
        1000, 1004)
    assert read.unknown == {}
    missing = dcb.read_device(stored, {"devlink sb pool": "devlink answers: Unknown object\n"},
                              handle)
    assert missing.unknown["pools.ingress_lossless.size"].startswith(
        "`devlink -j sb pool show` printed no JSON")
