"""A replace keeps what flatfab does not own on an EOS switch: NAPALM's replace starts from
`rollback clean-config`, so without it the management interface, its VRF, eAPI, users and
aaa would be gone after the commit (and flatfab locked out of the confirmation). NAPALM's
real EOSDriver against the config-session double, behind the platform's adapt()."""

from __future__ import annotations

from typing import Any

import pytest
from napalm.eos.eos import EOSDriver

from flatfab.platforms.eos import PLATFORM
from flatfab.platforms.eos.driver import EosDriver, EosPushError
from flatfab.workflows.devices.drift import device_drift
from tests.doubles.eos import EosDouble

# what an operator's switch holds besides flatfab's config (indented as EOS shows it)
MANAGEMENT = ["username admin privilege 15 role network-admin secret sha512 $6$x",
              "aaa authorization exec default local",
              "vrf instance MGMT",
              "interface Management1",
              "   vrf MGMT",
              "   ip address 192.0.2.10/24",
              "ip route vrf MGMT 0.0.0.0/0 192.0.2.1",
              "management api http-commands",
              "   no shutdown",
              "   vrf MGMT",
              "      no shutdown"]
FLATFAB = "hostname leaf1\ninterface Ethernet1\n   mtu 9216\n!\n"
OLD = ["hostname leaf1", "interface Ethernet1", "   mtu 9000"]


@pytest.fixture
def device() -> EosDouble:
    return EosDouble(running=[*MANAGEMENT, *OLD])


@pytest.fixture
def driver(device: EosDouble) -> Any:
    eos = EOSDriver("leaf1", "admin", "admin", optional_args={"transport": "https"})
    eos.device = device
    eos.open()
    adapted = PLATFORM.adapt(eos, read_only=False)
    assert isinstance(adapted, EosDriver)
    assert PLATFORM.adapt(adapted, read_only=False) is adapted
    return adapted


def _stripped(lines: list[str]) -> list[str]:
    return [line.strip() for line in lines]  # NAPALM sends a session's lines unindented


def test_a_replace_keeps_management_users_and_eapi(driver: Any, device: EosDouble) -> None:
    driver.load_replace_candidate(config=FLATFAB)
    diff = driver.compare_config()
    assert "+mtu 9216" in diff  # (the double diffs text: its indentation differs, not EOS's)
    for head in ("username", "aaa", "vrf instance MGMT", "interface Management1",
                 "ip route vrf MGMT", "management api"):
        assert f"-{head}" not in diff
    driver.commit_config(revert_in=60)
    driver.confirm_commit()
    assert device.running[:len(MANAGEMENT)] == _stripped(MANAGEMENT)
    assert device.running[len(MANAGEMENT):] == ["hostname leaf1", "interface Ethernet1",
                                                "mtu 9216"]


def test_management_is_no_drift_and_no_part_of_any_section(device: EosDouble) -> None:
    running = "\n".join([*MANAGEMENT, *OLD]) + "\n"
    assert PLATFORM.sections(running) == PLATFORM.sections("\n".join(OLD) + "\n")
    drift = device_drift("leaf1", running, "\n".join(OLD) + "\n", PLATFORM.sections)
    assert drift is None


def test_a_candidate_that_configures_the_management_interface_is_refused(driver: Any) -> None:
    with pytest.raises(EosPushError, match="management interface"):
        driver.load_replace_candidate(config=FLATFAB + "interface Management1\n   mtu 1500\n")
