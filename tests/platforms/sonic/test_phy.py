"""SONiC's physical layer of a port (flatfab.platforms.sonic.phy) against each release's shape.

Fixtures: tests/fixtures/sonic/phy/*.json, one port's redis hashes by table name, derived from
SONiC's design docs and code (never captured; each file's `source` names them). What a hash does
not state must come back None with a reason in `unknown`, never as zero.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from flatfab.model.physical import Fec, Media, PortPhysical
from flatfab.platforms.sonic.collect import _db_hash
from flatfab.platforms.sonic.phy import PhyReadError, commands, media_of, read_port

PHY = Path(__file__).resolve().parents[2] / "fixtures" / "sonic" / "phy"
MAY_2025 = datetime(2025, 5, 19, 10, 0, 0, tzinfo=UTC).timestamp()
JUNE_2024 = datetime(2024, 6, 27, 15, 0, 0, tzinfo=UTC).timestamp()
TABLES = ("TRANSCEIVER_INFO", "TRANSCEIVER_DOM_SENSOR", "TRANSCEIVER_DOM_THRESHOLD",
          "APPL_PORT", "CONFIG_PORT", "COUNTERS", "RATES")


def fixture(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((PHY / name).read_text(encoding="utf-8"))
    return data


def tables(name: str) -> dict[str, dict[str, str]]:
    return {k: v for k, v in fixture(name).items() if k in TABLES}


def read(name: str, now: float = MAY_2025, **changes: dict[str, str]) -> PortPhysical:
    """The fixture's port, with `changes` laid over its tables (field -> value)."""
    found = tables(name)
    for table, fields in changes.items():
        found[table] = {**found.get(table, {}), **fields}
    return read_port(fixture(name)["port"], found, now=now)


def field_of(port: PortPhysical, path: str) -> object:
    value: object = port
    for part in path.split("."):
        value = getattr(value, part) if value is not None else None
    return value


FIXTURES = sorted(p.name for p in PHY.glob("*.json"))


def test_every_fixture_names_its_source_and_release() -> None:
    assert len(FIXTURES) >= 6
    for name in FIXTURES:
        data = fixture(name)
        assert "derived from documentation" in data["source"], name
        assert data["release"].isdigit(), name
        assert set(data) - {"source", "release", "port", "oid"} <= set(TABLES), name


@pytest.mark.parametrize("name", FIXTURES)
def test_what_is_not_stated_is_none_with_a_reason_never_zero(name: str) -> None:
    port = read(name, now=JUNE_2024 if "2024" in name else MAY_2025)
    for path, why in port.unknown.items():
        assert field_of(port, path) is None, (name, path)
        assert why and "\n" not in why, (name, path)


@pytest.mark.parametrize("name", FIXTURES)
def test_the_fixture_reads_through_sonic_db_cli_text(name: str) -> None:
    """What `sonic-db-cli ... HGETALL` prints (a dict literal) reads as the fixture does."""
    printed = {table: repr(row) for table, row in tables(name).items()}
    parsed = {table: _db_hash(text, table) for table, text in printed.items()}
    port = fixture(name)["port"]
    assert read_port(port, parsed, now=MAY_2025) == read_port(port, tables(name), now=MAY_2025)


# --- commands --------------------------------------------------------------------------------

def test_commands_read_each_hash_of_the_port() -> None:
    found = commands("Ethernet0", "oid:0x1000000000002")
    assert found == {
        "TRANSCEIVER_INFO": "sonic-db-cli STATE_DB HGETALL 'TRANSCEIVER_INFO|Ethernet0'",
        "TRANSCEIVER_DOM_SENSOR":
            "sonic-db-cli STATE_DB HGETALL 'TRANSCEIVER_DOM_SENSOR|Ethernet0'",
        "TRANSCEIVER_DOM_THRESHOLD":
            "sonic-db-cli STATE_DB HGETALL 'TRANSCEIVER_DOM_THRESHOLD|Ethernet0'",
        "APPL_PORT": "sonic-db-cli APPL_DB HGETALL 'PORT_TABLE:Ethernet0'",
        "CONFIG_PORT": "sonic-db-cli CONFIG_DB HGETALL 'PORT|Ethernet0'",
        "COUNTERS": "sonic-db-cli COUNTERS_DB HGETALL 'COUNTERS:oid:0x1000000000002'",
        "RATES": "sonic-db-cli COUNTERS_DB HGETALL 'RATES:oid:0x1000000000002'",
    }
    assert all("HGETALL" in c and " HSET" not in c and " DEL" not in c for c in found.values())


