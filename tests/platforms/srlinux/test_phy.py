"""SR Linux physical layer (flatfab.platforms.srlinux.phy) from the `info from state /interface`
JSON of tests/fixtures/srlinux/phy/<case>/ (each file's `source` names its shape; derived, not
captured): what each case reads, what it leaves unknown and why, and the malformed values it
refuses."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from flatfab.model.physical import Fec, Media, PortPhysical, Thresholds
from flatfab.platforms.srlinux.phy import COMMANDS, PhyReadError, media_of, read_ports
from tests.support.paths import FIXTURES

PHY = FIXTURES / "srlinux" / "phy"
COMMAND = "info from state /interface"
NOW = 1_760_000_000.0  # 2025-10-09T08:53:20Z: the switch's time the fixtures are relative to
CASES = {"dr4_400g": "ethernet-1/1", "sr4_100g": "ethernet-1/2", "dac": "ethernet-1/3",
         "empty_cage": "ethernet-1/4", "no_fec_counters": "ethernet-1/5",
         "degraded": "ethernet-1/6", "flapped": "ethernet-1/7"}
# what SR Linux never states, on every port with FEC statistics
NEVER = {"fec_counters.corrected": "SR Linux counts no corrected FEC codewords",
         "fec_counters.symbol_errors": "SR Linux counts no FEC symbol errors",
         "fec_counters.post_fec_ber": "SR Linux states no post-FEC BER",
         "fec_counters.pre_fec_ber": "host-if-fec-router/pre-fec-ber is stated in "
                                     "bit-errors-per-second, not as a ratio"}
LANES_400G = {"lanes": "SR Linux states num-physical-channels only where it is configured; "
                       "unset, its model documents 8 for 400G, which the box does not state"}


def outputs(case: str) -> dict[str, Any]:
    """The case's reply keyed by its command, as JSON-RPC returns it (plus source, release)."""
    path = PHY / case / "info_from_state_interface.json"
    return {COMMAND: json.loads(path.read_text(encoding="utf-8"))}


def read(case: str, shown: dict[str, Any] | None = None, port: str | None = None
         ) -> PortPhysical:
    port = port or CASES[case]
    return read_ports(outputs(case) if shown is None else shown, [port], now=NOW)[port]


def entry(shown: dict[str, Any], name: str) -> dict[str, Any]:
    return next(e for e in shown[COMMAND]["srl_nokia-interfaces:interface"]
                if e["name"] == name)


def test_the_reader_reuses_the_collectors_interface_read() -> None:
    assert COMMANDS == (COMMAND,)


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_fixture_names_its_source_and_release(case: str) -> None:
    data = outputs(case)[COMMAND]
    assert data["source"].startswith("derived from documentation, not captured"), case
    assert data["release"].startswith("SR Linux 2"), case


def test_400g_dr4_reads_its_module_4_optical_lanes_thresholds_and_fec() -> None:
    port = read("dr4_400g")
    assert port.present is True
    assert port.module is not None
    assert port.module.model_dump() == {
        "form_factor": "QSFPDD", "media": Media.DR, "compliance": "400GBASE-DR4",
        "vendor": "NOKIA", "part": "QDD-400G-DR4-X1", "serial": "NK2250A0101",
        "cable_m": None}
    # 8 electrical lanes (num-physical-channels), 4 optical channels with diagnostics
    assert (port.speed_mbps, port.lanes, port.fec) == (400_000, 8, Fec.RS544)
    diag = port.diagnostics
    assert diag is not None
    assert (diag.temperature_c, diag.voltage_v) == (41.0, 3.291)
    assert [lane.rx_power_dbm for lane in diag.lanes] == [0.42, 0.31, 0.55, 0.18]
    assert [lane.tx_power_dbm for lane in diag.lanes] == [1.02, 0.97, 1.10, 0.88]
    assert [lane.bias_ma for lane in diag.lanes] == [52.1, 51.8, 53.0, 52.4]
    assert diag.thresholds["rx_power_dbm"] == Thresholds(
        low_alarm=-9.9, low_warning=-8.9, high_warning=4.0, high_alarm=5.0)
    assert diag.thresholds["temperature_c"] == Thresholds(
        low_alarm=-5, low_warning=0, high_warning=75, high_alarm=80)
    assert set(diag.thresholds) == {"temperature_c", "voltage_v", "bias_ma", "tx_power_dbm",
                                    "rx_power_dbm"}
    assert port.fec_counters is not None
    assert port.fec_counters.model_dump() == {
        "corrected": None, "uncorrectable": 0, "symbol_errors": None, "pre_fec_ber": None,
        "post_fec_ber": None}
    assert (port.flaps, port.last_change_s) == (1, 864_000.0)
    assert port.unknown == NEVER  # everything else is stated


