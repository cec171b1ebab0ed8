"""Each platform's `collect_physical` through its driver interface: the commands its reader
asks for are sent as the platform sends every read (eAPI JSON, NX-OS `| json` text, Redis
hashes, NVUE and Junos JSON text, SR Linux JSON), the documented outputs under
tests/fixtures/<platform>/phy/ answer them, and every cabled port gets its physical layer.
A switch that answers none of them states no physical layer at all (phy.unread names it)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from flatfab.model.physical import Fec, Media
from flatfab.model.state import DeviceState, Endpoint, IfKind, Interface, Role
from flatfab.platforms.junos import phy as junos_phy
from flatfab.platforms.nvue import phy as nvue_phy
from flatfab.platforms.registry import get as get_platform
from flatfab.platforms.sonic import phy as sonic_phy
from flatfab.platforms.srlinux import phy as srlinux_phy
from tests.support.paths import ROOT

FIXTURES = ROOT / "tests" / "fixtures"


def _load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


class Answers:
    """A driver's `cli` answering from a table of command -> reply; anything else fails as
    a command the switch does not have."""

    def __init__(self, replies: dict[str, Any], *, text: bool) -> None:
        self.replies, self.text, self.asked = replies, text, []  # type: ignore[var-annotated]

    def cli(self, commands: list[str], encoding: str = "text") -> dict[str, Any]:
        out: dict[str, Any] = {}
        for command in commands:
            self.asked.append(command)
            if command not in self.replies:
                raise OSError(f"% Invalid input: {command}")
            reply = self.replies[command]
            out[command] = json.dumps(reply) if self.text and encoding == "text" and \
                not isinstance(reply, str) else reply
        return out


def _planned(platform: str, port: str) -> DeviceState:
    cabled = Interface(name=port, kind=IfKind.FABRIC, peer=Endpoint(device="far", port="p1"))
    return DeviceState(name="sw1", role=Role.LEAF, platform=platform,
                       interfaces={port: cabled})


def _eos() -> tuple[Answers, str]:
    folder = FIXTURES / "eos" / "phy" / "dr4_400g"
    replies = {f.stem.replace("_", " ").replace("error correction", "error-correction"):
               _load(f) for f in folder.glob("*.json")}
    return Answers(replies, text=False), "Ethernet1/1"


def _nxos() -> tuple[Answers, str]:
    folder = FIXTURES / "nxos" / "phy" / "dr4_400g"
    replies = {f"{f.stem.replace('_', ' ')} | json": _load(f) for f in folder.glob("*.json")}
    return Answers(replies, text=True), "Ethernet1/1"


def _sonic() -> tuple[Answers, str]:
    case = _load(FIXTURES / "sonic" / "phy" / "cmis_400g_dr4_202505.json")
    port, oid = case["port"], case["oid"]
    replies: dict[str, Any] = {
        "sonic-db-cli COUNTERS_DB HGETALL COUNTERS_PORT_NAME_MAP": repr({port: oid})}
    for table, command in sonic_phy.commands(port, oid).items():
        replies[command] = repr(case.get(table, {}))
    return Answers(replies, text=True), port


def _nvue() -> tuple[Answers, str]:
    folder = FIXTURES / "nvue" / "phy" / "dr4_400g"
    names = {"nv_show_interface.json": nvue_phy.INTERFACES, "nv_show_system.json": nvue_phy.SYSTEM,
             "nv_show_platform_transceiver_detail.json": nvue_phy.TRANSCEIVERS,
             "nv_show_interface_swp1_link_phy-detail.json": nvue_phy.phy_detail_command("swp1")}
    return Answers({names[f.name]: _load(f) for f in folder.glob("*.json")}, text=True), "swp1"


def _junos() -> tuple[Answers, str]:
    folder = FIXTURES / "junos" / "phy" / "dr4_400g"
    files = {f.name: f for f in folder.glob("*.json")}
    replies = {}
    for command in junos_phy.COMMANDS:
        stem = command.replace(" ", "_").replace("|", "_").replace("-", "_")
        match = next(f for name, f in files.items()
                     if name.replace("-", "_") == f"{stem}.json")
        replies[command] = _load(match)
    return Answers(replies, text=True), "et-0/0/0"


def _srlinux() -> tuple[Answers, str]:
    reply = _load(FIXTURES / "srlinux" / "phy" / "dr4_400g" / "info_from_state_interface.json")
    return Answers({srlinux_phy.INTERFACES: reply}, text=False), "ethernet-1/1"


CASES = {"eos": _eos, "nxos": _nxos, "sonic": _sonic, "nvue": _nvue, "junos": _junos,
         "srlinux": _srlinux}


@pytest.mark.parametrize("platform", sorted(CASES))
def test_a_dr4_optic_is_read_through_the_platforms_driver(platform: str) -> None:
    driver, port = CASES[platform]()
    found = get_platform(platform).collect_physical(driver, _planned(platform, port))
    assert set(found) == {port}, driver.asked
    phy = found[port]
    assert phy.present is True and phy.module is not None
    assert phy.fec is Fec.RS544
    assert phy.module.media in (Media.DR, None)  # NVUE never states an optic's reach class
    assert phy.module.media is Media.DR or "module.media" in phy.unknown
    assert phy.diagnostics is not None and phy.diagnostics.lanes
    assert not phy.virtual


@pytest.mark.parametrize("platform", sorted(CASES))
def test_a_switch_answering_none_of_the_reads_states_no_physical_layer(platform: str) -> None:
    _, port = CASES[platform]()
    silent = Answers({}, text=platform in ("nxos", "sonic", "nvue", "junos"))
    found = get_platform(platform).collect_physical(silent, _planned(platform, port))
    # nothing stated: either no port at all, or each port's reason why
    assert all(p.unknown and p.module is None for p in found.values()), found

