"""The lab's stand-in for hardware: what each port of a lab node has plugged in.

A lab port is a veth: no module, no FEC, no optical power. So that the physical checks run
end to end in the lab, `lab generate` writes, per node, the modules the plan's link classes
call for (`phy.json`, bound at /var/lib/flatfab/phy.json): healthy values, the link class's
media, FEC, speed and lanes, a cable assembly's length. Collectors read it as a switch's OS
would state its modules, marked virtual; tests inject physical faults by editing it.

Each port's entry is flatfab's PortPhysical (flatfab.model.physical) without
`last_change_s`, plus `changed_at`: when the link last changed state (epoch seconds; the
lab stamps its start when it comes up). A link's flaps and its last change are the real
veth's where the lab's carrier watchers run (flatfab.platforms.lab_carrier); the file's
`flaps` and `changed_at` stand where they do not (a lab of an older flatfab, the
simulated fleet).
"""

from __future__ import annotations

import json
import zlib
from typing import Any

from flatfab.model.physical import (
    Diagnostics,
    FecCounters,
    Lane,
    LinkExpectation,
    Media,
    PortPhysical,
    Thresholds,
    Transceiver,
    reach_m,
)
from flatfab.model.state import FabricState
from flatfab.platforms.lab_phy import FILE

__all__ = ["FILE", "TARGET", "installed_media", "node_file", "port", "stamped"]

TARGET = f"/var/lib/flatfab/{FILE}"

# the form factor of a port by speed (SFF-8402/8665 SFP28 and QSFP28, QSFP-DD and OSFP MSAs)
FORM_FACTOR = {10_000: "SFP+", 25_000: "SFP28", 40_000: "QSFP+", 50_000: "SFP56",
               100_000: "QSFP28", 200_000: "QSFP56", 400_000: "QSFP-DD", 800_000: "OSFP"}

# a healthy optic, and thresholds of the kind module datasheets state
HEALTHY = Lane(rx_power_dbm=-1.5, tx_power_dbm=0.5, bias_ma=7.0)
THRESHOLDS = {
    "rx_power_dbm": Thresholds(low_alarm=-9.0, low_warning=-7.0, high_warning=3.5,
                               high_alarm=4.5),
    "tx_power_dbm": Thresholds(low_alarm=-6.5, low_warning=-4.5, high_warning=3.5,
                               high_alarm=4.5),
    "bias_ma": Thresholds(low_alarm=2.0, low_warning=3.0, high_warning=11.0, high_alarm=12.0),
    "temperature_c": Thresholds(low_alarm=-5.0, low_warning=0.0, high_warning=70.0,
                                high_alarm=75.0),
    "voltage_v": Thresholds(low_alarm=2.97, low_warning=3.13, high_warning=3.47,
                            high_alarm=3.63),
}


def installed_media(expect: LinkExpectation, cable_m: float) -> Media:
    """The link class's media, else what a cabling team would install for the length: a DAC
    where one reaches, then an AOC, then the shortest-reach optic that does."""
    if expect.media is not None:
        return expect.media
    speed = f"{expect.speed_mbps // 1000}G"
    for media in (Media.DAC, Media.AOC, Media.SR, Media.DR, Media.FR, Media.LR, Media.ER):
        reach = reach_m(media, speed)
        if reach is not None and cable_m <= reach:
            return media
    return Media.ER


def port(expect: LinkExpectation, cable_m: float, device: str, name: str) -> PortPhysical:
    """A healthy module of the class's media in one port."""
    media = installed_media(expect, cable_m)
    speed = f"{expect.speed_mbps // 1000}G"
    assembly = media in (Media.DAC, Media.AOC)
    serial = f"FFLAB{zlib.crc32(f'{device}:{name}'.encode()) % 10**8:08d}"
    module = Transceiver(form_factor=FORM_FACTOR.get(expect.speed_mbps),
                         media=media, compliance=f"{speed} {media.value.upper()}",
                         vendor="FLATFAB-LAB", part=f"FF-{speed}-{media.value.upper()}",
                         serial=serial, cable_m=cable_m if assembly else None)
    diagnostics = None if media is Media.DAC else Diagnostics(
        temperature_c=41.0, voltage_v=3.3, lanes=[HEALTHY] * expect.lanes,
        thresholds=THRESHOLDS)
    return PortPhysical(present=True, module=module, diagnostics=diagnostics, fec=expect.fec,
                        fec_counters=FecCounters(corrected=0, uncorrectable=0,
                                                 symbol_errors=0, pre_fec_ber=1e-9,
                                                 post_fec_ber=0.0),
                        flaps=0, speed_mbps=expect.speed_mbps, lanes=expect.lanes,
                        virtual=True)


def node_file(state: FabricState, device: str) -> str | None:
    """The node's phy.json (None: it has no physical link), ports in name order."""
    policy = state.physical
    if policy is None:
        return None
    ports: dict[str, Any] = {}
    for link in state.links:
        if link.parent is not None:
            continue
        expect = policy.classes.get(link.link_class)
        if expect is None:
            continue
        for end in (link.a, link.b):
            if end.device == device:
                entry = port(expect, link.cable_m, device, end.port)
                ports[end.port] = entry.model_dump(mode="json", exclude={"virtual"},
                                                     exclude_none=True)
    if not ports:
        return None
    return json.dumps({"ports": dict(sorted(ports.items()))}, indent=1, sort_keys=True) + "\n"


def stamped(text: str, started: float) -> str:
    """The file as a node gets it at `lab up`: each link last changed state when the lab
    came up, unless the file says otherwise."""
    doc = json.loads(text)
    for entry in doc.get("ports", {}).values():
        if isinstance(entry, dict):
            entry.setdefault("changed_at", round(started, 3))
    return json.dumps(doc, indent=1, sort_keys=True) + "\n"