def test_commands_without_an_oid_read_no_counters() -> None:
    assert set(commands("Ethernet8", None)) == {"TRANSCEIVER_INFO", "TRANSCEIVER_DOM_SENSOR",
                                               "TRANSCEIVER_DOM_THRESHOLD", "APPL_PORT",
                                               "CONFIG_PORT"}


def test_commands_quote_what_the_shell_would_read() -> None:
    found = commands("Eth'1; rm -rf /", None)["CONFIG_PORT"]
    assert found == "sonic-db-cli CONFIG_DB HGETALL 'PORT|Eth'\"'\"'1; rm -rf /'"
    with pytest.raises(ValueError):
        commands("", None)


# --- per release -----------------------------------------------------------------------------

def test_cmis_400g_dr4_202505() -> None:
    port = read("cmis_400g_dr4_202505.json")
    assert port.present is True and port.virtual is False
    module = port.module
    assert module is not None
    assert (module.form_factor, module.media, module.compliance) == (
        "QSFP-DD", Media.DR, "400GBASE-DR4 (Cl 124)")
    assert (module.vendor, module.part, module.serial) == (
        "EXAMPLE OPTICS", "XQD-400G-DR4-S", "FFX2231A0K7")
    assert module.cable_m is None  # an optic: CMIS's "0.0" assembly length is no cable
    diag = port.diagnostics
    assert diag is not None
    assert (diag.temperature_c, diag.voltage_v) == (41.2, 3.281)
    # CMIS posts 8 lanes; the module states 4 media lanes (5-8 read 0 mW)
    assert [lane.rx_power_dbm for lane in diag.lanes] == [-1.521, -1.804, -1.337, -2.012]
    assert [lane.tx_power_dbm for lane in diag.lanes] == [1.203, 1.118, 1.342, 0.987]
    assert [lane.bias_ma for lane in diag.lanes] == [52.314, 51.902, 53.118, 52.64]
    rx = diag.thresholds["rx_power_dbm"]
    assert (rx.low_alarm, rx.low_warning, rx.high_warning, rx.high_alarm) == (-9.9, -6.9, 5, 6)
    assert diag.thresholds["temperature_c"].high_alarm == 75
    assert diag.thresholds["voltage_v"].low_warning == 3.17
    assert diag.thresholds["bias_ma"].high_warning == 85
    assert diag.thresholds["tx_power_dbm"].low_alarm == -6.4
    assert (port.speed_mbps, port.lanes, port.fec) == (400_000, 8, Fec.RS544)
    counters = port.fec_counters
    assert counters is not None
    assert (counters.corrected, counters.uncorrectable, counters.symbol_errors) == (
        1_837_261, 0, 1_840_117)
    assert (counters.pre_fec_ber, counters.post_fec_ber) == (2.31e-9, 0.0)
    assert port.flaps == 1
    assert port.last_change_s == 1133  # up at 09:41:07 UTC, read at 10:00:00
    assert port.unknown == {}


def test_degraded_optic_202505() -> None:
    port = read("cmis_400g_dr4_degraded_202505.json")
    diag = port.diagnostics
    assert diag is not None
    rx = diag.thresholds["rx_power_dbm"]
    lane3 = diag.lanes[2].rx_power_dbm
    assert lane3 == -7.612
    assert rx.low_alarm is not None and rx.low_warning is not None
    assert rx.low_alarm < lane3 < rx.low_warning  # a warning, not yet an alarm
    assert all(lane.rx_power_dbm is not None and lane.rx_power_dbm > rx.low_warning
               for i, lane in enumerate(diag.lanes) if i != 2)
    counters = port.fec_counters
    assert counters is not None
    assert counters.uncorrectable == 37
    assert counters.pre_fec_ber == 8.94e-6 and counters.post_fec_ber == 1.17e-10
    assert (port.flaps, port.last_change_s) == (14, 178)  # last up at 09:57:02
    assert port.fec is Fec.RS544 and port.unknown == {}


