"""The physical layer of Cumulus Linux 5.x switch ports, read from NVUE's JSON: what is in each
cage, how it reads, how its FEC fares and how often its link changed (flatfab.model.physical).

Shapes and their sources: tests/fixtures/nvue/README.md, "phy". One call covers every port
where NVUE has such a form (COMMANDS); the rest are one call a port (`port_commands`):

- `nv show interface -o json` (every release): per interface `link.oper-status` (or only
  `link.state`), `link.speed` ("400G"), the operational `link.fec` (rs, baser, off; absent
  where the switch states none), `link.stats.carrier-transitions` (and from 5.11
  `carrier-up-count`/`carrier-down-count`) and from 5.11 `link.oper-status-last-change`
  ("2024/10/22 18:36:00.469", the switch's local time).
- `nv show system -o json`: `timezone`, the zone that local time is in.
- `nv show platform transceiver detail -o json` (5.11+): per port the module's
  `identifier`, `vendor-name`, `vendor-pn`, `vendor-sn`, `cable-type` ("Optical module",
  "Active cable", a passive copper cable), `cable-length` ("3m"), `status`,
  `diagnostics-status`, and `temperature`, `voltage` and `channel.channel-N.{rx-power,
  tx-power, tx-bias-current}` as strings with units ("0.8625 mW / -0.64 dBm", "6.750 mA"),
  each with the module's `high-alarm-threshold` .. `low-warning-threshold`.
- `nv show interface <port> pluggable -o json` (5.3-5.10, gone in 5.11): the same identity
  keys; read only where the transceiver command is not in the outputs.
- `nv show interface <port> link phy-detail -o json` (5.10-5.14, not on Spectrum-1; 5.15
  renamed it `link phy health`): `raw-ber` (before FEC), `effective-ber` (after FEC),
  `symbol-errors` (symbols the FEC did not correct, PPCNT's phy_symbol_errors),
  `raw-ber-laneN` per electrical lane and `rs-num-corr-err-binN`, the RS-FEC histogram of
  codewords by the number of symbols corrected in them.

NVUE states no module application code (400GBASE-DR4 and the like) in these outputs: an optical
module's reach class stays unknown, and says so. A fact no command states is None with its
reason in `unknown`; a value of the wrong kind raises PhyReadError naming the command, the port
and the key.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

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

INTERFACES = "nv show interface -o json"
SYSTEM = "nv show system -o json"
TRANSCEIVERS = "nv show platform transceiver detail -o json"  # 5.11+
COMMANDS: tuple[str, ...] = (INTERFACES, SYSTEM, TRANSCEIVERS)

FEC_COUNTERS = ("corrected", "uncorrectable", "symbol_errors", "pre_fec_ber", "post_fec_ber")
_PORT = re.compile(r"[A-Za-z][A-Za-z0-9_.-]*")  # swp1, swp1s0: nothing a shell reads
# NVUE's operational FEC names; rs is either RS code, the lane rate decides
_FEC = {"baser": Fec.FC, "fc": Fec.FC, "firecode": Fec.FC, "off": Fec.NONE, "none": Fec.NONE}
_NEGOTIATED = frozenset({"auto", "driver-auto"})
# an empty cage: the SDK's module status, NVUE's diagnostics status of a missing module
_ABSENT_STATUS = frozenset({"unplugged", "removed", "not present"})
_ABSENT_DIAGNOSTICS = "non present module"
_IDENTITY = ("identifier", "vendor-name", "vendor-pn", "vendor-sn")
_LIMITS = {"high-alarm-threshold": "high_alarm", "high-warning-threshold": "high_warning",
           "low-warning-threshold": "low_warning", "low-alarm-threshold": "low_alarm"}
# channel measure -> (flatfab's name, the key of its reading, its unit)
_CHANNEL = {"rx-power": ("rx_power_dbm", "power", "dBm"),
            "tx-power": ("tx_power_dbm", "power", "dBm"),
            "tx-bias-current": ("bias_ma", "current", "mA")}
_NUMBER = re.compile(r"^([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?inf)\s*(.*)$")
_CHANNEL_KEY = re.compile(r"^channel-(\d+)$")
_LANE_KEY = re.compile(r"^(?:raw-ber|phy-raw-errors)-lane(\d+)$")
_BIN_KEY = re.compile(r"^rs-num-corr-err-bin(\d+)$")
_SPEED = re.compile(r"^(\d+(?:\.\d+)?)\s*([MGT])(?:b(?:ps|/s)?)?$", re.IGNORECASE)
_LENGTH = re.compile(r"^(\d+(?:\.\d+)?)\s*m?$")
_NO_ERRORS = 15e-255  # the BER NVUE (and mlxlink) print where no error was counted
_STAMP_FORMATS = ("%Y/%m/%d %H:%M:%S.%f", "%Y/%m/%d %H:%M:%S")
# lane rates an RS code runs on, to tell whether "rs" at a speed can be only one code
_RS_LANE_MBPS = frozenset({25_000, 50_000, 100_000, 200_000})
# module lane counts a CMIS module lights fewer of than the 8 monitors it reports
_LIT_LANES = frozenset({1, 2, 4})


def phy_detail_command(port: str) -> str:
    """FEC counters, BER and lanes of one port (5.10-5.14; 5.15 names it `link phy health`)."""
    return f"nv show interface {_checked(port)} link phy-detail -o json"


def pluggable_command(port: str) -> str:
    """The module of one port before 5.11 (ask it only where TRANSCEIVERS is refused)."""
    return f"nv show interface {_checked(port)} pluggable -o json"


def port_commands(port: str) -> tuple[str, ...]:
    """The reads NVUE has only one port at a time."""
    return phy_detail_command(port), pluggable_command(port)


def _checked(port: str) -> str:
    if not _PORT.fullmatch(port):
        raise ValueError(f"not an interface name: {port!r}")
    return port


def media_of(cable_type: str) -> Media | None:
    """The media NVUE's cable-type names: a passive copper cable is a DAC, an active optical
    cable an AOC; "Optical module" names no reach and "Active cable" optical or copper alike."""
    text = cable_type.lower()
    if "copper" in text:
        return None if "active" in text else Media.DAC
    if "optical cable" in text or re.search(r"\baoc\b", text):
        return Media.AOC
    return None


@dataclass(frozen=True)
class _At(At):
    """Where a value is read from (its command and port), and how this OS states values."""

    def text(self, value: Any, key: str) -> str | None:
        """A string value; NVUE's "N/A" and "" state nothing."""
        if value is None:
            return None
        if not isinstance(value, str):
            raise self.error(key, value)
        value = value.strip()
        return None if value in ("", "N/A", "n/a") else value

    def count(self, value: Any, key: str) -> int | None:
        """A counter: a non-negative integer or its digits."""
        if value is None:
            return None
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            return value
        if isinstance(value, str) and value.strip().isascii() and value.strip().isdigit():
            return int(value.strip())
        raise self.error(key, value)

    def ratio(self, value: Any, key: str) -> float | None:
        """A bit error ratio as NVUE prints it ("1E-7"); its "15E-255" is none seen (it prints
        that beside error counts of 0): 0."""
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float | str):
            raise self.error(key, value)
        try:
            number = float(value)
        except ValueError:
            raise self.error(key, value) from None
        if not math.isfinite(number) or number < 0:
            raise self.error(key, value)
        return 0.0 if number == _NO_ERRORS else number

    def quantity(self, value: Any, key: str, unit: str) -> float | None:
        """A reading with its unit ("42.56 C", "3.2862 V", "6.750 mA", "-0.64 dBm"); a power
        as "0.8625 mW / -0.64 dBm" reads its dBm, one in mW alone is converted (0 mW: -inf)."""
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
        text = self.text(value, key)
        if text is None:
            return None
        parts = [part.strip() for part in text.split("/")]
        if unit == "dBm":
            return self._power(parts, key, value)
        return self._number(parts[0], key, value, unit)

    def _power(self, parts: list[str], key: str, raw: Any) -> float:
        for part in parts:
            if part.endswith("dBm"):
                return self._number(part, key, raw, "dBm")
        milliwatts = self._number(parts[0], key, raw, "mW")
        return 10 * math.log10(milliwatts) if milliwatts > 0 else -math.inf

    def _number(self, text: str, key: str, raw: Any, unit: str) -> float:
        m = _NUMBER.match(text)
        # units as NVUE prints them: "C" or "degrees C", "V", "mA", "dBm", "mW"
        if m is None or (m[2] and m[2].split()[-1] != unit):
            raise self.error(key, raw)
        return float(m[1])


