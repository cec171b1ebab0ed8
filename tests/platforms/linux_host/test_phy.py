"""A ConnectX port's physical layer read from ethtool and sysfs (flatfab.platforms.linux_host.phy):
the fixture cases of tests/fixtures/linux_host/phy (derived from documentation, never captured),
what is not stated named in `unknown` and never read as zero, and bad output named."""

from __future__ import annotations

import math
from typing import Any

import pytest

from flatfab.model.physical import CORRECTION_LIMIT, Fec, Media, PortPhysical
from flatfab.platforms.linux_host import phy
from tests.support.paths import FIXTURES

CASES = FIXTURES / "linux_host" / "phy"


def _outputs(case: str) -> dict[str, str]:
    return {key: (CASES / case / f"{key}.txt").read_text(encoding="utf-8")
            for key in phy.COMMANDS}


def _read(case: str, **replaced: str) -> PortPhysical:
    return phy.read_port({**_outputs(case), **replaced})


def _field(port: PortPhysical, dotted: str) -> Any:
    value: Any = port
    for name in dotted.split("."):
        value = getattr(value, name, None) if value is not None else None
    return value


def _settings(speed: str, lanes: int | None) -> str:
    return (f"Settings for eth1:\n\tSpeed: {speed}\n"
            + (f"\tLanes: {lanes}\n" if lanes is not None else "") + "\tLink detected: yes\n")


def _fec(active: str) -> str:
    return ("FEC parameters for eth1:\nSupported/Configured FEC encodings: RS\n"
            f"Active FEC encoding: {active}\n")


# ---- the commands --------------------------------------------------------------------------

def test_commands_are_read_only_and_quote_the_nic() -> None:
    assert phy.commands("eth1") == {
        "settings": "ethtool eth1",
        "module": "ethtool -m eth1",
        "fec": "ethtool --show-fec eth1",
        "fec_stats": "ethtool -I --show-fec eth1",
        "stats": "ethtool -S eth1",
        "carrier_changes": "cat /sys/class/net/eth1/carrier_changes",
    }
    assert phy.commands("eth$(reboot)")["module"] == "ethtool -m 'eth$(reboot)'"
    for name in ("", "..", "../../etc", "eth 1"):
        with pytest.raises(ValueError, match="not a network interface name"):
            phy.commands(name)


# ---- the fixture cases ---------------------------------------------------------------------

def test_cmis_400g_dr4_osfp() -> None:
    port = _read("cmis_400g_dr4")
    assert port.present is True
    module = port.module
    assert module is not None
    assert (module.form_factor, module.media, module.compliance) == ("OSFP", Media.DR,
                                                                   "1310 nm EML")
    assert (module.vendor, module.part, module.serial) == ("NVIDIA", "MMS4X00-NS400",
                                                           "MT2409FT02118")
    assert module.cable_m is None and "module.cable_m" not in port.unknown  # an optic
    diag = port.diagnostics
    assert diag is not None
    assert (diag.temperature_c, diag.voltage_v) == (47.31, 3.2912)
    # ethtool prints 8 channels (one CMIS bank); a DR4 lights 4: the dark 5-8 are no lanes
    assert [lane.rx_power_dbm for lane in diag.lanes] == [0.90, 0.70, 1.00, 0.75]
    assert [lane.tx_power_dbm for lane in diag.lanes] == [1.80, 1.70, 1.90, 1.75]
    assert [lane.bias_ma for lane in diag.lanes] == [58.212, 57.904, 59.118, 58.630]
    assert diag.thresholds["rx_power_dbm"].model_dump() == {
        "low_alarm": -11.0, "low_warning": -10.0, "high_warning": 5.5, "high_alarm": 6.5}
    assert diag.thresholds["tx_power_dbm"].low_alarm == -7.5
    assert diag.thresholds["bias_ma"].high_alarm == 100.0
    assert diag.thresholds["temperature_c"].high_alarm == 80.0
    assert diag.thresholds["voltage_v"].low_alarm == 2.97
    # 400G on 4 lanes is 100G PAM4 a lane: ethtool's "RS" is RS(544,514)
    assert (port.speed_mbps, port.lanes, port.fec) == (400_000, 4, Fec.RS544)
    counters = port.fec_counters
    assert counters is not None
    assert (counters.corrected, counters.uncorrectable, counters.symbol_errors) == (
        40588239, 0, 0)
    assert counters.pre_fec_ber is None
    assert "rx_bits_phy" in port.unknown["fec_counters.pre_fec_ber"]
    assert port.flaps == 2
    assert set(port.unknown) == {"fec_counters.pre_fec_ber", "fec_counters.post_fec_ber",
                                 "last_change_s"}


