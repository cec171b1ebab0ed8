"""The frr switch's multipath hashing: the section, the kernel's values, the way between."""

from __future__ import annotations

import pytest
from napalm.base.exceptions import ReplaceConfigException

from flatfab.model.state import HashField, LoadBalancing
from flatfab.platforms.frr import ecmp
from flatfab.platforms.frr.ecmp import EcmpError, Family, Hashing
from tests.doubles.frr import LEAF1, Reply, leaf1_driver
from tests.support.paths import FIXTURES

FIVE = [HashField.SRC_IP, HashField.DST_IP, HashField.PROTOCOL, HashField.SRC_PORT,
        HashField.DST_PORT]
DAY0 = Hashing(Family(1), Family(0), 0)  # the lab's day-0 sysctls (tests/fixtures/frr/leaf1)


def test_a_planned_hashing_renders_policy_3_in_both_families() -> None:
    text = ecmp.render(LoadBalancing(hash_fields=[*FIVE, HashField.FLOW_LABEL], seed=7))
    assert text == ("ipv4 policy 3 fields src_ip dst_ip protocol src_port dst_port\n"
                    "ipv6 policy 3 fields src_ip dst_ip protocol flow_label src_port "
                    "dst_port\nseed 7\n")
    assert ecmp.render(LoadBalancing(hash_fields=FIVE)).endswith("seed 0\n")


def test_the_recorded_readback_reads_as_the_kernel_holds_it() -> None:
    hashing = ecmp.parse_readback((LEAF1 / "ecmp_default.txt").read_text(), "default")
    assert hashing == DAY0
    no_seed = "\n".join(line for line in (LEAF1 / "ecmp_default.txt").read_text().splitlines()
                        if "seed" not in line)
    assert ecmp.parse_readback(no_seed, "default").seed is None  # Linux before 6.11
    with pytest.raises(EcmpError, match=r"blue: the kernel states no ipv6\.fib_multipath_hash"):
        ecmp.parse_readback("ipv4/fib_multipath_hash_policy:1\n"
                            "ipv4/fib_multipath_hash_fields:7\n", "blue")
    with pytest.raises(EcmpError, match="reads 'x', not a number"):
        ecmp.parse_readback("ipv4/fib_multipath_hash_policy:x\n", "default")


def test_the_section_states_each_vrf_only_where_it_differs() -> None:
    custom = Hashing(Family(3, 0x37), Family(3, 0x37), 7)
    text = ecmp.format_state({"default": custom, "blue": custom,
                              "red": Hashing(Family(3, 0x07), Family(3, 0x37), 9)})
    assert text == ("ipv4 policy 3 fields src_ip dst_ip protocol src_port dst_port\n"
                    "ipv6 policy 3 fields src_ip dst_ip protocol src_port dst_port\n"
                    "seed 7\nvrf red ipv4 policy 3 fields src_ip dst_ip protocol\n"
                    "vrf red seed 9\n")
    wanted = ecmp.parse_section(text)
    current = {"default": DAY0, "blue": DAY0, "red": DAY0}
    assert ecmp.desired(current, wanted) == {
        "default": custom, "blue": custom, "red": Hashing(Family(3, 0x07), Family(3, 0x37), 9)}
    with pytest.raises(EcmpError, match="vrf green: the switch has no such VRF namespace"):
        ecmp.desired(current, ecmp.parse_section("vrf green seed 3\n"))


@pytest.mark.parametrize(("line", "reason"), [
    ("ipv4 policy 3", "fields go with policy 3, and only with it"),
    ("ipv4 policy 1 fields src_ip", "fields go with policy 3"),
    ("ipv4 policy 4", r"policy 4 \(0-3\)"),
    ("ipv4 policy 3 fields src_ip qp", "unknown field 'qp'"),
    ("hash everything", "cannot parse 'hash everything'"),
])
def test_a_section_line_that_does_not_read_is_named(line: str, reason: str) -> None:
    with pytest.raises(EcmpError, match=reason):
        ecmp.parse_section(f"seed 1\n{line}\n")
    with pytest.raises(EcmpError, match="ecmp line 2: seed is given twice"):
        ecmp.parse_section("seed 1\nseed 2\n")


def test_ops_set_the_fields_before_the_policy_in_every_namespace_that_changes() -> None:
    current = {"default": DAY0, "blue": DAY0}
    want = Hashing(Family(3, 0x37), Family(3, 0x37), 7)
    ops = ecmp.ops(current, {"default": want, "blue": want})
    assert ops == [
        "sysctl -q -w net.ipv4.fib_multipath_hash_fields=55 "
        "net.ipv4.fib_multipath_hash_policy=3 net.ipv6.fib_multipath_hash_fields=55 "
        "net.ipv6.fib_multipath_hash_policy=3 net.ipv4.fib_multipath_hash_seed=7 >/dev/null",
        "ip netns exec blue sysctl -q -w net.ipv4.fib_multipath_hash_fields=55 "
        "net.ipv4.fib_multipath_hash_policy=3 net.ipv6.fib_multipath_hash_fields=55 "
        "net.ipv6.fib_multipath_hash_policy=3 net.ipv4.fib_multipath_hash_seed=7 >/dev/null"]
    assert ecmp.ops({"default": want}, {"default": want}) == []


