"""Junos physical layer (flatfab.platforms.junos.phy) from the `| display json` replies of
tests/fixtures/junos/phy/<case>/ (each file's `source` names its shape; derived, not captured):
what each case reads, what it leaves unknown and why, and the malformed values it refuses."""

from __future__ import annotations

import json
import math
import re
from typing import Any

import pytest

from flatfab.model.physical import Fec, Media, PortPhysical, Thresholds
from flatfab.platforms.junos import phy
from flatfab.platforms.junos.phy import (
    COMMANDS,
    HARDWARE,
    INTERFACES,
    OPTICS,
    PIC,
    PhyReadError,
    media_of,
    read_ports,
)
from tests.support.paths import FIXTURES

PHY = FIXTURES / "junos" / "phy"
NOW = 1_760_000_000.0  # the switch's time (2025-10-09 08:53:20 UTC) the fixtures refer to
CASES = {"dr4_400g": "et-0/0/0", "sr4_100g": "et-0/0/4", "dac": "et-0/0/8",
         "empty_cage": "et-0/0/12", "no_fec_counters": "et-0/0/16", "degraded": "et-0/0/20",
         "flapped": "et-0/0/24"}
LANES = {"lanes": "Junos states no electrical (host-side) lane count in "
                  "'show interfaces extensive | display json'"}
NOT_COUNTED = {"fec_counters.symbol_errors": "Junos counts codewords, not symbol errors",
               "fec_counters.post_fec_ber": "Junos states no post-FEC BER"}


def outputs(case: str) -> dict[str, Any]:
    """The case's replies keyed by command, as the collector parses them (plus `source`)."""
    return {command: json.loads((PHY / case / (re.sub(r"[^a-zA-Z0-9]", "_", command)
                                               + ".json")).read_text(encoding="utf-8"))
            for command in COMMANDS}


def read(case: str, shown: dict[str, Any] | None = None,
         port: str | None = None) -> PortPhysical:
    port = port or CASES[case]
    return read_ports(outputs(case) if shown is None else shown, [port], now=NOW)[port]


def without(case: str, *commands: str) -> dict[str, Any]:
    return {c: v for c, v in outputs(case).items() if c not in commands}


def physical(shown: dict[str, Any], command: str, port: str) -> dict[str, Any]:
    """The port's physical-interface entry in a show interfaces reply (to change it)."""
    entries = shown[command]["interface-information"][0]["physical-interface"]
    return next(e for e in entries if e["name"][0]["data"] == port)


def optics_of(shown: dict[str, Any], port: str) -> dict[str, Any]:
    entry: dict[str, Any] = physical(shown, OPTICS, port)["optics-diagnostics"][0]
    return entry


def xcvrs(shown: dict[str, Any]) -> list[dict[str, Any]]:
    chassis = shown[HARDWARE]["chassis-inventory"][0]["chassis"][0]
    fpc = next(m for m in chassis["chassis-module"] if m["name"][0]["data"] == "FPC 0")
    found: list[dict[str, Any]] = fpc["chassis-sub-module"][0]["chassis-sub-sub-module"]
    return found


def leaf(value: str, **attributes: str) -> list[dict[str, Any]]:
    entry: dict[str, Any] = {"data": value}
    if attributes:
        entry["attributes"] = {f"junos:{k}": v for k, v in attributes.items()}
    return [entry]


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_fixture_names_its_source_and_release(case: str) -> None:
    for command, data in outputs(case).items():
        assert data["source"].startswith("derived from documentation"), (case, command)
        assert data["release"].startswith("Junos OS Evolved 2"), (case, command)


def test_400g_dr4_reads_module_lanes_thresholds_fec_and_flaps() -> None:
    port = read("dr4_400g")
    assert port.present is True
    assert port.module is not None
    assert port.module.model_dump() == {
        "form_factor": "QSFP56-DD", "media": Media.DR, "compliance": "QSFP56-DD-400GBASE-DR4",
        "vendor": "JUNIPER-INNOLIGHT", "part": "740-085351", "serial": "1W1CZ7A51A01",
        "cable_m": None}
    assert (port.speed_mbps, port.lanes, port.fec) == (400_000, None, Fec.RS544)
    diag = port.diagnostics
    assert diag is not None
    assert (diag.temperature_c, diag.voltage_v) == (41.5, 3.29)
    assert [lane.rx_power_dbm for lane in diag.lanes] == [0.42, 0.31, 0.55, 0.18]
    assert [lane.tx_power_dbm for lane in diag.lanes] == [1.05, 0.98, 1.11, 1.02]
    assert [lane.bias_ma for lane in diag.lanes] == [52.1, 51.8, 53.0, 52.4]
    assert diag.thresholds["rx_power_dbm"] == Thresholds(
        low_alarm=-9.9, low_warning=-8.9, high_warning=4.0, high_alarm=5.0)
    assert diag.thresholds["temperature_c"] == Thresholds(
        low_alarm=-5.0, low_warning=0.0, high_warning=70.0, high_alarm=75.0)
    assert set(diag.thresholds) == {"temperature_c", "voltage_v", "bias_ma", "tx_power_dbm",
                                    "rx_power_dbm"}
    assert port.fec_counters is not None
    assert port.fec_counters.model_dump() == {
        "corrected": 18234, "uncorrectable": 0, "symbol_errors": None, "pre_fec_ber": 2.1e-08,
        "post_fec_ber": None}
    assert (port.flaps, port.last_change_s) == (2, 864_000.0)
    assert port.unknown == LANES | NOT_COUNTED  # Junos states everything else


