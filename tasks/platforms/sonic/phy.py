"""Read the physical layer of one SONiC port from redis into flatfab's PortPhysical.

Sources (read-only `sonic-db-cli <DB> HGETALL '<key>'`, keyed here by table name):

- STATE_DB `TRANSCEIVER_INFO|<port>` (xcvrd): the module's identity and stated compliance.
  SFF-8636 modules state `specification_compliance` as a dict's text; CMIS modules (202205 on)
  state their media type there (`sm_media_interface`, `passive_copper_media_interface`, ...)
  and the application in `media_interface_code` ("400GBASE-DR4 (Cl 124)").
- STATE_DB `TRANSCEIVER_DOM_SENSOR|<port>`: temperature (C), voltage (V), per lane rx/tx power
  (dBm) and tx bias (mA); "N/A" where the module has no such monitor, "-inf" for 0 mW.
- STATE_DB `TRANSCEIVER_DOM_THRESHOLD|<port>` (202305 on); before, xcvrd posted the same
  threshold fields into the DOM_SENSOR hash.
- APPL_DB `PORT_TABLE:<port>` and CONFIG_DB `PORT|<port>`: speed, lanes, fec; APPL_DB also
  `flap_count`, `last_up_time`, `last_down_time` (202405 on, written at the first change).
- COUNTERS_DB `COUNTERS:<oid>` FEC counters (202111 on) and `RATES:<oid>` FEC_PRE_BER /
  FEC_POST_BER (port_rates.lua, 202505 on).

What a hash does not state stays None with a reason in `unknown`; a value that is stated but
cannot be read raises PhyReadError. The embedded lab feeds the same hashes from a file.
"""

from __future__ import annotations

import ast
import math
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime

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

INFO = "TRANSCEIVER_INFO"
SENSOR = "TRANSCEIVER_DOM_SENSOR"
THRESHOLD = "TRANSCEIVER_DOM_THRESHOLD"
APPL = "APPL_PORT"
CONFIG = "CONFIG_PORT"
COUNTERS = "COUNTERS"
RATES = "RATES"

# table name -> (database, key) of the port's hash
_WHERE = {
    INFO: ("STATE_DB", "TRANSCEIVER_INFO|{}"),
    SENSOR: ("STATE_DB", "TRANSCEIVER_DOM_SENSOR|{}"),
    THRESHOLD: ("STATE_DB", "TRANSCEIVER_DOM_THRESHOLD|{}"),
    APPL: ("APPL_DB", "PORT_TABLE:{}"),
    CONFIG: ("CONFIG_DB", "PORT|{}"),
}
_BY_OID = {COUNTERS: "COUNTERS:{}", RATES: "RATES:{}"}

# what xcvrd writes where a module or API gives no value
_NOT_STATED = frozenset({"", "N/A", "None"})


def _digits(text: str) -> bool:
    return text.isascii() and text.isdigit()  # isdigit alone takes "²", which int() refuses


class PhyReadError(ValueError):
    """A value SONiC states that flatfab cannot read (one line: port, table, field)."""


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\"'\"'") + "'"


def commands(port: str, oid: str | None) -> dict[str, str]:
    """The read-only sonic-db-cli reads of one port by table name; COUNTERS and RATES only
    where the port's oid (its COUNTERS_PORT_NAME_MAP value, "oid:0x...") is known."""
    if not port:
        raise ValueError("no port name")
    out = {name: f"sonic-db-cli {db} HGETALL {_quote(key.format(port))}"
           for name, (db, key) in _WHERE.items()}
    if oid:
        out |= {name: f"sonic-db-cli COUNTERS_DB HGETALL {_quote(key.format(oid))}"
                for name, key in _BY_OID.items()}
    return out


