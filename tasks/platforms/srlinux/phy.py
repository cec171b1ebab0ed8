"""The physical layer of SR Linux ports, read from the state the collector already reads:
what is in each cage, how it reads, how its FEC fares and how often its link changed
(flatfab.model.physical).

One command states it all: `info from state /interface` (collect.INTERFACES, JSON; the same
`{"interface": [...]}` in the whole-path form up to 25.7 and the node-contents form from
25.10). Per interface, in Nokia's srl_nokia-interfaces.yang (v25.3.1; shapes and public
recordings: tests/fixtures/srlinux/README.md, "phy"):

- `oper-state`, `last-change` (RFC 3339), `statistics/carrier-transitions` (down-to-up
  transitions since boot or clear), `ethernet/port-speed`, `num-physical-channels` (the
  lanes assigned, stated only where configured), `breakout-mode` of a broken-out connector,
  `physical-channel` (the transceiver channels a port uses).
- `transceiver`: `oper-state`, `oper-down-reason` (`not-present`: an empty cage; SR Linux
  21.x stated `oper-state not-present`), `form-factor`, `ethernet-pmd`, `vendor`,
  `vendor-part-number`, `serial-number`, `temperature`/`voltage` and, per `channel[index]`,
  `input-power`/`output-power`/`laser-bias-current`, each with `latest-value` and the module's
  `{high,low}-{alarm,warning}-threshold`.
- FEC: `ethernet/forward-error-correction/operational-host-if-fec` (the code in use, by IEEE
  clause) where the platform has it, else the configured `.../fec-option` or
  `transceiver/forward-error-correction`; `.../statistics/host-if-fec-router/
  frame-error-count` (uncorrectable codewords). SR Linux counts no corrected codewords or
  symbols and states no post-FEC BER.

A fact the output does not state is None with its reason in `unknown`; a value of the wrong
kind raises PhyReadError naming the command, the port and the key.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import datetime
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
)
from flatfab.platforms.phy_read import At, PhyReadError, PortFacts
from flatfab.platforms.srlinux.sections import unprefixed

# PhyReadError is the readers' own (flatfab.platforms.phy_read), named here for callers
__all__ = ["COMMANDS", "PhyReadError", "read_ports"]

INTERFACES = "info from state /interface"  # the collector reads it too (collect.INTERFACES)
COMMANDS: tuple[str, ...] = (INTERFACES,)

Json = dict[str, Any]
LINK_KEYS = ("flaps", "last_change_s", "speed_mbps")
FEC_COUNTERS = ("corrected", "uncorrectable", "symbol_errors", "pre_fec_ber", "post_fec_ber")
MODULE_KEYS = ("present", "module", "diagnostics")
ALL_KEYS = (*MODULE_KEYS, "fec", *(f"fec_counters.{n}" for n in FEC_COUNTERS), *LINK_KEYS,
            "lanes")

# `port-speed` (srl_nokia-interfaces.yang) -> Mb/s
SPEEDS = {"10M": 10, "100M": 100, "1G": 1_000, "10G": 10_000, "25G": 25_000, "40G": 40_000,
          "50G": 50_000, "100G": 100_000, "200G": 200_000, "400G": 400_000, "800G": 800_000,
          "1T": 1_000_000}
# num-physical-channels when unset, as the model documents it (named in a reason, never used)
DEFAULT_CHANNELS = {"10G": 1, "25G": 1, "50G": 2, "40G": 4, "100G": 4, "200G": 8, "400G": 8,
                    "800G": 8}
# oper-fec-type: the code in use, by IEEE 802.3 clause
OPER_FEC = {"disabled": Fec.NONE, "cl74-baser": Fec.FC, "cl108-rs528": Fec.RS528,
            "cl91-rs528": Fec.RS528, "cl91-rs544": Fec.RS544, "cl119-rs544": Fec.RS544,
            "cl134-rs544": Fec.RS544}
# the configured FEC (fec-option, transceiver/forward-error-correction); rs-108 is Clause
# 108 RS(528,514) for 25G
CONFIGURED_FEC = {"disabled": Fec.NONE, "base-r": Fec.FC, "rs-528": Fec.RS528,
                  "rs-108": Fec.RS528, "rs-544": Fec.RS544}
NOT_PRESENT = "not-present"
# the module's measures -> flatfab's; its threshold leaves -> flatfab's
MODULE_MEASURES = {"temperature": "temperature_c", "voltage": "voltage_v"}
LANE_MEASURES = {"input-power": "rx_power_dbm", "output-power": "tx_power_dbm",
                 "laser-bias-current": "bias_ma"}
LIMITS = {"low-alarm-threshold": "low_alarm", "low-warning-threshold": "low_warning",
          "high-warning-threshold": "high_warning", "high-alarm-threshold": "high_alarm"}
# the IEEE PMD letters after "<speed>GBASE-" -> media (ETH_400GBASE_DR4 and 400GBASE-DR4
# alike); LRM (220 m multimode), XDR, ZR, 4WDM and the rest map to none
PMD_MEDIA = {"SR": Media.SR, "SWDM": Media.SR, "CR": Media.DAC, "PSM": Media.DR,
             "DR": Media.DR, "CWDM": Media.FR, "CLR": Media.FR, "FR": Media.FR,
             "LR": Media.LR, "ER": Media.ER}
_PMD = re.compile(r"\d+(?:\.\d+)?GBASE-(?:\d+X)?\d*([A-Z]+)\d*(-2)?\b")
_CHILD = re.compile(r"^(ethernet-\d+/\d+)/\d+$")  # a breakout port: ethernet-1/1/2
_DIGITS = re.compile(r"^[0-9]+$")
_NUMBER = re.compile(r"^[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$")


def media_of(text: str) -> Media | None:
    """The media an `ethernet-pmd` names (400GBASE-DR4, ETH_100GBASE_CR4, ETH_100G_AOC),
    None when it names none flatfab knows."""
    pmd = text.strip().upper().replace("_", "-")
    if re.search(r"\bAOC\b", pmd):
        return Media.AOC
    m = _PMD.search(pmd)
    if m is None:
        return None
    if m[2] and m[1] == "DR":  # 802.3df DR4-2, DR8-2: 2 km
        return Media.FR
    return PMD_MEDIA.get(m[1])


@dataclass(frozen=True)
class _At(At):
    """Where a value is read from (its port; the command is always INTERFACES), and how SR
    Linux states values."""

    command: str = INTERFACES
    port: str = ""

    def items(self, value: Any, key: str) -> list[Json]:
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.error(key, value)
        return [self.mapping(item, f"{key}[{i}]") for i, item in enumerate(value)]

    def text(self, value: Any, key: str) -> str | None:
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, str | int):
            raise self.error(key, value)
        return str(value).strip() or None

    def number(self, value: Any, key: str) -> float | None:
        """A decimal64 or integer leaf: a JSON number, or the string RFC 7951 makes of it."""
        if value is None:
            return None
        textual = isinstance(value, str) and _NUMBER.match(value.strip()) is not None
        numeric = isinstance(value, int | float) and not isinstance(value, bool)
        if not (textual or numeric):
            raise self.error(key, value)
        number = float(value)
        if not math.isfinite(number):
            raise self.error(key, value)
        return number

    def count(self, value: Any, key: str) -> int | None:
        """A counter64 (a string in RFC 7951 JSON) or a small integer, never negative; kept an
        int, as codeword totals outgrow a float's exact range."""
        if value is None:
            return None
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            return value
        if isinstance(value, str) and _DIGITS.match(value.strip()):
            return int(value)
        raise self.error(key, value)