def test_100g_sr4_in_json_numbers_is_rs528_and_its_lanes_are_unstated() -> None:
    port = read("sr4_100g")
    assert port.module is not None and port.module.media is Media.SR
    assert (port.speed_mbps, port.fec, port.flaps) == (100_000, Fec.RS528, 2)
    assert port.diagnostics is not None
    assert [lane.bias_ma for lane in port.diagnostics.lanes] == [7.1, 7.0, 7.3, 6.9]
    assert port.fec_counters is not None and port.fec_counters.uncorrectable == 0
    assert port.lanes is None
    assert port.unknown == NEVER | {
        "lanes": "SR Linux states num-physical-channels only where it is configured; unset, "
                 "its model documents 4 for 100G, which the box does not state"}


def test_passive_dac_has_no_diagnostics_and_no_stated_length() -> None:
    port = read("dac")
    assert port.module is not None
    assert (port.module.media, port.module.compliance) == (Media.DAC, "100GBASE-CR4")
    assert port.diagnostics is None
    assert "diagnostics" not in port.unknown  # a passive cable has none: no unread fact
    assert port.unknown["module.cable_m"] == "SR Linux states no cable assembly length"


def test_empty_cage_is_absent_not_unknown() -> None:
    port = read("empty_cage")
    assert (port.present, port.module, port.diagnostics) == (False, None, None)
    for key in ("present", "module", "diagnostics", "module.media"):
        assert key not in port.unknown
    assert port.fec is Fec.NONE  # operational-host-if-fec "disabled", as stated
    assert port.speed_mbps is None
    assert port.unknown["speed_mbps"] == "the link is down: no trained speed"
    assert port.fec_counters is None
    assert port.unknown["fec_counters.uncorrectable"].startswith(
        "SR Linux states no FEC statistics (host-if-fec-router/frame-error-count)")
    assert port.flaps == 0


def test_release_without_fec_statistics_keeps_the_configured_fec_and_names_the_gap() -> None:
    port = read("no_fec_counters")  # 23.10: FEC configured on the transceiver
    assert port.module is not None and port.module.media is Media.FR
    assert port.fec is Fec.RS544
    assert port.fec_counters is None
    assert port.unknown["fec_counters.uncorrectable"] == (
        "SR Linux states no FEC statistics (host-if-fec-router/frame-error-count) for "
        "ethernet-1/5: a release or platform without them, or no FEC running")
    assert port.unknown["fec_counters.pre_fec_ber"] == (
        "SR Linux states no pre-FEC BER for ethernet-1/5")
    assert port.diagnostics is not None and len(port.diagnostics.lanes) == 4


def test_degraded_optic_shows_its_low_lane_and_lost_codewords() -> None:
    port = read("degraded")
    assert port.module is not None
    assert (port.module.compliance, port.module.media) == ("ETH_400GBASE_DR4", Media.DR)
    diag = port.diagnostics
    assert diag is not None
    assert [lane.rx_power_dbm for lane in diag.lanes] == [0.40, 0.22, -12.6, 0.15]
    low_alarm = diag.thresholds["rx_power_dbm"].low_alarm
    assert low_alarm is not None and diag.lanes[2].rx_power_dbm is not None
    assert diag.lanes[2].rx_power_dbm < low_alarm
    assert port.fec_counters is not None and port.fec_counters.uncorrectable == 5821
    assert port.fec_counters.pre_fec_ber is None  # stated per second: not read as a ratio


def test_recent_flap_is_counted_and_aged() -> None:
    port = read("flapped")  # 25.10: the same interface list
    assert (port.flaps, port.last_change_s) == (14, 95.5)
    assert port.unknown == NEVER | LANES_400G