_Port = PortFacts


@dataclass
class _Switch:
    outputs: dict[str, Any]
    now: float
    interfaces: dict[str, Any] | None = None
    transceivers: dict[str, Any] | None = None
    zone: ZoneInfo | None = None
    zone_why: str = ""


def read_ports(outputs: dict[str, Any], ports: list[str], *,
               now: float) -> dict[str, PortPhysical]:
    """The physical layer of `ports` from the replies to COMMANDS and `port_commands` (keyed by
    command, each parsed JSON); `now` is the switch's time (or time.time()) in epoch seconds."""
    switch = _switch(outputs, now)
    return {port: _read(switch, port) for port in ports}


def _switch(outputs: dict[str, Any], now: float) -> _Switch:
    switch = _Switch(outputs=outputs, now=now)
    if INTERFACES in outputs:
        switch.interfaces = _At(INTERFACES, "*").mapping(outputs[INTERFACES], "(reply)")
    if TRANSCEIVERS in outputs:
        switch.transceivers = _At(TRANSCEIVERS, "*").mapping(outputs[TRANSCEIVERS], "(reply)")
    switch.zone, switch.zone_why = _zone(outputs)
    return switch


def _zone(outputs: dict[str, Any]) -> tuple[ZoneInfo | None, str]:
    """The switch's time zone: NVUE prints the last link change in local time."""
    if SYSTEM not in outputs:
        return None, f"{missing(SYSTEM)}: the time zone of the last change is not known"
    at = _At(SYSTEM, "*")
    name = at.text(at.mapping(outputs[SYSTEM], "(reply)").get("timezone"), "timezone")
    if name is None:
        return None, f"{SYSTEM!r} states no timezone for the time of the last change"
    try:
        return ZoneInfo(name), ""
    except (ZoneInfoNotFoundError, ValueError):
        return None, f"the switch's timezone {name!r} is not in this host's zone database"


