"""NVUE physical layer (flatfab.platforms.nvue.phy) from the `-o json` replies of
tests/fixtures/nvue/phy/<case>/ (each file's `source` names its shape; derived, not captured):
what each case reads, what it leaves unknown and why, and the malformed values it refuses."""

from __future__ import annotations

import copy
import json
import math
from typing import Any

import pytest

from flatfab.model.physical import CORRECTION_LIMIT, Fec, Media, PortPhysical, Thresholds
from flatfab.platforms.nvue.phy import (
    COMMANDS,
    INTERFACES,
    SYSTEM,
    TRANSCEIVERS,
    PhyReadError,
    media_of,
    phy_detail_command,
    pluggable_command,
    port_commands,
    read_ports,
)
from tests.support.paths import FIXTURES

PHY = FIXTURES / "nvue" / "phy"
NOW = 1_760_000_000.0  # the switch's time the fixtures' timestamps are relative to
CASES = {"dr4_400g": "swp1", "sr4_100g": "swp2", "dac": "swp3", "empty_cage": "swp4",
         "no_fec_counters": "swp5", "degraded": "swp6", "flapped": "swp7"}
UNCORRECTABLE = ("NVUE counts the bits FEC left uncorrected (effective-errors, effective-ber), "
                 "not codewords")
OPTICAL = ("NVUE states cable-type 'Optical module' and no application code: the reach class "
           "(SR, DR, FR, LR) is not stated")


def outputs(case: str) -> dict[str, Any]:
    """The case's replies keyed by command (file name = the command, spaces as underscores)."""
    return {path.stem.replace("_", " ") + " -o json": json.loads(path.read_text("utf-8"))
            for path in sorted((PHY / case).glob("nv_show_*.json"))}


def read(case: str, shown: dict[str, Any] | None = None, port: str | None = None,
         now: float = NOW) -> PortPhysical:
    port = port or CASES[case]
    return read_ports(outputs(case) if shown is None else shown, [port], now=now)[port]


def entry(shown: dict[str, Any], port: str) -> dict[str, Any]:
    """The port's module object in the transceiver reply."""
    found: dict[str, Any] = shown[TRANSCEIVERS][port]
    return found


def link(shown: dict[str, Any], port: str) -> dict[str, Any]:
    found: dict[str, Any] = shown[INTERFACES][port]["link"]
    return found


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_fixture_names_its_source_and_release(case: str) -> None:
    shown = outputs(case)
    assert INTERFACES in shown
    for command, data in shown.items():
        assert data["source"].startswith("derived"), (case, command)
        assert data["release"].startswith("Cumulus Linux 5."), (case, command)


def test_commands_are_the_one_call_forms_and_per_port_reads() -> None:
    assert COMMANDS == ("nv show interface -o json", "nv show system -o json",
                        "nv show platform transceiver detail -o json")
    assert port_commands("swp1s0") == ("nv show interface swp1s0 link phy-detail -o json",
                                       "nv show interface swp1s0 pluggable -o json")
    with pytest.raises(ValueError, match="not an interface name"):
        phy_detail_command("swp1; reboot")


def test_400g_dr4_reads_8_electrical_lanes_4_lit_optical_and_thresholds() -> None:
    port = read("dr4_400g")
    assert port.present is True
    assert port.module is not None
    assert port.module.model_dump() == {
        "form_factor": "QSFP-DD", "media": None, "compliance": None, "vendor": "NVIDIA",
        "part": "MMS1V00-WM", "serial": "MT2331FT00101", "cable_m": None}
    assert (port.speed_mbps, port.lanes, port.fec) == (400_000, 8, Fec.RS544)
    diag = port.diagnostics
    assert diag is not None
    assert (diag.temperature_c, diag.voltage_v) == (43.94, 3.3015)
    # 8 monitors stated, 5-8 dark: a DR4 lights 4
    assert [lane.rx_power_dbm for lane in diag.lanes] == [-1.12, -0.87, -1.40, -0.95]
    assert [lane.bias_ma for lane in diag.lanes] == [68.2, 70.4, 69.1, 71.0]
    assert diag.thresholds["rx_power_dbm"] == Thresholds(
        low_alarm=-10.4, low_warning=-8.4, high_warning=4.0, high_alarm=5.0)
    assert set(diag.thresholds) == {"temperature_c", "voltage_v", "bias_ma", "tx_power_dbm",
                                    "rx_power_dbm"}
    assert port.fec_counters is not None
    assert port.fec_counters.model_dump() == {
        "corrected": 1_482_113 + 9_402 + 311 + 12 + 1, "uncorrectable": None,
        "symbol_errors": 0, "pre_fec_ber": 2e-08, "post_fec_ber": 0.0}  # 15E-255: none seen
    assert (port.flaps, port.last_change_s) == (2, 864_000.0)
    assert port.unknown == {"fec_counters.uncorrectable": UNCORRECTABLE,
                            "module.media": OPTICAL}