_Port = PortFacts


def read_ports(outputs: dict[str, Any], ports: list[str], *,
               now: float) -> dict[str, PortPhysical]:
    """The physical layer of `ports` from the replies to COMMANDS (keyed by command, each
    parsed JSON); `now` is the switch's time (or time.time()) in epoch seconds."""
    table = _table(outputs)
    return {port: _read(table, port, now) for port in ports}


def _table(outputs: dict[str, Any]) -> dict[str, Json] | None:
    """The interfaces by name (None: the command is not in the outputs)."""
    if INTERFACES not in outputs:
        return None
    at = _At(port="*")
    reply = unprefixed(outputs[INTERFACES])
    if isinstance(reply, list):  # a reply that is the list itself
        reply = {"interface": reply}
    listed = at.items(at.mapping(reply, "(reply)").get("interface"), "interface")
    return {str(entry.get("name")): entry for entry in listed}


def _read(table: dict[str, Json] | None, port: str, now: float) -> PortPhysical:
    out = _Port(port)
    entry = None if table is None else table.get(port)
    if table is None or entry is None:
        why = (f"{INTERFACES!r} is not in the outputs (not run, or refused)" if table is None
               else f"{INTERFACES!r} lists no {port}")
        out.unknown.update(dict.fromkeys(ALL_KEYS, why))
        return out.built()
    at = _At(port=port)
    up = _link(at, entry, out, now)
    _lanes(at, entry, table, out)
    _fec(at, entry, out, up)
    _fec_counters(at, entry, out)
    _module(at, entry, out)
    return out.built()


