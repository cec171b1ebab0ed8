"""Platform `nxos`: Cisco NX-OS on Nexus 9000, driven over SSH through scrapli."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from flatfab.model.physical import PortPhysical
from flatfab.model.state import DeviceState, Probe
from flatfab.platforms.base import (
    DEFAULT_TIMEOUTS,
    DeviceDriver,
    Endpoint,
    InventoryOption,
    Login,
    Platform,
    Timeouts,
)
from flatfab.platforms.nxos import lbmode
from flatfab.platforms.nxos.collect import collect, physical
from flatfab.platforms.nxos.driver import NxosDriver, NxosError, normalize
from flatfab.platforms.nxos.render import render
from flatfab.platforms.nxos.sections import LOAD_SHARING, owned, split_sections

# a read is `show ...` with an optional `| json`: no other pipe (NX-OS pipes include
# `| redirect` and `> file`, which write files), no `;`, no newline
_SHOW = re.compile(r"show [A-Za-z0-9_./:, -]+( \| json)?")


class NxosPlatform(Platform):
    def render(self, device: DeviceState) -> str:
        return render(device, self.names)

    def sections(self, config: str) -> dict[str, list[str]]:
        return split_sections(config)

    def drift_texts(self, driver: DeviceDriver, intended: str) -> tuple[str, str]:
        running = driver.get_config(retrieve="running")["running"]
        # a plan without hashing leaves the switch's `ip load-sharing` line alone
        planned = any(line.startswith(LOAD_SHARING) for line in intended.splitlines())
        return owned(running, load_sharing=planned), normalize(intended)

    def change_notes(self, running: str, intended: str) -> list[str]:
        """Resilient ECMP hashing set or removed: NX-OS applies it only after a reload
        (lbmode.py; Cisco N9K Interfaces guide, "Enabling ECMP Resilient Hashing")."""
        return lbmode.change_notes(running, intended)

    def collect(self, driver: DeviceDriver, planned: DeviceState,
                probes: list[Probe]) -> DeviceState:
        return collect(driver, planned, self.names)

    def collect_physical(self, driver: DeviceDriver,
                         planned: DeviceState) -> dict[str, PortPhysical]:
        return physical(driver, planned)

    def connection_extras(self, extras: dict[str, Any], *, read_only: bool,
                          timeouts: Timeouts = DEFAULT_TIMEOUTS) -> dict[str, Any]:
        # scrapli checks host keys unless told otherwise: keep its default explicit; the
        # run's timeouts where the inventory sets none (a change's comes from the driver)
        return {"auth_strict_key": True, "timeout_socket": timeouts.connect,
                "timeout_transport": timeouts.command, "timeout_ops": timeouts.command,
                **extras}

    def endpoint(self, hostname: str, port: int | None, username: str | None,
                 extras: dict[str, Any]) -> Endpoint:
        known = extras.get("ssh_known_hosts_file") or "~/.ssh/known_hosts"
        return Endpoint(hostname, int(extras.get("port") or port or 22), username, str(known))

    def inventory_options(self) -> tuple[InventoryOption, ...]:
        return (
            InventoryOption("extras.auth_strict_key", True,
                            "refuse a device whose host key is not known (flatfab refuses "
                            "the connection without it)", active=True),
            InventoryOption("extras.ssh_known_hosts_file", "/home/netops/.ssh/known_hosts",
                            "known host keys (default: OpenSSH's, ~/.ssh/known_hosts)"),
            InventoryOption("extras.auth_private_key", "/home/netops/.ssh/id_ed25519",
                            "private key to log in with (default: the SSH agent and your "
                            "default keys)"),
            InventoryOption("extras.transport", "system",
                            "scrapli's SSH: system (OpenSSH, the default: reads your "
                            "~/.ssh/config), paramiko, ssh2, asyncssh"),
            InventoryOption("port", 22, "SSH port"),
            InventoryOption("extras.timeout_socket", 10,
                            "seconds to open the TCP connection (default: flatfab's "
                            "connect timeout)"),
            InventoryOption("extras.timeout_transport", 30,
                            "seconds the SSH session may stay silent"),
            InventoryOption("extras.timeout_ops", 60,
                            "seconds one command may take (default: flatfab's command "
                            "timeout)"),
        )

    def lab_connection(self, *, key_file: Path, known_hosts: Path) -> dict[str, Any]:
        return {"scrapli": {"extras": {"auth_private_key": str(key_file),
                                       "auth_strict_key": True,
                                       "ssh_known_hosts_file": str(known_hosts)}}}

    def login(self, extras: Mapping[str, Any]) -> Login:
        """scrapli: auth_private_key; its system transport (OpenSSH, the default) also asks
        the agent and the user's own keys; host keys from ssh_known_hosts_file (a path;
        true or unset: ~/.ssh/known_hosts)."""
        key = extras.get("auth_private_key")
        known = extras.get("ssh_known_hosts_file")
        problems = ([("extras.auth_strict_key", "must be true: scrapli accepts any host key "
                      "otherwise")] if extras.get("auth_strict_key", True) is not True else [])
        openssh = extras.get("transport", "system") == "system"
        return Login(transport="ssh", key_file=str(key) if key else None,
                     key_file_key="extras.auth_private_key",
                     known_hosts=known if isinstance(known, str) and known else None,
                     agent=openssh, default_keys=openssh, problems=tuple(problems))

    def adapt(self, connection: Any, *, read_only: bool) -> DeviceDriver:
        if not (hasattr(connection, "send_command") and hasattr(connection, "send_configs")):
            raise TypeError(f"platform nxos needs a scrapli connection, not "
                            f"{type(connection).__name__}")
        if getattr(connection, "auth_strict_key", False) is not True:
            # without it scrapli accepts any host key: a man in the middle gets the config
            raise NxosError("platform nxos: set auth_strict_key: true (with a known_hosts "
                            "file: ssh_known_hosts_file) in the scrapli connection options")
        return NxosDriver(connection, read_only=read_only, is_show=self.show_command,
                          management=self.facts.management_interfaces)

    def show_command(self, command: str) -> bool:
        return bool(_SHOW.fullmatch(command))


PLATFORM = NxosPlatform(Path(__file__).with_name("platform.yaml"))
