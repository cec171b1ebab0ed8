"""The physical layer of EOS switch ports, read from eAPI JSON: what is in each cage, how it
reads, how its FEC fares and how often its link changed (flatfab.model.physical).

What each command states (shapes and their sources: tests/fixtures/eos/README.md, "phy"):

- `show interfaces`: `lineProtocolStatus`, `bandwidth` (bit/s), `lastStatusChangeTimestamp`
  (epoch s) and `interfaceCounters.linkStatusChanges` per interface.
- `show interfaces transceiver detail`: one entry per DOM channel, named after the interface
  of that lane (a 4-channel module in cage 1: Ethernet1/1 .. Ethernet1/4): `rxPower`,
  `txPower` (dBm) and `txBias` (mA) per lane, `temperature` (C) and `voltage` (V) for the
  module, `details` the module's own thresholds per measure (`highAlarm`, `highWarn`,
  `lowAlarm`, `lowWarn`). A reading the module lacks is absent (the text form prints N/A); a
  cage without a module is absent. `show interfaces transceiver` (the same without
  `details`) is read when the detail form is not in the outputs.
- `show interfaces transceiver hardware`: `mediaType` and `detectedMediaType` per lane.
- `show inventory`: `xcvrSlots` by cage number: `mfgName` ("Not Present": an empty cage; "":
  a module EOS cannot identify), `modelName`, `serialNum`.
- `show interfaces phy detail`: `interfacePhyStatuses.<port>.phyStatuses`, one entry per PHY
  stage (the switch chip first, then any gearbox): the first stage with a `fec` block is
  read (`encoding`, `correctedCodewords.value`, `uncorrectedCodewords.value`,
  `correctedSymbols.<lane>.value`, and the stage's `preFecBer.value`), the first with
  `pma.laneSignalDetect` gives the lanes the port runs.
- `show interfaces error-correction`: `interfaceErrCorrStatuses.<port>.errCorrEncodingStatus`.

A fact no command states is None with its reason in `unknown`; a value of the wrong kind
raises PhyReadError naming the command, the port and the key.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

from flatfab.model.physical import (
    Diagnostics,
    Fec,
    FecCounters,
    Lane,
    Media,
    PortPhysical,
    Thresholds,
    Transceiver,
    resolve_rs,
)
from flatfab.platforms.phy_read import At, PhyReadError, PortFacts, missing

# PhyReadError is the readers' own (flatfab.platforms.phy_read), named here for callers
__all__ = ["COMMANDS", "PhyReadError", "read_ports"]

INTERFACES = "show interfaces"
TRANSCEIVER = "show interfaces transceiver detail"
TRANSCEIVER_BRIEF = "show interfaces transceiver"  # read only when the detail form is absent
HARDWARE = "show interfaces transceiver hardware"
INVENTORY = "show inventory"
PHY = "show interfaces phy detail"
ERROR_CORRECTION = "show interfaces error-correction"
COMMANDS: tuple[str, ...] = (INTERFACES, TRANSCEIVER, HARDWARE, INVENTORY, PHY,
                             ERROR_CORRECTION)

FEC_COUNTERS = ("corrected", "uncorrectable", "symbol_errors", "pre_fec_ber", "post_fec_ber")
FEC_KEYS = {"corrected": "fec.correctedCodewords", "uncorrectable": "fec.uncorrectedCodewords",
            "symbol_errors": "fec.correctedSymbols", "pre_fec_ber": "preFecBer"}
NOT_PRESENT = "Not Present"  # show inventory's mfgName of an empty cage
# EOS names for the module's measures -> flatfab's; its threshold names -> flatfab's
MEASURES = {"temperature": "temperature_c", "voltage": "voltage_v", "txBias": "bias_ma",
            "txPower": "tx_power_dbm", "rxPower": "rx_power_dbm"}
LIMITS = {"lowAlarm": "low_alarm", "lowWarn": "low_warning", "highWarn": "high_warning",
          "highAlarm": "high_alarm"}
# the IEEE PMD after "<speed>GBASE-" (a leading count as in 2FR4 dropped) -> media; Arista
# names its active optical cables AR (40GBASE-AR4, 100GBASE-AR4). Longer prefixes first:
# LRL4 (2 km "LR lite") is no 10 km LR; XDR4 (2 km) is neither DR nor FR and maps to none.
PMD_MEDIA: tuple[tuple[str, Media | None], ...] = (
    ("XSR", Media.SR), ("SWDM", Media.SR), ("SR", Media.SR), ("CR", Media.DAC),
    ("AOC", Media.AOC), ("AR", Media.AOC), ("PSM", Media.DR), ("DR", Media.DR),
    ("CWDM", Media.FR), ("FR", Media.FR), ("LRL", None), ("LR", Media.LR), ("ER", Media.ER))
_PMD = re.compile(r"^\d+(?:\.\d+)?G(?:BASE)?-\d*([A-Z]+)")
# Arista's cable part numbers end in the length: CAB-Q-Q-100G-3M, AOC-O-O-400G-10M
_ARISTA_CABLE = re.compile(r"^(?:CAB|AOC)-.+-(\d+(?:\.\d+)?)M$", re.IGNORECASE)
_ETHERNET = re.compile(r"^Ethernet(\d+(?:/\d+)*)$")
# FEC names as JSON (reedSolomon) and as the CLI keyword (reed-solomon), compared folded
_FEC = {"reedsolomon544": Fec.RS544, "firecode": Fec.FC, "disabled": Fec.NONE}
_GENERIC_RS = "reedsolomon"


def media_of(text: str) -> Media | None:
    """The media an EOS media type names (400GBASE-DR4 -> dr), None when it names none."""
    m = _PMD.match(text.strip().upper())
    if m is None:
        return None
    return next((media for prefix, media in PMD_MEDIA if m[1].startswith(prefix)), None)


@dataclass(frozen=True)
class _At(At):
    """Where a value is read from (its command and port), and how this OS states values."""

    def number(self, value: Any, key: str) -> float | None:
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float) \
                or not math.isfinite(value):
            raise self.error(key, value)
        return float(value)

    def count(self, value: Any, key: str) -> int | None:
        """A counter: an integer (EOS sends some as 3.0), never negative. An int stays an
        int: codeword totals outgrow a float's 53 exact bits."""
        number = self.number(value, key)
        if number is None:
            return None
        if number < 0 or not number.is_integer():
            raise self.error(key, value)
        return value if isinstance(value, int) else int(number)

    def text(self, value: Any, key: str) -> str | None:
        if value is None:
            return None
        if not isinstance(value, str):
            raise self.error(key, value)
        return value.strip() or None