def test_sff8636_100g_sr4_qsfp28() -> None:
    port = _read("sff8636_100g_sr4")
    module = port.module
    assert module is not None
    assert (module.form_factor, module.media) == ("QSFP28", Media.SR)
    assert module.compliance == "100G Ethernet: 100G Base-SR4 or 25GBase-SR"
    assert (module.vendor, module.part, module.serial) == ("Mellanox", "MMA1B00-C100D",
                                                           "MT2117FT05431")
    # "Length (Copper or Active cable) : 50m" is an optic's OM4 reach, not a cable
    assert module.cable_m is None
    diag = port.diagnostics
    assert diag is not None and len(diag.lanes) == 4
    # ethtool before 6.14 prints "Rcvr signal avg optical power(Channel N)", no blank
    assert [lane.rx_power_dbm for lane in diag.lanes] == [-1.30, -1.60, -1.10, -1.40]
    assert [lane.tx_power_dbm for lane in diag.lanes] == [-0.63, -0.80, -0.50, -0.70]
    assert diag.thresholds["rx_power_dbm"].low_alarm == -13.5
    assert diag.thresholds["bias_ma"].model_dump() == {
        "low_alarm": 2.0, "low_warning": 3.0, "high_warning": 10.5, "high_alarm": 12.0}
    # 100G on 4 lanes is 25G NRZ a lane: RS(528,514)
    assert (port.speed_mbps, port.lanes, port.fec) == (100_000, 4, Fec.RS528)
    assert port.fec_counters is not None
    assert (port.fec_counters.corrected, port.fec_counters.uncorrectable) == (5824, 0)
    assert port.flaps == 4


@pytest.mark.parametrize(("case", "form_factor", "cable_m", "lanes"), [
    ("sff8636_200g_dac", "QSFP28", 3.0, 4),  # QSFP56 states 0x11, "QSFP28 or later"
    ("cmis_400g_dac", "QSFP-DD", 2.0, 8),
])
def test_passive_dac_states_its_length_and_no_diagnostics(case: str, form_factor: str,
                                                         cable_m: float, lanes: int) -> None:
    port = _read(case)
    module = port.module
    assert module is not None
    assert (module.form_factor, module.media, module.cable_m) == (form_factor, Media.DAC,
                                                                  cable_m)
    # SFF-8636 prints "0.00 degrees C" and "0.0000 V" for a cable without monitors: no reading
    assert port.diagnostics is None
    assert port.unknown["diagnostics"] == phy.PASSIVE_COPPER
    # 50G PAM4 lanes either way (200G/4, 400G/8): RS(544,514)
    assert (port.lanes, port.fec) == (lanes, Fec.RS544)


def test_cmis_dac_with_rx_bits_phy_has_its_pre_fec_ber() -> None:
    counters = _read("cmis_400g_dac").fec_counters
    assert counters is not None
    assert counters.pre_fec_ber == pytest.approx(90511 / 2304000000000000)


def test_an_empty_cage_is_not_stated_as_absent() -> None:
    port = _read("no_module")
    assert (port.present, port.module, port.diagnostics) == (None, None, None)
    for fact in ("present", "module", "diagnostics"):
        assert "'netlink error: Input/output error'" in port.unknown[fact]
    assert (port.speed_mbps, port.lanes, port.fec) == (None, None, None)
    assert "Speed: Unknown!" in port.unknown["speed_mbps"]
    assert "no Lanes line" in port.unknown["lanes"]
    assert "Active FEC encoding: None" in port.unknown["fec"]
    assert port.flaps == 1