@dataclass
class _Port:
    """One port's hashes as read, and what they leave unknown."""

    name: str
    tables: dict[str, dict[str, str]]
    unknown: dict[str, str] = field(default_factory=dict)

    def row(self, table: str) -> dict[str, str]:
        return self.tables.get(table, {})

    def text(self, table: str, name: str) -> str | None:
        value = self.row(table).get(name, "").strip()
        return None if value in _NOT_STATED else value

    def bad(self, table: str, name: str, value: str, what: str) -> PhyReadError:
        return PhyReadError(f"{self.name}: {table} {name} {value[:40]!r} is not {what}")

    def number(self, table: str, name: str) -> float | None:
        """A float the hash states; NaN (xcvrd's reading of a negative mW) is no reading."""
        value = self.text(table, name)
        if value is None:
            return None
        try:
            number = float(value)
        except ValueError:
            raise self.bad(table, name, value, "a number") from None
        return None if math.isnan(number) else number

    def count(self, table: str, name: str) -> int | None:
        value = self.text(table, name)
        if value is None:
            return None
        if not _digits(value):
            raise self.bad(table, name, value, "a count")
        return int(value)

    def port_text(self, name: str) -> tuple[str | None, str]:
        """A PORT field: APPL_DB's copy first (what portsyncd passed on), else CONFIG_DB's."""
        for table in (APPL, CONFIG):
            value = self.text(table, name)
            if value is not None:
                return value, table
        return None, APPL

    def missing(self, table: str) -> str:
        """Why a hash states nothing."""
        return f"{table} was not read" if table not in self.tables else f"{table} is empty"


def read_port(port: str, tables: Mapping[str, Mapping[str, str]], *, virtual: bool = False,
              now: float | None = None) -> PortPhysical:
    """The physical layer of `port` from its hashes by table name (see `commands`); a table
    absent or empty states nothing. `now`: epoch seconds, for the time since the last change."""
    p = _Port(port, {name: {str(k): str(v) for k, v in row.items()}
                     for name, row in tables.items() if isinstance(row, Mapping)})
    speed = _speed(p)
    lanes = _lanes(p)
    fec = _fec(p, speed, lanes)
    present = _present(p)
    module = _module(p) if present else None
    diagnostics = _diagnostics(p) if present is not False else None
    return PortPhysical(
        present=present, module=module, diagnostics=diagnostics, fec=fec,
        fec_counters=_fec_counters(p), flaps=_flaps(p),
        last_change_s=_last_change(p, time.time() if now is None else now),
        speed_mbps=speed, lanes=lanes, virtual=virtual, unknown=p.unknown)


# --- the PORT row ----------------------------------------------------------------------------

def _speed(p: _Port) -> int | None:
    value, table = p.port_text("speed")
    if value is None:
        p.unknown["speed_mbps"] = "neither APPL_DB PORT_TABLE nor CONFIG_DB PORT states a speed"
        return None
    if not _digits(value):
        raise p.bad(table, "speed", value, "a speed in Mb/s")
    return int(value)


def _lanes(p: _Port) -> int | None:
    value, table = p.port_text("lanes")
    if value is None:
        p.unknown["lanes"] = "neither APPL_DB PORT_TABLE nor CONFIG_DB PORT states lanes"
        return None
    parts = [part.strip() for part in value.split(",")]
    if not all(_digits(part) for part in parts):
        raise p.bad(table, "lanes", value, "a list of serdes lanes")
    return len(parts)


_FEC = {"fc": Fec.FC, "none": Fec.NONE}


def _fec(p: _Port, speed: int | None, lanes: int | None) -> Fec | None:
    value, table = p.port_text("fec")
    if value is None:
        p.unknown["fec"] = ("the PORT row states no fec: the platform's default applies, "
                            "and SONiC does not say which")
        return None
    mode = value.lower()
    if mode == "rs":  # SONiC says only RS: which code follows from the lane rate
        resolved = resolve_rs(speed, lanes)
        if resolved is None:
            p.unknown["fec"] = "fec rs with no speed: RS(528,514) or RS(544,514) is not known"
        return resolved
    if mode == "auto":
        p.unknown["fec"] = "fec auto: SONiC does not state the FEC negotiated"
        return None
    if mode not in _FEC:
        raise p.bad(table, "fec", value, "a SONiC FEC mode (rs, fc, none, auto)")
    return _FEC[mode]