def test_sff8636_100g_sr4_202012_thresholds_inline() -> None:
    data = tables("sff8636_100g_sr4_202012.json")
    assert "TRANSCEIVER_DOM_THRESHOLD" not in data  # 202012: one sensor hash holds both
    port = read("sff8636_100g_sr4_202012.json")
    module = port.module
    assert module is not None
    assert (module.form_factor, module.media, module.compliance) == (
        "QSFP28", Media.SR, "100GBASE-SR4 or 25GBASE-SR")  # "QSFP28 or later": no abbreviation
    assert (module.vendor, module.part, module.serial) == (
        "EXAMPLE PHOTON", "XQ28-100G-SR4", "SR4C19070412")
    assert module.cable_m is None  # OM3 reach, not a cable assembly
    diag = port.diagnostics
    assert diag is not None and len(diag.lanes) == 4
    assert diag.lanes[3].rx_power_dbm == -1.1027 and diag.lanes[0].bias_ma == 6.75
    rx = diag.thresholds["rx_power_dbm"]
    assert (rx.low_alarm, rx.low_warning, rx.high_warning, rx.high_alarm) == (
        -13.3, -10.3, 2.4, 3.4)
    assert diag.thresholds["bias_ma"].low_alarm == 0.5
    assert (port.speed_mbps, port.lanes, port.fec) == (100_000, 4, Fec.RS528)  # 25G NRZ lanes
    assert port.fec_counters is None  # no FEC field in COUNTERS, no BER in RATES
    assert set(port.unknown) == {"fec_counters.corrected", "fec_counters.uncorrectable",
                                 "fec_counters.symbol_errors", "fec_counters.pre_fec_ber",
                                 "fec_counters.post_fec_ber", "flaps", "last_change_s"}
    assert "202111" in port.unknown["fec_counters.uncorrectable"]
    assert "FEC_PRE_BER" in port.unknown["fec_counters.pre_fec_ber"]
    assert "202405" in port.unknown["flaps"]


def test_passive_dac_202405_states_a_length_and_no_dom() -> None:
    port = read("cmis_400g_dac_202405.json", now=JUNE_2024)
    module = port.module
    assert module is not None
    assert (module.media, module.cable_m, module.compliance) == (Media.DAC, 2.0, "Copper cable")
    assert (module.vendor, module.part, module.serial) == (
        "EXAMPLE CABLE", "XDD-400G-CU2M", "CBL24051190")
    assert port.diagnostics is None
    assert "N/A" in port.unknown["diagnostics"]
    assert port.fec is Fec.RS544
    counters = port.fec_counters
    assert counters is not None
    assert (counters.corrected, counters.uncorrectable, counters.symbol_errors) == (4410, 0, 4415)
    assert counters.pre_fec_ber is None and "202505" in port.unknown["fec_counters.pre_fec_ber"]
    assert (port.flaps, port.last_change_s) == (2, 3469)
    assert "module.media" not in port.unknown and "module.cable_m" not in port.unknown


def test_empty_cage_202405() -> None:
    port = read("empty_cage_202405.json")
    assert port.present is False
    assert port.module is None and port.diagnostics is None
    # an empty cage is a finding of its own, not a fact left unread
    assert not {"present", "module", "diagnostics"} & set(port.unknown)
    assert (port.speed_mbps, port.lanes, port.fec) == (400_000, 8, Fec.RS544)
    counters = port.fec_counters
    assert counters is not None and counters.uncorrectable == 0  # stated as 0: a real zero
    assert port.flaps is None and port.last_change_s is None
    assert {"flaps", "last_change_s"} <= set(port.unknown)


def test_older_release_201911_without_flaps_rates_or_fec() -> None:
    data = tables("sff8636_100g_lr4_201911.json")
    assert "RATES" not in data
    port = read("sff8636_100g_lr4_201911.json")
    module = port.module
    assert module is not None
    assert (module.form_factor, module.media, module.compliance) == (
        "QSFP28", Media.LR, "100GBASE-LR4 or 25GBASE-LR")
    assert module.cable_m is None  # "Length(km)": the reach of single-mode fibre
    diag = port.diagnostics
    assert diag is not None and diag.thresholds["tx_power_dbm"].low_warning == -4.3
    assert port.fec is None and "no fec" in port.unknown["fec"]
    assert port.fec_counters is None
    assert "not read" in port.unknown["fec_counters.pre_fec_ber"]
    assert port.flaps is None and port.last_change_s is None
    assert (port.speed_mbps, port.lanes) == (100_000, 4)