def test_a_driver_without_fec_statistics() -> None:
    port = _read("no_fec_stats")
    assert port.fec is Fec.RS528
    assert port.fec_counters is None  # nothing stated: no counters, never zeros
    for fact in ("corrected", "uncorrectable"):
        assert "prints no Statistics" in port.unknown[f"fec_counters.{fact}"]
    assert "rx_pcs_symbol_err_phy" in port.unknown["fec_counters.symbol_errors"]
    assert "no corrected bits" in port.unknown["fec_counters.pre_fec_ber"]
    module = port.module
    assert module is not None
    assert (module.media, module.cable_m) == (Media.AOC, 10.0)
    diag = port.diagnostics
    assert diag is not None and len(diag.lanes) == 4 and diag.thresholds == {}
    assert "no alarm or warning thresholds" in port.unknown["diagnostics.thresholds"]


def test_a_degraded_optic() -> None:
    port = _read("cmis_400g_dr4_degraded")
    module, diag, counters = port.module, port.diagnostics, port.fec_counters
    assert module is not None and diag is not None and counters is not None
    assert module.form_factor == "OSFP"
    assert module.media is Media.DR  # "Length (SMF) : 0.50km" of ethtool 6.1
    rx = [lane.rx_power_dbm for lane in diag.lanes]
    assert rx == [0.55, 0.40, -12.00, 0.65]
    low_alarm = diag.thresholds["rx_power_dbm"].low_alarm
    assert low_alarm is not None
    assert [value < low_alarm for value in rx if value is not None] == [False, False, True,
                                                                        False]
    # rx_corrected_bits_phy / rx_bits_phy, averaged since the counters were cleared
    ber = counters.pre_fec_ber
    assert ber == pytest.approx(1209600000000 / 11520000000000000)
    assert ber is not None and ber > CORRECTION_LIMIT[Fec.RS544] / 10
    assert (counters.corrected, counters.uncorrectable, counters.symbol_errors) == (
        301223551870, 37, 412)
    assert port.flaps == 14


@pytest.mark.parametrize("case", sorted(path.name for path in CASES.iterdir()))
def test_what_is_unknown_is_none_and_has_a_reason(case: str) -> None:
    port = _read(case)
    assert port.unknown
    for fact, why in port.unknown.items():
        assert why and _field(port, fact) in (None, {}), fact  # thresholds: an empty dict
        assert "\n" not in why


# ---- media ---------------------------------------------------------------------------------

@pytest.mark.parametrize(("stated", "media"), [
    ("100GBASE-SR4", Media.SR), ("400GBASE-DR4", Media.DR), ("Copper cable", Media.DAC),
    ("Active Optical Cable", Media.AOC), ("100G AOC", Media.AOC),
    ("200GBASE-CR4", Media.DAC), ("Passive copper cable", Media.DAC),
    ("100G Ethernet: 100G Base-LR4", Media.LR), ("100G Ethernet: 100G CWDM4 MSA with FEC",
                                                 Media.FR),
    ("100G Ethernet: 100G PSM4 Parallel SMF", Media.DR), ("400GBASE-FR4", Media.FR),
    ("100G Ethernet: 100G Base-ER4", Media.ER),
    ("Copper cable, passive equalized", Media.DAC),
    # active copper is no media flatfab models; two reach classes are no one media
    ("Copper cable, linear active equalizers", None),
    ("100G Ethernet: 100G ACC or 25GAUI C2M ACC with worst BER of 5x10^(-5)", None),
    ("50GBASE-FR or 200GBASE-DR4", None), ("10G Ethernet: 10G Base-LRM", None),
    ("(reserved or unknown)", None),
])
def test_media_of_a_stated_compliance(stated: str, media: Media | None) -> None:
    assert phy.media_of(stated) is media


def test_an_unmapped_cmis_technology_is_named() -> None:
    module = _outputs("cmis_400g_dr4")["module"].replace("0x06 (1310 nm EML)",
                                                         "0x08 (Others/Undefined)")
    port = _read("cmis_400g_dr4", module=module)
    assert port.module is not None and port.module.media is None
    assert "'Others/Undefined'" in port.unknown["module.media"]


def test_two_reach_classes_are_named() -> None:
    module = _outputs("sff8636_100g_sr4")["module"].replace(
        "100G Ethernet: 100G Base-SR4 or 25GBase-SR", "50GBASE-FR or 200GBASE-DR4")
    port = _read("sff8636_100g_sr4", module=module)
    assert port.module is not None and port.module.media is None
    assert "more than one reach class" in port.unknown["module.media"]


# ---- FEC -----------------------------------------------------------------------------------