_Port = PortFacts


@dataclass(frozen=True)
class _Cage:
    """A port's cage (show inventory's xcvrSlots key) and the first DOM lane it owns, up to
    the next port read on the same cage (None: the cage carries one unnumbered port)."""

    number: str
    first: int | None
    end: float = math.inf


@dataclass
class _Switch:
    outputs: dict[str, dict[str, Any]]
    now: float
    slots: dict[str, Any] | None = None
    dom: dict[str, Any] | None = None
    dom_command: str = TRANSCEIVER
    hardware: dict[str, Any] | None = None
    interfaces: dict[str, Any] | None = None
    phy: dict[str, Any] | None = None
    fec_status: dict[str, Any] | None = None
    cages: dict[str, _Cage] = field(default_factory=dict)

    def table(self, command: str, key: str) -> dict[str, Any] | None:
        """A command's table of entries by name (None: the command is not in the outputs)."""
        if command not in self.outputs:
            return None
        at = _At(command, "*")
        table = at.mapping(at.mapping(self.outputs[command], "(reply)").get(key), key)
        for name, entry in table.items():
            at.mapping(entry, f"{key}.{name}")
        return table


def read_ports(outputs: dict[str, dict[str, Any]], ports: list[str], *,
               now: float) -> dict[str, PortPhysical]:
    """The physical layer of `ports` from the replies to COMMANDS (keyed by command, each
    parsed JSON); `now` is the switch's time (or time.time()) in epoch seconds."""
    switch = _switch(outputs, now, ports)
    return {port: _read(switch, port) for port in ports}


