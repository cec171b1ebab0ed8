"""Shared NAPALM machinery for devices configured by shell over SSH (frr, linux_host).

A subclass says how to read running state, how to turn a candidate into desired state, how
to print state as config text and which shell script moves the device from one state to
another. This class does the rest the same way for every platform:
- compare_config: unified diff of running vs desired text;
- commit_config: backup and a revert script are written on the device first; with
  revert_in, a detached timer on the device runs the revert unless confirm_commit comes;
  a failed apply is reverted at once;
- rollback: cancel a pending commit, or restore the backup of the last commit.
"""

from __future__ import annotations

import shlex
import time
from abc import abstractmethod
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Generic, TypeVar

from napalm.base import NetworkDriver
from napalm.base.exceptions import (
    CommitError,
    ConnectionException,
    MergeConfigException,
    ReplaceConfigException,
)

from flatfab import devicejson
from flatfab.platforms.cli_driver import LoadedCandidate, unified_diff
from flatfab.transport.ssh import (
    CommandResult,
    ReadOnlyError,
    SshOptions,
    SshSession,
    TransportError,
)

MARK = "@@flatfab@@"
S = TypeVar("S")


def split_batch(out: str) -> dict[str, str]:
    """A batch's output by key: what stands between each `@@flatfab@@ <key>` line and the
    next, without the blank line the batch echoes before each marker.

    Sliced, not split into lines: a switch's RIB is megabytes, and a list of its lines would
    hold it twice more while it is read. Output with carriage returns (which end lines for
    str.splitlines too) or a key twice (a device that prints the marker) is read line by
    line.
    """
    marker = MARK + " "
    if "\r" in out:
        return _split_lines(out)
    parts: dict[str, str] = {}
    start = 0 if out.startswith(marker) else out.find("\n" + marker) + 1
    while start > 0 or (start == 0 and out.startswith(marker)):
        end = out.find("\n", start)
        end = len(out) if end < 0 else end
        key = out[start + len(marker):end]
        if key in parts:
            return _split_lines(out)
        following = out.find("\n" + marker, end)
        section = out[end + 1:] if following < 0 else out[end + 1:following + 1]
        text = section[:-1] if section.endswith("\n") else section
        parts[key] = text[:-1] if text.endswith("\n") else text
        if following < 0:
            break
        start = following + 1
    return parts


def _split_lines(out: str) -> dict[str, str]:
    result: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in out.splitlines():
        if line.startswith(MARK + " "):
            if current and current[-1] == "":
                current.pop()
            current = result.setdefault(line[len(MARK) + 1:], [])
        elif current is not None:
            current.append(line)
    if current and current[-1] == "":
        current.pop()
    return {key: "\n".join(lines) for key, lines in result.items()}


class DeviceCommandError(Exception):
    """A command on the device failed; the message names it and its stderr."""


class CandidateError(ValueError):
    """A candidate config that cannot be applied (syntax, unknown interface, ...)."""