@pytest.mark.parametrize(("active", "speed", "lanes", "fec"), [
    ("RS", "100000Mb/s", 4, Fec.RS528),  # 4 x 25G NRZ
    ("RS", "100000Mb/s", 2, Fec.RS544),  # 2 x 50G PAM4
    ("RS", "200000Mb/s", 4, Fec.RS544),
    ("RS", "400000Mb/s", 8, Fec.RS544),
    ("RS", "25000Mb/s", 1, Fec.RS528),
    ("RS", "400000Mb/s", None, Fec.RS544),  # every 400G lane count is PAM4
    ("RS", "25000Mb/s", None, Fec.RS528),
    ("BaseR", "25000Mb/s", 1, Fec.FC),
    ("Off", "100000Mb/s", 4, Fec.NONE),
])
def test_the_fec_mode_by_lane_rate(active: str, speed: str, lanes: int | None,
                                   fec: Fec) -> None:
    port = _read("sff8636_100g_sr4", settings=_settings(speed, lanes), fec=_fec(active))
    assert port.fec is fec
    assert "fec" not in port.unknown


@pytest.mark.parametrize(("active", "speed", "lanes", "reason"), [
    ("RS", "100000Mb/s", None, "no lane count"),  # 4 x 25G or 2 x 50G: either code
    ("RS", "Unknown!", None, "no speed"),
    ("LLRS", "100000Mb/s", 2, "RS(272,257+1)"),
    ("None", "100000Mb/s", 4, "Active FEC encoding: None"),
    ("Auto", "100000Mb/s", 4, "not the FEC encoding in use"),
    ("BIT99", "100000Mb/s", 4, "'BIT99'"),
])
def test_a_fec_mode_not_modelled_is_named(active: str, speed: str, lanes: int | None,
                                          reason: str) -> None:
    port = _read("sff8636_100g_sr4", settings=_settings(speed, lanes), fec=_fec(active))
    assert port.fec is None
    assert reason in port.unknown["fec"]


def test_the_fec_mode_comes_from_the_statistics_read_when_show_fec_fails() -> None:
    port = _read("sff8636_100g_sr4", fec="netlink error: Operation not supported\n")
    assert port.fec is Fec.RS528


@pytest.mark.parametrize("statistics", [
    "Statistics:\n  corrected_blocks: 1200\n    Lane 0: 300\n    Lane 1: 300\n"
    "    Lane 2: 300\n    Lane 3: 300\n  uncorrectable_blocks: 3\n    Lane 0: 3\n",
    "Statistics:\n  corrected_blocks: 1200 [ per_lane: 300, 300, 300, 300 ]\n"
    "  uncorrectable_blocks: 3 [ per_lane: 3, 0, 0, 0 ]\n",
    "Statistics:\n  corrected_blocks: 1200  uncorrectable_blocks: 3\n",  # no newline between
])
def test_fec_statistics_totals_in_each_ethtool_layout(statistics: str) -> None:
    port = _read("sff8636_100g_sr4", fec_stats=_fec("RS") + statistics)
    assert port.fec_counters is not None
    assert (port.fec_counters.corrected, port.fec_counters.uncorrectable) == (1200, 3)


# ---- output that says nothing, and output that is wrong ------------------------------------

@pytest.mark.parametrize(("text", "said"), [
    ("Cannot get module EEPROM information: Operation not supported\n",
     "'Cannot get module EEPROM information: Operation not supported'"),
    ("", "printed nothing"),
    ("Offset\t\tValues\n------\t\t------\n0x0000:\t\t19 00 00\n", "'Offset\\t\\tValues'"),
])
def test_a_module_not_read_is_named(text: str, said: str) -> None:
    port = _read("cmis_400g_dr4", module=text)
    assert port.present is None and port.module is None
    assert said in port.unknown["present"]


def test_the_form_factor_is_the_identifier_code_whatever_its_name() -> None:
    module = _outputs("cmis_400g_dr4")["module"].replace("OSFP 8X Pluggable Transceiver",
                                                         "reserved or unknown")
    port = _read("cmis_400g_dr4", module=module)
    assert port.module is not None and port.module.form_factor == "OSFP"  # SFF-8024 0x19


