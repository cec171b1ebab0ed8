"""A GPU host NIC's congestion counters: mlx5's ethtool -S and RDMA hw_counters (a fixture
derived from documentation), the lab's nftables counters (captured from this kernel), the
driver's one read-only round trip, and bad output named."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from flatfab.platforms.linux_host import PLATFORM, nic_counters, nic_qos
from flatfab.platforms.shell_driver import DeviceCommandError
from tests.doubles.frr import Reply
from tests.doubles.linux_host import NFT_READ, VARIANTS, counting_host_driver, variant_output
from tests.support.telemetry_streams import lab_plan

NIC = lab_plan().devices["leaf1-h1"].interfaces["eth1"].nic
assert NIC is not None
SETTINGS = nic_qos.from_model(NIC)  # leaf1-h1 eth1 as planned (DCQCN on)


def _variant(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((VARIANTS / name).read_text(encoding="utf-8"))
    return data


def test_mlx5_ethtool_and_hw_counters_are_read_per_nic() -> None:
    data = _variant("mlx5_nic_counters.json")
    assert data["source"].startswith("derived from documentation")
    found = nic_counters.read_connectx(data["output"])
    assert found == data["expected"]
    # eth2 has no RDMA device: its CNP counters are absent, never 0
    assert "cnp_handled" not in found["eth2"]


def test_the_rdma_out_of_buffer_wins_over_ethtool_s() -> None:
    found = nic_counters.read_connectx(_variant("mlx5_nic_counters.json")["output"])
    assert found["eth1"]["out_of_buffer"] == 17  # hw_counters (RoCE), not rx_out_of_buffer 4


@pytest.mark.parametrize(("text", "reason"), [
    ("", "printed no statistics: no output"),
    ("Cannot get stats strings information: Operation not supported",
     "printed no statistics: Cannot get stats"),
    ("NIC statistics:\n     rx_prio3_pause: lots", "cannot read 'rx_prio3_pause: lots'"),
])
def test_bad_ethtool_output_names_the_nic(text: str, reason: str) -> None:
    with pytest.raises(nic_counters.NicCounterError, match=f"eth1: .*{reason}"):
        nic_counters.parse_ethtool("eth1", text)


def test_two_rdma_ports_behind_one_nic_are_an_error() -> None:
    text = ("/sys/class/net/eth1/device/infiniband/mlx5_0/ports/1/hw_counters/np_cnp_sent:1\n"
            "/sys/class/net/eth1/device/infiniband/mlx5_1/ports/1/hw_counters/np_cnp_sent:2\n")
    with pytest.raises(nic_counters.NicCounterError, match="eth1: more than one RDMA"):
        nic_counters.parse_hw_counters("eth1", text)


def test_the_connectx_read_is_one_line_over_the_qos_file_s_nics() -> None:
    command = nic_counters.connectx_command("/var/lib/flatfab/nic/qos.conf")
    assert "\n" not in command
    assert 'ethtool -S "$nic" 2>&1' in command
    assert ('/sys/class/net/"$nic"/device/infiniband/*/ports/*/hw_counters/rp_cnp_handled'
            in command)
    split = nic_counters.split_connectx(_variant("mlx5_nic_counters.json")["output"])
    assert sorted(split) == ["eth1", "eth2"] and set(split["eth1"]) == {"ethtool", "rdma"}


# ---- the lab ---------------------------------------------------------------------------------


def test_the_ruleset_counts_cnps_and_ce_per_nic_beside_the_marking() -> None:
    script = nic_qos.nft_ruleset({"eth1": SETTINGS})
    assert script.splitlines()[2:] == [
        "table inet flatfab {",
        "  chain roce_marking {",
        "    type filter hook output priority mangle; policy accept;",
        '    oifname "eth1" udp dport 4791 @th,64,8 0x81 ip dscp set 48 accept',
        '    oifname "eth1" udp dport 4791 ip dscp set 26 ip ecn set 2',
        "  }",
        "  chain nic_counters_in {",
        "    type filter hook input priority filter; policy accept;",
        '    iifname "eth1" udp dport 4791 @th,64,8 0x81 counter comment "eth1 cnp_rx"',
        '    iifname "eth1" udp dport 4791 ip ecn ce counter comment "eth1 ecn_ce_rx"',
        "  }",
        "  chain nic_counters_out {",
        "    type filter hook output priority filter; policy accept;",
        '    oifname "eth1" udp dport 4791 @th,64,8 0x81 counter comment "eth1 cnp_tx"',
        "  }",
        "}"]


def test_nft_counters_captured_from_the_kernel_are_read() -> None:
    data = _variant("nft_nic_counters.json")
    assert data["source"].startswith("captured here")
    text = variant_output("nft_nic_counters.json")
    assert nic_counters.nft_counts(text) == data["expected"]
    # the marking of the same table still reads back (the counter chains are not its)
    assert nic_qos.marks_from_nft(text) == {"eth1": (106, 48)}


def test_the_virtual_nic_handles_cnps_only_with_dcqcn_on() -> None:
    text = variant_output("nft_nic_counters.json")
    on = nic_counters.read_lab(text, {"eth1": SETTINGS})
    assert on == {"eth1": {"cnp_sent": 2, "ecn_marked_rx": 7, "cnp_handled": 4,
                           "cnp_ignored": 0}}
    off = nic_counters.read_lab(text, {"eth1": replace(SETTINGS, dcqcn=False)})
    assert off["eth1"]["cnp_handled"] == 0 and off["eth1"]["cnp_ignored"] == 4


def test_a_nic_the_table_does_not_count_is_named() -> None:
    with pytest.raises(nic_counters.NicCounterError, match="counts nothing for eth2"):
        nic_counters.read_lab(variant_output("nft_nic_counters.json"),
                              {"eth1": SETTINGS, "eth2": SETTINGS})


def test_unreadable_nft_output_is_an_error() -> None:
    with pytest.raises(nic_counters.NicCounterError, match="did not print JSON"):
        nic_counters.nft_counts("Error: No such file or directory")


# ---- the driver and the platform ---------------------------------------------------------------


@pytest.mark.parametrize("backend", ["lab", "connectx"])
def test_the_driver_reads_every_nic_in_one_read_only_round_trip(backend: str) -> None:
    driver, shell = counting_host_driver(backend)
    assert PLATFORM.facts.capabilities.nic_counters
    found = PLATFORM.nic_counters(PLATFORM.read_only(driver))
    assert found["eth1"]["cnp_handled"] == (4 if backend == "lab" else 12701)
    assert [(e.command, e.mutating) for e in shell.log] == [("sh -s", False)]
    assert not shell.applied


def test_bad_counter_output_is_one_error_naming_the_host() -> None:
    driver, shell = counting_host_driver("lab")
    shell.answers[NFT_READ] = Reply("not json")
    with pytest.raises(DeviceCommandError, match=r"192\.0\.2\.17: NIC counters: .*did not print"):
        driver.read_nic_counters()


def test_a_host_without_flatfab_s_qos_state_says_so() -> None:
    driver, shell = counting_host_driver("lab")
    shell.answers["cat /var/lib/flatfab/nic/qos.conf 2>/dev/null || true"] = Reply()
    with pytest.raises(DeviceCommandError, match="no NIC in flatfab's qos state"):
        driver.read_nic_counters()


def test_a_marking_rule_inserted_above_flatfab_s_is_what_the_kernel_does() -> None:
    """nftables walks a chain in order and an accepting rule ends it: a rule inserted by hand
    above flatfab's marks eth1's RoCE (and its CNPs) AF11, and that is what is read back,
    never flatfab's own rules below it."""
    data = json.loads(variant_output("nft_nic_counters.json"))
    first = next(i for i, item in enumerate(data["nftables"])
                 if item.get("rule", {}).get("chain") == nic_qos.NFT_CHAIN)
    data["nftables"].insert(first, {"rule": {
        "family": "inet", "table": "flatfab", "chain": nic_qos.NFT_CHAIN, "handle": 99,
        "expr": [{"match": {"op": "==", "left": {"meta": {"key": "oifname"}}, "right": "eth1"}},
                 {"match": {"op": "==", "left": {"payload": {"protocol": "udp",
                                                             "field": "dport"}},
                            "right": 4791}},
                 {"mangle": {"key": {"payload": {"protocol": "ip", "field": "dscp"}},
                             "value": "af11"}},
                 {"accept": None}]}})
    assert nic_qos.marks_from_nft(json.dumps(data)) == {"eth1": (10 << 2, 10)}
