"""EOS physical layer (flatfab.platforms.eos.phy) from the eAPI JSON of
tests/fixtures/eos/phy/<case>/ (each file's `source` names its shape; derived, not captured):
what each case reads, what it leaves unknown and why, and the malformed values it refuses."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from flatfab.model.physical import Fec, Media, PortPhysical, Thresholds
from flatfab.platforms.eos import phy
from flatfab.platforms.eos.phy import COMMANDS, PhyReadError, media_of, read_ports
from tests.support.paths import FIXTURES

PHY = FIXTURES / "eos" / "phy"
NOW = 1_760_000_000.0  # the switch's time the fixtures' timestamps are relative to
CASES = {"dr4_400g": "Ethernet1/1", "sr4_100g": "Ethernet2/1", "dac": "Ethernet3/1",
         "empty_slot": "Ethernet4/1", "no_fec_counters": "Ethernet5/1",
         "degraded": "Ethernet6/1", "flapped": "Ethernet7/1"}
POST_FEC = {"fec_counters.post_fec_ber": "'show interfaces phy detail' states no post-FEC BER"}


def outputs(case: str) -> dict[str, dict[str, Any]]:
    """The case's replies keyed by command, as the eAPI returns them (plus `source`)."""
    found = {}
    for command in COMMANDS:
        path = PHY / case / f"{command.replace(' ', '_').replace('-', '_')}.json"
        found[command] = json.loads(path.read_text(encoding="utf-8"))
    return found


def read(case: str, shown: dict[str, dict[str, Any]] | None = None,
         port: str | None = None) -> PortPhysical:
    port = port or CASES[case]
    return read_ports(outputs(case) if shown is None else shown, [port], now=NOW)[port]


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_fixture_names_its_source_and_release(case: str) -> None:
    for command, data in outputs(case).items():
        assert data["source"].startswith("derived from documentation"), (case, command)
        assert data["release"].startswith("EOS 4."), (case, command)


def test_400g_dr4_reads_8_electrical_lanes_4_optical_and_thresholds() -> None:
    port = read("dr4_400g")
    assert port.present is True
    assert port.module is not None
    assert port.module.model_dump() == {
        "form_factor": None, "media": Media.DR, "compliance": "400GBASE-DR4",
        "vendor": "Arista Networks", "part": "OSFP-400G-DR4", "serial": "XKT2250A0101",
        "cable_m": None}
    assert (port.speed_mbps, port.lanes, port.fec) == (400_000, 8, Fec.RS544)
    diag = port.diagnostics
    assert diag is not None
    assert (diag.temperature_c, diag.voltage_v) == (41.5, 3.29)
    assert [lane.rx_power_dbm for lane in diag.lanes] == [0.42, 0.31, 0.55, 0.18]
    assert [lane.bias_ma for lane in diag.lanes] == [52.1, 51.8, 53.0, 52.4]
    assert diag.thresholds["rx_power_dbm"] == Thresholds(
        low_alarm=-9.9, low_warning=-8.9, high_warning=4.0, high_alarm=5.0)
    assert set(diag.thresholds) == {"temperature_c", "voltage_v", "bias_ma", "tx_power_dbm",
                                    "rx_power_dbm"}
    assert port.fec_counters is not None
    assert port.fec_counters.model_dump() == {
        "corrected": 18234, "uncorrectable": 0, "symbol_errors": 18380,
        "pre_fec_ber": 2.1e-08, "post_fec_ber": None}
    assert (port.flaps, port.last_change_s) == (2, 864_000.0)
    assert port.unknown == POST_FEC  # EOS states everything else


def test_100g_sr4_generic_reed_solomon_is_rs528_on_25g_lanes() -> None:
    port = read("sr4_100g")
    assert port.module is not None and port.module.media is Media.SR
    assert (port.speed_mbps, port.lanes, port.fec) == (100_000, 4, Fec.RS528)
    assert port.diagnostics is not None and len(port.diagnostics.lanes) == 4
    assert port.unknown == POST_FEC


def test_passive_dac_has_a_length_and_no_diagnostics() -> None:
    port = read("dac")
    assert port.present is True
    assert port.module is not None
    assert (port.module.media, port.module.cable_m) == (Media.DAC, 3.0)
    assert port.diagnostics is None
    assert "states no digital diagnostics" in port.unknown["diagnostics"]
    # pre-FEC BER is read only where EOS gives it: here it does not
    assert port.fec_counters is not None and port.fec_counters.pre_fec_ber is None
    assert port.fec_counters.corrected == 77
    assert set(port.unknown) == {"diagnostics", "fec_counters.pre_fec_ber",
                                 "fec_counters.post_fec_ber"}


def test_a_dac_whose_part_names_no_length_leaves_the_length_unknown() -> None:
    shown = outputs("dac")
    shown["show inventory"]["xcvrSlots"]["3"]["modelName"] = "DAC-QSFP28-3"
    port = read("dac", shown)
    assert port.module is not None and port.module.cable_m is None
    assert "names none" in port.unknown["module.cable_m"]