def test_identifier_zero_states_no_module() -> None:
    text = "\tIdentifier                                : 0x00 (no module present, unknown, " \
           "or unspecified)\n"
    port = _read("cmis_400g_dr4", module=text)
    assert port.present is None
    assert "Identifier 0x00" in port.unknown["present"]


def test_a_command_not_run_printed_nothing() -> None:
    outputs = _outputs("sff8636_100g_sr4")
    del outputs["carrier_changes"]
    port = phy.read_port(outputs)
    assert port.flaps is None
    assert port.unknown["flaps"] == ("`cat /sys/class/net/<nic>/carrier_changes` printed "
                                     "nothing")


def test_carrier_changes_not_readable_is_named() -> None:
    said = "cat: /sys/class/net/eth9/carrier_changes: No such file or directory\n"
    port = _read("sff8636_100g_sr4", carrier_changes=said)
    assert port.flaps is None and "No such file" in port.unknown["flaps"]


def test_receiver_oma_is_not_read_as_average_power() -> None:
    module = _outputs("sff8636_100g_sr4")["module"].replace("Rcvr signal avg optical power",
                                                            "Receiver signal OMA")
    port = _read("sff8636_100g_sr4", module=module)
    assert port.diagnostics is not None
    assert all(lane.rx_power_dbm is None for lane in port.diagnostics.lanes)
    assert "OMA" in port.unknown["diagnostics.rx_power_dbm"]


def test_a_dark_lane_in_use_is_kept() -> None:
    module = _outputs("cmis_400g_dr4_degraded")["module"].replace(
        "0.0631 mW / -12.00 dBm", "0.0000 mW / -inf dBm")
    diag = _read("cmis_400g_dr4_degraded", module=module).diagnostics
    assert diag is not None and len(diag.lanes) == 4
    assert diag.lanes[2].rx_power_dbm == -math.inf  # no light: below every threshold


def test_a_module_dark_on_every_lane_keeps_them_all() -> None:
    text = _outputs("cmis_400g_dr4")["module"]
    for old in ("58.212 mA", "57.904 mA", "59.118 mA", "58.630 mA", "1.5136 mW / 1.80 dBm",
                "1.4791 mW / 1.70 dBm", "1.5488 mW / 1.90 dBm", "1.4962 mW / 1.75 dBm",
                "1.2303 mW / 0.90 dBm", "1.1749 mW / 0.70 dBm", "1.2589 mW / 1.00 dBm",
                "1.1885 mW / 0.75 dBm"):
        dark = "0.000 mA" if old.endswith("mA") else "0.0000 mW / -inf dBm"
        text = text.replace(old, dark)
    diag = _read("cmis_400g_dr4", module=text).diagnostics
    assert diag is not None and len(diag.lanes) == 8


@pytest.mark.parametrize(("key", "old", "new", "line"), [
    ("settings", "Speed: 100000Mb/s", "Speed: fast", "Speed: fast"),
    ("settings", "Lanes: 4", "Lanes: four", "Lanes: four"),
    ("module", "3.2718 V", "3.27x V", "Module voltage : 3.27x V"),
    ("module", "0.7413 mW / -1.30 dBm", "0.74l3 mW / -1.30 dBm",
     "Rcvr signal avg optical power (Channel 1) : 0.74l3 mW / -1.30 dBm"),
    ("module", "12.000 mA", "12.000 uA",
     "Laser bias current high alarm threshold : 12.000 uA"),
    ("module", "0x11 (QSFP28)", "11 (QSFP28)", "Identifier : 11 (QSFP28)"),
    ("fec_stats", "corrected_blocks: 5824", "corrected_blocks: lots", "corrected_blocks: lots"),
    ("stats", "rx_corrected_bits_phy: 6107", "rx_corrected_bits_phy: -1",
     "rx_corrected_bits_phy: -1"),
    ("carrier_changes", "4", "4a", "4a"),
])
def test_malformed_output_names_the_command_and_the_line(key: str, old: str, new: str,
                                                         line: str) -> None:
    text = _outputs("sff8636_100g_sr4")[key]
    assert old in text
    command = phy.COMMANDS[key].format(nic="<nic>")
    with pytest.raises(phy.PhyReadError) as raised:
        _read("sff8636_100g_sr4", **{key: text.replace(old, new, 1)})
    message = str(raised.value)
    assert message.startswith(f"`{command}`: cannot read ")
    assert repr(line) in message and "\n" not in message