def test_100g_sr4_rs_is_rs528_on_its_4_lanes() -> None:
    port = read("sr4_100g")
    assert port.module is not None and port.module.form_factor == "QSFP28"
    assert (port.speed_mbps, port.lanes, port.fec) == (100_000, 4, Fec.RS528)
    assert port.diagnostics is not None and len(port.diagnostics.lanes) == 4
    assert port.unknown == {"fec_counters.uncorrectable": UNCORRECTABLE,
                            "module.media": OPTICAL}


def test_100g_rs_without_a_lane_count_is_not_guessed() -> None:
    shown = outputs("sr4_100g")
    del shown[phy_detail_command("swp2")]
    port = read("sr4_100g", shown)
    assert port.fec is None and port.lanes is None
    assert port.unknown["fec"] == ("link.fec rs and no lane count: at 100G that is "
                                   "RS(528,514) on 25G lanes, RS(544,514) on PAM4 lanes")


def test_400g_rs_without_a_lane_count_is_rs544_on_any_lanes() -> None:
    shown = outputs("dr4_400g")
    del shown[phy_detail_command("swp1")]
    assert read("dr4_400g", shown).fec is Fec.RS544


def test_passive_dac_states_its_length_and_no_diagnostics_unread() -> None:
    port = read("dac")
    assert port.module is not None
    assert (port.module.media, port.module.cable_m, port.module.part) == (
        Media.DAC, 3.0, "MCP1600-C003E30L")
    assert port.diagnostics is None
    assert "diagnostics" not in port.unknown  # a passive cable keeps no monitors
    assert port.unknown == {"fec_counters.uncorrectable": UNCORRECTABLE}


def test_empty_cage_is_not_present_and_nothing_about_the_module_is_unknown() -> None:
    port = read("empty_cage")
    assert (port.present, port.module, port.diagnostics) == (False, None, None)
    assert not {"present", "module", "diagnostics", "module.media"} & set(port.unknown)
    assert port.flaps == 0
    assert port.unknown["speed_mbps"] == "the link is down: no trained speed"
    assert port.unknown["last_change_s"] == ("NVUE states link.oper-status-last-change "
                                             "'Never': no change since it started")


def test_5_8_reads_the_module_from_pluggable_and_has_no_fec_counters() -> None:
    port = read("no_fec_counters")
    assert port.present is True and port.module is not None
    assert (port.module.vendor, port.module.part, port.module.serial) == (
        "NVIDIA", "MMA1B00-C100D", "MT2109FT01187")
    assert (port.speed_mbps, port.flaps) == (100_000, 2)  # link.state {"up": {}} only
    assert port.fec_counters is None and port.fec is None and port.lanes is None
    missing = ("'nv show interface swp5 link phy-detail -o json' is not in the outputs (not "
               "run, or not supported on this release): NVUE before 5.10 and Spectrum-1 "
               "switches state none")
    assert port.unknown == {
        **{f"fec_counters.{name}": missing for name in (
            "corrected", "uncorrectable", "symbol_errors", "pre_fec_ber", "post_fec_ber")},
        "lanes": missing,
        "last_change_s": ("'nv show interface -o json' states no "
                          "link.oper-status-last-change (NVUE before 5.11)"),
        "fec": "'nv show interface -o json' states no operational link.fec for swp5",
        "module.media": "NVUE states no cable-type for the module in swp5",
        "diagnostics": "'nv show interface swp5 pluggable -o json' states no diagnostics for swp5"}


def test_degraded_optic_low_rx_lane_and_pre_fec_ber_past_the_rs544_limit() -> None:
    port = read("degraded")
    assert port.diagnostics is not None
    rx = [lane.rx_power_dbm for lane in port.diagnostics.lanes]
    low_alarm = port.diagnostics.thresholds["rx_power_dbm"].low_alarm
    assert rx[2] == -11.3 and low_alarm is not None and rx[2] < low_alarm
    counters = port.fec_counters
    assert counters is not None
    assert counters.pre_fec_ber == 3e-4 and counters.pre_fec_ber > CORRECTION_LIMIT[Fec.RS544]
    assert (counters.post_fec_ber, counters.symbol_errors) == (2e-11, 1734)
    assert counters.corrected == sum((2_950_000_000, 410_000_000, 61_000_000, 9_400_000,
                                      1_510_000, 240_000, 38_000, 6_100, 980, 160, 25, 4, 1))
    assert counters.uncorrectable is None  # frames lost show in post_fec_ber, not codewords
    assert port.unknown["fec_counters.uncorrectable"] == UNCORRECTABLE
    assert (port.flaps, port.last_change_s) == (6, 262_800.0)


