"""NVUE collect against the shapes releases print (tests/fixtures/nvue/variants/, README there):
link state with and without `oper-status`, every LLDP neighbour of a port with its age and TTL
and the far port by its port-id subtype, and BGP instances switched off in the applied config.
Each variant's files are laid over leaf1's recorded outputs on the NVUE double."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from flatfab.checks import CheckContext, Finding, Stage, run_checks
from flatfab.model.state import DeviceState, Endpoint, FabricState
from flatfab.platforms.nvue import PLATFORM
from flatfab.platforms.nvue.collect import INTERFACES, link_up, lldp
from flatfab.platforms.nvue.nvyaml import merge
from flatfab.platforms.nvue.render import RELEASES, tree
from tests.doubles.nvue import FIXTURES, NvueDouble, double_for, factory_tree, recorded
from tests.support.nvue import fabric

VARIANTS = FIXTURES / "variants"


@pytest.fixture(scope="module")
def lab() -> FabricState:
    return fabric("lab")


@pytest.fixture(scope="module")
def leaf1(lab: FabricState) -> DeviceState:
    return lab.devices["leaf1"]


def outputs(variant: str) -> dict[str, str]:
    """A variant folder's files as `nv show` outputs, keyed by command (as recorded())."""
    folder = VARIANTS / variant
    return {p.stem.replace("_", " ") + " -o json": p.read_text(encoding="utf-8")
            for p in sorted(folder.glob("nv_show_*.json"))}


def collect(leaf1: DeviceState, double: NvueDouble) -> DeviceState:
    return PLATFORM.collect(PLATFORM.read_only(PLATFORM.adapt(double, read_only=True)),
                            leaf1, [])


def overlaid(leaf1: DeviceState, variant: str) -> DeviceState:
    double = double_for(leaf1)
    double.outputs.update(outputs(variant))
    return collect(leaf1, double)


def findings(lab: FabricState, seen: DeviceState, check: str) -> list[Finding]:
    state = lab.model_copy(update={"devices": {**lab.devices, seen.name: seen}})
    return [f for f in run_checks(CheckContext(state=state, plan=lab, stage=Stage.LIVE))
            if f.check == check and f.device == seen.name]


# ---- link state, in whichever form the release prints it ---------------------------------


def test_a_5_6_switch_states_link_state_without_oper_status(lab: FabricState,
                                                            leaf1: DeviceState) -> None:
    """5.6 prints `link.state: {"down": {}}` and no `oper-status`: a down port is down, not
    read as up from the applied config."""
    seen = overlaid(leaf1, "5.6")
    assert seen.errors == []
    down = ["swp52", "swp52.100", "swp52.200"]  # its sub-interfaces go down with it
    assert sorted(n for n, i in seen.interfaces.items() if i.up is False) == down
    assert all(i.up is True for n, i in seen.interfaces.items() if n not in down)
    assert sorted(f.message for f in findings(lab, seen, "interface.up")) == [
        f"leaf1:{n} is down" for n in down]


@pytest.mark.parametrize(("entry", "up"), [
    ({"link": {"oper-status": "up", "state": {"up": {}}}}, True),  # 5.15 fixtures' form
    ({"link": {"oper-status": "down", "state": {"up": {}}}}, False),  # admin up, no carrier
    ({"link": {"oper-status": "dormant"}}, False),
    ({"link": {"state": {"down": {}}}}, False),  # 5.6
    ({"link": {"state": {"up": {}}}}, True),  # 5.6
    ({"link": {"state": "down"}}, False),  # a word, as `nv show interface` tabulates it
    ({"link": {"state": {}}}, None),
    ({"link": {"mtu": 9216}}, None),
    ({}, None),
    (None, None),
])
def test_link_state_forms(entry: Any, up: bool | None) -> None:
    assert link_up(entry) is up


def test_a_port_the_output_gives_no_state_for_is_unknown_and_named(lab: FabricState,
                                                                   leaf1: DeviceState) -> None:
    double = double_for(leaf1)
    oper = json.loads(recorded("leaf1")[INTERFACES])
    del oper["swp2"]  # not listed at all
    oper["swp1"]["link"] = {"mtu": 9000}  # listed without a state
    double.outputs[INTERFACES] = json.dumps(oper)
    seen = collect(leaf1, double)
    assert (seen.interfaces["swp1"].up, seen.interfaces["swp2"].up) == (None, None)
    assert seen.errors == ["interfaces: nv show interface -o json states no link state for "
                           "swp1, swp2: not judged"]
    assert findings(lab, seen, "interface.up") == []  # unknown is not judged


def test_unreadable_interfaces_are_unknown_never_up(leaf1: DeviceState) -> None:
    double = double_for(leaf1)
    double.outputs[INTERFACES] = "not json\n"
    seen = collect(leaf1, double)
    assert seen.errors[0].startswith("interfaces: nv show interface: no JSON")
    assert {i.up for i in seen.interfaces.values()} == {None}


# ---- LLDP: every neighbour, its age and TTL, the far port by subtype ---------------------


def test_lldp_of_a_5_6_switch(leaf1: DeviceState) -> None:
    seen = overlaid(leaf1, "5.6")
    assert seen.interfaces["swp51"].peer == Endpoint(device="spine1", port="swp1", age_s=7214,
                                                     expires_s=120)
    assert seen.interfaces["swp51"].lldp_neighbours == []  # one neighbour: `peer` says it