def test_the_lab_reads_without_counters_and_is_marked_virtual() -> None:
    """The lab writes the same hashes to a file, without COUNTERS_DB."""
    lab = {k: v for k, v in tables("cmis_400g_dr4_202505.json").items()
           if k not in ("COUNTERS", "RATES")}
    port = read_port("Ethernet0", lab, virtual=True, now=MAY_2025)
    assert port.virtual is True
    assert port.module is not None and port.module.media is Media.DR
    assert port.fec_counters is None
    assert set(port.unknown) == {f"fec_counters.{f}" for f in (
        "corrected", "uncorrectable", "symbol_errors", "pre_fec_ber", "post_fec_ber")}
    assert all("not read" in why for why in port.unknown.values())


# --- the rules behind the fixtures ------------------------------------------------------------

@pytest.mark.parametrize(("text", "media"), [
    ("100GBASE-SR4 or 25GBASE-SR", Media.SR),
    ("400GBASE-SR8 (Cl 138)", Media.SR),
    ("400GBASE-SR4.2 (Cl 150)", Media.SR),
    ("4 x 10GBASE-SR", Media.SR),
    ("400GBASE-DR4 (Cl 124)", Media.DR),
    ("100GBASE-DR (Cl 140)", Media.DR),
    ("100G PSM4 Parallel SMF", Media.DR),
    ("800GBASE-DR8-2", Media.FR),
    ("400G-FR4/400GBASE-FR4 (Cl 151)", Media.FR),
    ("100G-FR/100GBASE-FR1 (Cl 140)", Media.FR),
    ("100G CWDM4", Media.FR),
    ("100GBASE-LR4 or 25GBASE-LR", Media.LR),
    ("400GBASE-LR8 (Cl 122)", Media.LR),
    ("100GBASE-ER4 or 25GBASE-ER", Media.ER),
    ("40GBASE-CR4", Media.DAC),
    ("100GBASE-CR4, 25GBASE-CR CA-25G-L or 50GBASE-CR2 with RS (Clause91) FEC", Media.DAC),
    ("Copper cable", Media.DAC),
    ("100G AOC (Active Optical Cable) or 25GAUI C2M AOC", Media.AOC),
    ("100G ACC (Active Copper Cable) or 25GAUI C2M ACC", None),
    ("400ZR, DWDM, amplified", None),
    ("10GBASE-LRM", None),
    ("Undefined", None),
])
def test_media_of_stated_compliance(text: str, media: Media | None) -> None:
    assert media_of(text) is media


def test_unmappable_media_names_what_the_module_states() -> None:
    port = read("cmis_400g_dr4_202505.json",
                TRANSCEIVER_INFO={"media_interface_code": "400ZR, DWDM, amplified"})
    assert port.module is not None and port.module.media is None
    assert port.module.compliance == "400ZR, DWDM, amplified"
    assert "400ZR, DWDM, amplified" in port.unknown["module.media"]


def test_sff8636_cable_assemblies() -> None:
    aoc = ("{'10/40G Ethernet Compliance Code': 'Extended', 'Extended Specification "
           "Compliance': '100G AOC (Active Optical Cable) or 25GAUI C2M AOC'}")
    port = read("sff8636_100g_sr4_202012.json", TRANSCEIVER_INFO={
        "specification_compliance": aoc, "cable_type": "Length Cable Assembly(m)",
        "cable_length": "3"})
    assert port.module is not None
    assert (port.module.media, port.module.cable_m) == (Media.AOC, 3.0)
    acc = aoc.replace("AOC (Active Optical Cable)", "ACC (Active Copper Cable)").replace(
        "C2M AOC", "C2M ACC")
    port = read("sff8636_100g_sr4_202012.json", TRANSCEIVER_INFO={
        "specification_compliance": acc, "cable_type": "Length Cable Assembly(m)",
        "cable_length": "3"})
    assert port.module is not None
    assert port.module.media is None and "ACC" in port.unknown["module.media"]
    assert port.module.cable_m == 3.0  # a cable assembly, whatever flatfab calls it


