"""Link-level retry on sonic (fabric.yaml `link_classes.<name>.llr`): rendered as an
`LLR_PORT|<port>` row per port of the class, as SONiC's sonic-llr-port YANG model,
sonic-utilities' `config llr interface` and llrmgrd name it (flatfab.platforms.sonic.llr),
pushed through GCU, read back through collect as the plan, and `llr.link` naming a port whose
link retries one way only.

What the SONiC YANG oracle (shared/schemas/sonic-yang) can judge of it: nothing directly. It
loads no sonic-llr-port model, so `LLR_PORT` passes it unvalidated, with a note (said below).
The rows are judged here against that model instead: its field names, `llr_mode`'s
enumeration, and `llr_local`/`llr_remote` by the `admin_mode` type of the sonic-types model
the oracle does load (read from it, not restated), each key a `PORT` row of the render.
"""

from __future__ import annotations

import copy
import json
from functools import cache
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

import libyang
import pytest
import yaml

from flatfab.intent.loader import load_intent
from flatfab.model.state import DeviceState, FabricState, IfKind
from flatfab.plan.planner import plan
from flatfab.platforms.registry import PLATFORMS
from flatfab.platforms.sonic import PLATFORM, changes, llr
from flatfab.platforms.sonic.collect import RUNNING
from flatfab.platforms.sonic.driver import CommitRefusedError
from flatfab.platforms.sonic.render import OWNED_TABLES, config_db
from tests.doubles.sonic import SonicDouble
from tests.support.checks import live_findings
from tests.support.on_platform import intent_on, switches_on
from tests.support.oracles import SONIC, usable
from tests.support.paths import ROOT, SONIC_YANG
from tests.support.sonic import collected, pushed_double, sonic_double, sonic_driver

FAMILY = "tomahawk-4"
CHECKS = ["llr.link"]
MODES = ("static", "dynamic")  # sonic-llr-port's llr_mode enumeration


@cache
def _fabric(retry: bool) -> FabricState:
    """intents/lab on sonic, its fabric link class with link-level retry (or without)."""
    with TemporaryDirectory() as tmp:
        target = Path(tmp)
        intent_on(ROOT / "intents" / "lab", target, "sonic", FAMILY)
        fabric = yaml.safe_load((target / "fabric.yaml").read_text())
        fabric["link_classes"]["fabric"]["llr"] = retry
        (target / "fabric.yaml").write_text(yaml.safe_dump(fabric))
        return plan(load_intent(target, known_platforms=PLATFORMS))


@pytest.fixture(scope="module")
def fabric() -> FabricState:
    return _fabric(True)


def _admin_mode_values() -> list[str]:
    """sonic-types' `admin_mode` enumeration (sonic-llr-port's type of llr_local and
    llr_remote), from the folder the oracle loads, in a context of its own."""
    usable(SONIC)
    context = libyang.Context(str(SONIC_YANG / "yang"))
    try:
        module = context.parse_module_str(
            'module flatfab-llr-probe { yang-version 1.1; namespace "urn:flatfab:llr-probe"; '
            "prefix probe; import sonic-types { prefix stypes; } "
            "leaf state { type stypes:admin_mode; } }")
        leaf = next(iter(module.children()))
        return [enum.name() for enum in leaf.type().enums()]
    finally:
        context.destroy()


def model_violations(db: dict[str, Any]) -> list[str]:
    """What sonic-llr-port finds wrong with a render's `LLR_PORT` rows: a key that is no
    `PORT` row (its leafref), a field it has not, a value outside llr_mode's enumeration or
    sonic-types' admin_mode. The oracle's stand-in: its models have no sonic-llr-port."""
    admin = _admin_mode_values()
    found = []
    for port, row in sorted(db.get(llr.TABLE, {}).items()):
        if port not in db.get("PORT", {}):
            found.append(f"{port}: no PORT row")
        found += [f"{port} {name}: no such field" for name in sorted(row)
                  if name not in llr.FIELDS]
        if row.get(llr.MODE, "static") not in MODES:
            found.append(f"{port} {llr.MODE}: {row[llr.MODE]!r}")
        found += [f"{port} {name}: {row[name]!r}" for name in (llr.LOCAL, llr.REMOTE)
                  if name in row and row[name] not in admin]
    return found


def _printing(double: SonicDouble, table: dict[str, dict[str, str]]) -> None:
    """The double prints its CONFIG_DB with these LLR_PORT rows."""
    printed: dict[str, Any] = json.loads(json.dumps(double.config_db))
    printed[llr.TABLE] = table
    double.broken[RUNNING] = json.dumps(printed, indent=4)


