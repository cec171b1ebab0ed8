"""Switches driven through a netmiko SSH shell (nvue, sonic): each command's exit status read
from a marker it echoes, files written in base64 chunks, and the connection options that
make netmiko check host keys (it adds unknown ones unless told otherwise)."""

from __future__ import annotations

import base64
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol

import paramiko

from flatfab.platforms.base import (
    DEFAULT_TIMEOUTS,
    Endpoint,
    InventoryOption,
    Login,
    Platform,
    ReadOnlyError,
    Timeouts,
)
from flatfab.platforms.cli_driver import C, CliDriver, last_line
from flatfab.transport import reasons

RC_MARK = "@@flatfab-rc="
CHUNK = 3000  # base64 characters per file-writing command line


class Shell(Protocol):
    """The part of a netmiko connection the driver uses."""

    def send_command(self, command_string: str, *args: Any, **kwargs: Any) -> Any: ...


def base64_chunks(content: str) -> list[str]:
    """A file's content as base64 pieces of one command line each (one, empty, for none)."""
    data = base64.b64encode(content.encode()).decode()
    return [data[start:start + CHUNK] for start in range(0, len(data), CHUNK) or [0]]


class ShellCliDriver(CliDriver[C]):
    """A CliDriver whose commands run in a netmiko shell (`shell`), each through `_run`,
    which refuses changes when opened read-only."""

    def __init__(self, shell: Shell, *, read_only: bool, is_show: Callable[[str], bool],
                 timeout: float = 300.0, clock: Callable[[], float] = time.time) -> None:
        super().__init__(read_only=read_only, is_show=is_show, timeout=timeout)
        self.shell = shell
        self.clock = clock

    def _program(self, command: str) -> str:
        """How an error names the command whose exit status is missing."""
        return command.split(maxsplit=1)[0]

    def _run(self, command: str, *, mutating: bool = False) -> str:
        if mutating and self.read_only:
            raise ReadOnlyError(f"read-only: refused command {command!r}")
        wait = self.wait_s(mutating=mutating)
        try:
            output = self.shell.send_command(f"{command}; echo {RC_MARK}$?",
                                             read_timeout=wait)
        except Exception as exc:
            if reasons.kind(exc) != "timeout":
                raise
            raise self.error(f"no answer within {wait:g} s to `{command}`") from exc
        body, mark, status = str(output).rpartition(RC_MARK)
        if not mark:
            raise self.error(f"{self._program(command)}: no exit status in the output")
        if status.strip() != "0":
            raise self.error(f"`{command}` failed ({status.strip()}): {last_line(body)}")
        return body

    def cli(self, commands: list[str], encoding: str = "text") -> dict[str, Any]:
        return {c: self._run(c, mutating=not self.is_show(c)) for c in commands}


def lab_connection(*, key_file: Path, known_hosts: Path) -> dict[str, Any]:
    """A lab node's netmiko options: key authentication, the lab's known_hosts."""
    return {"netmiko": {"extras": {"use_keys": True, "key_file": str(key_file),
                                   "ssh_strict": True, "alt_host_keys": True,
                                   "alt_key_file": str(known_hosts)}}}


def inventory_options() -> tuple[InventoryOption, ...]:
    """A real switch's netmiko options: host keys checked (netmiko adds unknown ones unless
    told otherwise; the platform refuses a connection that does not check them)."""
    return (
        InventoryOption("extras.ssh_strict", True,
                        "refuse a device whose host key is not known (flatfab refuses "
                        "the connection without it)", active=True),
        InventoryOption("extras.system_host_keys", True,
                        "known host keys: ~/.ssh/known_hosts", active=True),
        InventoryOption("extras.alt_host_keys", True,
                        "known host keys from alt_key_file as well"),
        InventoryOption("extras.alt_key_file", "/home/netops/.ssh/fabric_known_hosts",
                        "another known_hosts file (with alt_host_keys)"),
        InventoryOption("extras.use_keys", True,
                        "log in with a key (key_file, else your default keys)"),
        InventoryOption("extras.key_file", "/home/netops/.ssh/id_ed25519",
                        "private key to log in with (with use_keys)"),
        InventoryOption("extras.allow_agent", True, "log in through the SSH agent"),
        InventoryOption("port", 22, "SSH port"),
        InventoryOption("extras.conn_timeout", 10,
                        "seconds to open the SSH session (default: flatfab's connect "
                        "timeout)"),
    )