def test_100g_sr4_fec91_is_rs528_on_25g_lanes_and_this_release_has_no_pre_fec_ber() -> None:
    port = read("sr4_100g")
    assert port.module is not None
    assert (port.module.media, port.module.form_factor) == (Media.SR, "QSFP")
    assert (port.speed_mbps, port.fec) == (100_000, Fec.RS528)
    assert port.diagnostics is not None and len(port.diagnostics.lanes) == 4
    assert port.fec_counters is not None and port.fec_counters.corrected == 412
    assert port.unknown["fec_counters.pre_fec_ber"].startswith(
        "Junos states no pre-fec-ber for this port")
    assert set(port.unknown) == {"lanes", "fec_counters.symbol_errors",
                                 "fec_counters.pre_fec_ber", "fec_counters.post_fec_ber"}


def test_passive_dac_has_a_length_its_own_part_and_no_diagnostics() -> None:
    port = read("dac")
    assert port.present is True
    assert port.module is not None
    assert port.module.model_dump() == {
        "form_factor": "QSFP28", "media": Media.DAC, "compliance": "QSFP28-100G-CU3M",
        "vendor": "Amphenol", "part": "NDAQGJ-0003", "serial": "APF22030058",
        "cable_m": 3.0}
    assert port.diagnostics is None and "diagnostics" not in port.unknown
    assert port.fec is Fec.RS528
    assert port.unknown == LANES | NOT_COUNTED


def test_empty_cage_is_absent_not_unknown() -> None:
    port = read("empty_cage")
    assert (port.present, port.module, port.diagnostics) == (False, None, None)
    assert not {"present", "module", "diagnostics", "module.media"} & set(port.unknown)
    assert port.flaps == 0 and port.last_change_s is None
    assert port.unknown["last_change_s"].startswith("Last flapped: Never")
    assert port.speed_mbps is None
    assert port.unknown["speed_mbps"] == "the link is down: no trained speed"
    assert port.fec is Fec.RS544  # the port's FEC setting, stated while down
    assert port.fec_counters is not None and port.fec_counters.corrected == 0


def test_release_without_fec_counters_keeps_the_fec_mode_and_names_the_gap() -> None:
    port = read("no_fec_counters")
    assert port.fec is Fec.RS544
    assert port.fec_counters is None
    gap = "Junos states no ethernet-fec-statistics for this port (release or port)"
    assert port.unknown == LANES | {f"fec_counters.{name}": gap
                                    for name in phy.FEC_COUNTERS}
    assert port.module is not None and port.module.media is Media.FR


def test_degraded_optic_shows_its_low_lane_and_lost_codewords() -> None:
    port = read("degraded")
    assert port.diagnostics is not None
    rx = [lane.rx_power_dbm for lane in port.diagnostics.lanes]
    low = port.diagnostics.thresholds["rx_power_dbm"].low_alarm
    assert low is not None
    assert [i for i, value in enumerate(rx) if value is not None and value < low] == [2]
    assert port.fec_counters is not None
    assert port.fec_counters.uncorrectable == 5821
    assert port.fec_counters.pre_fec_ber == pytest.approx(3.4e-4)
    assert port.fec_counters.corrected == 9_431_412_897


def test_recent_flap_is_counted_and_aged() -> None:
    port = read("flapped")
    assert (port.flaps, port.last_change_s) == (14, 95.0)
    assert port.fec_counters is not None and port.fec_counters.uncorrectable == 2


# ---- Last flapped ---------------------------------------------------------------------------


def set_flapped(shown: dict[str, Any], text: str, seconds: str | None) -> None:
    attributes = {"seconds": seconds} if seconds is not None else {}
    physical(shown, INTERFACES, "et-0/0/24")["interface-flapped"] = leaf(text, **attributes)


