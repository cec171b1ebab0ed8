"""Link-level retry per link class (fabric.yaml `link_classes.<name>.llr`): planned on both
ends of every switch link of the class, held by the lab's virtual ASIC as SONiC's design
spells it (LLR_PORT), a one-sided link named at the end that moved; refused on host links
and on platforms without it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from flatfab.checks import CheckContext, Stage, run_checks
from flatfab.errors import InputError
from flatfab.intent.loader import load_intent
from flatfab.model.state import FabricState
from flatfab.plan.planner import plan
from flatfab.platforms import configdb
from flatfab.platforms.registry import PLATFORMS
from tests.support.paths import ROOT


def _fabric(tmp_path: Path, old: str, new: str, source: str = "lab") -> Path:
    target = tmp_path / source
    shutil.copytree(ROOT / "intents" / source, target)
    fabric = target / "fabric.yaml"
    text = fabric.read_text()
    assert old in text
    fabric.write_text(text.replace(old, new, 1))
    return target


FABRIC_LLR = ("fabric: {speed: 100G, cable_m: 3, mtu: 9216}",
              "fabric: {speed: 100G, cable_m: 3, mtu: 9216, llr: true}")


def _found(state: FabricState, planned: FabricState,
           stage: Stage) -> list[tuple[str, str | None, str | None]]:
    found = run_checks(CheckContext(state=state, plan=planned, stage=stage), only=["llr.link"])
    return [(f.check, f.device, f.port) for f in found]


def test_both_ends_of_every_fabric_link_retry_and_the_virtual_asic_holds_it(
        tmp_path: Path) -> None:
    fabric = plan(load_intent(_fabric(tmp_path, *FABRIC_LLR)))
    leaf = fabric.devices["leaf1"]
    uplink, host_port = (leaf.interfaces[p].qos for p in ("swp51", "swp1"))
    assert uplink is not None and host_port is not None
    assert uplink.llr and not host_port.llr
    db = configdb.to_config_db(leaf)
    assert set(db[configdb.LLR_TABLE]) == {"swp51", "swp52"}
    _, ports = configdb.from_config_db(configdb.load(configdb.dump(db)), virtual=True)
    assert ports["swp51"] == uplink and ports["swp1"] == host_port
    assert _found(fabric, fabric, Stage.STATIC) == []


def test_a_link_retrying_one_way_is_named_at_the_end_that_moved(tmp_path: Path) -> None:
    planned = plan(load_intent(_fabric(tmp_path, *FABRIC_LLR)))
    state = planned.model_copy(deep=True)
    port = state.devices["spine2"].interfaces["swp3"]
    assert port.qos is not None
    port.qos = port.qos.model_copy(update={"llr": False})
    assert _found(state, planned, Stage.LIVE) == [("llr.link", "spine2", "swp3")]


def test_retry_on_host_links_and_where_a_platform_has_none_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError) as caught:
        load_intent(_fabric(tmp_path, "host: {speed: 100G, cable_m: 2, mtu: 9000}",
                            "host: {speed: 100G, cable_m: 2, mtu: 9000, llr: true}"))
    problem = caught.value.problems[0]
    assert problem.path == "link_classes.host.llr"
    assert "flatfab models no host NIC setting for it" in problem.reason
    multivendor = ROOT / "intents" / "multivendor" / "fabric.yaml"
    line = next(x for x in multivendor.read_text().splitlines() if x.strip().startswith(
        "fabric:"))
    with pytest.raises(InputError) as caught:
        load_intent(_fabric(tmp_path / "m", line, line.rstrip("}") + ", llr: true}",
                            source="multivendor"), known_platforms=PLATFORMS)
    reasons = {(p.path, p.reason) for p in caught.value.problems}
    assert ("link_classes.fabric.llr", "platform eos cannot do this (llr): EOS documents no "
            "link-level retry") in reasons