def test_a_seed_on_a_kernel_without_seeds_is_refused_and_seed_0_is_its_own() -> None:
    old = Hashing(Family(1), Family(0), None)
    asked = ecmp.desired({"default": old}, ecmp.parse_section("seed 0\n"))
    assert asked == {"default": old} and ecmp.unreachable({"default": old}, asked) is None
    asked = ecmp.desired({"default": old}, ecmp.parse_section("seed 5\n"))
    assert "no net.ipv4.fib_multipath_hash_seed (Linux 6.11 and later): seed 5" in str(
        ecmp.unreachable({"default": old}, asked))


def test_the_model_reads_fixed_policies_as_their_fields_and_names_a_vrf_apart() -> None:
    model = ecmp.to_model({"default": DAY0, "blue": DAY0,
                           "red": Hashing(Family(0), Family(0), 0)})
    # IPv4 on the 5-tuple, IPv6 on addresses, flow label and next header
    assert model.hash_fields == [*FIVE[:3], HashField.FLOW_LABEL, *FIVE[3:]]
    assert model.seed is None
    assert list(model.vrfs) == ["red"]
    assert model.vrfs["red"].hash_fields == [HashField.SRC_IP, HashField.DST_IP,
                                             HashField.FLOW_LABEL]
    custom = ecmp.to_model({"default": Hashing(Family(3, 0x07), Family(3, 0x0f), 11)})
    assert custom.hash_fields == [HashField.SRC_IP, HashField.DST_IP, HashField.PROTOCOL,
                                  HashField.FLOW_LABEL]
    assert custom.seed == 11


def _with_hashing(driver_config: str) -> str:
    return driver_config.replace("!! ecmp\nipv4 policy 1\nipv6 policy 0\nseed 0\n",
                                 "!! ecmp\n" + ecmp.render(LoadBalancing(hash_fields=FIVE,
                                                                         seed=7)))


def test_a_commit_sets_the_hashing_everywhere_and_its_revert_puts_it_back() -> None:
    driver, shell = leaf1_driver()
    before = driver.get_config()["running"]
    driver.load_replace_candidate(config=_with_hashing(before))
    diff = driver.compare_config()
    assert "-ipv4 policy 1\n-ipv6 policy 0\n-seed 0\n+ipv4 policy 3 fields src_ip" in diff
    driver.commit_config()
    backup, revert, forward, _ = (stdin or "" for _, stdin in shell.applied)
    assert backup == before
    for namespace in ("", "ip netns exec blue ", "ip netns exec red "):
        assert (f"\n{namespace}sysctl -q -w net.ipv4.fib_multipath_hash_fields=55 "
                "net.ipv4.fib_multipath_hash_policy=3 ") in forward
        assert (f"\n{namespace}sysctl -q -w net.ipv4.fib_multipath_hash_policy=1 "
                "net.ipv6.fib_multipath_hash_policy=0 net.ipv4.fib_multipath_hash_seed=0 "
                ">/dev/null\n") in revert


def test_a_config_without_the_section_leaves_the_hashing_alone() -> None:
    driver, shell = leaf1_driver()
    running = driver.get_config()["running"]
    without = running.replace("!! ecmp\nipv4 policy 1\nipv6 policy 0\nseed 0\n", "")
    driver.load_replace_candidate(config=without.replace("link swp52 mtu 9216 up",
                                                         "link swp52 mtu 9000 up"))
    driver.commit_config()
    assert "sysctl" not in (shell.applied[2][1] or "")


def test_a_seed_the_switch_kernel_cannot_take_is_refused_at_load() -> None:
    driver, shell = leaf1_driver()
    for vrf in ("default", "blue", "red"):
        text = (FIXTURES / "frr" / "leaf1" / f"ecmp_{vrf}.txt").read_text()
        shell.answers[ecmp.readback_command(vrf)] = Reply(
            "".join(line + "\n" for line in text.splitlines() if "seed" not in line))
    running = driver.get_config()["running"]
    assert "seed" not in running
    with pytest.raises(ReplaceConfigException, match=r"no net\.ipv4\.fib_multipath_hash_seed"):
        driver.load_replace_candidate(config=running.replace(
            "!! ecmp\nipv4 policy 1\nipv6 policy 0\n",
            "!! ecmp\n" + ecmp.render(LoadBalancing(hash_fields=FIVE, seed=7))))