def _switch(outputs: dict[str, dict[str, Any]], now: float, ports: list[str]) -> _Switch:
    switch = _Switch(outputs=outputs, now=now)
    switch.slots = switch.table(INVENTORY, "xcvrSlots")
    switch.dom = switch.table(TRANSCEIVER, "interfaces")
    if switch.dom is None:  # the brief form: the same readings without thresholds
        switch.dom, switch.dom_command = switch.table(TRANSCEIVER_BRIEF, "interfaces"), \
            TRANSCEIVER_BRIEF
    switch.hardware = switch.table(HARDWARE, "interfaces")
    switch.interfaces = switch.table(INTERFACES, "interfaces")
    switch.phy = switch.table(PHY, "interfacePhyStatuses")
    switch.fec_status = switch.table(ERROR_CORRECTION, "interfaceErrCorrStatuses")
    switch.cages = _cages(ports, set(switch.slots or ()))
    return switch


def _split(name: str, slots: set[str]) -> tuple[str, int | None] | None:
    """(cage, lane) of an Ethernet name: Ethernet1/3 is lane 3 of cage 1, Ethernet49 the
    one port of cage 49; a modular Ethernet3/1 is cage 3/1 where show inventory says so."""
    m = _ETHERNET.match(name)
    if m is None:
        return None
    number = m[1]
    if number in slots or "/" not in number:
        return number, None
    cage, lane = number.rsplit("/", 1)
    return cage, int(lane)


def _cages(ports: list[str], slots: set[str]) -> dict[str, _Cage]:
    """Each port's cage and lanes: a broken-out cage's lanes go to the port named after the
    first of them, up to the next port read on that cage (EOS names a port by its first
    lane, and a DOM channel by the lane interface that carries it)."""
    split = {port: s for port in ports if (s := _split(port, slots)) is not None}
    cages = {}
    for port, (cage, lane) in split.items():
        later = [other for c, other in split.values()
                 if c == cage and other is not None and lane is not None and other > lane]
        cages[port] = _Cage(cage, lane, min(later, default=math.inf))
    return cages


def _lane_entries(table: dict[str, Any], cage: _Cage, slots: set[str]) -> list[Any]:
    """The entries of a per-lane table (DOM, hardware) that belong to the port, in lane
    order."""
    owned = []
    for name, entry in table.items():
        split = _split(name, slots)
        if split is not None and split[0] == cage.number and _owns(cage, split[1]):
            owned.append((split[1] or 0, entry))
    return [entry for _, entry in sorted(owned, key=lambda pair: pair[0])]


def _owns(cage: _Cage, lane: int | None) -> bool:
    if cage.first is None or lane is None:  # an unnumbered port owns only its own entry
        return cage.first is None and lane is None
    return cage.first <= lane < cage.end


def _read(switch: _Switch, port: str) -> PortPhysical:
    out = _Port(port)
    _link(switch, out)
    block = _phy(switch, out)  # lanes and speed first: a generic RS code needs them
    _fec(switch, out, block)
    cage = switch.cages.get(port)
    if cage is None:
        why = f"{port} is no Ethernet port with a transceiver cage"
        for key in ("present", "module", "diagnostics"):
            out.unknown[key] = why
    else:
        _module(switch, out, cage)
    return out.built()


# ---- show interfaces: flaps, last change, speed --------------------------------------------


def _link(switch: _Switch, out: _Port) -> None:
    if switch.interfaces is None or out.name not in switch.interfaces:
        why = missing(INTERFACES) if switch.interfaces is None else \
            f"{INTERFACES!r} lists no {out.name}"
        for key in ("flaps", "last_change_s", "speed_mbps"):
            out.unknown[key] = why
        return
    at, entry = _At(INTERFACES, out.name), switch.interfaces[out.name]
    counters = at.mapping(entry.get("interfaceCounters"), "interfaceCounters")
    out.set("flaps", at.count(counters.get("linkStatusChanges"),
                              "interfaceCounters.linkStatusChanges"),
            "EOS states no interfaceCounters.linkStatusChanges")
    _last_change(switch.now, at, entry, out)
    _speed(at, entry, out)


