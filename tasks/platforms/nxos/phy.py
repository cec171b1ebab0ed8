"""The physical layer of NX-OS switch ports, read from the JSON of two whole-switch show
commands: what is in each cage, how it reads, which FEC runs and when the link last changed
(flatfab.model.physical).

What each command states (shapes and their sources: tests/fixtures/nxos/README.md, "phy"):

- `show interface`: `TABLE_interface.ROW_interface` rows with `interface`, `state`,
  `eth_speed` ("100 Gb/s", "1000 Mb/s", "auto-speed" while down), `eth_oper_fec_state`
  ("Rs-fec", "off", "auto" while down; absent in releases that print no "oper fec state")
  and `eth_link_flapped`, the age of the last link change as NX-OS prints it ("never",
  "00:31:51", "1d02h", "1week(s) 2day(s)").
- `show interface transceiver details`: `TABLE_interface.ROW_interface` rows with
  `interface`, `sfp` ("present", "not present": an empty cage states nothing else), `type`
  (the module's type, "QSFP-DD-400G-DR4"), `name` (vendor), `partnum`, `serialnum`, `len_cu`
  (a cable assembly's length in m), `cable_type`, and for a module with DOM
  `TABLE_lane.ROW_lane`: per lane `lane_number`, `temperature`, `voltage`, `current`,
  `tx_pwr`, `rx_pwr`, each with `_alrm_hi`, `_alrm_lo`, `_warn_hi`, `_warn_lo` thresholds
  (`temp_`, `volt_`, `current_`, `tx_pwr_`, `rx_pwr_`). A module without DOM (a passive
  cable) has no `TABLE_lane`.

NX-OS JSON puts a single row as an object and several as a list (some releases make
`TABLE_x` itself a list); both are read. NX-OS states no link flap count, no electrical lane
count and, in no show command found documented in JSON, FEC codeword counters or BER: those
stay unknown with that reason. A value of the wrong kind raises PhyReadError naming the
command, the port and the key.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from flatfab.model.physical import (
    Diagnostics,
    Fec,
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

INTERFACES = "show interface"
TRANSCEIVER = "show interface transceiver details"
COMMANDS: tuple[str, ...] = (INTERFACES, TRANSCEIVER)

FEC_COUNTERS = ("corrected", "uncorrectable", "symbol_errors", "pre_fec_ber", "post_fec_ber")
NO_FEC_COUNTERS = ("NX-OS states no FEC codeword counters or BER in the JSON of the show "
                   "commands read (no documented JSON source found)")
NO_FLAP_COUNT = ("NX-OS states when the link last flapped, not how often (eth_reset_cntr "
                 "counts interface resets, not link changes)")
NO_LANES = "NX-OS show interface states no electrical lane count"
PRESENT, NOT_PRESENT = "present", "not present"  # the `sfp` of a module and an empty cage
NEVER = "never"  # eth_link_flapped of a link that has not changed since boot or clear

# NX-OS's operational FEC names (shown capitalised: "Rs-fec"), compared folded. rs-ieee and
# rs-cons16 are the 25G RS(528,514) codes (802.3by Clause 108, 25G consortium); kp-fec is
# RS(544,514); rs-fec says only Reed-Solomon; auto is no FEC in operation yet.
_FEC = {"kp-fec": Fec.RS544, "rs-ieee": Fec.RS528, "rs-cons16": Fec.RS528, "fc-fec": Fec.FC,
        "off": Fec.NONE, "fec-off": Fec.NONE}
_GENERIC_RS = "rs-fec"
_NOT_OPERATING = "auto"

# NX-OS's lane keys for flatfab's measures: the reading and its threshold prefix
_LANE_KEYS = {"rx_power_dbm": "rx_pwr", "tx_power_dbm": "tx_pwr", "bias_ma": "current"}
_MODULE_KEYS = {"temperature_c": ("temperature", "temp"), "voltage_v": ("voltage", "volt")}
_THRESHOLD_PREFIX = {**{m: k for m, (_, k) in _MODULE_KEYS.items()}, **_LANE_KEYS}
_LIMITS = {"low_alarm": "alrm_lo", "low_warning": "warn_lo", "high_warning": "warn_hi",
           "high_alarm": "alrm_hi"}
_NO_READING = frozenset({"", "N/A", "NA", "n/a"})

# Media by the tokens of a Cisco type name ("QSFP-DD-400G-DR4", "10Gbase-SR",
# "SFP-H25GB-CU3M"), first match wins; None: a cable flatfab has no media for.
_WHOLE_MEDIA: tuple[tuple[re.Pattern[str], Media | None], ...] = (
    (re.compile(r"\bDR\d+-2\b"), Media.FR),  # 802.3df DR4-2: 2 km
    (re.compile(r"\bSM-SR\b"), Media.FR),  # Cisco QSFP-100G-SM-SR: CWDM4 lite, 2 km SMF
)
_TOKEN_MEDIA: tuple[tuple[re.Pattern[str], Media | None], ...] = (
    (re.compile(r"ACU\d*(?:\.\d+)?M?"), None),  # active copper: no flatfab media
    (re.compile(r"AOC\d*(?:\.\d+)?M?"), Media.AOC),
    (re.compile(r"CU\d*(?:\.\d+)?M?|CR\d*|PCC"), Media.DAC),  # copper, CR4, passive copper
    (re.compile(r"C?SR\d*(?:\.\d)?|SRBD|SWDM\d"), Media.SR),
    (re.compile(r"PSM\d|DR\d*"), Media.DR),
    (re.compile(r"FR\d*|CWDM\d|CLR\d"), Media.FR),  # CWDM4/CLR4 MSAs: 2 km
    (re.compile(r"LR\d*"), Media.LR),
    (re.compile(r"ER\d*L?"), Media.ER),
)
_CABLE_CLASS = re.compile(r"CA-[LSN]")  # 802.3by copper cable classes: a passive DAC
_FORMS = (("QSFP-DD", "QSFP-DD"), ("QDD", "QSFP-DD"), ("OSFP", "OSFP"), ("QSFP", "QSFP"),
          ("SFP", "SFP"), ("CPAK", "CPAK"))

_ETHERNET = re.compile(r"eth(?:ernet)?(\d.*)", re.IGNORECASE)
_SPEED = re.compile(r"(\d+)\s*([GM])b/s")
_CLOCK = re.compile(r"(\d+):(\d{2}):(\d{2})")
_DAYS_HOURS = re.compile(r"(\d+)d(\d{1,2})h")
_WEEKS_DAYS = re.compile(r"(\d+)w(\d+)d")
_UNIT_AGE = re.compile(r"(?:\d+(?:year|week|day|hour|minute|second)\(s\)\s*)+")
_UNIT_PART = re.compile(r"(\d+)(year|week|day|hour|minute|second)\(s\)")
_UNIT_S = {"year": 365 * 86_400, "week": 7 * 86_400, "day": 86_400, "hour": 3_600,
           "minute": 60, "second": 1}


def port_name(name: str) -> str:
    """NX-OS's long interface name (Eth1/1 and ethernet1/1 are Ethernet1/1)."""
    m = _ETHERNET.fullmatch(name.strip())
    return f"Ethernet{m[1]}" if m else name.strip()


