"""Commands and daemons of the Nautobot service: one-line errors, pids that survive a restart.

A daemon is recorded as (pid, start time): a pid reused by another program after a crash is
never signalled. Daemons start in a session of their own, so a web server's workers are
stopped with their leader's process group.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from flatfab.atomic import write_atomic
from flatfab.lab import procs
from flatfab.sot.errors import SotError

PROC = Path("/proc")
GONE_STATES = frozenset({"Z", "X"})  # exited; init reaps it on its own schedule


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else ""


def command_text(args: Sequence[str]) -> str:
    shown = " ".join(shlex.quote(a) for a in args[:6])
    return shown + (" ..." if len(args) > 6 else "")


def run(args: Sequence[str], *, what: str, env: Mapping[str, str] | None = None,
        stdin: str | None = None, timeout: float = 120,
        log: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run a command; on failure one line: what failed, the command, its last output line.

    With `log`, the output of a long command (migrate, pip) goes there as it comes, for
    `tail -f` and a closer look afterwards; stdout is then not returned.
    """
    full_env = {**os.environ, **env} if env else None
    try:
        if log is None:
            proc = subprocess.run(list(args), input=stdin, capture_output=True, text=True,
                                  timeout=timeout, check=False, env=full_env)
        else:
            with log.open("w", encoding="utf-8") as out:
                proc = subprocess.run(list(args), input=stdin, stdout=out,
                                      stderr=subprocess.STDOUT, text=True, timeout=timeout,
                                      check=False, env=full_env)
    except FileNotFoundError:
        raise SotError(f"{what}: command not found: {args[0]}") from None
    except subprocess.TimeoutExpired:
        raise SotError(f"{what}: `{command_text(args)}` timed out after {timeout:.0f} s"
                       ) from None
    if proc.returncode != 0:
        output = log.read_text(encoding="utf-8", errors="replace") if log else ""
        detail = (_last_line(proc.stderr or "") or _last_line(proc.stdout or "")
                  or _last_line(output) or f"exit {proc.returncode}")
        where = f" (full output: {log})" if log is not None else ""
        raise SotError(f"{what}: `{command_text(args)}` failed: {detail}{where}")
    return proc


@dataclass(frozen=True)
class Daemon:
    pid: int
    started: int  # clock ticks since boot (/proc/<pid>/stat field 22)


def _stat(pid: int) -> tuple[str, int, int] | None:
    """(state, process group, start time) of a pid, or None when it is gone."""
    try:
        text = (PROC / str(pid) / "stat").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    fields = text[text.rfind(")") + 2:].split()  # comm may hold spaces and ')'
    return fields[0], int(fields[2]), int(fields[19])


def identify(pid: int) -> Daemon | None:
    stat = _stat(pid)
    return Daemon(pid, stat[2]) if stat is not None else None


def running(daemon: Daemon) -> bool:
    """Still the process we started, and not exited."""
    stat = _stat(daemon.pid)
    return stat is not None and stat[0] not in GONE_STATES and stat[2] == daemon.started


def _group(leader: int) -> list[int]:
    """Live members of a process group (its leader's workers, forked helpers)."""
    found = []
    with contextlib.suppress(OSError):
        for entry in PROC.iterdir():
            if entry.name.isdigit():
                stat = _stat(int(entry.name))
                if stat is not None and stat[1] == leader and stat[0] not in GONE_STATES:
                    found.append(int(entry.name))
    return found


def spawn(args: Sequence[str], *, log: Path, env: Mapping[str, str] | None = None,
          cwd: Path | None = None) -> Daemon:
    """Start a daemon in its own session, output appended to `log`."""
    full_env = {**os.environ, **env} if env else None
    try:
        with log.open("ab") as out:
            proc = subprocess.Popen(list(args), stdin=subprocess.DEVNULL, stdout=out,
                                    stderr=subprocess.STDOUT, env=full_env, cwd=cwd,
                                    start_new_session=True)
    except OSError as exc:
        raise SotError(f"could not start `{command_text(args)}`: {exc.strerror}") from None
    daemon = identify(proc.pid)
    # it may already have exited: a start time of 0 still never matches a live process
    return daemon or Daemon(proc.pid, 0)


def _reap(pid: int) -> None:
    # a daemon this process started (a failed `up`) is our child: collect its exit status
    with contextlib.suppress(ChildProcessError, OSError):
        os.waitpid(pid, os.WNOHANG)


def _ours(daemon: Daemon) -> bool:
    """The pid is gone (its group may live on) or still the process we started (even as a
    zombie): never another program that got the pid later."""
    stat = _stat(daemon.pid)
    return stat is None or stat[2] == daemon.started


def stop(daemon: Daemon, *, first: signal.Signals = signal.SIGTERM, term_grace: float = 10.0,
         kill_grace: float = 5.0) -> bool:
    """Send `first` to each member of the daemon's process group, SIGKILL what is left after
    term_grace (the lab's stop-and-reap); True when every member has exited."""
    def members() -> dict[int, str]:
        _reap(daemon.pid)
        return dict.fromkeys(_group(daemon.pid), "") if _ours(daemon) else {}

    return not procs.stop(members, first=first, term_grace=term_grace, kill_grace=kill_grace,
                          poll=0.1)


def wait_gone(pid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while True:
        _reap(pid)
        stat = _stat(pid)
        if stat is None or stat[0] in GONE_STATES:
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)


def read_pids(path: Path) -> dict[str, Daemon]:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    pids = {}
    for name, entry in raw.items() if isinstance(raw, dict) else ():
        with contextlib.suppress(KeyError, TypeError, ValueError):
            pids[name] = Daemon(int(entry["pid"]), int(entry["started"]))
    return pids


def write_pids(path: Path, pids: Mapping[str, Daemon]) -> None:
    doc = {name: {"pid": d.pid, "started": d.started} for name, d in pids.items()}
    write_atomic(path, json.dumps(doc, indent=1, sort_keys=True) + "\n")