def _last_change(now: float, at: _At, entry: dict[str, Any], out: _Port) -> None:
    stamp = at.number(entry.get("lastStatusChangeTimestamp"), "lastStatusChangeTimestamp")
    if stamp is None or stamp <= 0:  # 0: EOS has no time for the last change
        out.unknown["last_change_s"] = "EOS states no lastStatusChangeTimestamp"
    elif stamp > now:  # the clocks disagree: an age would be a guess
        out.unknown["last_change_s"] = (f"lastStatusChangeTimestamp {stamp} is after the "
                                        f"switch's time {now}")
    else:
        out.fields["last_change_s"] = now - stamp


def _speed(at: _At, entry: dict[str, Any], out: _Port) -> None:
    """The trained speed: `bandwidth` of an up link (a down link's is only its setting)."""
    status = at.text(entry.get("lineProtocolStatus"), "lineProtocolStatus")
    bandwidth = at.count(entry.get("bandwidth"), "bandwidth")
    if status != "up":
        out.unknown["speed_mbps"] = f"the link is {status or 'of no stated state'}: no " \
                                    "trained speed"
    elif not bandwidth:  # absent, or 0 as virtual EOS states it
        out.unknown["speed_mbps"] = f"EOS states bandwidth {bandwidth} for an up link"
    else:
        out.fields["speed_mbps"] = bandwidth // 1_000_000


# ---- show interfaces phy detail: FEC counters, lanes ----------------------------------------


def _stages(switch: _Switch, out: _Port) -> list[dict[str, Any]] | None:
    """The port's PHY stages (None, with every FEC counter's reason, when none are listed)."""
    if switch.phy is None or out.name not in switch.phy:
        why = missing(PHY) if switch.phy is None else f"{PHY!r} lists no {out.name}"
        _no_fec_counters(out, why)
        out.unknown["lanes"] = why
        return None
    at = _At(PHY, out.name)
    stages = switch.phy[out.name].get("phyStatuses") or []
    if not isinstance(stages, list):
        raise at.error("phyStatuses", stages)
    return [at.mapping(stage, f"phyStatuses[{i}]") for i, stage in enumerate(stages)]


def _no_fec_counters(out: _Port, why: str) -> None:
    for name in FEC_COUNTERS:
        out.unknown[f"fec_counters.{name}"] = why


def _phy(switch: _Switch, out: _Port) -> dict[str, Any] | None:
    """Read the port's FEC counters and lanes; return its FEC block (None: not stated)."""
    stages = _stages(switch, out)
    if stages is None:
        return None
    at = _At(PHY, out.name)
    out.set("lanes", _lanes(at, stages), f"{PHY!r} states no pma.laneSignalDetect lanes")
    # the switch chip's stage comes first: its FEC decodes what the MAC receives (a
    # gearbox's stages after it keep FEC counters of their own segments)
    stage = next((s for s in stages if s.get("fec") is not None), None)
    if stage is None:
        _no_fec_counters(out, f"{PHY!r} states no FEC block for {out.name}")
        return None
    fec = at.mapping(stage["fec"], "fec")
    _fec_counters(at, stage, fec, out)
    return fec


def _lanes(at: _At, stages: list[dict[str, Any]]) -> int | None:
    """The lanes the port runs: the first stage's (the switch chip's) PMA signal detects."""
    for stage in stages:
        pma = at.mapping(stage.get("pma"), "pma")
        if detect := at.mapping(pma.get("laneSignalDetect"), "pma.laneSignalDetect"):
            return len(detect)
    return None


def _value(at: _At, block: dict[str, Any], key: str) -> Any:
    """A PHY attribute's value: EOS wraps them as {value, changes, lastChange}."""
    return at.mapping(block.get(key), key).get("value")