@dataclass(frozen=True)
class _At(At):
    """Where a value is read from (its command and port), and how this OS states values."""

    def text(self, value: Any, key: str) -> str | None:
        """A string; NX-API sends digit-only values as numbers, so those are text too."""
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise self.error(key, value)
        return str(value).strip() or None

    def number(self, value: Any, key: str) -> float | None:
        """A reading: a number or its text ("-2.31"); N/A is no reading."""
        text = self.text(value, key)
        if text is None or text in _NO_READING:
            return None
        try:
            number = float(text)
        except ValueError:
            raise self.error(key, value) from None
        if not math.isfinite(number):
            raise self.error(key, value)
        return number

    def rows(self, holder: Any, name: str, where: str) -> list[dict[str, Any]]:
        """TABLE_<name>.ROW_<name>: a dict for one row, a list for more; a release may make
        TABLE_<name> itself a list of such holders. None of it: no rows."""
        tables = holder.get(f"TABLE_{name}")
        found: list[dict[str, Any]] = []
        for table in tables if isinstance(tables, list) else [tables]:
            if table is None:
                continue
            if not isinstance(table, dict):
                raise self.error(f"{where}TABLE_{name}", table)
            inner = table.get(f"ROW_{name}")
            if inner is None:  # a table with no row in it
                continue
            for row in inner if isinstance(inner, list) else [inner]:
                if not isinstance(row, dict):
                    raise self.error(f"{where}TABLE_{name}.ROW_{name}", row)
                found.append(row)
        return found


