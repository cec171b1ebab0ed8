"""NX-OS physical layer (flatfab.platforms.nxos.phy) from the NX-API JSON of
tests/fixtures/nxos/phy/<case>/ (each file's `source` names its shape; derived, not captured):
what each case reads, what it leaves unknown and why, and the malformed values it refuses."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from flatfab.model.physical import Fec, Media, PortPhysical, Thresholds
from flatfab.platforms.nxos import phy
from flatfab.platforms.nxos.phy import COMMANDS, PhyReadError, media_of, read_ports
from tests.support.paths import FIXTURES

PHY = FIXTURES / "nxos" / "phy"
NOW = 1_760_000_000.0  # NX-OS states ages: the time is not read
CASES = {"dr4_400g": "Ethernet1/1", "sr4_100g": "Ethernet1/2", "dac": "Ethernet1/3",
         "empty_cage": "Ethernet1/4", "no_fec_state": "Ethernet1/5",
         "degraded": "Ethernet1/6", "flapped": "Ethernet1/7"}
INTERFACES, TRANSCEIVER = COMMANDS
FEC_KEYS = {f"fec_counters.{name}" for name in phy.FEC_COUNTERS}
# what NX-OS never states: a flap count, the electrical lanes, FEC counters
ALWAYS = {"flaps", "lanes", *FEC_KEYS}


def outputs(case: str) -> dict[str, Any]:
    """The case's replies keyed by command, as NX-API returns them (plus `source`)."""
    return {command: json.loads((PHY / case / f"{command.replace(' ', '_')}.json")
                                .read_text(encoding="utf-8")) for command in COMMANDS}


def read(case: str, shown: dict[str, Any] | None = None,
         port: str | None = None) -> PortPhysical:
    port = port or CASES[case]
    return read_ports(outputs(case) if shown is None else shown, [port], now=NOW)[port]


def rows(reply: dict[str, Any]) -> list[dict[str, Any]]:
    found = reply["TABLE_interface"]["ROW_interface"]
    return found if isinstance(found, list) else [found]


def row(shown: dict[str, Any], command: str, port: str) -> dict[str, Any]:
    return next(r for r in rows(shown[command]) if r["interface"] == port)


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_fixture_names_its_source_and_release(case: str) -> None:
    for command, data in outputs(case).items():
        assert data["source"].startswith("derived from documentation"), (case, command)
        assert data["release"].startswith("NX-OS "), (case, command)


def test_400g_dr4_reads_module_dom_and_thresholds() -> None:
    port = read("dr4_400g")
    assert port.present is True
    assert port.module is not None
    assert port.module.model_dump() == {
        "form_factor": "QSFP-DD", "media": Media.DR, "compliance": "QSFP-DD-400G-DR4",
        "vendor": "CISCO-INNOLIGHT", "part": "T-DP4CNT-NCI", "serial": "INL27150A01",
        "cable_m": None}
    # "Rs-fec" at 400G over the usual 8 electrical lanes (NX-OS states none) is RS(544,514)
    assert (port.speed_mbps, port.lanes, port.fec) == (400_000, None, Fec.RS544)
    diag = port.diagnostics
    assert diag is not None
    assert (diag.temperature_c, diag.voltage_v) == (41.5, 3.29)
    assert [lane.rx_power_dbm for lane in diag.lanes] == [0.42, 0.31, 0.55, 0.18]
    assert [lane.tx_power_dbm for lane in diag.lanes] == [1.12, 1.05, 1.2, 0.98]
    assert [lane.bias_ma for lane in diag.lanes] == [52.1, 51.8, 53.0, 52.4]
    assert diag.thresholds["rx_power_dbm"] == Thresholds(
        low_alarm=-9.9, low_warning=-8.9, high_warning=4.0, high_alarm=5.0)
    assert diag.thresholds["temperature_c"] == Thresholds(
        low_alarm=-5.0, low_warning=0.0, high_warning=70.0, high_alarm=75.0)
    assert set(diag.thresholds) == {"temperature_c", "voltage_v", "bias_ma", "tx_power_dbm",
                                    "rx_power_dbm"}
    assert port.last_change_s == 777_600.0  # 1week(s) 2day(s)
    assert (port.flaps, port.fec_counters) == (None, None)
    assert set(port.unknown) == ALWAYS
    assert port.unknown["fec_counters.uncorrectable"] == phy.NO_FEC_COUNTERS
    assert "eth_reset_cntr" in port.unknown["flaps"]


def test_100g_sr4_generic_reed_solomon_is_rs528_on_25g_lanes() -> None:
    port = read("sr4_100g")
    assert port.module is not None
    assert (port.module.media, port.module.form_factor) == (Media.SR, "QSFP")
    assert (port.speed_mbps, port.fec) == (100_000, Fec.RS528)
    assert port.diagnostics is not None and len(port.diagnostics.lanes) == 4
    assert port.last_change_s == 306_000.0  # 3d13h
    assert set(port.unknown) == ALWAYS