def _fec_counters(at: _At, stage: dict[str, Any], fec: dict[str, Any], out: _Port) -> None:
    read = {
        "corrected": at.count(_value(at, fec, "correctedCodewords"),
                              "fec.correctedCodewords.value"),
        "uncorrectable": at.count(_value(at, fec, "uncorrectedCodewords"),
                                  "fec.uncorrectedCodewords.value"),
        "symbol_errors": _symbols(at, fec),
        "pre_fec_ber": at.number(_value(at, stage, "preFecBer"), "preFecBer.value"),
    }
    for name, value in read.items():
        if value is None:
            out.unknown[f"fec_counters.{name}"] = f"{PHY!r} states no {FEC_KEYS[name]} " \
                                                  f"for {out.name}"
    out.unknown["fec_counters.post_fec_ber"] = f"{PHY!r} states no post-FEC BER"
    out.fields["fec_counters"] = FecCounters(**read)


def _symbols(at: _At, fec: dict[str, Any]) -> int | None:
    """Corrected symbols summed over the FEC lanes (EOS leaves them empty on breakouts)."""
    lanes = at.mapping(fec.get("correctedSymbols"), "fec.correctedSymbols")
    counts = [at.count(_value(at, lanes, lane), f"fec.correctedSymbols.{lane}.value")
              for lane in lanes]
    if not counts or any(count is None for count in counts):
        return None
    return sum(count or 0 for count in counts)


# ---- FEC mode: show interfaces error-correction, else the phy detail's encoding ------------


def _stated_fec(switch: _Switch, port: str, block: dict[str, Any] | None) -> tuple[str, str]:
    """(the FEC name EOS states, where) or ("", why none)."""
    if switch.fec_status is not None and port in switch.fec_status:
        at = _At(ERROR_CORRECTION, port)
        stated = at.text(switch.fec_status[port].get("errCorrEncodingStatus"),
                         "errCorrEncodingStatus")
        if stated:
            return stated, ERROR_CORRECTION
    if block is not None and (stated := _At(PHY, port).text(block.get("encoding"),
                                                            "fec.encoding")):
        return stated, PHY
    if switch.fec_status is None and switch.phy is None:
        return "", f"neither {ERROR_CORRECTION!r} nor {PHY!r} is in the outputs"
    return "", f"EOS states no FEC encoding for {port}"


def _fec(switch: _Switch, out: _Port, block: dict[str, Any] | None) -> None:
    stated, source = _stated_fec(switch, out.name, block)
    if not stated:
        out.unknown["fec"] = source
        return
    folded = stated.replace("-", "").lower()
    if folded == _GENERIC_RS:  # RS(528,514) or RS(544,514): the lane rate decides
        out.set("fec", resolve_rs(out.fields.get("speed_mbps"), out.fields.get("lanes")),
                f"{source!r} states {stated!r}, not which RS code, and the speed that "
                "decides it is unknown")
        return
    out.set("fec", _FEC.get(folded), f"{source!r} states FEC {stated!r}, which flatfab "
                                     "does not map")


# ---- the module: show inventory, transceiver hardware, transceiver detail ------------------


def _module(switch: _Switch, out: _Port, cage: _Cage) -> None:
    slots = set(switch.slots or ())
    dom = _lane_entries(switch.dom, cage, slots) if switch.dom is not None else []
    slot = (switch.slots or {}).get(cage.number)
    present, why = _presence(switch, cage, slot, dom)
    out.set("present", present, why)
    if present is False:  # an empty cage: no module and no diagnostics, and nothing unknown
        return
    if present is None:
        out.unknown["module"] = out.unknown["diagnostics"] = why
        return
    out.fields["module"] = _transceiver(switch, out, cage, slot, dom)
    _diagnostics(switch, out, cage, dom)


def _presence(switch: _Switch, cage: _Cage, slot: Any,
              dom: list[Any]) -> tuple[bool | None, str]:
    if slot is not None:
        vendor = _At(INVENTORY, cage.number).text(slot.get("mfgName"), "mfgName")
        return vendor != NOT_PRESENT, ""  # "" (no name): a module EOS cannot identify
    if dom:  # EOS lists DOM readings only for a cage with a module in it
        return True, ""
    if switch.slots is None:
        return None, missing(INVENTORY)
    return None, f"{INVENTORY!r} lists no transceiver slot {cage.number}"