# ---- the link: carrier transitions, last change, speed -------------------------------------


def _link(at: _At, entry: Json, out: _Port, now: float) -> bool:
    """Read flaps, the time since the last change and the speed; return whether it is up."""
    state = at.text(entry.get("oper-state"), "oper-state")
    stats = at.mapping(entry.get("statistics"), "statistics")
    # SR Linux counts the transitions from down to up: one a flap
    out.set("flaps", at.count(stats.get("carrier-transitions"),
                              "statistics.carrier-transitions"),
            f"SR Linux states no statistics/carrier-transitions for {out.name}")
    _last_change(at, entry, out, now)
    speed = at.text(at.mapping(entry.get("ethernet"), "ethernet").get("port-speed"),
                    "ethernet.port-speed")
    if state != "up":  # a down port's port-speed is its setting, not a trained speed
        out.unknown["speed_mbps"] = f"the link is {state or 'of no stated state'}: no " \
                                    "trained speed"
    elif speed is None:
        out.unknown["speed_mbps"] = f"SR Linux states no ethernet/port-speed for {out.name}"
    else:
        out.set("speed_mbps", SPEEDS.get(speed), f"port-speed {speed!r} is no speed flatfab "
                                                 "knows")
    return state == "up"


def _last_change(at: _At, entry: Json, out: _Port, now: float) -> None:
    text = at.text(entry.get("last-change"), "last-change")
    if text is None:
        out.unknown["last_change_s"] = f"SR Linux states no last-change for {out.name}"
        return
    # date-and-time-delta: RFC 3339 with a zone; the CLI may add " (2 seconds ago)"
    try:
        when = datetime.fromisoformat(text.split(" ", 1)[0])
    except ValueError:
        raise at.error("last-change", text) from None
    if when.tzinfo is None:  # srl_nokia-common date-and-time always carries a zone
        raise at.error("last-change", text)
    out.fields["last_change_s"] = max(0.0, now - when.timestamp())  # a clock behind: just now


# ---- lanes: the channels assigned to the port ----------------------------------------------


def _lanes(at: _At, entry: Json, table: dict[str, Json], out: _Port) -> None:
    """The electrical lanes: `num-physical-channels` where configured; a breakout port's share
    of its connector's channels (the leaf counts the whole group's)."""
    if "breakout-mode" in entry:  # the connector of a breakout: its ports run the lanes
        out.unknown["lanes"] = f"{out.name} is broken out: its ports carry the lanes"
        return
    own = at.count(entry.get("num-physical-channels"), "num-physical-channels")
    if own is not None:
        out.fields["lanes"] = own
        return
    child = _CHILD.match(out.name)
    if child is not None and child[1] in table:
        lanes, why = _breakout_share(_At(port=child[1]), table[child[1]])
        out.set("lanes", lanes, why)
        return
    speed = at.text(at.mapping(entry.get("ethernet"), "ethernet").get("port-speed"),
                    "ethernet.port-speed")
    default = DEFAULT_CHANNELS.get(speed or "")
    out.unknown["lanes"] = (
        f"SR Linux states num-physical-channels only where it is configured; unset, its "
        f"model documents {default} for {speed}, which the box does not state" if default
        else f"SR Linux states no num-physical-channels for {out.name}")


def _breakout_share(at: _At, connector: Json) -> tuple[int | None, str]:
    """A breakout port's lanes: the group's channels (breakout-mode/num-physical-channels, as
    Nokia's OpenConfig mapping names it, else the connector's own leaf) over its ports."""
    mode = at.mapping(connector.get("breakout-mode"), "breakout-mode")
    ports = at.count(mode.get("num-breakout-ports"), "breakout-mode.num-breakout-ports")
    total = at.count(mode.get("num-physical-channels"), "breakout-mode.num-physical-channels")
    if total is None:
        total = at.count(connector.get("num-physical-channels"), "num-physical-channels")
    if not ports or total is None:
        return None, f"{at.port} states no breakout-mode num-breakout-ports and " \
                     "num-physical-channels"
    if total % ports:
        return None, f"{at.port} shares {total} channels among {ports} ports unevenly"
    return total // ports, ""