def test_every_neighbour_of_a_recabled_port_freshest_first(lab: FabricState,
                                                           leaf1: DeviceState) -> None:
    seen = overlaid(leaf1, "two_neighbours")
    port = seen.interfaces["swp52"]
    assert [(e.device, e.port, e.age_s, e.expires_s) for e in port.lldp_neighbours] == [
        ("spine2", "swp1", 41, 120), ("spine3", "swp7", 3907, 120)]
    assert port.peer == port.lldp_neighbours[0]
    # the planned neighbour beside another entry: not judged until the other
    # expires (the run incomplete), never passed and never miscabled
    settling = findings(lab, seen, "cabling.lldp")
    assert settling and all(f.severity.value == "not-judged"
                            and "verify again then" in f.message for f in settling)


def test_the_far_port_by_its_port_id_subtype(leaf1: DeviceState) -> None:
    seen = overlaid(leaf1, "port_id_subtypes")
    ends = {n: (i.peer.device, i.peer.port) for n, i in seen.interfaces.items()
            if n in ("swp1", "swp2", "swp51") and i.peer is not None}
    assert ends == {"swp1": ("leaf1-h1", "eth1"),  # a MAC id: the description names it
                    "swp51": ("spine1", "swp1")}  # a locally assigned id is the port
    # a MAC id and no description name no port: named, never judged as a cabling error
    assert "is a MAC address" in seen.not_modelled["swp2 LLDP entry leaf1-h2"]


def test_lldp_reads_lldpd_s_raw_port_id() -> None:
    raw = {"neighbor": {"spine1": {"chassis": {"system-name": "spine1"},
                                   "port": {"id": {"type": "ifname", "value": "swp1"}}}}}
    assert lldp(raw) == ([Endpoint(device="spine1", port="swp1")], {})
    # an entry naming no far port is no neighbour: its key comes back to be named, with why
    assert lldp({"neighbor": {"x": {"chassis": {"system-name": "x"}, "port": {}}}}) == (
        [], {"x": "the neighbour sent no port id"})


def test_an_entry_naming_no_port_is_named_not_dropped(leaf1: DeviceState) -> None:
    double = double_for(leaf1)
    entry = json.loads(recorded("leaf1")["nv show interface swp2 lldp -o json"])
    entry["neighbor"]["leaf1-h2"]["port"] = {"ttl": 120}
    double.outputs["nv show interface swp2 lldp -o json"] = json.dumps(entry)
    seen = collect(leaf1, double)
    assert seen.interfaces["swp2"].peer is None
    assert seen.not_modelled == {
        "swp2 LLDP entry leaf1-h2": "the neighbour sent no port id"}


# ---- a BGP instance switched off is no instance ------------------------------------------


def applied_with(leaf1: DeviceState, name: str) -> NvueDouble:
    data = json.loads((VARIANTS / "bgp_disabled" / name).read_text(encoding="utf-8"))
    base = merge(factory_tree(leaf1.name), tree(leaf1, PLATFORM.names,
                                               RELEASES[data["release"]]))
    return NvueDouble(merge(base, data["set"]), recorded(leaf1.name))


@pytest.mark.parametrize("name", ["applied_5.14_router.json", "applied_5.15_router.json"])
def test_bgp_switched_off_on_the_switch(lab: FabricState, leaf1: DeviceState,
                                        name: str) -> None:
    double = applied_with(leaf1, name)
    seen = collect(leaf1, double)
    assert seen.bgp == {} and seen.asn is None and seen.router_id is None
    assert sorted(e for e in seen.errors if e.startswith("bgp:")) == [
        f"bgp: VRF {vrf}: BGP is disabled on the switch (router bgp enable off / state "
        "disabled): no BGP instance read" for vrf in ("blue", "default", "red")]
    assert not [c for c in double.commands if "router bgp neighbor" in c]  # nothing to ask
    missing = findings(lab, seen, "bgp.session")
    assert len(missing) == sum(len(b.peers) for b in leaf1.bgp.values())
    assert all("BGP is disabled on the switch" in f.message for f in missing)
    assert seen.interfaces["vlan100"].addresses == ["10.100.1.1/24"]  # both spellings read


@pytest.mark.parametrize("name", ["applied_5.14_vrf.json", "applied_5.15_vrf.json"])
def test_bgp_switched_off_in_one_vrf(lab: FabricState, leaf1: DeviceState, name: str) -> None:
    seen = collect(leaf1, applied_with(leaf1, name))
    assert sorted(seen.bgp) == ["blue", "default"]
    assert seen.asn == leaf1.asn and seen.bgp["default"].asn == leaf1.asn
    assert [e for e in seen.errors if e.startswith("bgp:")] == [
        "bgp: VRF red: BGP is disabled in the VRF (vrf red router bgp enable off / state "
        "disabled): no BGP instance read"]
    missing = findings(lab, seen, "bgp.session")
    assert sorted(f.vrf or "" for f in missing) == ["red"] * len(leaf1.bgp["red"].peers)
    assert all("disabled in the VRF" in f.message for f in missing)


def test_every_variant_file_is_json() -> None:
    files = sorted(Path(VARIANTS).rglob("*.json"))
    assert len(files) >= 10
    for path in files:
        assert isinstance(json.loads(path.read_text(encoding="utf-8")), dict), path
