"""Host NIC lossless settings: the qos line, nftables marking both ways, ConnectX commands."""

from __future__ import annotations

import pytest

from flatfab.intent.loader import load_intent
from flatfab.plan.planner import plan
from flatfab.platforms.linux_host import nic_qos
from flatfab.platforms.linux_host.config import HostConfigError, format_config, parse_config
from flatfab.platforms.linux_host.render import render
from tests.support.paths import ROOT

LAB = plan(load_intent(ROOT / "intents" / "lab"))
NIC = LAB.devices["leaf1-h1"].interfaces["eth1"].nic
assert NIC is not None
SETTINGS = nic_qos.from_model(NIC)
# `nft -j list table inet flatfab` after loading nft_ruleset({"eth1": SETTINGS}) (nft 1.0.6)
NFT_JSON = (
    '{"nftables": [{"metainfo": {"version": "1.0.6"}}, {"table": {"family": "inet", "name": '
    '"flatfab", "handle": 2}}, {"chain": {"family": "inet", "table": "flatfab", "name": '
    '"roce_marking", "handle": 1, "type": "filter", "hook": "output", "prio": -150, '
    '"policy": "accept"}}, {"rule": {"family": "inet", "table": "flatfab", "chain": '
    '"roce_marking", "handle": 2, "expr": [{"match": {"op": "==", "left": {"meta": {"key": '
    '"oifname"}}, "right": "eth1"}}, {"match": {"op": "==", "left": {"payload": {"protocol": '
    '"udp", "field": "dport"}}, "right": 4791}}, {"match": {"op": "==", "left": {"payload": '
    '{"base": "th", "offset": 64, "len": 8}}, "right": 129}}, {"mangle": {"key": {"payload": '
    '{"protocol": "ip", "field": "dscp"}}, "value": "cs6"}}, {"accept": null}]}}, {"rule": '
    '{"family": "inet", "table": "flatfab", "chain": "roce_marking", "handle": 3, "expr": '
    '[{"match": {"op": "==", "left": {"meta": {"key": "oifname"}}, "right": "eth1"}}, '
    '{"match": {"op": "==", "left": {"payload": {"protocol": "udp", "field": "dport"}}, '
    '"right": 4791}}, {"mangle": {"key": {"payload": {"protocol": "ip", "field": "dscp"}}, '
    '"value": "af31"}}, {"mangle": {"key": {"payload": {"protocol": "ip", "field": "ecn"}}, '
    '"value": "ect0"}}]}}]}')


def test_qos_line_round_trips_through_the_host_config() -> None:
    text = render(LAB.devices["leaf1-h1"])
    # the planned map is the switch's (all but RoCE and CNP in TC 0): every code point the
    # ConnectX default (DSCP/8) puts elsewhere is listed
    assert ("qos eth1 trust dscp pfc 3 tos 106 cnp 48/6 ecn-np 3 ecn-rp 3 dcqcn on strict 6 "
            "tc-bw 50,0,0,50,0,0,0,0 pfc-prevention 100 dscp2prio 8:0,9:0,") in text
    assert ",24:0,25:0,27:0," in text and "26:" not in text and ",48:" not in text
    parsed = parse_config(text)
    assert parsed.qos == {"eth1": SETTINGS}
    assert format_config(parsed) == text
    assert nic_qos.to_model(SETTINGS, virtual=False) == NIC


def test_changed_dscp_map_entries_are_listed() -> None:
    table = list(SETTINGS.dscp_to_priority)
    table[24] = 4
    line = SETTINGS.__class__(**{**SETTINGS.__dict__, "dscp_to_priority": tuple(table)}).line("e")
    assert ",24:4,25:0," in line
    assert nic_qos.parse_line(line, 1)[1].dscp_to_priority[24] == 4


@pytest.mark.parametrize(("line", "reason"), [
    ("qos eth1 trust dscp pfc 9 tos 106 cnp 48/6 ecn-np 3 ecn-rp 3 dcqcn on strict 6 "
     "tc-bw 50,0,0,50,0,0,0,0 pfc-prevention 100 dscp2prio -", "line 4 pfc: values must lie"),
    ("qos eth1 trust dscp pfc 3 tos 106 cnp 48/6 ecn-np 3 ecn-rp 3 dcqcn on strict 6 "
     "tc-bw 50,50 pfc-prevention 100 dscp2prio -", "tc-bw needs 8 values"),
    ("qos eth1 trust fcoe pfc 3", "cannot parse qos line"),
    ("qos eth1 trust dscp pfc 3 tos 106 cnp 48/6 ecn-np 3 ecn-rp 3 dcqcn on strict 6 "
     "tc-bw 50,0,0,50,0,0,0,0 pfc-prevention 100 dscp2prio 64:1", "bad dscp2prio entry"),
])
def test_bad_qos_lines_name_the_line(line: str, reason: str) -> None:
    text = "nic eth1 mtu 9000 up\naddress eth1 10.100.1.11/24\nroute 0.0.0.0/0 via " \
           f"10.100.1.1 dev eth1\n{line}\n"
    with pytest.raises(HostConfigError, match=reason):
        parse_config(text)


def test_qos_for_an_unconfigured_nic_is_refused() -> None:
    with pytest.raises(HostConfigError, match="qos of eth2, which has no `nic` line"):
        parse_config(SETTINGS.line("eth2") + "\n")


def test_nft_ruleset_marks_roce_and_cnp_per_nic() -> None:
    script = nic_qos.nft_ruleset({"eth1": SETTINGS})
    assert 'oifname "eth1" udp dport 4791 @th,64,8 0x81 ip dscp set 48 accept' in script
    assert 'oifname "eth1" udp dport 4791 ip dscp set 26 ip ecn set 2' in script
    assert nic_qos.nft_ruleset({}).splitlines() == ["table inet flatfab {}",
                                                    "delete table inet flatfab"]


def test_marks_are_read_back_from_loaded_rules() -> None:
    assert nic_qos.marks_from_nft(NFT_JSON) == {"eth1": (106, 48)}
    assert nic_qos.marks_from_nft("") == {}
    rewritten = NFT_JSON.replace('"af31"', '"cs3"')
    marks = nic_qos.marks_from_nft(rewritten)
    assert nic_qos.with_marks({"eth1": SETTINGS}, marks)["eth1"].tos == 98  # DSCP 24 + ECT(0)


def test_unknown_nft_values_are_errors() -> None:
    with pytest.raises(nic_qos.NicQosError, match="unknown DSCP value 'zz'"):
        nic_qos.marks_from_nft(NFT_JSON.replace('"cs6"', '"zz"'))


def test_connectx_commands_cover_the_host_side_of_the_profile() -> None:
    cmds = nic_qos.connectx_commands("eth1", SETTINGS)
    assert "mlnx_qos -i eth1 --trust dscp" in cmds
    assert "mlnx_qos -i eth1 --pfc 0,0,0,1,0,0,0,0" in cmds
    assert "echo 106 > /sys/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_tos" in cmds
    assert "echo 1 > /sys/class/net/eth1/ecn/roce_np/enable/3" in cmds
    assert "echo 48 > /sys/class/net/eth1/ecn/roce_np/cnp_dscp" in cmds
    assert "ethtool --set-tunable eth1 pfc-prevention-tout 100" in cmds
