"""The physical layer of Junos switch ports (QFX52xx, PTX), read from `| display json`: what is
in each cage, how it reads, how its FEC fares and how often its link changed
(flatfab.model.physical).

What each command states (shapes and their sources: tests/fixtures/junos/README.md, "phy").
Every operational leaf is `[{"data": "...", "attributes": {...}}]`:

- `show interfaces extensive`: per `physical-interface`: `oper-status`, `speed` ("400Gbps"),
  `interface-flapped` ("2025-10-09 08:51:45 UTC (00:01:35 ago)", attribute `junos:seconds`
  the age in seconds; "Never" with 0), `output-error-list/carrier-transitions` (the times the
  link went from down to up since the statistics were cleared), `ethernet-fec-mode/
  enabled_fec_mode` (NONE, FEC74, FEC91, FEC108, FEC119), `ethernet-fec-statistics/
  {fec_ccw_count, fec_nccw_count}` (codewords corrected, uncorrected) and, on Junos OS Evolved
  releases that print "PRE FEC BER", `pre-fec-ber`.
- `show interfaces diagnostics optics`: per port `optics-diagnostics`: `module-temperature`
  (attribute `junos:celsius`), `module-voltage` (V), the module's thresholds
  (`module-temperature-high-alarm-threshold`, `laser-rx-power-low-warn-threshold-dbm`, ...)
  and one `optics-diagnostics-lane-values` per optical channel (`lane-index`,
  `laser-bias-current` mA, `laser-output-power-dbm`, `laser-rx-optical-power-dbm`); a
  single-channel module states its readings on `optics-diagnostics` itself, a module without
  monitors `optic-diagnostics-not-available`. No light reads "- Inf" dBm.
- `show chassis hardware`: `chassis-module` "FPC n" / `chassis-sub-module` "PIC m" /
  `chassis-sub-sub-module` "Xcvr p" per installed module (`part-number`, "NON-JNPR" for a
  third-party module; `serial-number`; `description` such as QSFP56-DD-400GBASE-DR4). A cage
  without a module is not listed.
- `show chassis pic fpc-slot 0 pic-slot 0`: `port-information/port` per module of the one PIC
  of a QFX52xx: `sfp-vendor-name`, `sfp-vendor-pno`, `cable-type` ("100GBASE SR4").

Junos states no electrical (host-side) lane count in these commands, no post-FEC BER and no
symbol error count: those stay unknown (`fec_ccw_error_rate` and `fec_nccw_error_rate` are
codewords a second, no bit error ratio, and are not read). A fact no command states is None
with its reason in `unknown`; a value of the wrong kind raises PhyReadError naming the
command, the port and the key.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
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

INTERFACES = "show interfaces extensive | display json"
OPTICS = "show interfaces diagnostics optics | display json"
HARDWARE = "show chassis hardware | display json"
# the QFX5220/5230/5240 have one FPC and one PIC: this PIC holds every cage
PIC = "show chassis pic fpc-slot 0 pic-slot 0 | display json"
COMMANDS: tuple[str, ...] = (INTERFACES, OPTICS, HARDWARE, PIC)
PIC_SLOT = ("0", "0")

FEC_COUNTERS = ("corrected", "uncorrectable", "symbol_errors", "pre_fec_ber", "post_fec_ber")
# Junos's FEC names (Juniper, "fec (ether)": fec74, fec91, fec108, none; FEC119 on 400G ports)
# by the IEEE 802.3 clause they name: 74 BASE-R, 108 RS(528,514) for 25G, 119 RS(544,514) for
# 200G/400G. Clause 91 holds both RS(528,514) and RS(544,514): the lane rate decides.
_FEC = {"NONE": Fec.NONE, "FEC74": Fec.FC, "FEC108": Fec.RS528, "FEC119": Fec.RS544}
_CLAUSE_91 = "FEC91"
# the module's measures by flatfab name -> Junos's threshold key ({} is high-alarm, low-warn..)
_THRESHOLD_KEYS = {"temperature_c": "module-temperature-{}-threshold",
                   "voltage_v": "module-voltage-{}-threshold",
                   "bias_ma": "laser-bias-current-{}-threshold",
                   "tx_power_dbm": "laser-tx-power-{}-threshold-dbm",
                   "rx_power_dbm": "laser-rx-power-{}-threshold-dbm"}
_LIMITS = {"low_alarm": "low-alarm", "low_warning": "low-warn", "high_warning": "high-warn",
           "high_alarm": "high-alarm"}
# what Junos prints where a module gives no value
_NOT_STATED = frozenset({"n/a", "na", "not supported", "not available", "unknown"})
_NO_LIGHT = re.compile(r"^-\s*inf$", re.IGNORECASE)  # "- Inf" / "-Inf" dBm: 0 mW
_PORT = re.compile(r"^[a-z]+-(\d+)/(\d+)/(\d+)(?::\d+)?$")
_SPEED = re.compile(r"^(\d+(?:\.\d+)?)\s*([gmk])bps$", re.IGNORECASE)
_SCALE = {"g": 1000.0, "m": 1.0, "k": 0.001}
_FLAPPED = re.compile(r"^(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}) ([A-Za-z]+)\b")
_CELSIUS = re.compile(r"^(-?\d+(?:\.\d+)?) degrees C\b")
_FORM_FACTOR = re.compile(r"^(QSFP-DD800|QSFP56-DD|QSFP-DD|QSFP112|QSFP56|QSFP28|QSFP\+|QSFP|"
                          r"OSFP|SFP56|SFP28|SFP\+|SFP)-", re.IGNORECASE)
# a cable assembly's length in Juniper's description: QSFP28-100G-CU3M, QSFP28-100G-AOC-1M
_CABLE = re.compile(r"(?:CU|AOC|DAC)-?(\d+(?:\.\d+)?)M(?:-|$)", re.IGNORECASE)
_SPEED_TOKEN = re.compile(r"^\d+(?:X\d+)?G(?:BASE)?$")  # 400GBASE, 100G, 4X10G
# the PMD after the speed by its letters -> media; LRL (LR4 "lite", 2 km), ZR, VR map to none
_PMD_MEDIA = {"SR": Media.SR, "SWDM": Media.SR, "DR": Media.DR, "PSM": Media.DR,
              "FR": Media.FR, "CWDM": Media.FR, "CLR": Media.FR, "LR": Media.LR, "ER": Media.ER}


def media_of(text: str) -> Media | None:
    """The media a Junos module type names (QSFP56-DD-400GBASE-DR4 -> dr, QSFP28-100G-CU3M ->
    dac, the PIC's cable type "100GBASE SR4" -> sr), None when it names none."""
    tokens = [t for t in re.split(r"[-\s]+", text.strip().upper()) if t]
    for i, token in enumerate(tokens[:-1]):
        if _SPEED_TOKEN.match(token):
            return _pmd_media(tokens[i + 1], tokens[i + 2:])
    return None


def _pmd_media(pmd: str, rest: list[str]) -> Media | None:
    if re.match(r"^(?:CU|DAC)[\d.]*M?$|^CR\d*$", pmd):
        return Media.DAC  # passive copper: CU3M, DAC, CR4
    if pmd.startswith("AOC"):
        return Media.AOC
    letters = re.match(r"[A-Z]+", pmd)
    name = letters[0] if letters else ""
    if rest[:1] == ["LITE"]:
        return None  # 100G-LR4 Lite: 2 km, no 10 km LR
    if name == "DR" and rest[:1] == ["2"]:
        return Media.FR  # 802.3df DR4-2, DR8-2: 2 km
    return _PMD_MEDIA.get(name)


@dataclass(frozen=True)
class _At(At):
    """Where a value is read from (its command and port), and how this OS states values."""

    def entries(self, obj: dict[str, Any], key: str) -> list[dict[str, Any]]:
        """A Junos element's occurrences: a list of objects ([] when absent)."""
        value = obj.get(key)
        if value is None:
            return []
        if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
            raise self.error(key, value)
        return value

    def entry(self, obj: dict[str, Any], key: str) -> dict[str, Any] | None:
        found = self.entries(obj, key)
        return found[0] if found else None

    def text(self, obj: dict[str, Any], key: str) -> str | None:
        """A leaf's text; an empty element ({} or [null]) states none."""
        leaf = self.entry(obj, key)
        value = None if leaf is None else leaf.get("data")
        if value is None or value == [None]:
            return None
        if not isinstance(value, str):
            raise self.error(key, value)
        return value.strip() or None

    def attribute(self, obj: dict[str, Any], key: str, name: str) -> str | None:
        leaf = self.entry(obj, key)
        attributes = {} if leaf is None else leaf.get("attributes") or {}
        if not isinstance(attributes, dict):
            raise self.error(f"{key}@attributes", attributes)
        value = attributes.get(name)
        if value is not None and not isinstance(value, str):
            raise self.error(f"{key}@{name}", value)
        return value

    def number(self, obj: dict[str, Any], key: str, where: str = "") -> float | None:
        """A reading; `where` names the element it sits in (a lane) for the error."""
        return self.parse_number(self.text(obj, key), where + key)

    def parse_number(self, text: str | None, key: str) -> float | None:
        if text is None or text.lower() in _NOT_STATED:
            return None
        if _NO_LIGHT.match(text):
            return -math.inf
        try:
            number = float(text)
        except ValueError:
            raise self.error(key, text) from None
        if math.isnan(number):
            raise self.error(key, text)
        return number

    def count(self, obj: dict[str, Any], key: str) -> int | None:
        """A counter: digits only (a codeword total outgrows a float's 53 exact bits)."""
        text = self.text(obj, key)
        if text is None:
            return None
        if not (text.isascii() and text.isdigit()):
            raise self.error(key, text)
        return int(text)


_Port = PortFacts


@dataclass
class _Switch:
    """The replies, indexed: physical interfaces by name, modules by cage."""

    now: float
    interfaces: dict[str, dict[str, Any]] | None = None
    optics: dict[str, dict[str, Any]] | None = None
    # (fpc, pic) -> port number -> its Xcvr entry, for every PIC show chassis hardware lists
    cages: dict[tuple[str, str], dict[str, dict[str, Any]]] | None = None
    pic_ports: dict[str, dict[str, Any]] | None = None  # port number -> port-information/port
    why: dict[str, str] = field(default_factory=dict)  # command -> why it states nothing


def read_ports(outputs: dict[str, Any], ports: list[str], *,
               now: float) -> dict[str, PortPhysical]:
    """The physical layer of `ports` from the replies to COMMANDS (keyed by command, each
    parsed JSON); `now` is the switch's time (or time.time()) in epoch seconds."""
    switch = _switch(outputs, now)
    return {port: _read(switch, port) for port in ports}


def _reply(outputs: dict[str, Any], command: str, switch: _Switch) -> dict[str, Any] | None:
    """A command's reply; None (with why) when it is not in the outputs or empty (the
    collector stores {} for a command that failed)."""
    if command not in outputs:
        switch.why[command] = missing(command)
        return None
    reply = outputs[command]
    if not isinstance(reply, dict):
        raise PhyReadError.at(command, "*", "(reply)", reply)
    if not reply:
        switch.why[command] = f"{command!r} gave an empty reply"
        return None
    return reply


def _switch(outputs: dict[str, Any], now: float) -> _Switch:
    switch = _Switch(now=now)
    for command in (INTERFACES, OPTICS):
        reply = _reply(outputs, command, switch)
        table = None if reply is None else _physical_interfaces(command, reply)
        if command == INTERFACES:
            switch.interfaces = table
        else:
            switch.optics = table
    hardware = _reply(outputs, HARDWARE, switch)
    switch.cages = None if hardware is None else _cages(hardware)
    pic = _reply(outputs, PIC, switch)
    switch.pic_ports = None if pic is None else _pic_ports(pic)
    return switch


def _physical_interfaces(command: str, reply: dict[str, Any]) -> dict[str, dict[str, Any]]:
    at = _At(command, "*")
    table: dict[str, dict[str, Any]] = {}
    for info in at.entries(reply, "interface-information"):
        for phys in at.entries(info, "physical-interface"):
            name = at.text(phys, "name")
            if name:
                table[name] = phys
    return table


def _named(at: _At, obj: dict[str, Any], key: str, prefix: str) -> dict[str, dict[str, Any]]:
    """The children of `key` whose name is "<prefix> <n>", by n (FPC 0, PIC 0, Xcvr 12)."""
    found: dict[str, dict[str, Any]] = {}
    for child in at.entries(obj, key):
        parts = (at.text(child, "name") or "").split()
        if len(parts) == 2 and parts[0] == prefix:
            found[parts[1]] = child
    return found


def _cages(reply: dict[str, Any]) -> dict[tuple[str, str], dict[str, dict[str, Any]]]:
    at = _At(HARDWARE, "*")
    cages: dict[tuple[str, str], dict[str, dict[str, Any]]] = {}
    for inventory in at.entries(reply, "chassis-inventory"):
        for chassis in at.entries(inventory, "chassis"):
            for fpc, module in _named(at, chassis, "chassis-module", "FPC").items():
                for pic, sub in _named(at, module, "chassis-sub-module", "PIC").items():
                    cages[fpc, pic] = _named(at, sub, "chassis-sub-sub-module", "Xcvr")
    return cages


def _pic_ports(reply: dict[str, Any]) -> dict[str, dict[str, Any]]:
    at = _At(PIC, "*")
    ports: dict[str, dict[str, Any]] = {}
    for info in at.entries(reply, "fpc-information"):
        for fpc in at.entries(info, "fpc"):
            for detail in at.entries(fpc, "pic-detail"):
                for listing in at.entries(detail, "port-information"):
                    for port in at.entries(listing, "port"):
                        number = at.text(port, "port-number")
                        if number is not None:
                            ports[number] = port
    return ports


def _read(switch: _Switch, port: str) -> PortPhysical:
    out = _Port(port)
    stated_speed = _link(switch, out)
    out.unknown["lanes"] = ("Junos states no electrical (host-side) lane count in "
                            f"{INTERFACES!r}")
    _module(switch, out)
    if switch.interfaces is not None and port in switch.interfaces:
        phys = switch.interfaces[port]
        _fec(out, phys, stated_speed)
        _fec_counters(out, phys)
    else:
        why = switch.why.get(INTERFACES) or f"{INTERFACES!r} lists no {port}"
        out.unknown["fec"] = why
        for name in FEC_COUNTERS:
            out.unknown[f"fec_counters.{name}"] = why
    return out.built()


# ---- show interfaces extensive: flaps, last change, speed ----------------------------------


def _link(switch: _Switch, out: _Port) -> int | None:
    """Flaps, last change and trained speed; returns the port's stated speed (Mb/s), which
    decides a Clause 91 RS code even while the link is down."""
    if switch.interfaces is None or out.name not in switch.interfaces:
        why = switch.why.get(INTERFACES) or f"{INTERFACES!r} lists no {out.name}"
        for key in ("flaps", "last_change_s", "speed_mbps"):
            out.unknown[key] = why
        return None
    at, phys = _At(INTERFACES, out.name), switch.interfaces[out.name]
    errors = at.entry(phys, "output-error-list") or {}
    # Junos counts the link's down-to-up transitions (one a flap) since statistics were cleared
    out.set("flaps", at.count(errors, "carrier-transitions"),
            "Junos states no output-error-list/carrier-transitions for this port")
    _last_change(switch.now, at, phys, out)
    return _speed(at, phys, out)


def _last_change(now: float, at: _At, phys: dict[str, Any], out: _Port) -> None:
    """The age of "Last flapped": from its UTC time and `now`; where the switch prints a local
    zone (an abbreviation names no offset) or its time is after `now`, the switch's own age
    (junos:seconds, as of its reply)."""
    text = at.text(phys, "interface-flapped")
    if text is None:
        out.unknown["last_change_s"] = "Junos states no interface-flapped (Last flapped)"
        return
    if text.lower() == "never":
        out.unknown["last_change_s"] = ("Last flapped: Never (no change since the switch "
                                        "started; its uptime is not read)")
        return
    stamp = _flapped_epoch(at, text)
    if stamp is not None and stamp <= now:
        out.fields["last_change_s"] = now - stamp
        return
    age = at.parse_number(at.attribute(phys, "interface-flapped", "junos:seconds"),
                          "interface-flapped@junos:seconds")
    if age is None or age < 0:
        out.unknown["last_change_s"] = (f"Last flapped {text!r} is in no UTC time before "
                                        f"{now}, and Junos states no junos:seconds age")
        return
    out.fields["last_change_s"] = age


def _flapped_epoch(at: _At, text: str) -> float | None:
    """Epoch seconds of a Last flapped time in UTC (None: another zone)."""
    m = _FLAPPED.match(text)
    if m is None:
        raise at.error("interface-flapped", text)
    if m[2].upper() not in ("UTC", "GMT"):
        return None
    try:
        when = datetime.strptime(m[1], "%Y-%m-%d %H:%M:%S").replace(tzinfo=UTC)
    except ValueError:
        raise at.error("interface-flapped", text) from None
    return when.timestamp()


def _speed(at: _At, phys: dict[str, Any], out: _Port) -> int | None:
    """The trained speed is an up link's `speed`; a down link's is only its setting."""
    text = at.text(phys, "speed")
    m = _SPEED.match(text or "")
    stated = round(float(m[1]) * _SCALE[m[2].lower()]) if m else None
    status = at.text(phys, "oper-status")
    if status != "up":
        out.unknown["speed_mbps"] = (f"the link is {status or 'of no stated state'}: no "
                                     "trained speed")
    elif not stated:
        out.unknown["speed_mbps"] = f"Junos states speed {text!r} for an up link"
    else:
        out.fields["speed_mbps"] = stated
    return stated or None


# ---- FEC mode and counters -----------------------------------------------------------------


def _fec(out: _Port, phys: dict[str, Any], stated_speed: int | None) -> None:
    at = _At(INTERFACES, out.name)
    block = at.entry(phys, "ethernet-fec-mode")
    if block is None:
        out.unknown["fec"] = "Junos states no ethernet-fec-mode (Ethernet FEC Mode)"
        return
    mode = (at.text(block, "enabled_fec_mode") or "").upper()
    if not mode:
        out.unknown["fec"] = "Junos states an empty enabled_fec_mode"
    elif mode == _CLAUSE_91:  # RS(528,514) on 25G lanes, RS(544,514) on PAM4 lanes
        out.set("fec", resolve_rs(stated_speed, None),
                "Junos states FEC91 (Clause 91 RS-FEC), and the port speed that decides "
                "RS(528,514) or RS(544,514) is unknown")
    else:
        out.set("fec", _FEC.get(mode), f"Junos states FEC mode {mode!r}, which flatfab "
                                       "does not map")


def _fec_counters(out: _Port, phys: dict[str, Any]) -> None:
    at = _At(INTERFACES, out.name)
    block = at.entry(phys, "ethernet-fec-statistics")
    if block is None:
        why = "Junos states no ethernet-fec-statistics for this port (release or port)"
        for name in FEC_COUNTERS:
            out.unknown[f"fec_counters.{name}"] = why
        return
    counters = FecCounters(corrected=at.count(block, "fec_ccw_count"),
                           uncorrectable=at.count(block, "fec_nccw_count"),
                           pre_fec_ber=at.number(block, "pre-fec-ber"))
    reasons = {"corrected": "Junos states no fec_ccw_count",
               "uncorrectable": "Junos states no fec_nccw_count",
               "symbol_errors": "Junos counts codewords, not symbol errors",
               "pre_fec_ber": "Junos states no pre-fec-ber for this port (PRE FEC BER: "
                              "some Junos OS Evolved releases only)",
               "post_fec_ber": "Junos states no post-FEC BER"}
    for name in FEC_COUNTERS:
        if getattr(counters, name) is None:
            out.unknown[f"fec_counters.{name}"] = reasons[name]
    if counters.model_dump(exclude_none=True):
        out.fields["fec_counters"] = counters


# ---- the module: show chassis hardware, show chassis pic, diagnostics optics ---------------


def _module(switch: _Switch, out: _Port) -> None:
    cage = _PORT.match(out.name)
    if cage is None:
        why = f"{out.name} is no fpc/pic/port port with a transceiver cage"
        for key in ("present", "module", "diagnostics"):
            out.unknown[key] = why
        return
    fpc, pic, number = cage.groups()
    present, xcvr, why = _presence(switch, out.name, fpc, pic, number)
    out.set("present", present, why)
    if present is False:  # an empty cage: no module and no diagnostics, and nothing unknown
        return
    if present is None:
        out.unknown["module"] = out.unknown["diagnostics"] = why
        return
    pic_port = (switch.pic_ports or {}).get(number) if (fpc, pic) == PIC_SLOT else None
    module = _transceiver(out, xcvr or {}, pic_port or {},
                          why or f"Junos states no module type for Xcvr {number}")
    out.fields["module"] = module
    if module.media is not Media.DAC:  # a passive copper cable has no monitors to read
        _diagnostics(switch, out)


def _presence(switch: _Switch, port: str, fpc: str, pic: str,
              number: str) -> tuple[bool | None, dict[str, Any] | None, str]:
    """(a module in the cage, its Xcvr entry, why the inventory does not tell). The inventory
    lists every installed module, so a known port whose PIC lists no Xcvr for it is empty."""
    if switch.cages is None:
        why = switch.why[HARDWARE]
    elif (fpc, pic) not in switch.cages:
        why = f"{HARDWARE!r} lists no FPC {fpc} PIC {pic}"
    elif number in switch.cages[fpc, pic]:
        return True, switch.cages[fpc, pic][number], ""
    elif switch.interfaces is None or port in switch.interfaces:
        return False, None, ""
    else:  # no such port, so no empty cage either
        why = f"{HARDWARE!r} lists no Xcvr {number} and {INTERFACES!r} no {port}"
    # without the inventory: Junos lists optics readings only for a cage with a module
    return (True if (switch.optics or {}).get(port) else None), None, why


def _transceiver(out: _Port, xcvr: dict[str, Any], pic_port: dict[str, Any],
                 untyped: str) -> Transceiver:
    hw, pc = _At(HARDWARE, out.name), _At(PIC, out.name)
    description = hw.text(xcvr, "description")
    cable_type = pc.text(pic_port, "cable-type")
    media = next((m for t in (description, cable_type) if t and (m := media_of(t))), None)
    if media is None:
        stated = " / ".join(repr(t) for t in (description, cable_type) if t)
        out.unknown["module.media"] = (f"Junos states module type {stated}, which names no "
                                       "flatfab media") if stated else untyped
    part = hw.text(xcvr, "part-number")
    if part is None or part.upper() == "NON-JNPR":  # a third-party module: its own part
        part = pc.text(pic_port, "sfp-vendor-pno")
    form = _FORM_FACTOR.match(description or "")
    return Transceiver(form_factor=form[1].upper() if form else None, media=media,
                       compliance=description or cable_type,
                       vendor=pc.text(pic_port, "sfp-vendor-name"), part=part,
                       serial=hw.text(xcvr, "serial-number"),
                       cable_m=_cable_m(out, media, description))


def _cable_m(out: _Port, media: Media | None, description: str | None) -> float | None:
    """A cable assembly's length as Juniper's description states it (QSFP28-100G-CU3M: 3 m)."""
    if media not in (Media.DAC, Media.AOC):
        return None
    m = _CABLE.search(description or "")
    if m is None:
        out.unknown["module.cable_m"] = f"the module type {description!r} names no length"
        return None
    return float(m[1])


def _diagnostics(switch: _Switch, out: _Port) -> None:
    if switch.optics is None:
        out.unknown["diagnostics"] = switch.why[OPTICS]
        return
    phys = switch.optics.get(out.name)
    at = _At(OPTICS, out.name)
    optics = at.entry(phys, "optics-diagnostics") if phys is not None else None
    if optics is None:
        out.unknown["diagnostics"] = f"{OPTICS!r} lists no readings for {out.name}"
        return
    if at.entry(optics, "optic-diagnostics-not-available") is not None:
        out.unknown["diagnostics"] = "Junos states optic-diagnostics-not-available"
        return
    read = Diagnostics(temperature_c=_celsius(at, optics, "module-temperature"),
                       voltage_v=at.number(optics, "module-voltage"),
                       lanes=_lanes(at, optics), thresholds=_thresholds(at, optics))
    stated = read.temperature_c is not None or read.voltage_v is not None or any(
        value is not None for lane in read.lanes for value in lane.model_dump().values())
    out.set("diagnostics", read if stated else None,
            f"{OPTICS!r} states no reading for {out.name}")


def _celsius(at: _At, obj: dict[str, Any], key: str) -> float | None:
    """A temperature: the junos:celsius attribute, else the text's "NN degrees C"."""
    value = at.parse_number(at.attribute(obj, key, "junos:celsius"), f"{key}@junos:celsius")
    if value is not None:
        return value
    text = at.text(obj, key)
    if text is None or text.lower() in _NOT_STATED:
        return None
    m = _CELSIUS.match(text)
    if m is None:
        raise at.error(key, text)
    return float(m[1])


def _lanes(at: _At, optics: dict[str, Any]) -> list[Lane]:
    """The optical channels in lane order; a single-channel module states its one lane's
    readings on optics-diagnostics itself (rx as laser-rx-optical-power-dbm or, on older
    releases and 1G modules, rx-signal-avg-optical-power-dbm)."""
    values = at.entries(optics, "optics-diagnostics-lane-values")
    if values:
        indexed = []
        for value in values:
            index = at.count(value, "lane-index")
            if index is None:
                raise at.error("optics-diagnostics-lane-values.lane-index", value)
            where = f"optics-diagnostics-lane-values[{index}]."
            indexed.append((index, _lane(at, value, where)))
        return [lane for _, lane in sorted(indexed, key=lambda pair: pair[0])]
    single = _lane(at, optics, "")
    if single.rx_power_dbm is None:
        single.rx_power_dbm = at.number(optics, "rx-signal-avg-optical-power-dbm")
    return [single] if any(v is not None for v in single.model_dump().values()) else []


def _lane(at: _At, obj: dict[str, Any], where: str) -> Lane:
    return Lane(rx_power_dbm=at.number(obj, "laser-rx-optical-power-dbm", where),
                tx_power_dbm=at.number(obj, "laser-output-power-dbm", where),
                bias_ma=at.number(obj, "laser-bias-current", where))


def _thresholds(at: _At, optics: dict[str, Any]) -> dict[str, Thresholds]:
    """The module's own thresholds by flatfab measure. Junos prints 0 for each limit of a
    module that keeps none (a low alarm equal to the high alarm): such a measure is left out."""
    found: dict[str, Thresholds] = {}
    for measure, key in _THRESHOLD_KEYS.items():
        read = {ours: _limit(at, optics, key.format(theirs), measure)
                for ours, theirs in _LIMITS.items()}
        limits = Thresholds(**read)
        if limits.low_alarm is not None and limits.low_alarm == limits.high_alarm:
            continue
        if any(value is not None for value in read.values()):
            found[measure] = limits
    return found


def _limit(at: _At, optics: dict[str, Any], key: str, measure: str) -> float | None:
    return _celsius(at, optics, key) if measure == "temperature_c" else at.number(optics, key)