_Port = PortFacts


def _table(outputs: dict[str, Any], command: str) -> dict[str, dict[str, Any]] | None:
    """A command's interface rows by long name (None: the command is not in the outputs)."""
    if command not in outputs:
        return None
    at, reply = _At(command, "*"), outputs[command]
    if not isinstance(reply, dict):
        raise at.error("(reply)", reply)
    table = {}
    for index, row in enumerate(at.rows(reply, "interface", "")):
        name = at.text(row.get("interface"), f"ROW_interface[{index}].interface")
        if name is None:
            raise at.error(f"ROW_interface[{index}].interface", row.get("interface"))
        table[port_name(name)] = row
    return table


def read_ports(outputs: dict[str, Any], ports: list[str], *,
               now: float) -> dict[str, PortPhysical]:
    """The physical layer of `ports` from the replies to COMMANDS (keyed by command, each
    parsed JSON). `now` (epoch s) is unused: NX-OS states ages, not times, of link changes;
    it is kept for the signature every platform's reader shares."""
    del now
    interfaces, transceivers = _table(outputs, INTERFACES), _table(outputs, TRANSCEIVER)
    return {port: _read(interfaces, transceivers, port) for port in ports}


def _read(interfaces: dict[str, dict[str, Any]] | None,
          transceivers: dict[str, dict[str, Any]] | None, port: str) -> PortPhysical:
    out = _Port(port)
    _link(interfaces, out)
    out.unknown["lanes"] = NO_LANES
    for name in FEC_COUNTERS:
        out.unknown[f"fec_counters.{name}"] = NO_FEC_COUNTERS
    _module(transceivers, out)
    return out.built()


# ---- show interface: last change, speed, FEC ------------------------------------------------


def _link(interfaces: dict[str, dict[str, Any]] | None, out: _Port) -> None:
    row = (interfaces or {}).get(port_name(out.name))
    if row is None:
        why = missing(INTERFACES) if interfaces is None else \
            f"{INTERFACES!r} lists no {out.name}"
        for key in ("flaps", "last_change_s", "speed_mbps", "fec"):
            out.unknown[key] = why
        return
    at = _At(INTERFACES, out.name)
    out.unknown["flaps"] = NO_FLAP_COUNT
    _last_change(at, row, out)
    _speed(at, row, out)
    _fec(at, row, out)


def _last_change(at: _At, row: dict[str, Any], out: _Port) -> None:
    text = at.text(row.get("eth_link_flapped"), "eth_link_flapped")
    if text is None:
        out.unknown["last_change_s"] = "NX-OS states no eth_link_flapped"
    elif text.lower() == NEVER:  # unchanged since boot or clear: how long ago is not stated
        out.unknown["last_change_s"] = ("NX-OS states the link never flapped since boot or "
                                        "clear, and not when that was")
    else:
        out.fields["last_change_s"] = float(_age_s(text, at))


def _age_s(text: str, at: _At) -> int:
    """Seconds in an NX-OS age: "00:31:51", "1d02h", "113w5d", "1week(s) 2day(s)". NX-OS
    drops the finer units as an age grows, so the value is the age truncated to them."""
    compact = text.replace(" ", "")
    if m := _CLOCK.fullmatch(compact):
        return int(m[1]) * 3_600 + int(m[2]) * 60 + int(m[3])
    if m := _DAYS_HOURS.fullmatch(compact):
        return int(m[1]) * 86_400 + int(m[2]) * 3_600
    if m := _WEEKS_DAYS.fullmatch(compact):
        return int(m[1]) * 7 * 86_400 + int(m[2]) * 86_400
    if _UNIT_AGE.fullmatch(compact):
        return sum(int(n) * _UNIT_S[unit] for n, unit in _UNIT_PART.findall(compact))
    raise at.error("eth_link_flapped", text)