class ShellDriver(LoadedCandidate[str], NetworkDriver, Generic[S]):  # type: ignore[misc]
    """Base for flatfab's SSH/shell NAPALM drivers. S is the platform's state type."""

    platform = ""  # the NAPALM driver name, as NAPALM's own drivers say it

    def __init__(self, hostname: str, username: str, password: str | None,
                 timeout: int = 60, optional_args: dict[str, Any] | None = None) -> None:
        # NAPALM's signature (its test_method_signatures compares defaults too); without a
        # password, the key, the agent or the user's own keys (flatfab sets the run's
        # password on the Nornir host: tasks/workflows/devices/credentials.py)
        args = optional_args or {}
        self.hostname = hostname
        self.username = username
        self.timeout = timeout
        self.optional_args = args
        self.state_dir: str = args.get("state_dir", "/var/lib/flatfab")
        self.session = SshSession(SshOptions(
            host=hostname, username=username, port=int(args.get("port", 22)),
            password=password or None, key_file=args.get("key_file"),
            known_hosts=args.get("known_hosts"), timeout=float(args.get("timeout", 10)),
            read_only=bool(args.get("read_only", False)), sudo=bool(args.get("sudo", True))))
        self._candidate: str | None = None
        self._merge = False
        # show commands already run while reads are cached (cached_reads): command -> result
        # of a command run alone, and command -> output of one run in a batch
        self._ran: dict[str, CommandResult] | None = None
        self._batched: dict[str, str] | None = None

    # ---- what a platform provides ------------------------------------------------------

    @abstractmethod
    def _read_state(self) -> S:
        """The device's running state, read with show-type commands only."""

    @abstractmethod
    def _desired_state(self, current: S, candidate: str, merge: bool) -> S:
        """The state the candidate asks for (raise CandidateError if it cannot be had)."""

    @abstractmethod
    def _format(self, state: S) -> str:
        """State as config text (what get_config shows and compare_config diffs)."""

    @abstractmethod
    def _transition(self, current: S, desired: S, *, merge: bool, tag: str) -> str:
        """A `sh -e` script that takes the device from current to desired."""

    @abstractmethod
    def _check_candidate(self, candidate: str) -> None:
        """Validate a candidate without changing anything; raise CandidateError."""

    @abstractmethod
    def _save_script(self, state: S) -> str:
        """A shell script that makes `state` the startup state."""

    # ---- connection --------------------------------------------------------------------

    def open(self) -> None:
        try:
            self.session.open()
        except TransportError as exc:
            raise ConnectionException(str(exc)) from exc

    def close(self) -> None:
        self.session.close()

    def is_alive(self) -> dict[str, bool]:
        return {"is_alive": self.session.is_alive}

    @property
    def command_log(self) -> list[Any]:
        return self.session.log

    # ---- command helpers ---------------------------------------------------------------

    @contextmanager
    def cached_reads(self) -> Iterator[None]:
        """Within it, each show command runs once: a collect reads the same `ip link` for
        several getters, and at fleet scale every round trip counts. A change empties it."""
        self._ran, self._batched = {}, {}
        try:
            yield
        finally:
            self._ran = self._batched = None

    def _run(self, command: str, *, stdin: str | None = None, mutating: bool = False,
             check: bool = True, timeout: float | None = None) -> CommandResult:
        cached = self._ran is not None and not mutating and stdin is None
        if mutating and self._ran is not None:
            self._ran, self._batched = {}, {}
        result = self._ran.get(command) if cached and self._ran is not None else None
        if result is None:
            result = self._execute(command, stdin=stdin, mutating=mutating, timeout=timeout)
            if cached and self._ran is not None:
                self._ran[command] = result
        if check and not result.ok:
            detail = (result.stderr or result.stdout).strip().splitlines()
            first = command.splitlines()[0][:80] if command else ""
            raise DeviceCommandError(f"{self.hostname}: `{first}` failed (exit "
                                     f"{result.exit_status}): {detail[-1] if detail else ''}")
        return result

    def _execute(self, command: str, *, stdin: str | None, mutating: bool,
                 timeout: float | None) -> CommandResult:
        try:
            result = self.session.run(command, stdin=stdin, mutating=mutating, privileged=True,
                                      timeout=timeout or self.timeout)
        except ReadOnlyError:
            raise  # a refused change is not a connection problem
        except TransportError as exc:
            raise ConnectionException(str(exc)) from exc
        return result

    def _batch(self, commands: dict[str, str]) -> dict[str, str]:
        """Run show-type commands in one round trip; returns each one's stdout (those run
        already while reads are cached are not run again).

        Each marker starts on a line of its own even when the output before it did not end
        in a newline (a file written without one, say): the extra line is dropped again.
        """
        known = self._batched or {}
        wanted = {key: cmd for key, cmd in commands.items() if cmd not in known}
        found = self._run_batch(wanted) if wanted else {}
        if self._batched is not None:
            self._batched.update({wanted[key]: out for key, out in found.items()})
        return {key: found[key] if key in found else known[cmd]
                for key, cmd in commands.items()}

    def _forget(self, commands: Iterable[str]) -> None:
        """Drop these commands' outputs from the read cache (read once, large)."""
        if self._batched is not None:
            for command in commands:
                self._batched.pop(command, None)

    def _run_batch(self, commands: dict[str, str]) -> dict[str, str]:
        script = "".join(f"echo; echo '{MARK} {key}'\n{cmd}\n" for key, cmd in commands.items())
        found = split_batch(self._run("sh -s", stdin=script + "echo\n").stdout)
        return {key: found.get(key, "") for key in commands}

    def _json(self, command: str) -> Any:
        out = self._run(command).stdout
        try:
            return devicejson.loads(out or "null")
        except ValueError:
            raise DeviceCommandError(f"{self.hostname}: `{command}` did not return JSON: "
                                     f"{out.strip()[:120]}") from None

    # ---- configuration -----------------------------------------------------------------

    def get_config(self, retrieve: str = "all", full: bool = False, sanitized: bool = False,
                   format: str = "text") -> dict[str, str]:
        result = {"running": "", "startup": "", "candidate": ""}
        if retrieve in {"all", "running"}:
            result["running"] = self._format(self._read_state())
        if retrieve in {"all", "startup"}:
            result["startup"] = self._run(f"cat {self.state_dir}/startup.conf 2>/dev/null "
                                          "|| true").stdout
        if retrieve in {"all", "candidate"} and self._candidate is not None:
            result["candidate"] = self._candidate
        return result

    def _load(self, filename: str | None, config: str | None, *, merge: bool) -> None:
        error = MergeConfigException if merge else ReplaceConfigException
        if config is None:
            if filename is None:
                raise error("give a filename or a config")
            config = Path(filename).read_text(encoding="utf-8")
        try:
            self._check_candidate(config)
        except CandidateError as exc:
            raise error(f"{self.hostname}: {exc}") from None
        self._candidate = config
        self._merge = merge

    def compare_config(self) -> str:
        if self._candidate is None:
            return ""
        return unified_diff(*self.compare_texts())

    def compare_texts(self) -> tuple[str, str]:
        """(running, candidate) as the normalized config text compare_config diffs."""
        current = self._read_state()
        if self._candidate is None:
            text = self._format(current)
            return text, text
        try:
            desired = self._desired_state(current, self._candidate, self._merge)
        except CandidateError as exc:
            raise ReplaceConfigException(f"{self.hostname}: {exc}") from None
        return self._format(current), self._format(desired)

    def commit_config(self, message: str = "", revert_in: int | None = None) -> None:
        if self._candidate is None:
            raise CommitError(f"{self.hostname}: no candidate loaded")
        if self.has_pending_commit():
            raise CommitError(f"{self.hostname}: a commit is pending confirmation; confirm it "
                              "or roll it back first")
        current = self._read_state()
        try:
            desired = self._desired_state(current, self._candidate, self._merge)
            forward = self._transition(current, desired, merge=self._merge, tag="candidate")
            back = self._transition(desired, current, merge=False, tag="rollback")
        except CandidateError as exc:
            raise CommitError(f"{self.hostname}: {exc}") from None
        d = shlex.quote(self.state_dir)
        # the backup and its revert script are on the device before anything changes
        self._run(f"mkdir -p {d} && cat > {d}/rollback.conf", stdin=self._format(current),
                  mutating=True)
        self._run(f"cat > {d}/revert.sh", stdin=back, mutating=True)
        if revert_in is not None:
            # the timer writes its own pid: after setsid it leads its process group (the
            # group confirm stops), where `$!` would name setsid's parent had setsid forked
            self._run(f"rm -f {d}/revert.pid; setsid sh -c 'echo $$ > {d}/revert.pid; "
                      f"sleep {int(revert_in)}; sh {d}/revert.sh; rm -f {d}/revert.pid' "
                      f">{d}/revert.log 2>&1 </dev/null & i=0; while [ ! -s {d}/revert.pid ] "
                      f"&& [ $i -lt 200 ]; do i=$((i+1)); sleep 0.05; done; "
                      f"[ -s {d}/revert.pid ]", mutating=True)
        result = self._run("sh -s", stdin=forward, mutating=True, check=False, timeout=120)
        if not result.ok:
            detail = (result.stderr or result.stdout).strip().splitlines()
            self._revert_now()
            raise CommitError(f"{self.hostname}: apply failed and was rolled back: "
                              f"{detail[-1] if detail else result.exit_status}")
        self._candidate = None
        if revert_in is None:
            self._save(desired)

    def _save(self, state: S) -> None:
        d = shlex.quote(self.state_dir)
        script = f"cat > {d}/startup.conf <<'FLATFAB_EOF'\n{self._format(state)}FLATFAB_EOF\n"
        self._run("sh -s", stdin=script + self._save_script(state), mutating=True)

    def _pending_pid(self) -> int | None:
        d = shlex.quote(self.state_dir)
        out = self._run(f"p=$(cat {d}/revert.pid 2>/dev/null) && kill -0 $p 2>/dev/null "
                        "&& echo $p || true").stdout.strip()
        return int(out) if out.isdigit() else None

    def has_pending_commit(self) -> bool:
        return self._pending_pid() is not None

    def _cancel_timer(self, pid: int) -> None:
        """Stop the revert timer's whole process group and make sure it is gone.

        (dash's kill builtin cannot signal a process group, hence pkill -g.)
        """
        # a zombie runs nothing, and an init may take a while to reap one: only members in
        # another state count (procps-ng's -r; a pgrep without it counts every member)
        alive = (f"alive() {{ pgrep -r R,S,D,T,t -g {pid} >/dev/null 2>&1; r=$?; "
                 f"[ $r -eq 2 ] && {{ pgrep -g {pid} >/dev/null; r=$?; }}; return $r; }}; ")
        out = self._run(f"pkill -TERM -g {pid}; {alive}i=0; while alive; do "
                        f"i=$((i+1)); [ $i -gt 50 ] && pkill -KILL -g {pid}; "
                        f"[ $i -gt 80 ] && echo alive && break; sleep 0.1; done; "
                        f"rm -f {shlex.quote(self.state_dir)}/revert.pid", mutating=True).stdout
        if "alive" in out:
            raise CommitError(f"{self.hostname}: the revert timer (pid {pid}) could not be "
                              "stopped")

    def confirm_commit(self) -> None:
        pid = self._pending_pid()
        if pid is None:
            raise CommitError(f"{self.hostname}: no commit is pending confirmation (it may "
                              "have been reverted already)")
        self._cancel_timer(pid)
        self._save(self._read_state())

    def _revert_now(self) -> None:
        pid = self._pending_pid()
        if pid is not None:
            self._cancel_timer(pid)
        self._run(f"sh {shlex.quote(self.state_dir)}/revert.sh", mutating=True, timeout=120)

    def rollback(self) -> None:
        """Undo the last commit: cancel a pending one, else restore its backup."""
        if self.has_pending_commit():
            self._revert_now()
            return
        backup = self._run(f"cat {shlex.quote(self.state_dir)}/rollback.conf", check=False)
        if not backup.ok:
            raise CommitError(f"{self.hostname}: nothing to roll back to")
        self.load_replace_candidate(config=backup.stdout)
        self.commit_config()

    def wait_pending_revert(self, timeout: float = 60) -> bool:
        """Wait until a timed revert has run; False if it is still pending at the timeout."""
        deadline = time.monotonic() + timeout
        while self.has_pending_commit():
            if time.monotonic() > deadline:
                return False
            time.sleep(0.5)
        return True


def normalized_texts(driver: object, intended: str) -> tuple[str, str]:
    """(running, intended) as a ShellDriver normalizes them; loads nothing onto the device."""
    if not isinstance(driver, ShellDriver):
        raise TypeError(f"expected a shell driver, not {type(driver).__name__}")
    driver.load_replace_candidate(config=intended)
    try:
        return driver.compare_texts()
    finally:
        driver.discard_config()
