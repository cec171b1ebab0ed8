"""The physical layer of a GPU host's ConnectX (mlx5) port, read with ethtool (read-only).

One command each (`commands`), read back by `read_port` into `PortPhysical`:

- `ethtool <nic>`: the speed and the lane count trained (`Lanes:`, ethtool 5.12+).
- `ethtool -m <nic>`: the module's EEPROM as ethtool decodes it: SFF-8636 (QSFP+, QSFP28,
  QSFP56; ethtool's qsfp.c) or CMIS (QSFP-DD, OSFP; cmis.c), in the labels of ethtool 5.x
  to 6.13 and of 6.14+ (module-common.c), which differ in places.
- `ethtool --show-fec <nic>`: the FEC encoding in use.
- `ethtool -I --show-fec <nic>`: FEC statistics (corrected and uncorrectable codewords) where
  the driver gives them (ethtool 5.13+, mlx5 from Linux 5.13).
- `ethtool -S <nic>`: mlx5's PHY counters (the kernel's mlx5 counters.rst):
  rx_corrected_bits_phy, rx_bits_phy, rx_pcs_symbol_err_phy.
- /sys/class/net/<nic>/carrier_changes: carrier changes since the netdev was created.

What the output does not state is None with a reason in `unknown`, never zero. ethtool
decodes no CMIS application code (400GBASE-DR4 and the like), so a CMIS module's media is
read from what it does print: its transmitter technology, connector and SMF reach.
"""

from __future__ import annotations