def _read(switch: _Switch, port: str) -> PortPhysical:
    out = _Port(port)
    entry = _link(switch, out)
    _fec_counters(switch, out)  # lanes first: a generic RS code needs them
    _fec(out, entry)
    _module(switch, out)
    return out.built()


# ---- nv show interface: speed, flaps, last change -----------------------------------------


def _link(switch: _Switch, out: _Port) -> dict[str, Any] | None:
    """Read the port's link facts; return its link object (None: not listed)."""
    if switch.interfaces is None or out.name not in switch.interfaces:
        why = missing(INTERFACES) if switch.interfaces is None else \
            f"{INTERFACES!r} lists no {out.name}"
        for key in ("flaps", "last_change_s", "speed_mbps", "fec"):
            out.unknown[key] = why
        return None
    at = _At(INTERFACES, out.name)
    link = at.mapping(at.mapping(switch.interfaces[out.name], out.name).get("link"), "link")
    _speed(at, link, out)
    _flaps(at, link, out)
    _last_change(switch, at, link, out)
    return link


def _oper_state(at: _At, link: dict[str, Any]) -> str | None:
    """The link's operational state: `oper-status`, else `state` as NVUE's one-key object
    ({"up": {}}, 5.6 and others) or a word."""
    status = at.text(link.get("oper-status"), "link.oper-status")
    if status is not None:
        return status.lower()
    state = link.get("state")
    if isinstance(state, dict) and len(state) == 1:
        return str(next(iter(state))).lower()
    return at.text(state, "link.state") if not isinstance(state, dict) else None


def _speed(at: _At, link: dict[str, Any], out: _Port) -> None:
    """The trained speed: `link.speed` of an up link (a down link states none, or its
    setting)."""
    state = _oper_state(at, link)
    if state != "up":
        out.unknown["speed_mbps"] = f"the link is {state or 'of no stated state'}: no " \
                                    "trained speed"
        return
    out.set("speed_mbps", _mbps(at, link.get("speed")),
            f"{INTERFACES!r} states no link.speed for an up link")


def _mbps(at: _At, value: Any) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool):  # Mb/s
        if value < 0:
            raise at.error("link.speed", value)
        return value or None
    text = at.text(value, "link.speed")
    if text is None:
        return None
    m = _SPEED.match(text)
    if m is None:
        raise at.error("link.speed", value)
    scale = {"m": 1, "g": 1_000, "t": 1_000_000}[m[2].lower()]
    return round(float(m[1]) * scale)