def test_passive_dac_has_a_length_and_no_diagnostics() -> None:
    port = read("dac")
    assert port.present is True
    assert port.module is not None
    assert (port.module.media, port.module.cable_m) == (Media.DAC, 3.0)
    assert port.diagnostics is None
    assert set(port.unknown) == ALWAYS  # a passive cable's missing DOM is no unread fact
    assert port.last_change_s == 93_600.0  # 1d02h


def test_a_dac_stating_no_length_leaves_the_length_unknown() -> None:
    shown = outputs("dac")
    del row(shown, TRANSCEIVER, "Ethernet1/3")["len_cu"]
    port = read("dac", shown)
    assert port.module is not None and port.module.cable_m is None
    assert port.unknown["module.cable_m"] == "NX-OS states cable length len_cu None for " \
                                             "Ethernet1/3"


def test_an_optic_length_is_no_cable_length() -> None:
    shown = outputs("sr4_100g")
    row(shown, TRANSCEIVER, "Ethernet1/2")["len_cu"] = "100"  # SFF-8636 byte 146 on an optic
    port = read("sr4_100g", shown)
    assert port.module is not None and port.module.cable_m is None
    assert "module.cable_m" not in port.unknown


def test_empty_cage_is_absent_not_unknown() -> None:
    port = read("empty_cage")
    assert (port.present, port.module, port.diagnostics) == (False, None, None)
    assert not {"present", "module", "diagnostics", "module.media"} & set(port.unknown)
    assert port.unknown["speed_mbps"] == "the link is down: no trained speed"
    assert port.unknown["fec"] == "NX-OS states oper FEC 'auto': no FEC in operation (the " \
                                  "link is not up)"
    assert port.unknown["last_change_s"].startswith("NX-OS states the link never flapped")
    assert set(port.unknown) == ALWAYS | {"speed_mbps", "fec", "last_change_s"}


def test_release_without_fec_state_leaves_fec_and_counters_unknown() -> None:
    port = read("no_fec_state")
    assert port.fec is None and port.fec_counters is None
    assert port.unknown["fec"].startswith("NX-OS states no eth_oper_fec_state")
    assert {port.unknown[key] for key in FEC_KEYS} == {phy.NO_FEC_COUNTERS}
    assert port.module is not None and port.module.media is Media.LR
    assert port.last_change_s == 29 * 7 * 86_400 + 86_400  # 29week(s) 1day(s)
    assert port.speed_mbps == 100_000


def test_degraded_optic_shows_its_low_lane() -> None:
    port = read("degraded")
    assert port.diagnostics is not None
    rx = [lane.rx_power_dbm for lane in port.diagnostics.lanes]
    low = port.diagnostics.thresholds["rx_power_dbm"].low_alarm
    assert low is not None
    assert [i for i, value in enumerate(rx) if value is not None and value < low] == [2]
    assert port.diagnostics.temperature_c == 47.9
    # NX-OS JSON states no codeword counters: the lost codewords are not readable here
    assert port.fec_counters is None
    assert port.unknown["fec_counters.uncorrectable"] == phy.NO_FEC_COUNTERS
    assert port.last_change_s == 2_530.0  # 00:42:10


def test_recent_flap_is_aged() -> None:
    port = read("flapped")
    assert port.last_change_s == 95.0  # 00:01:35
    assert port.flaps is None and port.unknown["flaps"] == phy.NO_FLAP_COUNT


# ---- commands and ports missing ------------------------------------------------------------


def without(case: str, *commands: str) -> dict[str, Any]:
    return {c: v for c, v in outputs(case).items() if c not in commands}


def test_without_show_interface_the_link_facts_are_unknown() -> None:
    port = read("dr4_400g", without("dr4_400g", INTERFACES))
    for key in ("flaps", "last_change_s", "speed_mbps", "fec"):
        assert port.unknown[key] == "'show interface' is not in the outputs (not run, or " \
                                    "not supported on this release)"
    assert port.diagnostics is not None and port.module is not None


def test_without_transceiver_details_the_module_is_unknown() -> None:
    port = read("dr4_400g", without("dr4_400g", TRANSCEIVER))
    assert (port.present, port.module, port.diagnostics) == (None, None, None)
    for key in ("present", "module", "diagnostics"):
        assert port.unknown[key].startswith("'show interface transceiver details' is not in")
    assert port.fec is Fec.RS544


def test_a_port_the_switch_does_not_list_is_unknown_and_says_so() -> None:
    port = read("dr4_400g", port="Ethernet1/9")
    assert port.unknown["present"] == "'show interface transceiver details' lists no " \
                                      "Ethernet1/9"
    assert port.unknown["speed_mbps"] == "'show interface' lists no Ethernet1/9"
    assert port.present is None and port.speed_mbps is None