def _live(fabric: FabricState, *seen: DeviceState) -> list[tuple[str, str | None, str | None]]:
    return [(f.check, f.device, f.port) for f in live_findings(fabric, *seen, only=CHECKS)]


# ---- render ---------------------------------------------------------------------------------


def test_every_fabric_port_and_no_other_renders_its_llr_port_row(fabric: FabricState) -> None:
    switches = switches_on(fabric, "sonic")
    assert len(switches) == 6
    for device in switches:
        db = config_db(device, PLATFORM.names)
        fabric_ports = {n for n, i in device.interfaces.items()
                        if i.kind is IfKind.FABRIC and i.parent is None}
        assert fabric_ports and set(db[llr.TABLE]) == fabric_ports, device.name
        assert all(row == {"llr_mode": "static", "llr_local": "enabled",
                           "llr_remote": "enabled"} for row in db[llr.TABLE].values())
        assert llr.TABLE in OWNED_TABLES  # a row flatfab does not render is removed


def test_a_fabric_without_retry_renders_no_llr_port() -> None:
    for device in switches_on(_fabric(False), "sonic"):
        assert llr.TABLE not in PLATFORM.render(device), device.name


def test_every_row_holds_to_the_sonic_llr_port_model(fabric: FabricState) -> None:
    assert set(_admin_mode_values()) == {"enabled", "disabled"}
    for device in switches_on(fabric, "sonic"):
        assert model_violations(config_db(device, PLATFORM.names)) == [], device.name


@pytest.mark.parametrize(("row", "found"), [
    ({"llr_mode": "static", "llr_local": "on", "llr_remote": "enabled"},
     ["Ethernet0 llr_local: 'on'"]),
    ({"llr_mode": "auto", "llr_local": "enabled", "llr_remote": "enabled"},
     ["Ethernet0 llr_mode: 'auto'"]),
    ({"llr_local": "enabled", "llr_remote": "enabled", "profile": "p"},
     ["Ethernet0 profile: no such field"]),  # the design's name; the model's is llr_profile
])
def test_the_model_schema_judges_what_the_oracle_cannot(row: dict[str, str],
                                                        found: list[str]) -> None:
    assert model_violations({"PORT": {"Ethernet0": {}}, llr.TABLE: {"Ethernet0": row}}) == found
    assert model_violations({llr.TABLE: {"Ethernet4": row}})[0] == "Ethernet4: no PORT row"


def test_the_oracle_holds_no_llr_model_so_llr_port_is_not_validated(
        fabric: FabricState) -> None:
    """Every render passes the oracle, LLR_PORT with a note: its pass says nothing of the
    rows. When this fails, shared/schemas/sonic-yang has gained sonic-llr-port.yang: validate
    LLR_PORT through it and drop the exception from platform.yaml's `proven.rendered`."""
    module, oracle = usable(SONIC).load()
    assert llr.TABLE not in oracle.tables
    leaf1 = fabric.devices["leaf1"]
    assert SONIC.validate(leaf1.name, PLATFORM.render(leaf1), leaf1) == []
    nonsense = {"Ethernet0": {"llr_local": "maybe", "no_such_field": "x"}}
    for rows in (config_db(leaf1, PLATFORM.names)[llr.TABLE], nonsense):
        violations, notes = oracle.validate(module.merge({}, {llr.TABLE: rows}))
        assert violations == [] and notes == ["LLR_PORT: no YANG model, not validated"]
    assert "except `LLR_PORT`" in " ".join(PLATFORM.facts.proven.rendered.split())


# ---- push -----------------------------------------------------------------------------------


def test_a_push_adds_the_rows_and_collect_reads_the_plan_back(fabric: FabricState) -> None:
    device = fabric.devices["leaf1"]
    double = sonic_double(device)
    assert llr.TABLE not in double.config_db
    driver = sonic_driver(double)
    driver.load_merge_candidate(config=PLATFORM.render(device))
    driver.commit_config()
    assert double.config_db[llr.TABLE] == config_db(device, PLATFORM.names)[llr.TABLE]
    seen = collected(device, pushed_double(fabric, "leaf1"))
    for name, iface in device.interfaces.items():
        if iface.qos is not None:
            got = seen.interfaces[name].qos
            assert got is not None and got.llr == iface.qos.llr, name
    assert not [k for k in seen.not_modelled if k.startswith(llr.TABLE)]
    assert _live(fabric, seen) == []


