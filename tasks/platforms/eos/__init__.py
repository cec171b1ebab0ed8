"""Platform `eos`: Arista EOS switches, rendered through an AVD-shaped structured config."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from flatfab.model.physical import PortPhysical
from flatfab.model.state import DeviceState, Probe
from flatfab.platforms import netmiko_shell
from flatfab.platforms.base import DeviceDriver, Endpoint, InventoryOption, Login, Platform
from flatfab.platforms.eos.collect import collect, physical
from flatfab.platforms.eos.driver import EosDriver
from flatfab.platforms.eos.render import render
from flatfab.platforms.eos.sections import owned, split_sections, without_comments


class EosPlatform(Platform):
    # eAPI (pyeapi) takes one timeout for connecting and for each request
    tries_port_first = True

    def endpoint(self, hostname: str, port: int | None, username: str | None,
                 extras: dict[str, Any]) -> Endpoint:
        """eAPI's port: optional_args.port, else the inventory's, else the transport's."""
        optional = extras.get("optional_args") or {}
        transport = str(optional.get("transport", "https"))
        default = {"http": 80, "ssh": 22}.get(transport, 443)
        return Endpoint(hostname, int(optional.get("port") or port or default), username)

    def render(self, device: DeviceState) -> str:
        return render(device, self.facts)

    def sections(self, config: str) -> dict[str, list[str]]:
        return split_sections(config, self.facts.management_interfaces)

    def drift_texts(self, driver: DeviceDriver, intended: str) -> tuple[str, str]:
        running = driver.get_config(retrieve="running")["running"]
        return (without_comments(owned(running, self.facts.management_interfaces)),
                without_comments(intended))

    def inventory_options(self) -> tuple[InventoryOption, ...]:
        args = "extras.optional_args"
        return (
            InventoryOption(f"{args}.enforce_verification", True,
                            "check the switch's eAPI (HTTPS) certificate against this "
                            "workstation's CAs: without it NAPALM's eos driver (pyeapi) "
                            "trusts any certificate", active=True),
            InventoryOption(f"{args}.transport", "https", "eAPI transport (https, the default)"),
            InventoryOption(f"{args}.port", 443, "eAPI port"),
            InventoryOption("extras.timeout", 60,
                            "seconds one eAPI call may take (default: flatfab's command "
                            "timeout)"),
        )

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

    def collect_physical(self, driver: DeviceDriver,
                         planned: DeviceState) -> dict[str, PortPhysical]:
        return physical(driver, planned)


PLATFORM = EosPlatform(Path(__file__).with_name("platform.yaml"))