def test_empty_slot_is_absent_not_unknown() -> None:
    port = read("empty_slot")
    assert (port.present, port.module, port.diagnostics) == (False, None, None)
    assert not {"present", "module", "diagnostics", "module.media"} & set(port.unknown)
    assert (port.flaps, port.last_change_s) == (0, 2_000_000.0)
    assert port.speed_mbps is None
    assert port.unknown["speed_mbps"] == "the link is notPresent: no trained speed"
    assert port.fec is None and port.fec_counters is None
    assert {"fec", "lanes", "fec_counters.corrected"} <= set(port.unknown)


def test_switch_without_fec_counters_keeps_the_fec_mode_and_names_the_gap() -> None:
    port = read("no_fec_counters")
    assert port.fec is Fec.RS544  # from show interfaces error-correction
    assert port.fec_counters is None
    gap = "'show interfaces phy detail' states no FEC block for Ethernet5/1"
    assert port.unknown == {f"fec_counters.{name}": gap for name in phy.FEC_COUNTERS}
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
    assert port.fec_counters.symbol_errors == 9_431_412_897


def test_recent_flap_is_counted_and_aged() -> None:
    port = read("flapped")
    assert (port.flaps, port.last_change_s) == (14, 95.5)
    assert port.fec_counters is not None and port.fec_counters.uncorrectable == 2


# ---- commands missing from the outputs -----------------------------------------------------


def without(case: str, *commands: str) -> dict[str, dict[str, Any]]:
    return {c: v for c, v in outputs(case).items() if c not in commands}


def test_without_show_interfaces_the_link_facts_are_unknown() -> None:
    port = read("dr4_400g", without("dr4_400g", "show interfaces"))
    for key in ("flaps", "last_change_s", "speed_mbps"):
        assert port.unknown[key].startswith("'show interfaces' is not in the outputs")
    # the RS code needs the speed: with none, which RS it is stays unknown
    assert port.fec is None and "speed that decides it is unknown" in port.unknown["fec"]


def test_without_phy_detail_counters_and_lanes_are_unknown() -> None:
    port = read("dr4_400g", without("dr4_400g", "show interfaces phy detail"))
    assert port.fec_counters is None and port.lanes is None
    assert port.unknown["lanes"].startswith("'show interfaces phy detail' is not in")
    assert port.fec is Fec.RS544  # 400G over the default 8 lanes


def test_without_inventory_presence_comes_from_the_dom_readings() -> None:
    port = read("dr4_400g", without("dr4_400g", "show inventory"))
    assert port.present is True
    assert port.module is not None and port.module.vendor is None
    assert port.module.serial == "XKT2250A0101"  # vendorSn of the DOM readings
    empty = read("empty_slot", without("empty_slot", "show inventory"))
    assert empty.present is None and empty.module is None
    assert empty.unknown["present"].startswith("'show inventory' is not in the outputs")


def test_without_any_transceiver_command_diagnostics_are_unknown() -> None:
    port = read("dr4_400g", without("dr4_400g", "show interfaces transceiver detail",
                                    "show interfaces transceiver hardware"))
    assert port.diagnostics is None and "nor 'show interfaces transceiver'" in \
        port.unknown["diagnostics"]
    assert port.module is not None and port.module.media is None
    assert port.unknown["module.media"] == "EOS states no media type for cage 1"


def test_the_brief_transceiver_form_gives_readings_without_thresholds() -> None:
    shown = without("dr4_400g", "show interfaces transceiver detail")
    brief = copy.deepcopy(outputs("dr4_400g")["show interfaces transceiver detail"])
    for entry in brief["interfaces"].values():
        del entry["details"]
    shown["show interfaces transceiver"] = brief
    port = read("dr4_400g", shown)
    assert port.diagnostics is not None
    assert len(port.diagnostics.lanes) == 4 and port.diagnostics.thresholds == {}


def test_without_error_correction_the_phy_encoding_gives_the_fec() -> None:
    port = read("sr4_100g", without("sr4_100g", "show interfaces error-correction"))
    assert port.fec is Fec.RS528
    none = read("no_fec_counters", without("no_fec_counters",
                                           "show interfaces error-correction"))
    assert none.fec is None and none.unknown["fec"] == "EOS states no FEC encoding for " \
        "Ethernet5/1"


# ---- media and FEC names -------------------------------------------------------------------


@pytest.mark.parametrize(("text", "media"), [
    ("400GBASE-DR4", Media.DR), ("100GBASE-SR4", Media.SR), ("10GBASE-SRL", Media.SR),
    ("100GBASE-CR4", Media.DAC), ("400GBASE-CR8", Media.DAC), ("40GBASE-AR4", Media.AOC),
    ("100GBASE-AR4", Media.AOC), ("400GBASE-2FR4", Media.FR), ("100GBASE-CWDM4", Media.FR),
    ("100GBASE-PSM4", Media.DR), ("100GBASE-LR4", Media.LR), ("100GBASE-ER4", Media.ER),
    ("100GBASE-LRL4", None), ("400GBASE-XDR4", None), ("100GBASE-ZR4", None),
    ("100G-DWDM-E", None), ("1000BASE-T", None), ("Unknown", None)])