def test_cable_assembly_without_a_length() -> None:
    port = read("cmis_400g_dac_202405.json", now=JUNE_2024,
                TRANSCEIVER_INFO={"cable_length": "0.0"})
    assert port.module is not None and port.module.cable_m is None
    assert "0 m" in port.unknown["module.cable_m"]


def test_cable_length_stated_as_a_fibre_reach() -> None:
    dac = "{'10/40G Ethernet Compliance Code': '40GBASE-CR4'}"
    port = read("sff8636_100g_sr4_202012.json", TRANSCEIVER_INFO={
        "specification_compliance": dac, "cable_type": "Length OM3(2m)", "cable_length": "3"})
    assert port.module is not None and port.module.media is Media.DAC
    assert port.module.cable_m is None and "Length OM3(2m)" in port.unknown["module.cable_m"]


@pytest.mark.parametrize(("technology", "media"), [
    ("850 nm VCSEL", Media.AOC), ("Copper cable, linear active equalizers", None), ("", None)])
def test_cmis_active_cable_by_its_technology(technology: str, media: Media | None) -> None:
    port = read("cmis_400g_dac_202405.json", now=JUNE_2024, TRANSCEIVER_INFO={
        "specification_compliance": "active_cable_media_interface",
        "media_interface_code": "Active Cable assembly with BER < 5x10^-5",
        "media_interface_technology": technology})
    assert port.module is not None and port.module.media is media
    assert (media is None) == ("module.media" in port.unknown)


def test_flat_memory_module_posts_no_dom() -> None:
    found = tables("cmis_400g_dac_202405.json")
    found["TRANSCEIVER_DOM_SENSOR"] = {}
    found.pop("TRANSCEIVER_DOM_THRESHOLD")
    port = read_port("Ethernet24", found, now=JUNE_2024)
    assert port.diagnostics is None
    assert port.unknown["diagnostics"] == "TRANSCEIVER_DOM_SENSOR is empty"


def test_dom_readings_xcvrd_writes_for_no_light_and_no_value() -> None:
    port = read("cmis_400g_dr4_202505.json",
                TRANSCEIVER_DOM_SENSOR={"rx2power": "-inf", "rx3power": "nan", "tx4power": "N/A"})
    diag = port.diagnostics
    assert diag is not None
    assert diag.lanes[1].rx_power_dbm == float("-inf")  # 0 mW: a dark lane, a reading
    assert diag.lanes[2].rx_power_dbm is None  # NaN: no reading
    assert diag.lanes[3].tx_power_dbm is None


def test_all_eight_lanes_without_a_media_lane_count() -> None:
    port = read("cmis_400g_dr4_202505.json", TRANSCEIVER_INFO={"media_lane_count": "N/A"})
    assert port.diagnostics is not None and len(port.diagnostics.lanes) == 8


@pytest.mark.parametrize(("fec", "speed", "lanes", "expected"), [
    ("rs", "400000", "1,2,3,4,5,6,7,8", Fec.RS544),
    ("rs", "200000", "1,2,3,4", Fec.RS544),
    ("rs", "100000", "1,2", Fec.RS544),
    ("rs", "100000", "1,2,3,4", Fec.RS528),
    ("rs", "25000", "1", Fec.RS528),
    ("fc", "25000", "1", Fec.FC),
    ("none", "10000", "1", Fec.NONE),
])
def test_fec_by_lane_rate(fec: str, speed: str, lanes: str, expected: Fec) -> None:
    row = {"fec": fec, "speed": speed, "lanes": lanes}
    port = read("empty_cage_202405.json", APPL_PORT=row, CONFIG_PORT=row)
    assert port.fec is expected and "fec" not in port.unknown


def test_fec_appl_db_before_config_db() -> None:
    port = read("empty_cage_202405.json", APPL_PORT={"fec": "none"}, CONFIG_PORT={"fec": "rs"})
    assert port.fec is Fec.NONE


@pytest.mark.parametrize(("row", "why"), [
    ({"fec": "auto"}, "auto"),
    ({"fec": "rs", "speed": ""}, "no speed"),
])
def test_fec_not_known(row: dict[str, str], why: str) -> None:
    port = read("empty_cage_202405.json", APPL_PORT=row, CONFIG_PORT=row)
    assert port.fec is None and why in port.unknown["fec"]