def _speed(at: _At, row: dict[str, Any], out: _Port) -> None:
    """The trained speed: `eth_speed` of an up link (a down link's is only its setting;
    `eth_bw` is the routing bandwidth, which `bandwidth` may override)."""
    state = at.text(row.get("state"), "state")
    speed = at.text(row.get("eth_speed"), "eth_speed")
    if (state or "").lower() != "up":
        out.unknown["speed_mbps"] = f"the link is {state or 'of no stated state'}: no " \
                                    "trained speed"
    elif speed is None or speed.lower().startswith("auto"):
        out.unknown["speed_mbps"] = f"NX-OS states eth_speed {speed!r} for an up link"
    elif m := _SPEED.fullmatch(speed):
        out.fields["speed_mbps"] = int(m[1]) * (1000 if m[2] == "G" else 1)
    else:
        raise at.error("eth_speed", row.get("eth_speed"))


def _fec(at: _At, row: dict[str, Any], out: _Port) -> None:
    stated = at.text(row.get("eth_oper_fec_state"), "eth_oper_fec_state")
    if stated is None:
        out.unknown["fec"] = ("NX-OS states no eth_oper_fec_state (a release that prints no "
                              "'oper fec state')")
        return
    folded = stated.lower()
    if folded == _GENERIC_RS:
        # RS(528,514) or RS(544,514): the lane rate decides; NX-OS states no lane count, so
        # the usual lanes of the speed (physical.DEFAULT_LANES) stand for it
        out.set("fec", resolve_rs(out.fields.get("speed_mbps"), None),
                f"NX-OS states {stated!r}, not which RS code, and the speed that decides it "
                "is unknown")
    elif folded == _NOT_OPERATING:
        out.unknown["fec"] = f"NX-OS states oper FEC {stated!r}: no FEC in operation (the " \
                             "link is not up)"
    else:
        out.set("fec", _FEC.get(folded), f"NX-OS states oper FEC {stated!r}, which flatfab "
                                         "does not map")


# ---- show interface transceiver details: the module and its DOM -----------------------------


def _module(transceivers: dict[str, dict[str, Any]] | None, out: _Port) -> None:
    row = (transceivers or {}).get(port_name(out.name))
    if row is None:
        why = missing(TRANSCEIVER) if transceivers is None else \
            f"{TRANSCEIVER!r} lists no {out.name}"
        for key in ("present", "module", "diagnostics"):
            out.unknown[key] = why
        return
    at = _At(TRANSCEIVER, out.name)
    sfp = at.text(row.get("sfp"), "sfp")
    if sfp not in (PRESENT, NOT_PRESENT):
        if sfp is not None:
            raise at.error("sfp", row.get("sfp"))
        why = f"NX-OS states no sfp presence for {out.name}"
        for key in ("present", "module", "diagnostics"):
            out.unknown[key] = why
        return
    out.fields["present"] = sfp == PRESENT
    if sfp == NOT_PRESENT:  # an empty cage: no module and no diagnostics, and nothing unknown
        return
    module = _transceiver(at, row, out)
    out.fields["module"] = module
    _diagnostics(at, row, module, out)


def media_of(kind: str, cable_type: str | None = None) -> tuple[Media | None, str]:
    """The media a Cisco transceiver type names ("QSFP-DD-400G-DR4" -> dr) and, when none,
    why: an active copper cable, or a type naming no flatfab media (ZR, LRM, 1000base-T).
    A copper cable class (CA-L, CA-S, CA-N) names a passive DAC where the type does not."""
    upper = kind.upper()
    for pattern, media in _WHOLE_MEDIA:
        if pattern.search(upper):
            return media, ""
    for token in re.split(r"[-/_\s]+", upper):
        for pattern, media in _TOKEN_MEDIA:
            if pattern.fullmatch(token):
                why = "" if media else f"an active copper cable ({kind}): flatfab has no " \
                                       "media for it"
                return media, why
    if cable_type and _CABLE_CLASS.fullmatch(cable_type.upper()):
        return Media.DAC, ""
    return None, f"NX-OS states transceiver type {kind!r}, which names no flatfab media"