def test_a_local_zone_uses_the_switchs_own_age() -> None:
    shown = outputs("flapped")
    set_flapped(shown, "2025-10-09 01:51:45 PDT (00:01:35 ago)", "95")
    assert read("flapped", shown).last_change_s == 95.0


def test_a_time_after_now_uses_the_switchs_own_age_never_a_negative_one() -> None:
    shown = outputs("flapped")
    set_flapped(shown, "2025-10-09 09:00:00 UTC (00:00:30 ago)", "30")
    assert read("flapped", shown).last_change_s == 30.0
    set_flapped(shown, "2025-10-09 09:00:00 UTC (00:00:30 ago)", None)
    port = read("flapped", shown)
    assert port.last_change_s is None and "no junos:seconds" in port.unknown["last_change_s"]


# ---- commands missing from the outputs -------------------------------------------------------


def test_without_show_interfaces_the_link_and_fec_facts_are_unknown() -> None:
    port = read("dr4_400g", without("dr4_400g", INTERFACES))
    for key in ("flaps", "last_change_s", "speed_mbps", "fec", "fec_counters.corrected"):
        assert port.unknown[key].startswith(f"{INTERFACES!r} is not in the outputs")
    assert port.present is True and port.diagnostics is not None


def test_without_the_inventory_presence_comes_from_the_optics_and_type_from_the_pic() -> None:
    port = read("dr4_400g", without("dr4_400g", HARDWARE))
    assert port.present is True
    assert port.module is not None
    assert (port.module.media, port.module.compliance) == (Media.DR, "400GBASE DR4")
    assert (port.module.part, port.module.serial) == ("T-DP4CNT-NJ3", None)
    empty = read("empty_cage", without("empty_cage", HARDWARE))
    assert empty.present is None and empty.module is None
    assert empty.unknown["present"].startswith(f"{HARDWARE!r} is not in the outputs")
    assert empty.unknown["diagnostics"] == empty.unknown["present"]


def test_without_the_pic_there_is_no_vendor_and_a_third_party_part_stays_unknown() -> None:
    port = read("dac", without("dac", PIC))
    assert port.module is not None
    assert (port.module.vendor, port.module.part, port.module.media) == (None, None, Media.DAC)
    dr4 = read("dr4_400g", without("dr4_400g", PIC))
    assert dr4.module is not None and dr4.module.part == "740-085351"


def test_without_optics_the_diagnostics_are_unknown() -> None:
    port = read("dr4_400g", without("dr4_400g", OPTICS))
    assert port.diagnostics is None
    assert port.unknown["diagnostics"].startswith(f"{OPTICS!r} is not in the outputs")


def test_an_empty_reply_is_a_failed_command() -> None:
    shown = outputs("dr4_400g")
    shown[OPTICS] = {}
    assert read("dr4_400g", shown).unknown["diagnostics"] == f"{OPTICS!r} gave an empty reply"


def test_a_port_the_switch_does_not_mention_is_unknown_not_empty() -> None:
    port = read("dr4_400g", port="et-0/0/31")
    assert port.present is None and port.module is None
    assert port.unknown["present"] == (f"{HARDWARE!r} lists no Xcvr 31 and {INTERFACES!r} "
                                       "no et-0/0/31")
    assert port.unknown["flaps"] == f"{INTERFACES!r} lists no et-0/0/31"
    assert port.unknown["fec"] == f"{INTERFACES!r} lists no et-0/0/31"


def test_a_port_without_a_cage_says_so() -> None:
    port = read("dr4_400g", port="ae0")
    assert port.present is None
    assert port.unknown["module"] == "ae0 is no fpc/pic/port port with a transceiver cage"


def test_a_pic_the_inventory_does_not_list_leaves_presence_unknown() -> None:
    port = read("dr4_400g", port="et-0/1/0")
    assert port.present is None
    assert port.unknown["present"] == f"{HARDWARE!r} lists no FPC 0 PIC 1"


# ---- module types, cable lengths, diagnostics shapes ----------------------------------------


