"""The fleet's devices served over SSH from one asyncio process on 127.0.0.1.

One port serves every device: the SSH user names the device (the inventory gives each host
its own username), so 10,000 devices need one listening socket and one known_hosts line.
A login is a public key the fleet made (`Keys`) or, when the fleet has one, its password
(FLATFAB_PASSWORD of the fleet's environment, as eAPI takes it); an unknown user, key or
password is refused, as is every login of a device with the `refuse` fault. Each exec
request is answered by the device (its stdin read to EOF first, as the drivers send it); a
SONiC switch's session is instead the interactive shell netmiko drives (sonic.py). A `slow`
device answers late without holding up the others. The server counts connections (open now,
peak, total), commands and bytes sent, and its own CPU time, for the fleet benchmark, and the
logins attempted per device (user name), so a test can tell which devices a run connected to.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import resource
import sys
import time
import traceback
from dataclasses import asdict, dataclass, field
from pathlib import Path

import asyncssh

from tests.doubles.fleet import Fleet
from tests.doubles.fleet.shell import ShellDevice
from tests.doubles.fleet.sonic import SonicDevice, serve_shell

KEY_TYPE = "ssh-ed25519"


@dataclass
class Keys:
    """The fleet's host key and the one client key every device accepts (OpenSSH files)."""

    host_key: Path
    client_key: Path  # private key, handed to the drivers through the inventory
    known_hosts: Path

    @classmethod
    def make(cls, folder: Path) -> Keys:
        folder.mkdir(parents=True, exist_ok=True)
        keys = cls(folder / "fleet_host_key", folder / "id_ed25519", folder / "known_hosts")
        for path in (keys.host_key, keys.client_key):
            if not path.exists():
                asyncssh.generate_private_key(KEY_TYPE).write_private_key(path)
                path.chmod(0o600)
        return keys

    def write_known_hosts(self, port: int) -> None:
        public = asyncssh.read_private_key(self.host_key).export_public_key().decode().strip()
        self.known_hosts.write_text(f"[127.0.0.1]:{port} {public}\n")


@dataclass
class Stats:
    connections_open: int = 0
    connections_peak: int = 0
    connections_total: int = 0
    logins_refused: int = 0
    handler_errors: int = 0  # commands the simulator failed to answer (its own bugs)
    commands: int = 0
    bytes_sent: int = 0
    cpu_s: float = 0.0
    max_rss_mb: float = 0.0
    logins: dict[str, int] = field(default_factory=dict)  # user (device) -> attempts


class _Session(asyncssh.SSHServer):
    def __init__(self, server: FleetServer) -> None:
        self.server = server

    def connection_made(self, conn: asyncssh.SSHServerConnection) -> None:
        stats = self.server.stats
        stats.connections_open += 1
        stats.connections_total += 1
        stats.connections_peak = max(stats.connections_peak, stats.connections_open)

    def connection_lost(self, exc: Exception | None) -> None:
        self.server.stats.connections_open -= 1

    def begin_auth(self, username: str) -> bool:
        logins = self.server.stats.logins
        logins[username] = logins.get(username, 0) + 1
        return True

    def password_auth_supported(self) -> bool:
        return self.server.password is not None

    def public_key_auth_supported(self) -> bool:
        return True

    def validate_public_key(self, username: str, key: asyncssh.SSHKey) -> bool:
        return self._admit(username, key.public_data == self.server.client_public.public_data)

    def validate_password(self, username: str, password: str) -> bool:
        expected = self.server.password
        return self._admit(username, expected is not None and hmac.compare_digest(
            password.encode(), expected.encode()))

    def _admit(self, username: str, credential_ok: bool) -> bool:
        fleet = self.server.fleet
        ok = (credential_ok and username in fleet.plan.devices
              and not fleet.device(username).faults.refuse)
        if not ok:
            self.server.stats.logins_refused += 1
        return ok


