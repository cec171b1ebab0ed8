"""SSH command transport for flatfab's own drivers (paramiko exec channels).

Exec channels give clean stdout, stderr and exit status, which prompt-scraping does not.
Host keys are always verified; every command is logged; a read-only session refuses
anything a driver marks as changing the device.
"""

from __future__ import annotations

import contextlib
import errno
import shlex
import socket
import time
from dataclasses import dataclass, field
from pathlib import Path

import paramiko


class TransportError(Exception):
    """The device could not be reached or a command failed to run."""


class ReadOnlyError(TransportError):
    """A change was attempted through a session opened read-only (verify, audit)."""


# paramiko's words for a TCP connection on which no SSH handshake completed in time
_NO_HANDSHAKE = ("banner", "no existing session", "negotiation timed out")
IDLE_POLL_S = 5.0  # how often an idle session's reader thread wakes (paramiko: 0.1 s)


@dataclass(frozen=True)
class CommandResult:
    command: str
    stdout: str
    stderr: str
    exit_status: int

    @property
    def ok(self) -> bool:
        return self.exit_status == 0


@dataclass
class LoggedCommand:
    command: str
    mutating: bool
    exit_status: int
    seconds: float


@dataclass
class SshOptions:
    host: str
    username: str
    port: int = 22
    password: str | None = field(default=None, repr=False)  # never printed
    key_file: str | None = None
    known_hosts: str | None = None
    timeout: float = 10.0
    read_only: bool = False
    sudo: bool = True