def test_without_the_command_every_fact_is_unknown_with_the_reason() -> None:
    port = read("dr4_400g", shown={})
    assert port.present is None and port.module is None
    why = "'info from state /interface' is not in the outputs (not run, or refused)"
    assert set(port.unknown.values()) == {why}
    assert set(port.unknown) == {
        "present", "module", "diagnostics", "fec", "fec_counters.corrected",
        "fec_counters.uncorrectable", "fec_counters.symbol_errors", "fec_counters.pre_fec_ber",
        "fec_counters.post_fec_ber", "flaps", "last_change_s", "speed_mbps", "lanes"}


def test_a_port_the_switch_does_not_list_is_unknown_saying_so() -> None:
    port = read("dr4_400g", port="ethernet-1/9")
    assert set(port.unknown.values()) == {"'info from state /interface' lists no ethernet-1/9"}
    assert len(port.unknown) == 13


def test_an_interface_without_a_cage_states_no_module() -> None:
    port = read("dr4_400g", port="mgmt0")
    assert port.speed_mbps == 1_000
    why = "SR Linux states no transceiver for mgmt0 (no cage)"
    assert {k: port.unknown[k] for k in ("present", "module", "diagnostics")} == dict.fromkeys(
        ("present", "module", "diagnostics"), why)


def test_the_21_x_not_present_oper_state_is_an_empty_cage() -> None:
    shown = outputs("empty_cage")
    entry(shown, "ethernet-1/4")["transceiver"] = {"oper-state": "not-present",
                                                    "forward-error-correction": "disabled"}
    port = read("empty_cage", shown)
    assert (port.present, port.module) == (False, None)


def test_a_module_down_for_another_reason_is_present() -> None:
    shown = outputs("empty_cage")
    entry(shown, "ethernet-1/4")["transceiver"] = {"oper-state": "down",
                                                    "oper-down-reason": "read-failure"}
    port = read("empty_cage", shown)
    assert port.present is True
    assert port.module is not None and port.module.vendor is None
    assert port.unknown["module.media"] == (
        "SR Linux states no ethernet-pmd for the module in ethernet-1/4")
    assert port.unknown["diagnostics"] == (
        "SR Linux states no DDM readings for the module in ethernet-1/4")


def test_a_transceiver_stating_no_presence_leaves_it_unknown() -> None:
    shown = outputs("empty_cage")
    entry(shown, "ethernet-1/4")["transceiver"] = {"oper-state": "down"}
    port = read("empty_cage", shown)
    assert port.present is None
    assert port.unknown["present"] == port.unknown["module"] == port.unknown["diagnostics"]


def test_a_configured_fec_on_a_down_link_is_not_known_in_use() -> None:
    shown = outputs("no_fec_counters")
    entry(shown, "ethernet-1/5")["oper-state"] = "down"
    port = read("no_fec_counters", shown)
    assert port.fec is None
    assert port.unknown["fec"] == ("FEC 'rs-544' is configured; the link is down, so not "
                                   "known to be in use")


def test_no_fec_stated_at_all_is_the_platform_default_unstated() -> None:
    shown = outputs("no_fec_counters")
    del entry(shown, "ethernet-1/5")["transceiver"]["forward-error-correction"]
    port = read("no_fec_counters", shown)
    assert port.fec is None and "platform's default" in port.unknown["fec"]


@pytest.mark.parametrize(("stated", "fec"), [
    ("disabled", Fec.NONE), ("cl74-baser", Fec.FC), ("cl108-rs528", Fec.RS528),
    ("cl91-rs528", Fec.RS528), ("cl91-rs544", Fec.RS544), ("cl119-rs544", Fec.RS544),
    ("cl134-rs544", Fec.RS544)])
def test_operational_fec_names(stated: str, fec: Fec) -> None:
    shown = outputs("dr4_400g")
    entry(shown, "ethernet-1/1")["ethernet"]["forward-error-correction"][
        "operational-host-if-fec"] = stated
    assert read("dr4_400g", shown).fec is fec


@pytest.mark.parametrize(("configured", "fec"), [
    ("disabled", Fec.NONE), ("base-r", Fec.FC), ("rs-528", Fec.RS528), ("rs-108", Fec.RS528),
    ("rs-544", Fec.RS544)])
def test_configured_fec_names(configured: str, fec: Fec) -> None:
    shown = outputs("no_fec_counters")
    entry(shown, "ethernet-1/5")["transceiver"]["forward-error-correction"] = configured
    assert read("no_fec_counters", shown).fec is fec