def _flaps(at: _At, link: dict[str, Any], out: _Port) -> None:
    """Carrier changes since the port was created (the kernel's count; up and down each one):
    `carrier-transitions`, else the sum of the up and down counts 5.11 adds."""
    stats = at.mapping(link.get("stats"), "link.stats")
    flaps = at.count(stats.get("carrier-transitions"), "link.stats.carrier-transitions")
    if flaps is None:
        up = at.count(stats.get("carrier-up-count"), "link.stats.carrier-up-count")
        down = at.count(stats.get("carrier-down-count"), "link.stats.carrier-down-count")
        flaps = up + down if up is not None and down is not None else None
    out.set("flaps", flaps, f"{INTERFACES!r} states no link.stats.carrier-transitions")


def _last_change(switch: _Switch, at: _At, link: dict[str, Any], out: _Port) -> None:
    key = "link.oper-status-last-change"
    value = link.get("oper-status-last-change")
    if value is None:
        out.unknown["last_change_s"] = (f"{INTERFACES!r} states no {key} (NVUE before 5.11)")
        return
    if isinstance(value, str) and value.strip().lower() == "never":
        out.unknown["last_change_s"] = f"NVUE states {key} 'Never': no change since it started"
        return
    stamp = _epoch(switch, at, value, key)
    if stamp is None:
        out.unknown["last_change_s"] = switch.zone_why or f"NVUE states no {key}"
    elif stamp > switch.now:  # the clocks disagree: an age would be a guess
        out.unknown["last_change_s"] = f"{key} {value!r} is after the switch's time {switch.now}"
    else:
        out.fields["last_change_s"] = switch.now - stamp