def test_last_change_is_the_later_of_up_and_down() -> None:
    port = read("cmis_400g_dr4_202505.json", APPL_PORT={
        "last_up_time": "Mon May 19 09:00:00 2025", "last_down_time": "Mon May 19 09:50:00 2025"})
    assert port.last_change_s == 600
    only_down = tables("cmis_400g_dr4_202505.json")
    del only_down["APPL_PORT"]["last_up_time"]
    port = read_port("Ethernet0", only_down, now=MAY_2025)
    assert port.last_change_s == 1142  # down at 09:40:58
    assert read("cmis_400g_dr4_202505.json", now=MAY_2025 - 7200).last_change_s == 0.0


def test_now_defaults_to_the_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("flatfab.platforms.sonic.phy.time.time", lambda: MAY_2025 + 7)
    port = read_port("Ethernet0", tables("cmis_400g_dr4_202505.json"))
    assert port.last_change_s == 1140


def test_transceiver_info_not_read_is_not_an_empty_cage() -> None:
    found = tables("cmis_400g_dr4_202505.json")
    del found["TRANSCEIVER_INFO"]
    port = read_port("Ethernet0", found, now=MAY_2025)
    assert port.present is None and port.module is None
    assert port.unknown["present"] == "TRANSCEIVER_INFO was not read"
    assert "module" in port.unknown
    empty: dict[str, dict[str, str]] = {"TRANSCEIVER_INFO": {}}
    port = read_port("Ethernet0", empty, now=MAY_2025)
    assert port.present is None and "no PORT row" in port.unknown["present"]


def test_rj45_states_a_type_and_nothing_else() -> None:
    info = dict.fromkeys(tables("sff8636_100g_sr4_202012.json")["TRANSCEIVER_INFO"], "N/A")
    port = read("sff8636_100g_sr4_202012.json", TRANSCEIVER_INFO={**info, "type": "RJ45"})
    assert port.present is True and port.module is not None
    assert port.module.form_factor == "RJ45" and port.module.vendor is None
    assert port.module.media is None and "specification_compliance" in port.unknown["module.media"]


@pytest.mark.parametrize(("table", "field", "value"), [
    ("APPL_PORT", "speed", "400G"),
    ("APPL_PORT", "lanes", "1,2,x,4"),
    ("APPL_PORT", "fec", "kr4"),
    ("APPL_PORT", "flap_count", "-1"),
    ("APPL_PORT", "last_up_time", "2025-05-19T09:41:07Z"),
    ("APPL_PORT", "last_down_time", "Mon Foo 19 09:41:07 2025"),
    ("APPL_PORT", "last_down_time", "Mon Feb 30 09:41:07 2025"),
    ("TRANSCEIVER_DOM_SENSOR", "rx2power", "-1.5dBm"),
    ("TRANSCEIVER_DOM_SENSOR", "temperature", "hot"),
    ("TRANSCEIVER_DOM_THRESHOLD", "rxpowerlowalarm", "low"),
    ("TRANSCEIVER_INFO", "cable_length", "two"),
    ("TRANSCEIVER_INFO", "media_lane_count", "four"),
    ("COUNTERS", "SAI_PORT_STAT_IF_IN_FEC_NOT_CORRECTABLE_FRAMES", "12e3"),
    ("COUNTERS", "SAI_PORT_STAT_IF_IN_FEC_CORRECTABLE_FRAMES", "²"),
    ("RATES", "FEC_PRE_BER", "0.0x1"),
])
def test_malformed_values_name_port_table_and_field(table: str, field: str, value: str) -> None:
    found = tables("cmis_400g_dr4_202505.json")
    found[table] = {**found[table], field: value}
    with pytest.raises(PhyReadError) as caught:
        read_port("Ethernet0", found, now=MAY_2025)
    message = str(caught.value)
    assert "Ethernet0" in message and table in message and field in message
    assert "\n" not in message
    assert isinstance(caught.value, ValueError)


def test_malformed_sff8636_compliance() -> None:
    with pytest.raises(PhyReadError, match="Ethernet16: TRANSCEIVER_INFO "
                       "specification_compliance"):
        read("sff8636_100g_sr4_202012.json",
             TRANSCEIVER_INFO={"specification_compliance": "{'10/40G Ethernet"})