def timed_extras(extras: dict[str, Any], timeouts: Timeouts) -> dict[str, Any]:
    """netmiko's connection options with the run's connect timeout for the TCP connect, the
    SSH banner and the login, where the inventory sets none of its own (a command's comes
    from the driver: read_timeout on each send_command)."""
    return {"conn_timeout": timeouts.connect, "banner_timeout": timeouts.connect,
            "auth_timeout": timeouts.connect, **extras}


def endpoint(hostname: str, port: int | None, username: str | None,
             extras: dict[str, Any]) -> Endpoint:
    """Where netmiko connects with these options, as errors name it."""
    known = (extras.get("alt_key_file") if extras.get("alt_host_keys")
             else "~/.ssh/known_hosts")
    return Endpoint(hostname, int(extras.get("port") or port or 22), username,
                    str(known) if known else None)


def login(options: Mapping[str, Any], where: str = "extras") -> Login:
    """How netmiko logs in with these options (`where`: their key path in the plugin's
    entry): a key only with use_keys (key_file, else the user's own keys), the agent only
    with allow_agent; host keys checked only with ssh_strict, against alt_key_file
    (alt_host_keys) or ~/.ssh/known_hosts (system_host_keys)."""
    problems: list[tuple[str, str]] = []
    use_keys = options.get("use_keys") is True
    key = options.get("key_file")
    if key is not None and not use_keys:
        problems.append((f"{where}.use_keys", "must be true for netmiko to use key_file"))
    if options.get("ssh_strict") is not True:
        problems.append((f"{where}.ssh_strict", "must be true: netmiko accepts any host key "
                         "otherwise"))
    known = options.get("alt_key_file") if options.get("alt_host_keys") is True else None
    system = options.get("system_host_keys") is True
    if not known and not system:
        problems.append((f"{where}.alt_host_keys", "name the host keys netmiko checks: "
                         "alt_host_keys: true with alt_key_file, or system_host_keys: true "
                         "(~/.ssh/known_hosts)"))
    return Login(transport="ssh", key_file=str(key) if use_keys and key else None,
                 key_file_key=f"{where}.key_file",
                 known_hosts=str(known) if known else None,
                 reads_known_hosts=bool(known) or system,
                 agent=options.get("allow_agent") is True,
                 default_keys=use_keys and not key, problems=tuple(problems))


def strict_connection(connection: Any, platform: str, error: type[Exception]) -> Any:
    """The opened netmiko connection, if it is one and checks host keys."""
    if not hasattr(connection, "send_command"):
        raise TypeError(f"platform {platform} needs a netmiko connection, not "
                        f"{type(connection).__name__}")
    if not isinstance(getattr(connection, "key_policy", None), paramiko.RejectPolicy):
        # netmiko adds unknown host keys unless ssh_strict is set; it keeps the option only
        # as the policy it gives paramiko (netmiko 4.x BaseConnection.key_policy)
        raise error(f"platform {platform}: set ssh_strict: true (and system_host_keys or "
                    "alt_host_keys) in the netmiko connection options")
    return connection


class NetmikoShellPlatform(Platform):
    """A platform reached through nornir_netmiko's shell (SONiC, NVUE): how it connects,
    logs in and is named in errors is netmiko's, the same for each."""

    def inventory_options(self) -> tuple[InventoryOption, ...]:
        return inventory_options()

    def lab_connection(self, *, key_file: Path, known_hosts: Path) -> dict[str, Any]:
        return lab_connection(key_file=key_file, known_hosts=known_hosts)

    def connection_extras(self, extras: dict[str, Any], *, read_only: bool,
                          timeouts: Timeouts = DEFAULT_TIMEOUTS) -> dict[str, Any]:
        return timed_extras(extras, timeouts)

    def endpoint(self, hostname: str, port: int | None, username: str | None,
                 extras: dict[str, Any]) -> Endpoint:
        return endpoint(hostname, port, username, extras)

    def login(self, extras: Mapping[str, Any]) -> Login:
        return login(extras)