def test_media_of_eos_media_types(text: str, media: Media | None) -> None:
    assert media_of(text) is media


def test_an_unmappable_media_type_is_named() -> None:
    shown = outputs("sr4_100g")
    for entry in shown["show interfaces transceiver hardware"]["interfaces"].values():
        entry["detectedMediaType"] = entry["mediaType"] = "100G-DWDM-E"
    port = read("sr4_100g", shown)
    assert port.module is not None and port.module.media is None
    assert port.module.compliance == "100G-DWDM-E"
    assert port.unknown["module.media"] == ("EOS states media type '100G-DWDM-E', which "
                                            "names no flatfab media")


@pytest.mark.parametrize(("stated", "fec"), [
    ("reedSolomon544", Fec.RS544), ("fireCode", Fec.FC), ("disabled", Fec.NONE),
    ("reed-solomon", Fec.RS528), ("fire-code", Fec.FC)])
def test_eos_fec_names(stated: str, fec: Fec) -> None:
    shown = outputs("sr4_100g")
    shown["show interfaces error-correction"]["interfaceErrCorrStatuses"]["Ethernet2/1"][
        "errCorrEncodingStatus"] = stated
    assert read("sr4_100g", shown).fec is fec


def test_an_unknown_fec_name_is_named() -> None:
    shown = outputs("sr4_100g")
    shown["show interfaces error-correction"]["interfaceErrCorrStatuses"]["Ethernet2/1"][
        "errCorrEncodingStatus"] = "llrs"
    port = read("sr4_100g", shown)
    assert port.fec is None and "'llrs'" in port.unknown["fec"]


def test_a_broken_out_cage_gives_each_port_its_own_lanes() -> None:
    ports = read_ports(outputs("dr4_400g"), ["Ethernet1/1", "Ethernet1/3"], now=NOW)
    first, second = ports["Ethernet1/1"].diagnostics, ports["Ethernet1/3"].diagnostics
    assert first is not None and second is not None
    assert [lane.rx_power_dbm for lane in first.lanes] == [0.42, 0.31]
    assert [lane.rx_power_dbm for lane in second.lanes] == [0.55, 0.18]


# ---- malformed values ----------------------------------------------------------------------


def set_rx(shown: dict[str, Any]) -> None:
    shown["show interfaces transceiver detail"]["interfaces"]["Ethernet1/3"]["rxPower"] = "low"


def set_flaps(shown: dict[str, Any]) -> None:
    shown["show interfaces"]["interfaces"]["Ethernet1/1"]["interfaceCounters"][
        "linkStatusChanges"] = -1


def set_codewords(shown: dict[str, Any]) -> None:
    shown["show interfaces phy detail"]["interfacePhyStatuses"]["Ethernet1/1"][
        "phyStatuses"][0]["fec"]["uncorrectedCodewords"]["value"] = 1.5


def set_bandwidth(shown: dict[str, Any]) -> None:
    shown["show interfaces"]["interfaces"]["Ethernet1/1"]["bandwidth"] = True


def set_table(shown: dict[str, Any]) -> None:
    shown["show inventory"]["xcvrSlots"] = ["1"]


@pytest.mark.parametrize(("change", "message"), [
    (set_rx, "show interfaces transceiver detail: Ethernet1/1: rxPower: cannot read 'low'"),
    (set_flaps, "show interfaces: Ethernet1/1: interfaceCounters.linkStatusChanges: "
                "cannot read -1"),
    (set_codewords, "show interfaces phy detail: Ethernet1/1: "
                    "fec.uncorrectedCodewords.value: cannot read 1.5"),
    (set_bandwidth, "show interfaces: Ethernet1/1: bandwidth: cannot read True"),
    (set_table, "show inventory: \\*: xcvrSlots: cannot read \\['1'\\]")])
def test_malformed_values_name_command_port_and_key(change: Any, message: str) -> None:
    shown = outputs("dr4_400g")
    change(shown)
    with pytest.raises(PhyReadError, match=f"^{message}$"):
        read("dr4_400g", shown)
    assert issubclass(PhyReadError, ValueError)


def test_a_codeword_total_past_a_floats_precision_stays_exact() -> None:
    shown = outputs("dr4_400g")
    shown["show interfaces phy detail"]["interfacePhyStatuses"]["Ethernet1/1"][
        "phyStatuses"][0]["fec"]["correctedCodewords"]["value"] = 2**60 + 1
    port = read("dr4_400g", shown)
    assert port.fec_counters is not None and port.fec_counters.corrected == 2**60 + 1