class FleetServer:
    """Serves `fleet` over SSH on 127.0.0.1 (port 0: any free one)."""

    def __init__(self, fleet: Fleet, keys: Keys, port: int = 0, *,
                 password: str | None = None) -> None:
        self.fleet, self.keys, self.port = fleet, keys, port
        self.password = password  # None: keys only
        self.stats = Stats()
        self.client_public = asyncssh.read_private_key(keys.client_key).convert_to_public()
        self._server: asyncssh.SSHAcceptor | None = None
        self._cpu_base = 0.0

    async def start(self) -> int:
        self._server = await asyncssh.create_server(
            lambda: _Session(self), "127.0.0.1", self.port,
            server_host_keys=[str(self.keys.host_key)], process_factory=self._handle,
            encoding=None, line_editor=False, allow_scp=False, keepalive_interval=0)
        self.port = self._server.sockets[0].getsockname()[1]
        self.keys.write_known_hosts(self.port)
        return self.port

    async def _handle(self, process: asyncssh.SSHServerProcess[bytes]) -> None:
        try:
            await self._answer(process)
        except (asyncssh.Error, OSError) as exc:
            # the client went away mid-command (or asyncssh ends the connection): nothing
            # to answer, but a dropped session is named in the fleet's log
            print(f"fleet: {process.get_extra_info('username')}: {process.command!r}: "
                  f"{type(exc).__name__}: {exc}", file=sys.stderr)
            raise
        except Exception as exc:  # noqa: BLE001 - a fault of the simulator, shown as one
            # asyncssh would end the whole connection and log it only at debug level: the
            # client would see its session die, not the fleet's bug
            self.stats.handler_errors += 1
            traceback.print_exc(file=sys.stderr)
            with contextlib.suppress(asyncssh.Error, OSError):
                process.stderr.write(f"fleet: internal error: {type(exc).__name__}: "
                                     f"{exc}\n".encode())
                process.exit(255)

    async def _answer(self, process: asyncssh.SSHServerProcess[bytes]) -> None:
        name = process.get_extra_info("username")
        device = self.fleet.device(name)
        if isinstance(device, SonicDevice):  # netmiko's interactive shell (sonic.py)
            await serve_shell(process, device, self.count)
            return
        if not isinstance(device, ShellDevice):
            process.stderr.write(f"fleet: {name} is not served over SSH\n".encode())
            process.exit(1)
            return
        stdin = (await process.stdin.read()).decode()
        if device.faults.delay_s:
            await asyncio.sleep(device.faults.delay_s)
        reply = device.execute(process.command or "", stdin)
        out, err = reply.stdout.encode(), reply.stderr.encode()
        self.count(len(out) + len(err))
        process.stdout.write(out)
        if err:
            process.stderr.write(err)
        process.exit(reply.status)

    def reset(self) -> None:
        """Count afresh from now (the benchmark measures one operation at a time)."""
        self.stats = Stats(connections_open=self.stats.connections_open,
                           connections_peak=self.stats.connections_open)
        usage = resource.getrusage(resource.RUSAGE_SELF)
        self._cpu_base = usage.ru_utime + usage.ru_stime

    def count(self, sent: int) -> None:
        """One command answered with `sent` bytes (shells and eAPI count here too)."""
        self.stats.commands += 1
        self.stats.bytes_sent += sent

    def snapshot(self) -> Stats:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        self.stats.cpu_s = round(usage.ru_utime + usage.ru_stime - self._cpu_base, 3)
        self.stats.max_rss_mb = round(usage.ru_maxrss / 1024, 1)
        return self.stats

    async def serve(self, stats_file: Path | None = None, every_s: float = 1.0) -> None:
        """Run until cancelled, writing the stats to `stats_file` every `every_s`."""
        while True:
            for device in list(self.fleet.devices.values()):
                device.tick()
            if stats_file is not None:
                tmp = stats_file.with_suffix(".tmp")
                tmp.write_text(json.dumps(asdict(self.snapshot()), sort_keys=True) + "\n")
                tmp.replace(stats_file)
            await asyncio.sleep(every_s)

    def close(self) -> None:
        if self._server is not None:
            self._server.close()


def wait_for_file(path: Path, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{path} did not appear in {timeout:.0f} s")
        time.sleep(0.05)