def _media_text(switch: _Switch, cage: _Cage, dom: list[Any]) -> str | None:
    """The media type the module states: show interfaces transceiver hardware's detected
    type (its `mediaType` may be a configured override), else the DOM command's."""
    slots = set(switch.slots or ())
    for command, entries in ((HARDWARE, _lane_entries(switch.hardware or {}, cage, slots)),
                             (switch.dom_command, dom)):
        at = _At(command, f"cage {cage.number}")
        for entry in entries:
            for key in ("detectedMediaType", "mediaType"):
                text = at.text(entry.get(key), key)
                if text and text not in (NOT_PRESENT, "Unknown"):
                    return text
    return None


def _transceiver(switch: _Switch, out: _Port, cage: _Cage, slot: Any,
                 dom: list[Any]) -> Transceiver:
    at = _At(INVENTORY, cage.number)
    slot = slot or {}
    vendor = at.text(slot.get("mfgName"), "mfgName")
    part = at.text(slot.get("modelName"), "modelName")
    serial = at.text(slot.get("serialNum"), "serialNum") or (
        _At(switch.dom_command, out.name).text(dom[0].get("vendorSn"), "vendorSn")
        if dom else None)
    text = _media_text(switch, cage, dom)
    media = media_of(text) if text else None
    if media is None:
        out.unknown["module.media"] = (f"EOS states media type {text!r}, which names no "
                                       "flatfab media") if text else \
            f"EOS states no media type for cage {cage.number}"
    cable = _cable_m(vendor, part) if media in (Media.DAC, Media.AOC) else None
    if cable is None and media in (Media.DAC, Media.AOC):
        out.unknown["module.cable_m"] = (f"EOS JSON states no cable length, and part "
                                         f"{part!r} of {vendor!r} names none")
    return Transceiver(media=media, compliance=text, vendor=vendor, part=part, serial=serial,
                       cable_m=cable)


def _cable_m(vendor: str | None, part: str | None) -> float | None:
    """A cable's length as Arista's part number states it (CAB-Q-Q-100G-3M: 3 m)."""
    if not (vendor and part and vendor.startswith("Arista")):
        return None
    m = _ARISTA_CABLE.match(part)
    return float(m[1]) if m else None


def _diagnostics(switch: _Switch, out: _Port, cage: _Cage, dom: list[Any]) -> None:
    if switch.dom is None:
        out.unknown["diagnostics"] = f"neither {TRANSCEIVER!r} nor {TRANSCEIVER_BRIEF!r} " \
                                     "is in the outputs"
        return
    at = _At(switch.dom_command, out.name)
    lanes = [Lane(rx_power_dbm=at.number(e.get("rxPower"), "rxPower"),
                  tx_power_dbm=at.number(e.get("txPower"), "txPower"),
                  bias_ma=at.number(e.get("txBias"), "txBias")) for e in dom]
    first = dom[0] if dom else {}
    read = Diagnostics(temperature_c=at.number(first.get("temperature"), "temperature"),
                       voltage_v=at.number(first.get("voltage"), "voltage"),
                       lanes=lanes, thresholds=_thresholds(at, first))
    stated = read.temperature_c is not None or read.voltage_v is not None or any(
        value is not None for lane in lanes for value in lane.model_dump().values())
    out.set("diagnostics", read if stated else None,
            f"the module in cage {cage.number} states no digital diagnostics (a passive "
            "cable states none)" if dom else
            f"{switch.dom_command!r} lists no readings for cage {cage.number}")


def _thresholds(at: _At, entry: dict[str, Any]) -> dict[str, Thresholds]:
    """The module's own thresholds by flatfab measure, where it states any."""
    details = at.mapping(entry.get("details"), "details")
    found = {}
    for name, measure in MEASURES.items():
        limits = at.mapping(details.get(name), f"details.{name}")
        read = {ours: at.number(limits.get(theirs), f"details.{name}.{theirs}")
                for theirs, ours in LIMITS.items()}
        if any(value is not None for value in read.values()):
            found[measure] = Thresholds(**read)
    return found
