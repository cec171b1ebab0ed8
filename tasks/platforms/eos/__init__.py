"""Platform `eos`: Arista EOS switches, rendered through an AVD-shaped structured config."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from flatfab.model.state import DeviceState, Probe
from flatfab.platforms import netmiko_shell
from flatfab.platforms.base import DeviceDriver, Login, Platform
from flatfab.platforms.eos.collect import collect
from flatfab.platforms.eos.driver import EosDriver
from flatfab.platforms.eos.render import render
from flatfab.platforms.eos.sections import owned, split_sections, without_comments


class EosPlatform(Platform):
    def render(self, device: DeviceState) -> str:
        return render(device, self.facts)

    def sections(self, config: str) -> dict[str, list[str]]:
        return split_sections(config, self.facts.management_interfaces)

    def drift_texts(self, driver: DeviceDriver, intended: str) -> tuple[str, str]:
        running = driver.get_config(retrieve="running")["running"]
        return (without_comments(owned(running, self.facts.management_interfaces)),
                without_comments(intended))

    def login(self, extras: Mapping[str, Any]) -> Login:
        """NAPALM's eos driver speaks eAPI (https, http: a password is the only way in),
        or with `transport: ssh` netmiko, whose options it takes from optional_args."""
        optional = extras.get("optional_args")
        args: Mapping[str, Any] = optional if isinstance(optional, Mapping) else {}
        transport = args.get("transport", args.get("eos_transport", "https"))
        if transport == "ssh":
            return replace(netmiko_shell.login(args, "extras.optional_args"),
                           port=args.get("port"), port_key="extras.optional_args.port")
        return Login(transport="https", port=args.get("port"),
                     port_key="extras.optional_args.port")

    def adapt(self, connection: Any, *, read_only: bool) -> DeviceDriver:
        """NAPALM's EOSDriver, with replaces that keep what flatfab does not own
        (tasks/platforms/eos/driver.py)."""
        from napalm.eos.eos import EOSDriver  # noqa: PLC0415 - only workflows need it

        if isinstance(connection, EosDriver):
            return connection
        if not isinstance(connection, EOSDriver):
            raise TypeError(f"platform eos needs NAPALM's eos driver, not "
                            f"{type(connection).__name__}")
        driver: DeviceDriver = EosDriver(connection, self.facts.management_interfaces)
        return driver

    def collect(self, driver: DeviceDriver, planned: DeviceState,
                probes: list[Probe]) -> DeviceState:
        return collect(driver, planned, self.facts, self.names)


PLATFORM = EosPlatform(Path(__file__).with_name("platform.yaml"))