def _epoch(switch: _Switch, at: _At, value: Any, key: str) -> float | None:
    """The epoch of a local "2024/10/22 18:36:00.469" (None: no time zone to read it in)."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    text = at.text(value, key)
    if text is None:
        return None
    for form in _STAMP_FORMATS:
        try:
            local = datetime.strptime(text, form)  # local time: the zone is added below
        except ValueError:
            continue
        return None if switch.zone is None else local.replace(tzinfo=switch.zone).timestamp()
    raise at.error(key, value)


# ---- link phy-detail: FEC counters, BER, lanes ---------------------------------------------


def _fec_counters(switch: _Switch, out: _Port) -> None:
    command = phy_detail_command(out.name)
    if command not in switch.outputs:
        why = f"{missing(command)}: NVUE before 5.10 and Spectrum-1 switches state none"
        for name in FEC_COUNTERS:
            out.unknown[f"fec_counters.{name}"] = why
        out.unknown["lanes"] = why
        return
    at = _At(command, out.name)
    detail = at.mapping(switch.outputs[command], "(reply)")
    lanes = {int(m[1]) for key in detail if (m := _LANE_KEY.match(key))}
    out.set("lanes", len(lanes) or None, f"{command!r} states no per-lane raw BER or errors")
    read = {"corrected": _corrected(at, detail),
            # PPCNT phy_symbol_errors: symbols the FEC did not correct (as mlx5's
            # rx_pcs_symbol_err_phy, which linux_host reads into the same field)
            "symbol_errors": at.count(detail.get("symbol-errors"), "symbol-errors"),
            "pre_fec_ber": at.ratio(detail.get("raw-ber"), "raw-ber"),
            "post_fec_ber": at.ratio(detail.get("effective-ber"), "effective-ber")}
    keys = {"corrected": "rs-num-corr-err-binN histogram", "symbol_errors": "symbol-errors",
            "pre_fec_ber": "raw-ber", "post_fec_ber": "effective-ber"}
    for name, value in read.items():
        if value is None:
            out.unknown[f"fec_counters.{name}"] = f"{command!r} states no {keys[name]}"
    out.unknown["fec_counters.uncorrectable"] = (
        "NVUE counts the bits FEC left uncorrected (effective-errors, effective-ber), not "
        "codewords")
    if any(value is not None for value in read.values()):
        out.fields["fec_counters"] = FecCounters(**read)


def _corrected(at: _At, detail: dict[str, Any]) -> int | None:
    """Codewords the RS-FEC corrected: every histogram bin but bin 0 (bin N counts codewords
    with N symbols corrected; bin 0 those that needed none). No bins: no RS-FEC counted."""
    bins = {int(m[1]): at.count(value, key) for key, value in detail.items()
            if (m := _BIN_KEY.match(key))}
    if not bins or any(count is None for count in bins.values()):
        return None
    return sum(count or 0 for index, count in bins.items() if index > 0)


# ---- the FEC mode: link.fec ----------------------------------------------------------------


def _fec(out: _Port, link: dict[str, Any] | None) -> None:
    if link is None:  # _link named why
        return
    at = _At(INTERFACES, out.name)
    stated = at.text(link.get("fec"), "link.fec")
    if stated is None:
        out.unknown["fec"] = f"{INTERFACES!r} states no operational link.fec for {out.name}"
        return
    mode = stated.lower()
    if mode == "rs":
        _rs(out)
    elif mode in _NEGOTIATED:
        out.unknown["fec"] = f"link.fec {stated!r}: NVUE does not state the FEC negotiated"
    elif mode in _FEC:
        out.fields["fec"] = _FEC[mode]
    else:
        raise at.error("link.fec", stated)


def _rs(out: _Port) -> None:
    """NVUE says only "rs": RS(528,514) on 25G lanes, RS(544,514) on PAM4 lanes."""
    speed, lanes = out.fields.get("speed_mbps"), out.fields.get("lanes")
    if speed is None:
        out.unknown["fec"] = "link.fec rs, and the speed that decides which RS code is unknown"
        return
    if lanes is not None:
        out.fields["fec"] = resolve_rs(speed, lanes)
        return
    codes = {resolve_rs(speed, n) for n in (1, 2, 4, 8)
             if speed % n == 0 and speed // n in _RS_LANE_MBPS}
    if len(codes) == 1:
        out.fields["fec"] = codes.pop()
    else:
        out.unknown["fec"] = (f"link.fec rs and no lane count: at {speed // 1000}G that is "
                              "RS(528,514) on 25G lanes, RS(544,514) on PAM4 lanes")


# ---- the module: platform transceiver (5.11+), else pluggable ------------------------------


def _module_entry(switch: _Switch, port: str) -> tuple[str, dict[str, Any] | None, str]:
    """(the command read, the port's module object, why there is none)."""
    if switch.transceivers is not None:
        if port not in switch.transceivers:
            return TRANSCEIVERS, None, f"{TRANSCEIVERS!r} lists no {port}"
        entry = _At(TRANSCEIVERS, port).mapping(switch.transceivers[port], port)
        return TRANSCEIVERS, entry, ""
    command = pluggable_command(port)
    if command in switch.outputs:
        return command, _At(command, port).mapping(switch.outputs[command], "(reply)"), ""
    return command, None, f"neither {TRANSCEIVERS!r} nor {command!r} is in the outputs"


def _module(switch: _Switch, out: _Port) -> None:
    command, entry, why = _module_entry(switch, out.name)
    at = _At(command, out.name)
    present = None if entry is None else _presence(at, entry)
    if present is None:
        why = why or f"{command!r} states neither a module nor an empty cage for {out.name}"
        for key in ("present", "module", "diagnostics"):
            out.unknown[key] = why
        return
    out.fields["present"] = present
    if entry is None or not present:  # an empty cage: nothing more, and nothing unknown
        return
    module = _transceiver(at, entry, out)
    out.fields["module"] = module
    _diagnostics(at, entry, module, out)


def _presence(at: _At, entry: dict[str, Any]) -> bool | None:
    status = (at.text(entry.get("status"), "status") or "").lower()
    diagnostics = (at.text(entry.get("diagnostics-status"), "diagnostics-status") or "").lower()
    if status in _ABSENT_STATUS or diagnostics == _ABSENT_DIAGNOSTICS:
        return False
    if status.startswith("plugged") or any(at.text(entry.get(k), k) for k in _IDENTITY):
        return True
    return None


def _transceiver(at: _At, entry: dict[str, Any], out: _Port) -> Transceiver:
    identifier = at.text(entry.get("identifier"), "identifier")
    cable_type = at.text(entry.get("cable-type"), "cable-type")
    media = media_of(cable_type) if cable_type else None
    if media is None:
        out.unknown["module.media"] = _no_media(cable_type, out.name)
    cable = _cable_m(at, entry) if media in (Media.DAC, Media.AOC) else None
    if cable is None and media in (Media.DAC, Media.AOC):
        out.unknown["module.cable_m"] = f"{at.command!r} states no cable-length for {out.name}"
    return Transceiver(
        # "QSFP28", or the long name some releases print ("QSFP-DD Double Density 8X ...")
        form_factor=identifier.split()[0] if identifier else None,
        media=media, compliance=None,  # NVUE states no application code
        vendor=at.text(entry.get("vendor-name"), "vendor-name"),
        part=at.text(entry.get("vendor-pn"), "vendor-pn"),
        serial=at.text(entry.get("vendor-sn"), "vendor-sn"), cable_m=cable)


def _no_media(cable_type: str | None, port: str) -> str:
    if cable_type is None:
        return f"NVUE states no cable-type for the module in {port}"
    if "optical module" in cable_type.lower():
        return (f"NVUE states cable-type {cable_type!r} and no application code: the reach "
                "class (SR, DR, FR, LR) is not stated")
    return f"NVUE states cable-type {cable_type!r}, which names no flatfab media"


def _cable_m(at: _At, entry: dict[str, Any]) -> float | None:
    """A cable assembly's length: "3m" (Cumulus 5.11+) or "3" (NVOS's pluggable)."""
    value = entry.get("cable-length")
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value) if value > 0 else None
    text = at.text(value, "cable-length")
    if text is None:
        return None
    m = _LENGTH.match(text)
    if m is None:
        raise at.error("cable-length", value)
    return float(m[1]) or None