# ---- FEC: the code in use, the uncorrectable codewords -------------------------------------


def _fec_block(at: _At, entry: Json) -> Json:
    ethernet = at.mapping(entry.get("ethernet"), "ethernet")
    return at.mapping(ethernet.get("forward-error-correction"),
                      "ethernet.forward-error-correction")


def _fec(at: _At, entry: Json, out: _Port, up: bool) -> None:
    block = _fec_block(at, entry)
    stated = at.text(block.get("operational-host-if-fec"),
                     "ethernet.forward-error-correction.operational-host-if-fec")
    if stated is not None:
        out.set("fec", OPER_FEC.get(stated), f"operational-host-if-fec {stated!r} is no FEC "
                                             "flatfab maps")
        return
    # no operational leaf (releases and platforms before forward-error-correction-ethernet):
    # the configured code, in use while the link is up (a mismatch keeps it down)
    configured = at.text(block.get("fec-option"), "ethernet.forward-error-correction.fec-option")
    if configured is None:
        transceiver = at.mapping(entry.get("transceiver"), "transceiver")
        configured = at.text(transceiver.get("forward-error-correction"),
                             "transceiver.forward-error-correction")
    if configured is None:
        out.unknown["fec"] = (f"SR Linux states no operational-host-if-fec and no configured "
                              f"FEC for {out.name}: the platform's default applies, unstated")
    elif not up:
        out.unknown["fec"] = f"FEC {configured!r} is configured; the link is down, so not " \
                             "known to be in use"
    else:
        out.set("fec", CONFIGURED_FEC.get(configured),
                f"the configured FEC {configured!r} is no FEC flatfab maps")


def _fec_counters(at: _At, entry: Json, out: _Port) -> None:
    stats = at.mapping(_fec_block(at, entry).get("statistics"),
                       "ethernet.forward-error-correction.statistics")
    router = at.mapping(stats.get("host-if-fec-router"), "statistics.host-if-fec-router")
    # the router's (ASIC's) decoder: the codewords it could not correct on receive
    lost = at.count(router.get("frame-error-count"), "host-if-fec-router.frame-error-count")
    out.unknown["fec_counters.corrected"] = "SR Linux counts no corrected FEC codewords"
    out.unknown["fec_counters.symbol_errors"] = "SR Linux counts no FEC symbol errors"
    out.unknown["fec_counters.post_fec_ber"] = "SR Linux states no post-FEC BER"
    # pre-fec-ber/instant is typed with units "bit-errors-per-second" (srl_nokia-interfaces
    # .yang), not as a ratio: comparing it with an FEC's correctable BER would be a guess
    out.unknown["fec_counters.pre_fec_ber"] = (
        "host-if-fec-router/pre-fec-ber is stated in bit-errors-per-second, not as a ratio"
        if "pre-fec-ber" in router else f"SR Linux states no pre-FEC BER for {out.name}")
    if lost is None:
        out.unknown["fec_counters.uncorrectable"] = (
            f"SR Linux states no FEC statistics (host-if-fec-router/frame-error-count) for "
            f"{out.name}: a release or platform without them, or no FEC running")
        return
    out.fields["fec_counters"] = FecCounters(uncorrectable=lost)


# ---- the module: presence, identity, diagnostics -------------------------------------------


def _module(at: _At, entry: Json, out: _Port) -> None:
    if "transceiver" not in entry:
        why = f"SR Linux states no transceiver for {out.name} (no cage)"
        out.unknown.update(dict.fromkeys(MODULE_KEYS, why))
        return
    xcvr = at.mapping(entry["transceiver"], "transceiver")
    present, why = _presence(at, xcvr)
    out.set("present", present, why)
    if present is False:  # an empty cage: no module, no diagnostics, nothing unknown
        return
    if present is None:
        out.unknown["module"] = out.unknown["diagnostics"] = why
        return
    module = _transceiver(at, xcvr, out)
    out.fields["module"] = module
    if module.media is Media.DAC:  # a passive copper cable keeps no diagnostics
        return
    out.set("diagnostics", _diagnostics(at, entry, xcvr),
            f"SR Linux states no DDM readings for the module in {out.name}")


_IDENTITY = ("form-factor", "ethernet-pmd", "vendor", "vendor-part-number", "serial-number")