def test_several_ports_in_one_read_and_an_empty_cage_among_them() -> None:
    ports = read_ports(outputs("dr4_400g"), ["Ethernet1/1", "Ethernet1/2"], now=NOW)
    assert ports["Ethernet1/1"].present is True
    assert ports["Ethernet1/2"].present is False


# ---- JSON shapes ---------------------------------------------------------------------------


def test_table_as_a_list_of_holders_and_short_names_are_read() -> None:
    shown = outputs("dr4_400g")
    row(shown, TRANSCEIVER, "Ethernet1/1")["interface"] = "Eth1/1"
    for command in COMMANDS:  # TABLE_interface as a list of ROW_interface holders
        shown[command]["TABLE_interface"] = [{"ROW_interface": r} for r in rows(shown[command])]
    port = read("dr4_400g", shown, port="eth1/1")
    assert port.module is not None and port.module.media is Media.DR
    assert port.speed_mbps == 400_000


def test_a_single_lane_row_is_an_object() -> None:
    shown = outputs("sr4_100g")
    entry = row(shown, TRANSCEIVER, "Ethernet1/2")
    entry["TABLE_lane"]["ROW_lane"] = copy.deepcopy(entry["TABLE_lane"]["ROW_lane"][2])
    port = read("sr4_100g", shown)
    assert port.diagnostics is not None
    assert [lane.rx_power_dbm for lane in port.diagnostics.lanes] == [-1.4]


def test_lanes_are_read_in_lane_order() -> None:
    shown = outputs("sr4_100g")
    lanes = row(shown, TRANSCEIVER, "Ethernet1/2")["TABLE_lane"]["ROW_lane"]
    lanes.reverse()
    port = read("sr4_100g", shown)
    assert port.diagnostics is not None
    assert [lane.rx_power_dbm for lane in port.diagnostics.lanes] == [-1.25, -1.02, -1.4, -0.97]


def test_an_optic_whose_dom_reads_nothing_is_unknown() -> None:
    shown = outputs("sr4_100g")
    entry = row(shown, TRANSCEIVER, "Ethernet1/2")
    for lane in entry["TABLE_lane"]["ROW_lane"]:
        for key in list(lane):
            if key != "lane_number" and not key.endswith("_flag"):
                lane[key] = "N/A"
    port = read("sr4_100g", shown)
    assert port.diagnostics is None
    assert port.unknown["diagnostics"].startswith("NX-OS lists no DOM readings")
    del entry["TABLE_lane"]
    assert "diagnostics" in read("sr4_100g", shown).unknown


# ---- ages, speeds, FEC and media names -----------------------------------------------------


@pytest.mark.parametrize(("text", "seconds"), [
    ("00:31:51", 1_911), ("1d02h", 93_600), ("1week(s) 1day(s)", 691_200),
    ("29week(s) 1day(s)", 17_625_600), ("113w5d", 68_774_400),
    ("1year(s) 2week(s)", 32_745_600)])
def test_nxos_ages(text: str, seconds: int) -> None:
    shown = outputs("flapped")
    row(shown, INTERFACES, "Ethernet1/7")["eth_link_flapped"] = text
    assert read("flapped", shown).last_change_s == seconds


@pytest.mark.parametrize(("text", "mbps"), [("400 Gb/s", 400_000), ("1000 Mb/s", 1_000),
                                            ("25 Gb/s", 25_000)])
def test_nxos_speeds(text: str, mbps: int) -> None:
    shown = outputs("flapped")
    row(shown, INTERFACES, "Ethernet1/7")["eth_speed"] = text
    assert read("flapped", shown).speed_mbps == mbps


def test_an_up_link_with_no_speed_leaves_it_unknown() -> None:
    shown = outputs("flapped")
    row(shown, INTERFACES, "Ethernet1/7")["eth_speed"] = "auto-speed"
    port = read("flapped", shown)
    assert port.speed_mbps is None
    assert port.unknown["speed_mbps"] == "NX-OS states eth_speed 'auto-speed' for an up link"
    # and Rs-fec without a speed names no RS code
    assert port.fec is None and "speed that decides it is unknown" in port.unknown["fec"]


@pytest.mark.parametrize(("stated", "fec"), [
    ("Rs-fec", Fec.RS528), ("Kp-fec", Fec.RS544), ("Rs-ieee", Fec.RS528),
    ("Rs-cons16", Fec.RS528), ("Fc-fec", Fec.FC), ("off", Fec.NONE), ("fec-off", Fec.NONE)])
def test_nxos_fec_names(stated: str, fec: Fec) -> None:
    shown = outputs("sr4_100g")
    row(shown, INTERFACES, "Ethernet1/2")["eth_oper_fec_state"] = stated
    assert read("sr4_100g", shown).fec is fec