@pytest.mark.parametrize(("text", "media"), [
    ("QSFP56-DD-400GBASE-DR4", Media.DR), ("QSFP-100GBASE-SR4", Media.SR),
    ("QSFP-100G-SR4-T2", Media.SR), ("QSFP-100GBASE-LR4-T2", Media.LR),
    ("QSFP56-DD-400G-FR4", Media.FR), ("SFP+-10G-SR", Media.SR), ("SFP+-10G-LR", Media.LR),
    ("QSFP+-4X10G-SR", Media.SR), ("QSFP+-40G-SR4", Media.SR),
    ("QSFP28-100G-CU3M", Media.DAC), ("QSFP+-40G-CU3M", Media.DAC),
    ("QSFP28-100G-AOC-1M", Media.AOC), ("SFP+-10G-AOC3M", Media.AOC),
    ("QSFP-DD800-800G-AOC-1M", Media.AOC), ("OSFP-800G-DR8-2-P", Media.FR),
    ("QSFP-400G-DR4-2", Media.FR), ("100GBASE SR4", Media.SR), ("100GBASE LR4", Media.LR),
    ("100GBASE CR4", Media.DAC), ("100G-CWDM4", Media.FR), ("100G-PSM4", Media.DR),
    ("100G-LR4 Lite", None), ("QSFP56-DD-400G-ZR", None), ("GIGE 1000LX10", None),
    ("unknown", None)])
def test_media_of_junos_module_types(text: str, media: Media | None) -> None:
    assert media_of(text) is media


def set_description(shown: dict[str, Any], text: str) -> None:
    xcvrs(shown)[0]["description"] = leaf(text)


def test_an_unmappable_module_type_is_named() -> None:
    shown = outputs("dr4_400g")
    set_description(shown, "QSFP56-DD-400G-ZR")
    shown[PIC]["fpc-information"][0]["fpc"][0]["pic-detail"][0]["port-information"][0][
        "port"][0]["cable-type"] = leaf("unknown")
    port = read("dr4_400g", shown)
    assert port.module is not None and port.module.media is None
    assert port.unknown["module.media"] == ("Junos states module type 'QSFP56-DD-400G-ZR' / "
                                            "'unknown', which names no flatfab media")
    assert port.diagnostics is not None  # a module of no known media still has its readings


def test_an_aoc_has_its_length_and_a_cable_without_one_is_named() -> None:
    shown = outputs("dac")
    set_description(shown, "QSFP28-100G-AOC-5M")
    aoc = read("dac", shown)
    assert aoc.module is not None and (aoc.module.media, aoc.module.cable_m) == (Media.AOC, 5.0)
    # an AOC keeps monitors: this one's reply says they are not available
    assert aoc.unknown["diagnostics"] == "Junos states optic-diagnostics-not-available"
    set_description(shown, "QSFP28-100G-DAC")
    dac = read("dac", shown)
    assert dac.module is not None and dac.module.cable_m is None
    assert dac.unknown["module.cable_m"] == "the module type 'QSFP28-100G-DAC' names no length"


def test_a_single_channel_module_states_its_lane_on_the_module() -> None:
    shown = outputs("dr4_400g")
    optics = optics_of(shown, "et-0/0/0")
    del optics["optics-diagnostics-lane-values"]
    optics.update({"laser-bias-current": leaf("7.250"), "laser-output-power-dbm": leaf("-2.10"),
                   "rx-signal-avg-optical-power-dbm": leaf("- Inf")})
    diag = read("dr4_400g", shown).diagnostics
    assert diag is not None and len(diag.lanes) == 1
    lane = diag.lanes[0]
    assert (lane.bias_ma, lane.tx_power_dbm) == (7.25, -2.1)
    assert lane.rx_power_dbm == -math.inf  # no light: 0 mW


def test_a_temperature_without_its_celsius_attribute_is_read_from_the_text() -> None:
    shown = outputs("dr4_400g")
    optics_of(shown, "et-0/0/0")["module-temperature"] = leaf("33 degrees C / 92 degrees F")
    diag = read("dr4_400g", shown).diagnostics
    assert diag is not None and diag.temperature_c == 33.0


def test_thresholds_a_module_does_not_keep_are_left_out() -> None:
    shown = outputs("dr4_400g")
    optics = optics_of(shown, "et-0/0/0")
    for limit in ("high-alarm", "low-alarm", "high-warn", "low-warn"):
        optics[f"module-voltage-{limit}-threshold"] = leaf("0.0000")
        optics[f"laser-tx-power-{limit}-threshold-dbm"] = leaf("Not supported")
    diag = read("dr4_400g", shown).diagnostics
    assert diag is not None
    assert set(diag.thresholds) == {"temperature_c", "bias_ma", "rx_power_dbm"}


def test_an_optic_without_diagnostics_names_it() -> None:
    shown = outputs("dr4_400g")
    physical(shown, OPTICS, "et-0/0/0")["optics-diagnostics"] = [
        {"optic-diagnostics-not-available": leaf("N/A")}]
    port = read("dr4_400g", shown)
    assert port.diagnostics is None
    assert port.unknown["diagnostics"] == "Junos states optic-diagnostics-not-available"