def _form_factor(kind: str | None) -> str | None:
    """The cage form the type begins with, as NX-OS names it (QSFP for a QSFP28 too)."""
    upper = (kind or "").upper()
    return next((form for prefix, form in _FORMS if upper.startswith(prefix)), None)


def _transceiver(at: _At, row: dict[str, Any], out: _Port) -> Transceiver:
    kind = at.text(row.get("type"), "type")
    cable_type = at.text(row.get("cable_type"), "cable_type")
    media, why = media_of(kind, cable_type) if kind else \
        (None, f"NX-OS states no transceiver type for {out.name}")
    if media is None:
        out.unknown["module.media"] = why
    return Transceiver(
        form_factor=_form_factor(kind), media=media, compliance=kind,
        vendor=at.text(row.get("name"), "name"), part=at.text(row.get("partnum"), "partnum"),
        serial=at.text(row.get("serialnum"), "serialnum"),
        cable_m=_cable_m(at, row, media, out))


def _cable_m(at: _At, row: dict[str, Any], media: Media | None, out: _Port) -> float | None:
    """A cable assembly's length: `len_cu` ("Link length supported for copper"). An optic's
    len_cu is no reach flatfab reads (SFF-8636 shares that byte with OM4 lengths)."""
    if media not in (Media.DAC, Media.AOC):
        return None
    length = at.number(row.get("len_cu"), "len_cu")
    if length is None or length <= 0:
        out.unknown["module.cable_m"] = f"NX-OS states cable length len_cu {length!r} for " \
                                        f"{out.name}"
        return None
    return length


def _lane_rows(at: _At, row: dict[str, Any]) -> list[dict[str, Any]]:
    """The module's DOM rows in lane order (NX-OS lists them by `lane_number`)."""
    lanes = at.rows(row, "lane", "")
    numbers = [at.number(lane.get("lane_number"), "ROW_lane.lane_number")
               for lane in lanes]
    if all(number is not None for number in numbers):
        return [lane for _, lane in sorted(zip(numbers, lanes, strict=True),
                                           key=lambda pair: pair[0] or 0)]
    return lanes


def _diagnostics(at: _At, row: dict[str, Any], module: Transceiver, out: _Port) -> None:
    rows = _lane_rows(at, row)
    lanes = [Lane(**{measure: at.number(lane.get(key), f"ROW_lane.{key}")
                     for measure, key in _LANE_KEYS.items()}) for lane in rows]
    temperature, voltage = (_first(at, rows, key) for key, _ in _MODULE_KEYS.values())
    stated = temperature is not None or voltage is not None or any(
        value is not None for lane in lanes for value in lane.model_dump().values())
    if stated:
        out.fields["diagnostics"] = Diagnostics(
            temperature_c=temperature, voltage_v=voltage, lanes=lanes,
            thresholds=_thresholds(at, rows))
    elif module.media is not Media.DAC:  # a passive cable has none: that is no unread fact
        out.unknown["diagnostics"] = f"NX-OS lists no DOM readings for the module in " \
                                     f"{out.name} (TABLE_lane absent or all N/A)"


def _first(at: _At, rows: list[dict[str, Any]], key: str) -> float | None:
    """A module-wide reading: NX-OS repeats it on each lane row; the first stated counts."""
    return next((value for lane in rows
                 if (value := at.number(lane.get(key), f"ROW_lane.{key}")) is not None), None)


def _thresholds(at: _At, rows: list[dict[str, Any]]) -> dict[str, Thresholds]:
    """The module's own thresholds per measure, from the first lane row stating any."""
    found = {}
    for measure, prefix in _THRESHOLD_PREFIX.items():
        for lane in rows:
            read = {ours: at.number(lane.get(f"{prefix}_{theirs}"),
                                    f"ROW_lane.{prefix}_{theirs}")
                    for ours, theirs in _LIMITS.items()}
            if any(value is not None for value in read.values()):
                found[measure] = Thresholds(**read)
                break
    return found
