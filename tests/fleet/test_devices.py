"""The fleet's SONiC and EOS switches in this process, driven by flatfab's real drivers
through the same entry points their servers use (SonicDevice.run: one shell line;
EosDevice.run: one runCmds request): commit-confirm timers run on the fleet's clock, and
EOS prints the configs the fleet knows as EOS indents them."""

from __future__ import annotations

from functools import cache
from typing import Any

import paramiko
import pytest
from napalm.eos.eos import EOSDriver
from pyeapi.eapilib import CommandError

from flatfab.intent.loader import load_intent
from flatfab.model.state import FabricState
from flatfab.plan.planner import plan
from flatfab.platforms.eos import PLATFORM as EOS
from flatfab.platforms.registry import PLATFORMS
from flatfab.platforms.sonic import PLATFORM as SONIC
from flatfab.platforms.sonic.driver import SonicDriver
from tests.doubles.fleet import Fleet
from tests.doubles.fleet.eapi import EosDevice
from tests.doubles.fleet.faults import FaultError, inject
from tests.doubles.fleet.sonic import SonicDevice
from tests.support.paths import ROOT


@cache
def mixed() -> FabricState:
    return plan(load_intent(ROOT / "intents" / "mixed", known_platforms=PLATFORMS))


class _Shell:
    """What netmiko's send_command hands the sonic driver: the shell's answer to one line."""

    key_policy = paramiko.RejectPolicy()  # the inventory's ssh_strict

    def __init__(self, device: SonicDevice) -> None:
        self.device = device

    def send_command(self, command_string: str, *args: Any, **kwargs: Any) -> str:
        return self.device.run(command_string)


class _Node:
    """pyeapi's Node over one EosDevice: every call one runCmds request, `enable` first."""

    connection = None

    def __init__(self, device: EosDevice) -> None:
        self.device = device

    def run_commands(self, commands: list[Any], encoding: str = "json",
                     **_: Any) -> list[dict[str, Any]]:
        return self.device.run(["enable", *commands], encoding)[1:]


def test_an_unconfirmed_sonic_commit_reverts_on_the_fleets_clock() -> None:
    fleet = Fleet(mixed(), factory=True)
    device = fleet.device("leaf1")
    assert isinstance(device, SonicDevice)
    factory_db = dict(device.double.config_db)
    driver = SONIC.adapt(_Shell(device), read_only=False)
    assert isinstance(driver, SonicDriver)
    driver.load_replace_candidate(config=SONIC.render(mixed().devices["leaf1"]))
    driver.commit_config(revert_in=60)
    assert driver.has_pending_commit() and device.double.config_db != factory_db
    fleet.clock.advance(59)
    device.tick()
    assert driver.has_pending_commit()
    fleet.clock.advance(2)
    device.tick()
    assert not driver.has_pending_commit() and device.timer_errors == []
    assert device.double.config_db == factory_db


def test_a_sonic_shell_line_without_flatfabs_marker_is_not_run() -> None:
    device = Fleet(mixed()).device("leaf2")
    assert isinstance(device, SonicDevice)
    assert device.run("show runningconfiguration all; echo @@flatfab-rc=$?").endswith(
        "@@flatfab-rc=0\n")
    assert device.run("reboot") == "-bash: reboot: command not found\n"
    assert device.double.commands == ["show runningconfiguration all"]


def test_eos_prints_the_configs_it_knows_indented_and_reverts_on_the_fleets_clock() -> None:
    fleet = Fleet(mixed(), factory=True)
    device = fleet.device("spine1")
    assert isinstance(device, EosDevice)
    eos = EOSDriver("spine1", "spine1", "unused", optional_args={"transport": "http"})
    eos.device = _Node(device)
    eos.open()
    intended = EOS.render(mixed().devices["spine1"])
    assert eos.get_config(retrieve="running")["running"] == device.factory
    eos.load_replace_candidate(config=intended)
    eos.commit_config(revert_in=60)
    # the double holds NAPALM's stripped statements; EOS prints them indented
    assert device.double.running != intended.splitlines()
    assert eos.get_config(retrieve="running")["running"] == intended
    fleet.clock.advance(61)
    device.tick()
    assert eos.get_config(retrieve="running")["running"] == device.factory


def test_a_failed_eos_command_carries_what_ran_before_it() -> None:
    device = Fleet(mixed()).device("spine2")
    assert isinstance(device, EosDevice)
    with pytest.raises(CommandError) as failed:
        device.run(["enable", "show version", "configure replace flash:none"], "json")
    assert failed.value.error_code == 1002
    assert [set(r) for r in failed.value.output[:1]] == [set()]
    assert failed.value.output[1]["version"] and failed.value.output[2] == {
        "errors": ["flash:none does not exist"]}


def test_unknown_and_unmodelled_faults_are_refused() -> None:
    fleet = Fleet(mixed())
    for name, fault in (("leaf1", "mtu:Ethernet0=1500"), ("spine1", "session-down:Ethernet9"),
                        ("leaf1", "port-down:Ethernet999")):
        with pytest.raises(FaultError):
            inject(fleet.device(name), fault)