def test_an_unknown_fec_name_is_named() -> None:
    shown = outputs("sr4_100g")
    row(shown, INTERFACES, "Ethernet1/2")["eth_oper_fec_state"] = "llrs"
    port = read("sr4_100g", shown)
    assert port.fec is None and "'llrs'" in port.unknown["fec"]


@pytest.mark.parametrize(("kind", "media"), [
    ("QSFP-DD-400G-DR4", Media.DR), ("QDD-400G-FR4-S", Media.FR), ("QSFP-100G-SR4-S", Media.SR),
    ("10Gbase-SR", Media.SR), ("QSFP-40G-CSR4", Media.SR), ("QSFP-40/100-SRBD", Media.SR),
    ("CPAK-100G-SR10", Media.SR), ("QSFP-100G-CR4", Media.DAC), ("SFP-H25GB-CU3M", Media.DAC),
    ("QSFP-100G-PCC", Media.DAC), ("QDD-400-CU2M", Media.DAC), ("QSFP-100G-AOC1M", Media.AOC),
    ("QSFP-100G-PSM4-S", Media.DR), ("QSFP-100G-CWDM4-S", Media.FR),
    ("QSFP-100G-SM-SR", Media.FR), ("QDD-400G-DR4-2", Media.FR), ("QSFP-100G-LR4-S", Media.LR),
    ("QSFP-100G-ER4L-S", Media.ER), ("SFP-H10GB-ACU7M", None), ("QDD-400G-ZR-S", None),
    ("SFP-10G-LRM", None), ("1000base-T", None)])
def test_media_of_cisco_types(kind: str, media: Media | None) -> None:
    assert media_of(kind)[0] is media


def test_a_copper_cable_class_names_a_dac() -> None:
    assert media_of("SFP-25G-unknown", "CA-S") == (Media.DAC, "")
    assert media_of("SFP-H10GB-ACU7M")[1].startswith("an active copper cable")


def test_an_unmappable_type_is_named() -> None:
    shown = outputs("sr4_100g")
    row(shown, TRANSCEIVER, "Ethernet1/2")["type"] = "QDD-400G-ZR-S"
    port = read("sr4_100g", shown)
    assert port.module is not None and port.module.media is None
    assert port.module.compliance == "QDD-400G-ZR-S"
    assert port.unknown["module.media"] == ("NX-OS states transceiver type 'QDD-400G-ZR-S', "
                                            "which names no flatfab media")


# ---- malformed values ----------------------------------------------------------------------


def set_rx(shown: dict[str, Any]) -> None:
    row(shown, TRANSCEIVER, "Ethernet1/1")["TABLE_lane"]["ROW_lane"][2]["rx_pwr"] = "low"


def set_speed(shown: dict[str, Any]) -> None:
    row(shown, INTERFACES, "Ethernet1/1")["eth_speed"] = "fast"


def set_age(shown: dict[str, Any]) -> None:
    row(shown, INTERFACES, "Ethernet1/1")["eth_link_flapped"] = "yesterday"


def set_sfp(shown: dict[str, Any]) -> None:
    row(shown, TRANSCEIVER, "Ethernet1/1")["sfp"] = True


def set_table(shown: dict[str, Any]) -> None:
    shown[TRANSCEIVER]["TABLE_interface"] = ["Ethernet1/1"]


def set_reply(shown: dict[str, Any]) -> None:
    shown[INTERFACES] = ["Ethernet1/1"]


def set_name(shown: dict[str, Any]) -> None:
    del rows(shown[INTERFACES])[0]["interface"]


@pytest.mark.parametrize(("change", "message"), [
    (set_rx, "show interface transceiver details: Ethernet1/1: ROW_lane.rx_pwr: "
             "cannot read 'low'"),
    (set_speed, "show interface: Ethernet1/1: eth_speed: cannot read 'fast'"),
    (set_age, "show interface: Ethernet1/1: eth_link_flapped: cannot read 'yesterday'"),
    (set_sfp, "show interface transceiver details: Ethernet1/1: sfp: cannot read True"),
    (set_table, "show interface transceiver details: \\*: TABLE_interface: cannot read "
                "'Ethernet1/1'"),
    (set_reply, "show interface: \\*: \\(reply\\): cannot read \\['Ethernet1/1'\\]"),
    (set_name, "show interface: \\*: ROW_interface\\[0\\].interface: cannot read None")])
def test_malformed_values_name_command_port_and_key(change: Any, message: str) -> None:
    shown = outputs("dr4_400g")
    change(shown)
    with pytest.raises(PhyReadError, match=f"^{message}$"):
        read("dr4_400g", shown)
    assert issubclass(PhyReadError, ValueError)