@dataclass
class SshSession:
    options: SshOptions
    log: list[LoggedCommand] = field(default_factory=list)
    _client: paramiko.SSHClient | None = None

    def open(self) -> None:
        opts = self.options
        client = paramiko.SSHClient()
        if opts.known_hosts:
            path = Path(opts.known_hosts).expanduser()
            if not path.exists():
                raise TransportError(f"known_hosts file {path} not found")
            client.load_host_keys(str(path))
        else:
            client.load_system_host_keys()
        # never trust an unknown host key: no AutoAddPolicy
        client.set_missing_host_key_policy(paramiko.RejectPolicy())
        try:
            client.connect(
                opts.host, port=opts.port, username=opts.username, password=opts.password,
                key_filename=opts.key_file, look_for_keys=opts.key_file is None
                and opts.password is None, allow_agent=opts.key_file is None,
                timeout=opts.timeout, banner_timeout=opts.timeout, auth_timeout=opts.timeout)
        except Exception as exc:
            client.close()
            raise TransportError(self._why_not_open(exc)) from exc
        sock = _socket_of(client)
        if sock is not None:
            # paramiko's reader thread wakes every 0.1 s while idle (its socket timeout) to
            # see whether it was closed: a rollout holding a batch of a thousand sessions
            # through a gate then spends a core on wakeups (at 1 s, 2,500 sessions still
            # starved a confirm past its 60 s timeout). Data still arrives at once, and
            # close() shuts the socket down to wake the thread.
            sock.settimeout(IDLE_POLL_S)
        self._client = client

    def _why_not_open(self, exc: Exception) -> str:
        """The one line that says why the session did not open."""
        opts = self.options
        where = f"[{opts.host}]:{opts.port}" if ":" in opts.host else f"{opts.host}:{opts.port}"
        known = (str(Path(opts.known_hosts).expanduser()) if opts.known_hosts
                 else "the user's known_hosts")
        if isinstance(exc, paramiko.BadHostKeyException):
            return f"host key of {opts.host} does not match {known}"
        if isinstance(exc, paramiko.AuthenticationException):
            return f"authentication failed for {opts.username} on {where}"
        if isinstance(exc, paramiko.ssh_exception.NoValidConnectionsError):
            codes = {getattr(e, "errno", None) for e in exc.errors.values()}
            if errno.ECONNREFUSED in codes:
                return f"connection refused by {where}"
            return f"cannot connect to {where}: {_strerror(exc)}"
        if isinstance(exc, TimeoutError):
            return f"timed out after {opts.timeout:g} s connecting to {where}"
        if isinstance(exc, paramiko.SSHException):
            text = str(exc)
            if "not found in known_hosts" in text:
                return f"host key of {opts.host} not in {known}"
            if any(w in text.lower() for w in _NO_HANDSHAKE):
                # the port accepted, but no SSH server answered in time (paramiko says so
                # only as a session that never came to be)
                return f"timed out after {opts.timeout:g} s waiting for SSH from {where}"
            return f"SSH to {where} failed: {text.splitlines()[0] if text else 'no reason'}"
        if isinstance(exc, socket.gaierror):
            return f"cannot resolve {opts.host}: {exc.strerror or exc}"
        if isinstance(exc, OSError):
            return f"cannot connect to {where}: {_strerror(exc)}"
        text = str(exc).strip()
        return f"SSH to {where} failed: {text.splitlines()[0] if text else type(exc).__name__}"

    def close(self) -> None:
        if self._client is not None:
            sock = _socket_of(self._client)
            if sock is not None:
                # wakes the reader thread blocked in recv (IDLE_POLL_S): a closed fd alone
                # would keep the connection up until its next wakeup
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
            self._client.close()
            self._client = None

    @property
    def is_alive(self) -> bool:
        transport = self._client.get_transport() if self._client else None
        return bool(transport and transport.is_active())

    def run(self, command: str, *, stdin: str | None = None, mutating: bool = False,
            privileged: bool = False, timeout: float = 60.0) -> CommandResult:
        """Run one shell command; `mutating` commands are refused on read-only sessions."""
        if mutating and self.options.read_only:
            raise ReadOnlyError(f"{self.options.host}: refused on a read-only session: "
                                    f"{command}")
        if self._client is None:
            raise TransportError(f"{self.options.host}: not connected")
        shown_as = command  # errors name the command asked for, not its sudo wrapper
        if privileged and self.options.sudo:
            command = f"sudo -n sh -c {shlex.quote(command)}"
        started = time.monotonic()
        try:
            stdin_f, stdout_f, stderr_f = self._client.exec_command(command, timeout=timeout)
            if stdin is not None:
                stdin_f.write(stdin)
            stdin_f.channel.shutdown_write()
            out = stdout_f.read().decode(errors="replace")
            err = stderr_f.read().decode(errors="replace")
            status = stdout_f.channel.recv_exit_status()
        except TimeoutError:
            # the channel's timeout: the device holds the session but does not answer
            raise TransportError(f"no answer within {timeout:g} s to "
                                 f"`{_shown(shown_as or command)}`") from None
        except (paramiko.SSHException, OSError, EOFError) as exc:
            why = str(exc) or type(exc).__name__
            if not self.is_alive:  # paramiko's own words ("Unable to open channel.") hide it
                why = f"the device closed the SSH connection ({why})"
            raise TransportError(f"{self.options.host}: {_shown(shown_as or command)}: "
                                 f"{why}") from None
        self.log.append(LoggedCommand(command, mutating, status, time.monotonic() - started))
        return CommandResult(command, out, err, status)


def _shown(command: str, limit: int = 60) -> str:
    """A command as an error names it: its first line, cut at `limit` characters."""
    line = command.strip().splitlines()[0] if command.strip() else command
    return line if len(line) <= limit else line[:limit - 3] + "..."


def _strerror(exc: OSError) -> str:
    """An OSError's words without errno numbers ("Connection refused")."""
    if isinstance(exc, paramiko.ssh_exception.NoValidConnectionsError):
        inner = [e for e in exc.errors.values() if isinstance(e, OSError)]
        if inner:
            return _strerror(inner[0])
    return exc.strerror or str(exc) or type(exc).__name__


def _socket_of(client: paramiko.SSHClient) -> socket.socket | None:
    """The TCP socket under a connected client (None through a proxy command)."""
    sock = getattr(client.get_transport(), "sock", None)
    return sock if isinstance(sock, socket.socket) else None