# ---- the module's diagnostics ---------------------------------------------------------------


def _diagnostics(at: _At, entry: dict[str, Any], module: Transceiver, out: _Port) -> None:
    temperature, temp_limits = _measure(at, entry.get("temperature"), "temperature", "C")
    voltage, volt_limits = _measure(at, entry.get("voltage"), "voltage", "V")
    lanes, lane_limits = _channels(at, at.mapping(entry.get("channel"), "channel"))
    stated = temperature is not None or voltage is not None or any(
        value is not None for lane in lanes for value in lane.model_dump().values())
    if not stated:
        if module.media is not Media.DAC:  # a passive cable keeps no monitors: nothing unread
            status = at.text(entry.get("diagnostics-status"), "diagnostics-status")
            out.unknown["diagnostics"] = f"NVUE states {status!r}" if status else \
                f"{at.command!r} states no diagnostics for {out.name}"
        return
    limits = {"temperature_c": temp_limits, "voltage_v": volt_limits} | lane_limits
    out.fields["diagnostics"] = Diagnostics(
        temperature_c=temperature, voltage_v=voltage, lanes=lanes,
        thresholds={name: found for name, found in limits.items() if found is not None})


def _measure(at: _At, value: Any, name: str, unit: str,
             reading: str | None = None) -> tuple[float | None, Thresholds | None]:
    """A reading and its thresholds: an object {<reading>: "42.56 C", high-alarm-threshold:
    ..} or the bare reading ("42.56 degrees C / 108.61 degrees F")."""
    if not isinstance(value, dict):
        return at.quantity(value, name, unit), None
    key = reading or name
    found = at.quantity(value.get(key), f"{name}.{key}", unit)
    limits = {ours: at.quantity(value.get(theirs), f"{name}.{theirs}", unit)
              for theirs, ours in _LIMITS.items()}
    stated = any(limit is not None for limit in limits.values())
    return found, Thresholds(**limits) if stated else None


def _channels(at: _At, channels: dict[str, Any]
              ) -> tuple[list[Lane], dict[str, Thresholds | None]]:
    """The module's channels in order, and the thresholds the first one states (a module
    keeps one set for all its lanes)."""
    numbered = []
    for key, value in channels.items():
        m = _CHANNEL_KEY.match(key)
        if m is None:
            raise at.error(f"channel.{key}", key)
        numbered.append((int(m[1]), at.mapping(value, f"channel.{key}")))
    lanes: list[Lane] = []
    limits: dict[str, Thresholds | None] = {}
    for number, channel in sorted(numbered, key=lambda pair: pair[0]):
        read: dict[str, float | None] = {}
        for theirs, (ours, reading, unit) in _CHANNEL.items():
            value, found = _measure(at, channel.get(theirs), f"channel.channel-{number}.{theirs}",
                                    unit, reading)
            read[ours] = value
            limits.setdefault(ours, found)
        lanes.append(Lane(**read))
    return _lit(lanes), limits


def _dark(lane: Lane) -> bool:
    return lane.tx_power_dbm == -math.inf and lane.rx_power_dbm == -math.inf \
        and lane.bias_ma == 0


def _lit(lanes: list[Lane]) -> list[Lane]:
    """The module's optical lanes: a CMIS module reports 8 monitors, and a DR4 lights 4 of
    them; trailing channels with no light either way and no bias are dropped where what is
    left is a module's lane count (1, 2, 4). Otherwise every channel stays, dark or not."""
    end = len(lanes)
    while end and _dark(lanes[end - 1]):
        end -= 1
    return lanes[:end] if end in _LIT_LANES and end < len(lanes) else lanes