def test_an_unknown_fec_name_is_named() -> None:
    shown = outputs("dr4_400g")
    entry(shown, "ethernet-1/1")["ethernet"]["forward-error-correction"][
        "operational-host-if-fec"] = "cl161-rs544"
    port = read("dr4_400g", shown)
    assert port.fec is None
    assert port.unknown["fec"] == "operational-host-if-fec 'cl161-rs544' is no FEC flatfab maps"


@pytest.mark.parametrize(("text", "media"), [
    ("400GBASE-DR4", Media.DR), ("ETH_400GBASE_DR4", Media.DR), ("100GBASE-SR4", Media.SR),
    ("ETH_100GBASE_SR4", Media.SR), ("100GBASE-CR4", Media.DAC), ("ETH_2X400GBASE_CR4", Media.DAC),
    ("ETH_100G_AOC", Media.AOC), ("400GBASE-FR4", Media.FR), ("ETH_100GBASE_CWDM4", Media.FR),
    ("ETH_100GBASE_PSM4", Media.DR), ("800GBASE-DR8-2", Media.FR), ("ETH_800GBASE_2XDR4", Media.DR),
    ("100GBASE-LR4", Media.LR), ("ETH_100GBASE_ER4", Media.ER), ("ETH_100G_ACC", None),
    ("ETH_400GBASE_ZR", None), ("10GBASE-LRM", None), ("1000BASE-T", None), ("", None)])
def test_media_of_ethernet_pmd(text: str, media: Media | None) -> None:
    assert media_of(text) is media


def test_an_unmappable_pmd_is_named() -> None:
    shown = outputs("dr4_400g")
    entry(shown, "ethernet-1/1")["transceiver"]["ethernet-pmd"] = "400GBASE-ZR"
    port = read("dr4_400g", shown)
    assert port.module is not None and port.module.media is None
    assert port.module.compliance == "400GBASE-ZR"
    assert port.unknown["module.media"] == "ethernet-pmd '400GBASE-ZR' names no flatfab media"
    assert port.diagnostics is not None  # an optic still reads its diagnostics


def test_a_breakout_port_gets_its_share_of_the_connectors_channels() -> None:
    shown = outputs("dr4_400g")
    connector = entry(shown, "ethernet-1/1")
    connector["breakout-mode"] = {"num-breakout-ports": "4", "breakout-port-speed": "100G"}
    child = copy.deepcopy(connector)
    del child["breakout-mode"], child["num-physical-channels"]
    child |= {"name": "ethernet-1/1/2", "physical-channel": [2]}
    child["ethernet"]["port-speed"] = "100G"
    shown[COMMAND]["srl_nokia-interfaces:interface"].append(child)
    port = read("dr4_400g", shown, port="ethernet-1/1/2")
    assert (port.speed_mbps, port.lanes) == (100_000, 2)  # 8 channels among 4 ports
    assert port.diagnostics is not None
    assert [lane.rx_power_dbm for lane in port.diagnostics.lanes] == [0.31]  # channel 2
    whole = read("dr4_400g", shown)  # the broken-out connector itself
    assert whole.lanes is None
    assert whole.unknown["lanes"] == "ethernet-1/1 is broken out: its ports carry the lanes"


def test_a_single_channel_module_states_its_readings_itself() -> None:
    shown = outputs("sr4_100g")
    xcvr = entry(shown, "ethernet-1/2")["transceiver"]
    first = xcvr.pop("channel")[0]
    xcvr |= {key: first[key] for key in ("input-power", "output-power", "laser-bias-current")}
    diag = read("sr4_100g", shown).diagnostics
    assert diag is not None and len(diag.lanes) == 1
    assert diag.lanes[0].rx_power_dbm == -1.2
    assert diag.thresholds["bias_ma"].high_alarm == 12.0


def test_a_last_change_with_the_clis_age_or_ahead_of_now_reads() -> None:
    shown = outputs("flapped")
    entry(shown, "ethernet-1/7")["last-change"] = "2025-10-09T08:51:44.500Z (95 seconds ago)"
    assert read("flapped", shown).last_change_s == 95.5
    entry(shown, "ethernet-1/7")["last-change"] = "2025-10-09T08:53:21.000Z"
    assert read("flapped", shown).last_change_s == 0.0  # a clock behind: just changed