import math
import re
import shlex
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from flatfab.model.physical import (
    LANE_MEASURES,
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

# short name -> command; `{nic}` is filled in shell-quoted by `commands`
COMMANDS: dict[str, str] = {
    "settings": "ethtool {nic}",
    "module": "ethtool -m {nic}",
    "fec": "ethtool --show-fec {nic}",
    "fec_stats": "ethtool -I --show-fec {nic}",
    "stats": "ethtool -S {nic}",
    "carrier_changes": "cat /sys/class/net/{nic}/carrier_changes",
}

PASSIVE_COPPER = "a passive copper cable has no digital diagnostics"


class PhyReadError(ValueError):
    """Output in its command's shape with a value that does not read (one line: the command
    and the line)."""


def commands(nic: str) -> dict[str, str]:
    """The read-only commands for one NIC, by short name (the caller decides how a failing
    one is tolerated)."""
    # a netdev name has no '/' or blank (it also names a sysfs directory)
    if not nic or nic in (".", "..") or re.search(r"[/\s]", nic):
        raise ValueError(f"not a network interface name: {nic!r}")
    quoted = shlex.quote(nic)
    return {key: template.format(nic=quoted) for key, template in COMMANDS.items()}


def read_port(outputs: Mapping[str, str]) -> PortPhysical:
    """One port's physical layer from the outputs of `commands`, by the same keys (a key
    missing counts as a command that printed nothing)."""
    unknown: dict[str, str] = {}
    speed, lanes = _read_settings(outputs.get("settings", ""), unknown)
    present, module, diagnostics = _read_module(outputs.get("module", ""), unknown)
    fec = _read_fec(outputs, speed, lanes, unknown)
    counters = _read_counters(outputs, unknown)
    flaps = _read_flaps(outputs.get("carrier_changes", ""), unknown)
    unknown["last_change_s"] = ("Linux states no time of the last carrier change "
                                "(carrier_changes is a count)")
    return PortPhysical(present=present, module=module, diagnostics=diagnostics, fec=fec,
                        fec_counters=counters, flaps=flaps, speed_mbps=speed, lanes=lanes,
                        unknown=unknown)


# ---- what failed -------------------------------------------------------------------------

# the line a command's facts start from; without it the output is an error message
_MARKERS = {
    "settings": re.compile(r"^Settings for \S+:", re.M),
    "module": re.compile(r"^\s*Identifier\s+:", re.M),
    "fec": re.compile(r"^Active FEC encodings?:", re.M),
    "fec_stats": re.compile(r"^Active FEC encodings?:", re.M),
    "stats": re.compile(r"^NIC statistics:", re.M),
    "carrier_changes": re.compile(r"\A\s*\S+\s*\Z"),
}


def _command(key: str) -> str:
    return COMMANDS[key].format(nic="<nic>")


def _failure(key: str, text: str) -> str | None:
    """Why `text` holds none of the command's facts (None: it does), quoting it briefly."""
    if _MARKERS[key].search(text) and not text.lstrip().startswith("cat:"):
        return None
    said = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return f"`{_command(key)}` printed " + (repr(said[:100]) if said else "nothing")


def _bad(key: str, line: str) -> PhyReadError:
    return PhyReadError(f"`{_command(key)}`: cannot read {line.strip()[:120]!r}")


# ---- ethtool <nic> -----------------------------------------------------------------------

_SETTING = re.compile(r"^\s*(?P<name>Speed|Lanes):\s*(?P<value>.*?)\s*$", re.M)


def _read_settings(text: str, unknown: dict[str, str]) -> tuple[int | None, int | None]:
    failed = _failure("settings", text)
    if failed:
        unknown.update(speed_mbps=failed, lanes=failed)
        return None, None
    found = {m["name"]: m["value"] for m in _SETTING.finditer(text)}
    speed = _setting(found, "Speed", r"(\d+)Mb/s", "speed_mbps", unknown)
    lanes = _setting(found, "Lanes", r"(\d+)", "lanes", unknown)
    return speed, lanes


def _setting(found: dict[str, str], name: str, pattern: str, field: str,
             unknown: dict[str, str]) -> int | None:
    value = found.get(name)
    if value is None:
        # Lanes: ethtool 5.12+ prints it where the driver reports a lane count
        unknown[field] = f"`ethtool <nic>` printed no {name} line"
        return None
    if value.startswith("Unknown"):
        unknown[field] = f"`ethtool <nic>` states {name}: {value} (no link to state it of)"
        return None
    match = re.fullmatch(pattern, value)
    if match is None or int(match[1]) <= 0:
        raise _bad("settings", f"{name}: {value}")
    return int(match[1])


# ---- ethtool -m <nic>: the module --------------------------------------------------------

# `<label padded> : <value>`; a value may hold colons (`100G Ethernet: ...`, a vendor OUI)
_FIELD = re.compile(r"^\s*(?P<label>\S.*?)\s+:(?:\s+(?P<value>.*?))?\s*$")
# per-lane labels: `(Channel N)`, `(Chan N)`, and SFF-8636's `power(Channel N)` before 6.14
_CHANNEL = re.compile(r"^(?P<measure>.*?)\s*\((?:Channel|Chan) (?P<n>\d+)\)$")
_CODE = re.compile(r"^0x(?P<code>[0-9a-fA-F]{2})(?:\s*\((?P<text>.*)\))?$")

# SFF-8024 identifiers; 0x11 is "QSFP28 or later" (QSFP56 too)
_FORM_FACTORS = {0x03: "SFP", 0x0C: "QSFP", 0x0D: "QSFP+", 0x11: "QSFP28", 0x18: "QSFP-DD",
                 0x19: "OSFP", 0x1B: "DSFP", 0x1E: "QSFP+ (CMIS)", 0x1F: "SFP-DD",
                 0x20: "SFP+ (CMIS)"}
# the identifiers ethtool decodes with cmis.c (QSFP-DD, OSFP, DSFP, the CMIS QSFP/SFP)
_CMIS = frozenset({0x18, 0x19, 0x1B, 0x1E, 0x1F, 0x20})
_NO_SEPARABLE_CONNECTOR = 0x23  # SFF-8024: a cable assembly (DAC, AOC)


@dataclass(frozen=True)
class _Eeprom:
    """`ethtool -m` decoded: label (blanks collapsed, channels as `(Channel N)`) -> values."""

    fields: dict[str, list[str]]

    def get(self, label: str) -> str | None:
        values = self.fields.get(label)
        return values[0] if values else None


def _eeprom(text: str) -> _Eeprom:
    fields: dict[str, list[str]] = {}
    for line in text.splitlines():
        match = _FIELD.match(line)
        if match is None:
            continue  # a warning ethtool printed among the fields (a page it could not read)
        label = " ".join(match["label"].split())
        label = _CHANNEL.sub(lambda m: f"{m['measure']} (Channel {m['n']})", label)
        fields.setdefault(label, []).append(match["value"] or "")
    return _Eeprom(fields)


def _hex_field(eeprom: _Eeprom, label: str) -> tuple[int | None, str]:
    """(code, description) of a `0x.. (text)` field; (None, "") where it is not printed."""
    value = eeprom.get(label)
    if value is None:
        return None, ""
    match = _CODE.match(value)
    if match is None:
        raise _bad("module", f"{label} : {value}")
    return int(match["code"], 16), match["text"] or ""


def _read_module(text: str, unknown: dict[str, str]
                 ) -> tuple[bool | None, Transceiver | None, Diagnostics | None]:
    failed = _failure("module", text)
    if failed is None:
        eeprom = _eeprom(text)
        code, described = _hex_field(eeprom, "Identifier")
        if code:
            module = _transceiver(eeprom, code, described, unknown)
            return True, module, _diagnostics(eeprom, module, unknown)
        failed = f"`ethtool -m <nic>` states Identifier 0x00 ({described})"
    # an error does not say the cage is empty: the EEPROM may just not have been read
    why = f"{failed}: no module in the cage, or its EEPROM not read"
    unknown.update(present=why, module=why, diagnostics=why)
    return None, None, None


def _transceiver(eeprom: _Eeprom, code: int, described: str,
                 unknown: dict[str, str]) -> Transceiver:
    _tech_code, technology = _hex_field(eeprom, "Transmitter technology")
    connector, _ = _hex_field(eeprom, "Connector")
    cmis = code in _CMIS
    compliance = technology if cmis else _compliance(eeprom)
    media = None if cmis else media_of(compliance or "")
    if media is None and not _ambiguous(compliance):
        media = _media_by_technology(technology, connector, _smf_km(eeprom, cmis))
    if media is None:
        stated = compliance or technology or "nothing ethtool decodes"
        unknown["module.media"] = f"the module states {stated!r}, " + (
            "more than one reach class" if _ambiguous(compliance) else
            "which maps to no media flatfab models")
    cable = media in (Media.DAC, Media.AOC) or "copper" in technology.lower() \
        or connector == _NO_SEPARABLE_CONNECTOR
    return Transceiver(form_factor=_FORM_FACTORS.get(code, described or f"0x{code:02x}"),
                       media=media, compliance=compliance or technology or None,
                       vendor=_text(eeprom, "Vendor name", "module.vendor", unknown),
                       part=_text(eeprom, "Vendor PN", "module.part", unknown),
                       serial=_text(eeprom, "Vendor SN", "module.serial", unknown),
                       cable_m=_cable_m(eeprom, cmis, unknown) if cable else None)


def _text(eeprom: _Eeprom, label: str, field: str, unknown: dict[str, str]) -> str | None:
    value = (eeprom.get(label) or "").strip()
    if not value:
        unknown[field] = f"`ethtool -m <nic>` printed no {label}"
    return value or None


def _compliance(eeprom: _Eeprom) -> str | None:
    """SFF-8636's Ethernet compliance: the first `Transceiver type` that names a media, else
    the first that is no Fibre Channel, SONET or SAS code."""
    stated = [value for value in eeprom.fields.get("Transceiver type", [])
              if not value.startswith(("FC:", "SONET", "SAS", "40G OTN"))]
    return next((value for value in stated if media_of(value)), stated[0] if stated else None)


# 802.3 PMD names (`100G Base-SR4`, `200GBASE-CR4`, `25GBase-SR`) and MSA names of the same
# reach classes (SFF-8024's extended compliance codes)
_PMD = re.compile(r"BASE-?(SR|DR|FR|LR|ER|CR)\d*(?![A-Z])")
_PMD_MEDIA = {"SR": Media.SR, "DR": Media.DR, "FR": Media.FR, "LR": Media.LR, "ER": Media.ER,
              "CR": Media.DAC}
_MSA_MEDIA = {"PSM4": Media.DR, "CWDM4": Media.FR, "CLR4": Media.FR, "SWDM4": Media.SR,
              "4WDM-10": Media.LR, "4WDM-40": Media.ER}


def media_of(stated: str) -> Media | None:
    """The media of a module's stated compliance or application (`100GBASE-SR4`,
    `Copper cable`, `100G AOC`, ...); None: it names none, an active copper cable (no media
    flatfab models), or more than one reach class (`50GBASE-FR or 200GBASE-DR4`)."""
    text = stated.upper()
    if re.search(r"\bACC\b|ACTIVE COPPER|ACTIVE CABLE", text) or (
            "COPPER" in text and "ACTIVE" in text):
        return None
    if re.search(r"\bAOC\b|ACTIVE OPTICAL", text):
        return Media.AOC
    if re.search(r"COPPER|PASSIVE|\bDAC\b", text):
        return Media.DAC
    found = {_PMD_MEDIA[name] for name in _PMD.findall(text)}
    found |= {media for name, media in _MSA_MEDIA.items() if name in text}
    return found.pop() if len(found) == 1 else None


def _ambiguous(stated: str | None) -> bool:
    return len({_PMD_MEDIA[name] for name in _PMD.findall((stated or "").upper())}) > 1


def _media_by_technology(technology: str, connector: int | None,
                         smf_km: float | None) -> Media | None:
    """The media of what ethtool prints where no compliance code names one: the transmitter
    technology, a cable's connector, the SMF reach the module states (CMIS page 01h)."""
    tech = technology.lower()
    if "copper" in tech:
        passive = "unequalized" in tech or "passive equalized" in tech
        return Media.DAC if passive else None  # active copper: no media flatfab models
    if not tech or tech.startswith(("others", "reserved")):
        return None
    if connector == _NO_SEPARABLE_CONNECTOR:
        return Media.AOC  # an optical cable assembly
    if "850 nm" in tech:
        return Media.SR  # multimode VCSEL
    if not smf_km:
        return None
    for reach_km, media in ((0.5, Media.DR), (2, Media.FR), (10, Media.LR), (40, Media.ER)):
        if smf_km <= reach_km:
            return media
    return None


def _smf_km(eeprom: _Eeprom, cmis: bool) -> float | None:
    # CMIS states tenths of a km (`0.50km`); SFF-8636's whole km cannot tell DR from FR
    value = eeprom.get("Length (SMF)") if cmis else None
    match = re.fullmatch(r"(\d+(?:\.\d+)?)km", value or "")
    if value is not None and match is None:
        raise _bad("module", f"Length (SMF) : {value}")
    return float(match[1]) if match else None


def _cable_m(eeprom: _Eeprom, cmis: bool, unknown: dict[str, str]) -> float | None:
    """A cable assembly's stated length: CMIS `Cable assembly length : 2.00m`, SFF-8636
    `Length (Copper or Active cable) : 3m` (never read for a separable optic: SFF-8636 puts
    its OM4 reach in that byte)."""
    label = "Cable assembly length" if cmis else "Length (Copper or Active cable)"
    value = eeprom.get(label)
    if value is None:
        unknown["module.cable_m"] = f"`ethtool -m <nic>` printed no {label}"
        return None
    if value.startswith(">"):
        unknown["module.cable_m"] = f"the cable states {label} {value}"
        return None
    match = re.fullmatch(r"(\d+(?:\.\d+)?)m", value)
    if match is None:
        raise _bad("module", f"{label} : {value}")
    if float(match[1]) == 0:
        unknown["module.cable_m"] = (f"the cable states {label} {value}: not stated, or "
                                     "shorter than the field's unit")
        return None
    return float(match[1])


# ---- ethtool -m <nic>: diagnostics -------------------------------------------------------

_LANE_LABELS = {"Laser tx bias current": "bias_ma", "Transmit avg optical power": "tx_power_dbm",
                "Rcvr signal avg optical power": "rx_power_dbm"}
_THRESHOLD = re.compile(r"^(?P<what>.+) (?P<side>high|low) (?P<kind>alarm|warning) threshold$")
_THRESHOLD_MEASURES = {"Laser bias current": "bias_ma", "Laser output power": "tx_power_dbm",
                       "Laser rx power": "rx_power_dbm", "Module temperature": "temperature_c",
                       "Module voltage": "voltage_v"}
_NUMBER = r"-?\d+(?:\.\d+)?"
_UNITS = {"bias_ma": re.compile(rf"({_NUMBER}) mA"),
          "temperature_c": re.compile(rf"({_NUMBER}) degrees C(?: / {_NUMBER} degrees F)?"),
          "voltage_v": re.compile(rf"({_NUMBER}) V")}
_POWER = re.compile(rf"(?P<mw>{_NUMBER}) mW(?: / (?P<dbm>{_NUMBER}|-inf) dBm)?")


def _value(measure: str, label: str, value: str) -> float:
    """A measure as ethtool prints it; power in dBm (no light, 0 mW: -inf dBm)."""
    if measure.endswith("_dbm"):
        power = _POWER.fullmatch(value)
        if power is None:
            raise _bad("module", f"{label} : {value}")
        if power["dbm"] is not None:
            return float(power["dbm"])
        milliwatts = float(power["mw"])
        return 10 * math.log10(milliwatts) if milliwatts > 0 else -math.inf
    match = _UNITS[measure].fullmatch(value)
    if match is None:
        raise _bad("module", f"{label} : {value}")
    return float(match[1])


def _diagnostics(eeprom: _Eeprom, module: Transceiver,
                 unknown: dict[str, str]) -> Diagnostics | None:
    lanes = _lanes(eeprom, unknown)
    temperature = _module_measure(eeprom, "Module temperature", "temperature_c")
    voltage = _module_measure(eeprom, "Module voltage", "voltage_v")
    # ethtool prints 0.00 C and 0 V where a module has no monitors (SFF-8636 cables) and
    # nothing where its memory is flat (CMIS cables)
    if not lanes and not temperature:
        unknown["diagnostics"] = PASSIVE_COPPER if module.media is Media.DAC else \
            "`ethtool -m <nic>` states no monitors for this module"
        return None
    thresholds = _thresholds(eeprom)
    if not thresholds:
        unknown["diagnostics.thresholds"] = ("`ethtool -m <nic>` printed no alarm or warning "
                                             "thresholds (SFF-8636 page 03h, CMIS page 02h)")
    for measure in LANE_MEASURES:
        if lanes and all(getattr(lane, measure) is None for lane in lanes):
            unknown.setdefault(f"diagnostics.{measure}",
                               f"`ethtool -m <nic>` states no {measure} for any lane")
    return Diagnostics(temperature_c=temperature, voltage_v=voltage, lanes=lanes,
                       thresholds=thresholds)


def _module_measure(eeprom: _Eeprom, label: str, measure: str) -> float | None:
    value = eeprom.get(label)
    return None if value is None else _value(measure, label, value)


def _lanes(eeprom: _Eeprom, unknown: dict[str, str]) -> list[Lane]:
    values: dict[int, dict[str, float]] = {}
    for label, texts in eeprom.fields.items():
        match = _CHANNEL.match(label)
        if match is None:
            continue
        if match["measure"] == "Receiver signal OMA":  # modulation amplitude, not average
            unknown["diagnostics.rx_power_dbm"] = ("the module states receiver OMA, not "
                                                   "average rx power")
        measure = _LANE_LABELS.get(match["measure"])
        if measure is not None:
            lane = values.setdefault(int(match["n"]), {})
            lane[measure] = _value(measure, label, texts[0])
    lanes = [Lane(**values.get(n, {})) for n in range(1, max(values, default=0) + 1)]
    return _in_use(lanes)


def _dark(lane: Lane) -> bool:
    """No laser bias and no light either way: a channel no lane of the module's uses."""
    return lane.bias_ma == 0 and lane.tx_power_dbm in (None, -math.inf) \
        and lane.rx_power_dbm in (None, -math.inf)


def _in_use(lanes: list[Lane]) -> list[Lane]:
    """The lanes up to the last one in use. ethtool prints every channel a module's memory
    has (8 per CMIS bank, 4 in SFF-8636) whatever its application uses: a 400G DR4 on
    QSFP-DD or OSFP shows 8, the last 4 dark. A module dark on every lane keeps them all."""
    last = max((n for n, lane in enumerate(lanes, 1) if not _dark(lane)), default=len(lanes))
    return lanes[:last]


def _thresholds(eeprom: _Eeprom) -> dict[str, Thresholds]:
    found: dict[str, dict[str, float]] = {}
    for label, texts in eeprom.fields.items():
        match = _THRESHOLD.match(label)
        measure = _THRESHOLD_MEASURES.get(match["what"]) if match else None
        if match is None or measure is None:
            continue
        bound = f"{match['side']}_{match['kind']}"  # high_alarm, low_warning, ...
        found.setdefault(measure, {})[bound] = _value(measure, label, texts[0])
    return {measure: Thresholds(**bounds) for measure, bounds in found.items()}


# ---- FEC ---------------------------------------------------------------------------------

_ACTIVE = re.compile(r"^Active FEC encodings?:(?P<modes>.*)$", re.M)
_FIXED = {"BASER": Fec.FC, "OFF": Fec.NONE}
_NOT_MODES = {
    "NONE": "ethtool states Active FEC encoding: None (no link, or the driver reports none)",
    "LLRS": "the port runs LLRS, low-latency RS(272,257+1) FEC, which flatfab does not model",
    "AUTO": "ethtool states Auto, not the FEC encoding in use",
}
# lane rates of 802.3's RS-FEC PMDs: 25G NRZ, 50G/100G/200G PAM4
_RS_LANE_MBPS = (25_000, 50_000, 100_000, 200_000)


def _read_fec(outputs: Mapping[str, str], speed: int | None, lanes: int | None,
              unknown: dict[str, str]) -> Fec | None:
    # both commands state the active encoding: the second stands in for a failed first
    text = outputs.get("fec", "")
    failed = _failure("fec", text)
    if failed and _failure("fec_stats", outputs.get("fec_stats", "")) is None:
        text, failed = outputs["fec_stats"], None
    active = _ACTIVE.search(text)
    if failed or active is None:
        unknown["fec"] = failed or "no Active FEC encoding line"
        return None
    modes = active["modes"].split()
    mode = modes[0].upper() if len(modes) == 1 else ""
    if mode == "RS":
        return _rs(speed, lanes, unknown)
    if mode in _FIXED:
        return _FIXED[mode]
    unknown["fec"] = _NOT_MODES.get(mode, f"ethtool states Active FEC encoding: "
                                          f"{active['modes'].strip()!r}")
    return None


def _rs(speed: int | None, lanes: int | None, unknown: dict[str, str]) -> Fec | None:
    """RS(528,514) or RS(544,514) from the lane rate; without a lane count, only where every
    lane count 802.3 uses at the speed gives the same code."""
    if speed is None:
        unknown["fec"] = ("ethtool states RS, which is RS(528,514) or RS(544,514) by the lane "
                          "rate, and no speed")
        return None
    if lanes is not None:
        return resolve_rs(speed, lanes)
    codes = {resolve_rs(speed, n) for n in (1, 2, 4, 8)
             if speed % n == 0 and speed // n in _RS_LANE_MBPS}
    if len(codes) == 1:
        return codes.pop()
    unknown["fec"] = (f"ethtool states RS and no lane count: at {speed // 1000}G that is "
                      "RS(528,514) on 25G lanes, RS(544,514) on PAM4 lanes")
    return None


# ---- FEC counters ------------------------------------------------------------------------

# totals only: per-lane values (`Lane N:` or `[ per_lane: ... ]`) and histograms are not read
_FEC_STAT = re.compile(r"\b(?P<name>corrected_blocks|uncorrectable_blocks|corrected_bits): "
                       r"(?P<value>[^\s\[]+)")
_PHY_COUNTERS = ("rx_corrected_bits_phy", "rx_bits_phy", "rx_pcs_symbol_err_phy")


def _read_counters(outputs: Mapping[str, str], unknown: dict[str, str]) -> FecCounters | None:
    blocks = _fec_statistics(outputs.get("fec_stats", ""), unknown)
    phy = _phy_counters(outputs.get("stats", ""), unknown)
    counters = FecCounters(corrected=blocks.get("corrected_blocks"),
                           uncorrectable=blocks.get("uncorrectable_blocks"),
                           symbol_errors=phy.get("rx_pcs_symbol_err_phy"),
                           pre_fec_ber=_pre_fec_ber(blocks, phy, unknown))
    unknown["fec_counters.post_fec_ber"] = (
        "Linux states no post-FEC bit error ratio (mlx5 counts the symbols FEC left "
        "uncorrected: fec_counters.symbol_errors)")
    if all(value is None for value in counters.model_dump().values()):
        return None
    return counters


def _fec_statistics(text: str, unknown: dict[str, str]) -> dict[str, int]:
    """The totals of `ethtool -I --show-fec`'s Statistics section (FEC codewords)."""
    failed = _failure("fec_stats", text)
    _, statistics, rest = text.partition("Statistics:")
    if failed is None and not statistics:
        failed = ("`ethtool -I --show-fec <nic>` prints no Statistics: the driver states no "
                  "FEC counters here")
    found: dict[str, int] = {}
    for match in _FEC_STAT.finditer(rest if failed is None else ""):
        if not match["value"].isdigit():
            raise _bad("fec_stats", match[0])
        found[match["name"]] = int(match["value"])
    for name, field in (("corrected_blocks", "corrected"),
                        ("uncorrectable_blocks", "uncorrectable")):
        if name not in found:
            unknown[f"fec_counters.{field}"] = failed or (
                f"`ethtool -I --show-fec <nic>` states no {name}")
    return found


def _phy_counters(text: str, unknown: dict[str, str]) -> dict[str, int]:
    """mlx5's PHY statistical counters from `ethtool -S` (counters.rst), where it has them."""
    failed = _failure("stats", text)
    if failed:
        unknown["fec_counters.symbol_errors"] = failed
        return {}
    found: dict[str, int] = {}
    for line in text.splitlines():
        name, _, value = line.strip().partition(":")
        if name in _PHY_COUNTERS:
            if not value.strip().isdigit():
                raise _bad("stats", line)
            found[name] = int(value)
    if "rx_pcs_symbol_err_phy" not in found:
        # mlx5 keeps it where the firmware has the PPCNT statistical counter group
        unknown["fec_counters.symbol_errors"] = ("`ethtool -S <nic>` has no "
                                                 "rx_pcs_symbol_err_phy")
    return found


def _pre_fec_ber(blocks: dict[str, int], phy: dict[str, int],
                 unknown: dict[str, str]) -> float | None:
    """Corrected bits over bits received (counters.rst's ratio). Both count since the
    counters were last cleared (or the driver loaded): the BER averaged over all that time,
    not the BER now."""
    corrected = phy.get("rx_corrected_bits_phy", blocks.get("corrected_bits"))
    received = phy.get("rx_bits_phy")
    if corrected is not None and received:
        return corrected / received
    if corrected is None:
        why = ("no corrected bits are stated (rx_corrected_bits_phy of ethtool -S, "
               "corrected_bits of ethtool -I --show-fec)")
    elif received is None:
        # documented in counters.rst, yet not shown by most kernels' mlx5
        why = "`ethtool -S <nic>` has no rx_bits_phy, the bits received, to divide by"
    else:
        why = "rx_bits_phy is 0: no bits received since the counters were cleared"
    unknown["fec_counters.pre_fec_ber"] = why
    return None


# ---- flaps -------------------------------------------------------------------------------

def _read_flaps(text: str, unknown: dict[str, str]) -> int | None:
    failed = _failure("carrier_changes", text)
    if failed:
        unknown["flaps"] = failed
        return None
    if not text.strip().isdigit():
        raise _bad("carrier_changes", text)
    return int(text)


def read_nics(batch: Callable[[dict[str, str]], dict[str, str]],
              nics: Iterable[str]) -> dict[str, Any]:
    """Each NIC's (or switchdev port's) physical layer, every command in one round trip, as
    JSON by name; a NIC whose output does not read keeps the reason as an unknown."""
    names = sorted(nics)
    out = batch({f"{nic} {key}": f"{command} 2>&1 || true" for nic in names
                 for key, command in commands(nic).items()})
    found: dict[str, Any] = {}
    for nic in names:
        try:
            phy = read_port({key: out.get(f"{nic} {key}", "") for key in COMMANDS})
        except PhyReadError as exc:
            phy = PortPhysical(unknown={"module": str(exc)})
        found[nic] = phy.model_dump(mode="json")
    return found