def test_flapped_link_last_change_in_the_switchs_time_zone() -> None:
    port = read("flapped")
    assert (port.flaps, port.last_change_s) == (14, 95.5)
    shown = outputs("flapped")
    shown[SYSTEM]["timezone"] = "Etc/UTC"  # the same wall-clock stamp is 2 h later in UTC
    assert read("flapped", shown, now=NOW + 7_200).last_change_s == 95.5


@pytest.mark.parametrize(("zone", "why"), [
    (None, "'nv show system -o json' is not in the outputs (not run, or not supported on this "
           "release): the time zone of the last change is not known"),
    ("", "'nv show system -o json' states no timezone for the time of the last change"),
    ("Mars/Olympus_Mons", "the switch's timezone 'Mars/Olympus_Mons' is not in this host's "
                          "zone database"),
])
def test_last_change_without_a_known_time_zone_is_unknown(zone: str | None, why: str) -> None:
    shown = outputs("flapped")
    if zone is None:
        del shown[SYSTEM]
    else:
        shown[SYSTEM]["timezone"] = zone
    port = read("flapped", shown)
    assert port.last_change_s is None and port.unknown["last_change_s"] == why
    assert port.flaps == 14


def test_a_last_change_after_the_switchs_time_is_no_age() -> None:
    port = read("flapped", now=NOW - 3_600)
    assert port.last_change_s is None
    assert port.unknown["last_change_s"].endswith(f"is after the switch's time {NOW - 3_600}")


def test_carrier_up_and_down_counts_when_no_transitions_are_stated() -> None:
    shown = outputs("flapped")
    del link(shown, "swp7")["stats"]["carrier-transitions"]
    assert read("flapped", shown).flaps == 14
    del link(shown, "swp7")["stats"]["carrier-up-count"]
    port = read("flapped", shown)
    assert port.flaps is None
    assert port.unknown["flaps"] == ("'nv show interface -o json' states no "
                                     "link.stats.carrier-transitions")


@pytest.mark.parametrize(("stated", "fec"), [("baser", Fec.FC), ("off", Fec.NONE),
                                             ("RS", Fec.RS544)])
def test_fec_modes(stated: str, fec: Fec) -> None:
    shown = outputs("dr4_400g")
    link(shown, "swp1")["fec"] = stated
    assert read("dr4_400g", shown).fec is fec


def test_fec_auto_states_no_negotiated_code() -> None:
    shown = outputs("dr4_400g")
    link(shown, "swp1")["fec"] = "auto"
    port = read("dr4_400g", shown)
    assert port.fec is None
    assert port.unknown["fec"] == "link.fec 'auto': NVUE does not state the FEC negotiated"


def test_a_port_the_switch_does_not_mention_is_unknown_throughout() -> None:
    port = read("dr4_400g", port="swp9")
    assert port.model_dump(exclude={"unknown", "virtual"}) == dict.fromkeys(
        ("present", "module", "diagnostics", "fec", "fec_counters", "flaps", "last_change_s",
         "speed_mbps", "lanes"))
    assert port.unknown["present"] == ("'nv show platform transceiver detail -o json' lists "
                                       "no swp9")
    for key in ("flaps", "last_change_s", "speed_mbps", "fec"):
        assert port.unknown[key] == "'nv show interface -o json' lists no swp9"
    assert port.unknown["lanes"].startswith("'nv show interface swp9 link phy-detail -o json' "
                                            "is not in the outputs")


def test_no_outputs_at_all_leaves_every_fact_unknown_with_its_reason() -> None:
    port = read_ports({}, ["swp1"], now=NOW)["swp1"]
    assert set(port.unknown) == {
        "present", "module", "diagnostics", "fec", "flaps", "last_change_s", "speed_mbps",
        "lanes", *(f"fec_counters.{name}" for name in (
            "corrected", "uncorrectable", "symbol_errors", "pre_fec_ber", "post_fec_ber"))}
    assert port.unknown["module"] == (
        f"neither {TRANSCEIVERS!r} nor {pluggable_command('swp1')!r} is in the outputs")


@pytest.mark.parametrize(("cable_type", "media"), [
    ("Passive copper cable", Media.DAC), ("Copper cable", Media.DAC),
    ("Active copper cable", None), ("Active cable", None), ("Active optical cable", Media.AOC),
    ("Optical module", None)])