# ---- FEC names ------------------------------------------------------------------------------


def set_fec(shown: dict[str, Any], mode: str, speed: str = "400Gbps") -> None:
    entry = physical(shown, INTERFACES, "et-0/0/0")
    entry["ethernet-fec-mode"][0]["enabled_fec_mode"] = leaf(mode)
    entry["speed"] = leaf(speed)


@pytest.mark.parametrize(("mode", "speed", "fec"), [
    ("FEC119", "400Gbps", Fec.RS544), ("FEC91", "100Gbps", Fec.RS528),
    ("FEC91", "50Gbps", Fec.RS544), ("FEC91", "25Gbps", Fec.RS528),
    ("FEC108", "25Gbps", Fec.RS528), ("FEC74", "25Gbps", Fec.FC), ("NONE", "10Gbps", Fec.NONE),
    ("none", "100Gbps", Fec.NONE)])
def test_junos_fec_names(mode: str, speed: str, fec: Fec) -> None:
    shown = outputs("dr4_400g")
    set_fec(shown, mode, speed)
    assert read("dr4_400g", shown).fec is fec


def test_an_unknown_or_empty_fec_mode_is_named() -> None:
    shown = outputs("dr4_400g")
    set_fec(shown, "FEC161")
    port = read("dr4_400g", shown)
    assert port.fec is None and "'FEC161'" in port.unknown["fec"]
    physical(shown, INTERFACES, "et-0/0/0")["ethernet-fec-mode"][0]["enabled_fec_mode"] = [{}]
    assert read("dr4_400g", shown).unknown["fec"] == "Junos states an empty enabled_fec_mode"


def test_fec91_with_no_speed_leaves_the_rs_code_unknown() -> None:
    shown = outputs("dr4_400g")
    set_fec(shown, "FEC91", "Unspecified")
    port = read("dr4_400g", shown)
    assert port.fec is None and "speed that decides" in port.unknown["fec"]


# ---- malformed values ----------------------------------------------------------------------


def set_rx(shown: dict[str, Any]) -> None:
    optics_of(shown, "et-0/0/0")["optics-diagnostics-lane-values"][2][
        "laser-rx-optical-power-dbm"] = leaf("low")


def set_flaps(shown: dict[str, Any]) -> None:
    physical(shown, INTERFACES, "et-0/0/0")["output-error-list"][0][
        "carrier-transitions"] = leaf("-1")


def set_codewords(shown: dict[str, Any]) -> None:
    physical(shown, INTERFACES, "et-0/0/0")["ethernet-fec-statistics"][0][
        "fec_nccw_count"] = leaf("1.5")


def set_flapped_text(shown: dict[str, Any]) -> None:
    physical(shown, INTERFACES, "et-0/0/0")["interface-flapped"] = leaf("yesterday")


def set_table(shown: dict[str, Any]) -> None:
    shown[HARDWARE]["chassis-inventory"][0]["chassis"] = {"name": "Chassis"}


def set_reply(shown: dict[str, Any]) -> None:
    shown[PIC] = ["port 0"]


@pytest.mark.parametrize(("change", "message"), [
    (set_rx, f"{OPTICS}: et-0/0/0: optics-diagnostics-lane-values[2]."
             "laser-rx-optical-power-dbm: cannot read 'low'"),
    (set_flaps, f"{INTERFACES}: et-0/0/0: carrier-transitions: cannot read '-1'"),
    (set_codewords, f"{INTERFACES}: et-0/0/0: fec_nccw_count: cannot read '1.5'"),
    (set_flapped_text, f"{INTERFACES}: et-0/0/0: interface-flapped: cannot read 'yesterday'"),
    (set_table, f"{HARDWARE}: *: chassis: cannot read {{'name': 'Chassis'}}"),
    (set_reply, f"{PIC}: *: (reply): cannot read ['port 0']")])
def test_malformed_values_name_command_port_and_key(change: Any, message: str) -> None:
    shown = outputs("dr4_400g")
    change(shown)
    with pytest.raises(PhyReadError, match=f"^{re.escape(message)}$"):
        read("dr4_400g", shown)
    assert issubclass(PhyReadError, ValueError)


def test_a_codeword_total_past_a_floats_precision_stays_exact() -> None:
    shown = outputs("dr4_400g")
    physical(shown, INTERFACES, "et-0/0/0")["ethernet-fec-statistics"][0][
        "fec_ccw_count"] = leaf(str(2**60 + 1))
    port = read("dr4_400g", shown)
    assert port.fec_counters is not None and port.fec_counters.corrected == 2**60 + 1
