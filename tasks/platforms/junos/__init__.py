"""Platform `junos`: Juniper QFX5220/5230/5240 (Junos OS Evolved) through NAPALM's junos
driver (NETCONF): curly-brace config loaded with `load replace`, `commit confirmed`."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from flatfab.model.physical import PortPhysical
from flatfab.model.state import DeviceState, Probe
from flatfab.platforms.base import (
    DEFAULT_TIMEOUTS,
    DeviceDriver,
    InventoryOption,
    Login,
    Platform,
    Timeouts,
)
from flatfab.platforms.junos.collect import collect as collect_device
from flatfab.platforms.junos.collect import physical
from flatfab.platforms.junos.driver import JunosDriver
from flatfab.platforms.junos.render import render
from flatfab.platforms.junos.text import canonical, children, parse, split_sections

# read-only CLI: `show ...` with output pipes that only filter or format (never `| save`,
# `| request`, or a second command after `;`)
_PIPE = r"\|\s*(display (json|xml|set)|no-more|count|last \d+|(match|except|find) [\w.:/*-]+)"
_SHOW = re.compile(rf"^\s*show\s[^|;&<>`$\\]*(\s*{_PIPE})*\s*$")


def normal_form(text: str) -> str:
    """A config without comments and tags, each block in one order, for drift against the
    running config (Junos prints statements in its schema's order)."""
    return canonical(text)


# what flatfab owns inside the hierarchies it shares with the switch's own statements
_OWNED = {"interfaces": re.compile(r"^(et-\S+|irb|lo0)$"), "routing-instances": re.compile(
    r"^(?!mgmt_junos$)\S+$")}


class JunosPlatform(Platform):
    def connection_extras(self, extras: dict[str, Any], *, read_only: bool,
                          timeouts: Timeouts = DEFAULT_TIMEOUTS) -> dict[str, Any]:
        """PyEZ waits up to its own 30 s for NETCONF to open: its probe (optional_args
        auto_probe, a TCP connect) names a silent device within the connect timeout; the
        driver's `timeout` bounds each RPC."""
        found = super().connection_extras(extras, read_only=read_only, timeouts=timeouts)
        found["optional_args"].setdefault("auto_probe", timeouts.connect)
        return found

    def render(self, device: DeviceState) -> str:
        return render(device, self.names)

    def sections(self, config: str) -> dict[str, list[str]]:
        return split_sections(config)

    def collect(self, driver: DeviceDriver, planned: DeviceState,
                probes: list[Probe]) -> DeviceState:
        return collect_device(driver, planned, self.names)

    def collect_physical(self, driver: DeviceDriver,
                         planned: DeviceState) -> dict[str, PortPhysical]:
        return physical(driver, planned)

    def drift_texts(self, driver: DeviceDriver, intended: str) -> tuple[str, str]:
        running = driver.get_config(retrieve="running")["running"]
        return normal_form(running), normal_form(intended)

    def change_notes(self, running: str, intended: str) -> list[str]:
        """`load replace` replaces what the render tags; a fabric port, IRB or instance the
        switch has and the plan no longer names stays configured."""
        try:
            now, wanted = parse(running), parse(intended)
        except ValueError as exc:
            return [f"running config unreadable: {exc}"]
        notes = []
        for hierarchy, owned in _OWNED.items():
            kept = set(children(wanted, hierarchy))
            for name in children(now, hierarchy):
                if owned.match(name) and name not in kept:
                    notes.append(f"{hierarchy} {name} is configured on the switch but not "
                                 "planned: `load replace` leaves it in place (delete it by "
                                 "hand, or it keeps forwarding)")
        return notes

    def inventory_options(self) -> tuple[InventoryOption, ...]:
        args = "extras.optional_args"
        return (
            InventoryOption(f"{args}.port", 830,
                            "NETCONF over SSH port (NAPALM's junos driver defaults to 22)"),
            InventoryOption(f"{args}.key_file", "/home/netops/.ssh/id_ed25519",
                            "private key to log in with (default: the SSH agent and your "
                            "default keys)"),
            InventoryOption(f"{args}.ssh_config_file", "/home/netops/.ssh/config",
                            "an OpenSSH client config for these sessions (a jump host, "
                            "ciphers)"),
            InventoryOption("extras.timeout", 60,
                            "seconds one RPC may take (default: flatfab's command timeout)"),
        )

    def login(self, extras: Mapping[str, Any]) -> Login:
        """NAPALM's junos driver (PyEZ over ncclient) logs in as flatfab's own SSH drivers
        do, but reads host keys from ~/.ssh/known_hosts only (ncclient has no option naming
        another file) and tries the user's own keys even beside a key_file."""
        return replace(super().login(extras), known_hosts=None, default_keys=True)

    def adapt(self, connection: Any, *, read_only: bool) -> DeviceDriver:
        """NAPALM's JunOSDriver with host keys checked (verified.py), behind flatfab's push
        rules (load replace, management refusal, revert time rounded up to minutes)."""
        # PyEZ is slow to import: only when a connection opens
        from flatfab.platforms.junos.verified import FlatfabJunosDriver  # noqa: PLC0415

        if isinstance(connection, JunosDriver):
            return connection
        if not isinstance(connection, FlatfabJunosDriver):
            raise TypeError(f"platform junos needs NAPALM driver "
                            f"{self.facts.connection.driver!r} (NAPALM's junos driver with "
                            f"host keys checked), not {type(connection).__name__}")
        return JunosDriver(connection, self.facts.management_interfaces)

    def show_command(self, command: str) -> bool:
        return bool(_SHOW.match(command))


PLATFORM = JunosPlatform(Path(__file__).with_name("platform.yaml"))