def test_media_of_cable_type(cable_type: str, media: Media | None) -> None:
    assert media_of(cable_type) is media


def test_an_active_cable_names_no_media_and_no_length_is_read() -> None:
    shown = outputs("dac")
    entry(shown, "swp3")["cable-type"] = "Active cable"
    port = read("dac", shown)
    assert port.module is not None and (port.module.media, port.module.cable_m) == (None, None)
    assert port.unknown["module.media"] == ("NVUE states cable-type 'Active cable', which names "
                                            "no flatfab media")
    assert port.unknown["diagnostics"] == ("NVUE states 'No Diagnostic Data Available. Module "
                                           "is not DDMI capable'")


def test_nvos_style_bare_cable_length() -> None:
    shown = outputs("dac")
    entry(shown, "swp3")["cable-length"] = "2"
    port = read("dac", shown)
    assert port.module is not None and port.module.cable_m == 2.0


def test_a_dead_lane_among_4_keeps_every_channel() -> None:
    shown = outputs("dr4_400g")
    channel = entry(shown, "swp1")["channel"]["channel-4"]
    channel.update(copy.deepcopy(entry(shown, "swp1")["channel"]["channel-8"]))
    port = read("dr4_400g", shown)
    assert port.diagnostics is not None
    assert len(port.diagnostics.lanes) == 8  # 3 lit is no module's lane count: nothing dropped
    assert port.diagnostics.lanes[3].rx_power_dbm == -math.inf


def test_readings_in_other_printed_forms() -> None:
    shown = outputs("sr4_100g")
    module = entry(shown, "swp2")
    module["temperature"] = "42.56 degrees C / 108.61 degrees F"
    module["channel"]["channel-1"]["rx-power"]["power"] = "0.5000 mW"
    port = read("sr4_100g", shown)
    assert port.diagnostics is not None
    assert port.diagnostics.temperature_c == 42.56
    assert "temperature_c" not in port.diagnostics.thresholds
    assert port.diagnostics.lanes[0].rx_power_dbm == pytest.approx(-3.0103, abs=1e-4)


def _set_speed(shown: dict[str, Any]) -> None:
    link(shown, "swp1")["speed"] = "fast"


def _set_raw_ber(shown: dict[str, Any]) -> None:
    shown[phy_detail_command("swp1")]["raw-ber"] = "high"


def _set_symbols(shown: dict[str, Any]) -> None:
    shown[phy_detail_command("swp1")]["symbol-errors"] = -1


def _set_power(shown: dict[str, Any]) -> None:
    entry(shown, "swp1")["channel"]["channel-2"]["rx-power"]["power"] = "bright"


def _set_channel(shown: dict[str, Any]) -> None:
    channels = entry(shown, "swp1")["channel"]
    channels["lane-9"] = channels.pop("channel-8")


def _set_temperature(shown: dict[str, Any]) -> None:
    entry(shown, "swp1")["temperature"]["temperature"] = "111.09 F"


def _set_stamp(shown: dict[str, Any]) -> None:
    link(shown, "swp1")["oper-status-last-change"] = "yesterday"


def _set_fec(shown: dict[str, Any]) -> None:
    link(shown, "swp1")["fec"] = "llrs-272"


def _set_interface(shown: dict[str, Any]) -> None:
    shown[INTERFACES]["swp1"] = "up"


@pytest.mark.parametrize(("change", "command", "key"), [
    (_set_speed, INTERFACES, "link.speed"),
    (_set_raw_ber, phy_detail_command("swp1"), "raw-ber"),
    (_set_symbols, phy_detail_command("swp1"), "symbol-errors"),
    (_set_power, TRANSCEIVERS, "channel.channel-2.rx-power.power"),
    (_set_channel, TRANSCEIVERS, "channel.lane-9"),
    (_set_temperature, TRANSCEIVERS, "temperature.temperature"),
    (_set_stamp, INTERFACES, "link.oper-status-last-change"),
    (_set_fec, INTERFACES, "link.fec"),
    (_set_interface, INTERFACES, "swp1"),
])
def test_malformed_values_raise_one_line_naming_command_port_and_key(
        change: Any, command: str, key: str) -> None:
    shown = outputs("dr4_400g")
    change(shown)
    with pytest.raises(PhyReadError) as raised:
        read("dr4_400g", shown)
    message = str(raised.value)
    assert message.startswith(f"{command}: swp1: {key}: cannot read ")
    assert "\n" not in message
    assert isinstance(raised.value, ValueError)