def test_unstated_link_facts_are_named() -> None:
    shown = outputs("flapped")
    port_entry = entry(shown, "ethernet-1/7")
    del port_entry["last-change"], port_entry["statistics"]
    port_entry["ethernet"]["port-speed"] = "1.6T"
    port = read("flapped", shown)
    assert port.unknown["flaps"] == (
        "SR Linux states no statistics/carrier-transitions for ethernet-1/7")
    assert port.unknown["last_change_s"] == "SR Linux states no last-change for ethernet-1/7"
    assert port.unknown["speed_mbps"] == "port-speed '1.6T' is no speed flatfab knows"


def test_the_list_itself_and_the_node_contents_form_read_alike() -> None:
    listed = outputs("flapped")[COMMAND]["srl_nokia-interfaces:interface"]
    assert read("flapped", {COMMAND: listed}) == read("flapped")
    assert read("flapped", {COMMAND: {"interface": listed}}) == read("flapped")


def _set(path: tuple[str | int, ...], value: Any) -> Any:
    def change(shown: dict[str, Any]) -> None:
        node: Any = entry(shown, "ethernet-1/1")
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
    return change


@pytest.mark.parametrize(("change", "message"), [
    (lambda s: s.__setitem__(COMMAND, "text"),
     "info from state /interface: \\*: \\(reply\\): cannot read 'text'"),
    (lambda s: s[COMMAND].__setitem__("srl_nokia-interfaces:interface", {"name": "x"}),
     "info from state /interface: \\*: interface: cannot read {'name': 'x'}"),
    (_set(("transceiver",), "up"),
     "info from state /interface: ethernet-1/1: transceiver: cannot read 'up'"),
    (_set(("transceiver", "channel", 1, "input-power", "latest-value"), "-inf dBm"),
     "info from state /interface: ethernet-1/1: transceiver.channel\\[2\\].input-power"
     ".latest-value: cannot read '-inf dBm'"),
    (_set(("transceiver", "temperature", "high-alarm-threshold"), True),
     "info from state /interface: ethernet-1/1: transceiver.temperature.high-alarm-threshold: "
     "cannot read True"),
    (_set(("transceiver", "voltage", "latest-value"), "nan"),
     "info from state /interface: ethernet-1/1: transceiver.voltage.latest-value: "
     "cannot read 'nan'"),
    (_set(("statistics", "carrier-transitions"), "-1"),
     "info from state /interface: ethernet-1/1: statistics.carrier-transitions: "
     "cannot read '-1'"),
    (_set(("ethernet", "forward-error-correction", "statistics", "host-if-fec-router",
           "frame-error-count"), 1.5),
     "info from state /interface: ethernet-1/1: host-if-fec-router.frame-error-count: "
     "cannot read 1.5"),
    (_set(("last-change",), "yesterday"),
     "info from state /interface: ethernet-1/1: last-change: cannot read 'yesterday'"),
    (_set(("last-change",), "2025-09-29T08:53:20"),
     "info from state /interface: ethernet-1/1: last-change: cannot read "
     "'2025-09-29T08:53:20'"),
    (_set(("physical-channel",), "1-4"),
     "info from state /interface: ethernet-1/1: physical-channel: cannot read '1-4'"),
    (_set(("transceiver", "vendor"), ["NOKIA"]),
     "info from state /interface: ethernet-1/1: transceiver.vendor: cannot read \\['NOKIA'\\]"),
])
def test_malformed_values_name_command_port_and_key(change: Any, message: str) -> None:
    shown = outputs("dr4_400g")
    change(shown)
    with pytest.raises(PhyReadError, match=f"^{message}$"):
        read("dr4_400g", shown)
    assert issubclass(PhyReadError, ValueError)


def test_the_error_is_one_line_and_short() -> None:
    shown = outputs("dr4_400g")
    entry(shown, "ethernet-1/1")["last-change"] = "x\n" * 100
    with pytest.raises(PhyReadError) as raised:
        read("dr4_400g", shown)
    assert "\n" not in str(raised.value) and len(str(raised.value)) < 160


def test_a_codeword_total_past_a_floats_precision_stays_exact() -> None:
    shown = outputs("degraded")
    entry(shown, "ethernet-1/6")["ethernet"]["forward-error-correction"]["statistics"][
        "host-if-fec-router"]["frame-error-count"] = "18446744073709551615"
    counters = read("degraded", shown).fec_counters
    assert counters is not None and counters.uncorrectable == 18446744073709551615