def _flaps(p: _Port) -> int | None:
    flaps = p.count(APPL, "flap_count")
    if flaps is None:
        p.unknown["flaps"] = ("APPL_DB PORT_TABLE has no flap_count (SONiC before 202405, or "
                              "the link has not changed state since it started)")
    return flaps


_MONTHS = {name: number for number, name in enumerate(
    ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"), 1)}
# orchagent's strftime "%a %b %d %H:%M:%S %Y" in UTC; read without the locale's names
_STAMP = re.compile(r"[A-Z][a-z]{2} ([A-Z][a-z]{2}) +(\d{1,2}) (\d{2}):(\d{2}):(\d{2}) (\d{4})")


def _epoch(p: _Port, name: str) -> float | None:
    value = p.text(APPL, name)
    if value is None:
        return None
    stamp = _STAMP.fullmatch(value)
    try:
        if stamp is None or stamp.group(1) not in _MONTHS:
            raise ValueError(value)
        day, hour, minute, second, year = (int(g) for g in stamp.group(2, 3, 4, 5, 6))
        when = datetime(year, _MONTHS[stamp.group(1)], day, hour, minute, second, tzinfo=UTC)
    except ValueError:
        raise p.bad(APPL, name, value, "a time like 'Sat Jan 18 00:08:42 2025'") from None
    return when.timestamp()


def _last_change(p: _Port, now: float) -> float | None:
    times = [t for t in (_epoch(p, "last_up_time"), _epoch(p, "last_down_time"))
             if t is not None]
    if not times:
        p.unknown["last_change_s"] = ("APPL_DB PORT_TABLE has no last_up_time or "
                                      "last_down_time (SONiC before 202405, or no change "
                                      "since the link started)")
        return None
    return max(0.0, now - max(times))  # a clock behind the switch's: just changed


# --- the module ------------------------------------------------------------------------------

def _present(p: _Port) -> bool | None:
    if p.row(INFO):
        return True
    if INFO in p.tables and (p.row(APPL) or p.row(CONFIG)):
        return False  # xcvrd removes TRANSCEIVER_INFO when the module is pulled
    why = (p.missing(INFO) if INFO not in p.tables
           else f"{INFO} is empty and no PORT row names the port")
    p.unknown["present"] = why
    p.unknown["module"] = why
    return None


def _module(p: _Port) -> Transceiver:
    media, compliance, why = _stated_media(p)
    if media is None:
        p.unknown["module.media"] = why
    abbreviated, kind = p.text(INFO, "type_abbrv_name"), p.text(INFO, "type")
    return Transceiver(
        # older xcvrd states only the SFF-8024 name: "QSFP28 or later" -> QSFP28
        form_factor=abbreviated or (kind.split()[0] if kind else None),
        media=media, compliance=compliance, vendor=p.text(INFO, "manufacturer"),
        part=p.text(INFO, "model"), serial=p.text(INFO, "serial"),
        cable_m=_cable(p, media, compliance))


# a compliance text names a cable assembly (its length is the cable's, not an optic's reach)
_CABLE = re.compile(r"cable|\bACC\b|\bAOC\b|\bAEC\b|\bCR\d*\b|BASE-CR", re.IGNORECASE)


def _cable(p: _Port, media: Media | None, compliance: str | None) -> float | None:
    length = p.number(INFO, "cable_length")
    if media not in (Media.DAC, Media.AOC) and not _CABLE.search(compliance or ""):
        return None  # an optic: CMIS states "Length Cable Assembly(m)" 0.0 for it anyway
    kind = p.text(INFO, "cable_type") or "N/A"
    if length is None:
        why = f"{INFO} states no cable_length"
    elif "Assembly" not in kind:  # SFF-8636 states a fibre reach as Length(km), OM3(2m), ...
        why = f"the length is stated as {kind!r}, not a cable assembly's"
    elif length <= 0:
        why = f"the cable assembly states length {length:g} m"
    else:
        return length
    p.unknown["module.cable_m"] = why
    return None


# SFF-8024 / IEEE 802.3 names -> media, first match wins; None: a cable flatfab has no media for
_MEDIA: tuple[tuple[re.Pattern[str], Media | None], ...] = (
    (re.compile(r"\bACC\b|active copper", re.I), None),
    (re.compile(r"\bAOC\b|active optical", re.I), Media.AOC),
    (re.compile(r"BASE-CR|\bCR\d+\b|copper cable", re.I), Media.DAC),
    (re.compile(r"\bDR\d+-2\b", re.I), Media.FR),  # 802.3df DR8-2, DR4-2: 2 km
    (re.compile(r"\bSR\d*(?:\.\d)?\b", re.I), Media.SR),
    (re.compile(r"\bDR\d*\b|\bPSM4\b", re.I), Media.DR),
    (re.compile(r"\bFR\d*\b|\bCWDM4\b|\bCLR4\b", re.I), Media.FR),  # CWDM4/CLR4 MSAs: 2 km
    (re.compile(r"\bLR\d*\b", re.I), Media.LR),
    (re.compile(r"\bER\d*\b", re.I), Media.ER),
)


def media_of(text: str) -> Media | None:
    """The media a module's stated compliance names ("100GBASE-SR4 or 25GBASE-SR",
    "400GBASE-DR4 (Cl 124)", "Copper cable"); None: none flatfab knows (ZR, VR, ACC, ...)."""
    for pattern, media in _MEDIA:
        if pattern.search(text):
            return media
    return None


def _stated_media(p: _Port) -> tuple[Media | None, str | None, str]:
    """(media, the compliance it was read from, why no media)."""
    code = p.text(INFO, "media_interface_code")
    kind = p.text(INFO, "specification_compliance")
    if code is not None or (kind or "").endswith("_media_interface"):
        return _cmis_media(p, code, kind)
    if kind is None or kind.startswith("Not supported"):  # an older xcvrd on a CMIS module
        return None, None, f"{INFO} states no specification_compliance ({kind or 'N/A'})"
    if not kind.startswith("{"):
        return _named(kind, [kind])
    return _named(kind, _ethernet_codes(p, kind))


def _cmis_media(p: _Port, code: str | None, kind: str | None
                ) -> tuple[Media | None, str | None, str]:
    stated = code or kind
    if kind == "passive_copper_media_interface":
        return Media.DAC, stated, ""
    if kind == "active_cable_media_interface":  # optical or copper: the technology says
        tech = p.text(INFO, "media_interface_technology") or ""
        if "copper" in tech.lower():
            return None, stated, f"an active copper cable ({tech}): flatfab has no media for it"
        if re.search(r"\d+ ?nm|VCSEL|laser|DFB|EML", tech, re.I):
            return Media.AOC, stated, ""
        return None, stated, "an active cable assembly stating no optical or copper technology"
    if code is None:
        return None, kind, f"the CMIS module states media type {kind!r} but no application"
    return _named(code, [code])


def _named(text: str, codes: list[str]) -> tuple[Media | None, str | None, str]:
    for code in codes:
        media = media_of(code)
        if media is not None:
            return media, code, ""
    shown = "; ".join(codes) or text
    return None, codes[0] if codes else None, f"no flatfab media for the module's {shown!r}"


_NO_CODE = frozenset({"Unknown", "Unspecified", "Extended", "N/A", ""})


def _ethernet_codes(p: _Port, text: str) -> list[str]:
    """The Ethernet codes of an SFF-8636/8472 compliance dict's text, the extended (100G)
    code first; Fibre Channel and SONET codes say nothing of the Ethernet media."""
    try:
        stated = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        stated = None
    if not isinstance(stated, dict):
        raise p.bad(INFO, "specification_compliance", text, "a compliance dict")
    keys = sorted((str(k) for k in stated if "Extended Spec" in str(k) or "Ethernet" in str(k)),
                  key=lambda k: "Extended Spec" not in k)
    return [str(stated[k]).strip() for k in keys if str(stated[k]).strip() not in _NO_CODE]


# --- diagnostics -----------------------------------------------------------------------------

_LANE_FIELDS = {"rx_power_dbm": "rx{}power", "tx_power_dbm": "tx{}power", "bias_ma": "tx{}bias"}
_LANE_KEY = re.compile(r"(?:rx|tx)(\d+)(?:power|bias)")
_PREFIX = {"temperature_c": "temp", "voltage_v": "vcc", "rx_power_dbm": "rxpower",
           "tx_power_dbm": "txpower", "bias_ma": "txbias"}


def _diagnostics(p: _Port) -> Diagnostics | None:
    if not p.row(SENSOR):  # xcvrd posts no DOM for a flat-memory module (a passive DAC)
        p.unknown["diagnostics"] = p.missing(SENSOR)
        return None
    lanes = _dom_lanes(p)
    diag = Diagnostics(temperature_c=p.number(SENSOR, "temperature"),
                       voltage_v=p.number(SENSOR, "voltage"), lanes=lanes,
                       thresholds=_thresholds(p))
    stated = any(v is not None for lane in lanes for v in lane.model_dump().values())
    if diag.temperature_c is None and diag.voltage_v is None and not stated \
            and not diag.thresholds:
        p.unknown["diagnostics"] = f"every {SENSOR} value is N/A: the module has no DOM"
        return None
    return diag


def _dom_lanes(p: _Port) -> list[Lane]:
    sensor = p.row(SENSOR)
    count = max((int(m.group(1)) for k in sensor if (m := _LANE_KEY.fullmatch(k))), default=0)
    media_lanes = p.count(INFO, "media_lane_count")
    if media_lanes:  # CMIS posts 8 lanes; past the module's media lanes none carries light
        count = min(count, media_lanes)
    return [Lane(**{measure: p.number(SENSOR, key.format(n))
                    for measure, key in _LANE_FIELDS.items()}) for n in range(1, count + 1)]


def _thresholds(p: _Port) -> dict[str, Thresholds]:
    # before 202305 xcvrd posted the thresholds into the sensor hash
    table = THRESHOLD if p.row(THRESHOLD) else SENSOR
    out: dict[str, Thresholds] = {}
    for measure, prefix in _PREFIX.items():
        found = Thresholds(low_alarm=p.number(table, f"{prefix}lowalarm"),
                           low_warning=p.number(table, f"{prefix}lowwarning"),
                           high_warning=p.number(table, f"{prefix}highwarning"),
                           high_alarm=p.number(table, f"{prefix}highalarm"))
        if any(v is not None for v in found.model_dump().values()):
            out[measure] = found
    return out


# --- FEC counters ----------------------------------------------------------------------------

_COUNTED = {"corrected": "SAI_PORT_STAT_IF_IN_FEC_CORRECTABLE_FRAMES",
            "uncorrectable": "SAI_PORT_STAT_IF_IN_FEC_NOT_CORRECTABLE_FRAMES",
            "symbol_errors": "SAI_PORT_STAT_IF_IN_FEC_SYMBOL_ERRORS"}
_RATED = {"pre_fec_ber": "FEC_PRE_BER", "post_fec_ber": "FEC_POST_BER"}


def _fec_counters(p: _Port) -> FecCounters | None:
    found: dict[str, int | float | None] = {}
    for name, key in _COUNTED.items():
        found[name] = p.count(COUNTERS, key)
        if found[name] is None:
            p.unknown[f"fec_counters.{name}"] = _why_uncounted(
                p, COUNTERS, key, "SONiC before 202111, or the ASIC does not count it")
    for name, key in _RATED.items():
        found[name] = p.number(RATES, key)
        if found[name] is None:  # port_rates.lua computes BER from corrected bits and lanes
            p.unknown[f"fec_counters.{name}"] = _why_uncounted(
                p, RATES, key, "SONiC before 202505, or the ASIC counts no FEC corrected bits")
    if all(v is None for v in found.values()):
        return None
    return FecCounters.model_validate(found)


def _why_uncounted(p: _Port, table: str, key: str, before: str) -> str:
    if not p.row(table):
        return f"COUNTERS_DB {p.missing(table)} (no oid, or counter polling off)"
    return f"{table} has no {key} ({before})"