def _presence(at: _At, xcvr: Json) -> tuple[bool | None, str]:
    state = at.text(xcvr.get("oper-state"), "transceiver.oper-state")
    reason = at.text(xcvr.get("oper-down-reason"), "transceiver.oper-down-reason")
    if NOT_PRESENT in (state, reason):  # 21.x stated it as the oper-state
        return False, ""
    if state == "up" or reason is not None or any(xcvr.get(key) for key in _IDENTITY):
        return True, ""  # down for another reason (tx-laser-disabled, read-failure): present
    return None, f"transceiver oper-state {state!r} with no oper-down-reason or identity"


def _transceiver(at: _At, xcvr: Json, out: _Port) -> Transceiver:
    def text(key: str) -> str | None:
        return at.text(xcvr.get(key), f"transceiver.{key}")

    pmd = text("ethernet-pmd")
    media = media_of(pmd) if pmd else None
    if media is None:
        out.unknown["module.media"] = (
            f"ethernet-pmd {pmd!r} names no flatfab media" if pmd else
            f"SR Linux states no ethernet-pmd for the module in {out.name}")
    if media in (Media.DAC, Media.AOC):
        # link-length-information is the EEPROM's raw octets as text, of no stated format
        out.unknown["module.cable_m"] = "SR Linux states no cable assembly length"
    return Transceiver(form_factor=text("form-factor"), media=media, compliance=pmd,
                       vendor=text("vendor"), part=text("vendor-part-number"),
                       serial=text("serial-number"))


def _latest(at: _At, block: Json, key: str, where: str) -> float | None:
    container = at.mapping(block.get(key), f"{where}.{key}")
    return at.number(container.get("latest-value"), f"{where}.{key}.latest-value")


def _channels(at: _At, entry: Json, xcvr: Json) -> list[tuple[str, Json]]:
    """(where, channel) of the module's channels this port uses, in index order
    (`physical-channel` names them where it is stated)."""
    listed = entry.get("physical-channel")
    if listed is not None and not isinstance(listed, list):
        raise at.error("physical-channel", listed)
    used = {at.count(i, "physical-channel") for i in listed or []}
    found = []
    for n, channel in enumerate(at.items(xcvr.get("channel"), "transceiver.channel")):
        index = at.count(channel.get("index"), f"transceiver.channel[{n}].index")
        if not used or index in used:
            found.append((index or 0, f"transceiver.channel[{index}]", channel))
    return [(where, channel) for _, where, channel in sorted(found, key=lambda c: c[0])]


def _diagnostics(at: _At, entry: Json, xcvr: Json) -> Diagnostics | None:
    channels = _channels(at, entry, xcvr)
    if not channels and any(key in xcvr for key in LANE_MEASURES):
        channels = [("transceiver", xcvr)]  # a single-channel module states them itself
    lanes = [Lane(**{ours: _latest(at, channel, theirs, where)
                     for theirs, ours in LANE_MEASURES.items()})
             for where, channel in channels]
    readings = {ours: _latest(at, xcvr, theirs, "transceiver")
                for theirs, ours in MODULE_MEASURES.items()}
    stated = any(v is not None for v in readings.values()) or any(
        v is not None for lane in lanes for v in lane.model_dump().values())
    if not stated:
        return None
    return Diagnostics(**readings, lanes=lanes, thresholds=_thresholds(at, xcvr, channels))


def _limits(at: _At, block: Json, key: str, where: str) -> Thresholds | None:
    container = at.mapping(block.get(key), f"{where}.{key}")
    read = {ours: at.number(container.get(theirs), f"{where}.{key}.{theirs}")
            for theirs, ours in LIMITS.items()}
    return Thresholds(**read) if any(v is not None for v in read.values()) else None


def _thresholds(at: _At, xcvr: Json, channels: list[tuple[str, Json]]
                ) -> dict[str, Thresholds]:
    """The module's own thresholds by flatfab measure: a module keeps one set for all its
    lanes (SFF-8636, CMIS), so the first channel stating them gives the lane measures'."""
    found = {}
    for theirs, ours in MODULE_MEASURES.items():
        if (limits := _limits(at, xcvr, theirs, "transceiver")) is not None:
            found[ours] = limits
    for theirs, ours in LANE_MEASURES.items():
        limits = next((t for where, c in channels
                       if (t := _limits(at, c, theirs, where)) is not None), None)
        if limits is not None:
            found[ours] = limits
    return found