def test_a_row_an_operator_added_is_removed_and_a_bound_profile_refused(
        fabric: FabricState) -> None:
    device = fabric.devices["leaf1"]
    intended = PLATFORM.render(device)
    running = json.loads(json.dumps(config_db(device, PLATFORM.names)))
    port = sorted(running[llr.TABLE])[0]
    running[llr.TABLE]["Ethernet0"] = dict(llr.ROW)  # a host port: not the plan's
    text = f"!! config_db\n{json.dumps(running)}\n!! frr\n"
    assert PLATFORM.change_notes(text, intended) == []  # a row's removal is pushed
    running[llr.TABLE][port] = {**llr.ROW, llr.PROFILE: "llr_tuned"}
    text = f"!! config_db\n{json.dumps(running)}\n!! frr\n"
    [note] = PLATFORM.change_notes(text, intended)
    assert note.startswith(f"/{llr.TABLE}/{port}/{llr.PROFILE}: {llr.FIELD_REMOVAL}")
    ops = changes.patch(changes.project(json.loads(json.dumps(running))),
                        changes.project(changes.target(running, config_db(
                            device, PLATFORM.names))))
    assert {"op": "remove", "path": f"/{llr.TABLE}/Ethernet0"} in ops


def test_the_push_with_a_bound_profile_to_remove_is_refused(fabric: FabricState) -> None:
    device = fabric.devices["leaf1"]
    double = pushed_double(fabric, "leaf1")
    port = sorted(double.config_db[llr.TABLE])[0]
    double.config_db[llr.TABLE][port][llr.PROFILE] = "llr_tuned"
    before = copy.deepcopy(double.config_db)
    driver = sonic_driver(double)
    driver.load_replace_candidate(config=PLATFORM.render(device))
    with pytest.raises(CommitRefusedError) as caught:
        driver.commit_config()
    assert llr.FIELD_REMOVAL in str(caught.value)
    assert double.config_db == before


# ---- collect and llr.link -------------------------------------------------------------------


def test_a_port_that_lost_its_row_is_named_by_llr_link(fabric: FabricState) -> None:
    double = pushed_double(fabric, "leaf1")
    rows = copy.deepcopy(double.config_db[llr.TABLE])
    port = sorted(rows)[0]
    del rows[port]
    _printing(double, rows)
    seen = collected(fabric.devices["leaf1"], double)
    qos = seen.interfaces[port].qos
    assert qos is not None and qos.llr is False
    assert _live(fabric, seen) == [("llr.link", "leaf1", port)]


@pytest.mark.parametrize(("row", "named"), [
    ({"llr_local": "enabled", "llr_remote": "disabled"}, "LLR_PORT|{port} one direction"),
    ({**llr.ROW, "llr_mode": "dynamic"}, "LLR_PORT|{port} llr_mode dynamic"),
])
def test_a_row_llrmgrd_does_not_run_reads_as_off_and_is_named(
        fabric: FabricState, row: dict[str, str], named: str) -> None:
    double = pushed_double(fabric, "leaf1")
    rows = copy.deepcopy(double.config_db[llr.TABLE])
    port = sorted(rows)[0]
    rows[port] = row
    _printing(double, rows)
    seen = collected(fabric.devices["leaf1"], double)
    qos = seen.interfaces[port].qos
    assert qos is not None and qos.llr is False
    assert named.format(port=port) in seen.not_modelled
    assert _live(fabric, seen) == [("llr.link", "leaf1", port)]


def test_a_row_without_llr_mode_is_static_as_llrmgrd_reads_it(fabric: FabricState) -> None:
    """`config llr interface local|remote` alone writes no llr_mode: static by default (the
    model's default, llrmgrd's and the CLI's)."""
    double = pushed_double(fabric, "leaf1")
    rows = {p: {llr.LOCAL: "enabled", llr.REMOTE: "enabled"}
            for p in double.config_db[llr.TABLE]}
    _printing(double, rows)
    seen = collected(fabric.devices["leaf1"], double)
    assert _live(fabric, seen) == []
    assert not [k for k in seen.not_modelled if k.startswith(llr.TABLE)]


def test_llr_is_no_longer_refused_at_load_on_sonic() -> None:
    assert "llr" not in PLATFORM.facts.capabilities.unsupported
    assert _fabric(True).devices["spine1"].interfaces["Ethernet0"].qos is not None
