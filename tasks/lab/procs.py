"""Finding and stopping a lab's processes by the namespaces they live in, and what is left.

A lab's processes are recognized by kernel namespace identity (`/proc/<pid>/ns/{net,mnt,uts}`
against the lab's namespace files), not by recorded pids: daemons fork, watchfrr restarts
what dies, sshd forks per session, and a pid recorded at `up` may be reused by now.
Everything here takes its inputs (the /proc root, signal, clock) so it is testable unprivileged.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

NS_KINDS = ("net", "mnt", "uts")
# Z: exited, waiting for its parent (init here, not us) to reap it; X: being reaped.
EXITED_STATES = frozenset({"Z", "X"})


@dataclass(frozen=True)
class Proc:
    pid: int
    comm: str
    state: str
    ppid: int
    namespaces: frozenset[str]  # e.g. "net:[4026532281]"
    cmdline: str

    @property
    def exited(self) -> bool:
        return self.state in EXITED_STATES


def read_proc(pid: int, proc_root: Path = Path("/proc")) -> Proc | None:
    """One process as /proc shows it, or None if it is gone."""
    base = proc_root / str(pid)
    try:
        stat = (base / "stat").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    # comm may contain spaces and ')': it is everything between the first '(' and last ')'
    comm = stat[stat.find("(") + 1:stat.rfind(")")]
    rest = stat[stat.rfind(")") + 1:].split()
    namespaces = set()
    for kind in NS_KINDS:
        with contextlib.suppress(OSError):  # a zombie has no namespaces any more
            namespaces.add(str((base / "ns" / kind).readlink()))
    cmdline = ""
    with contextlib.suppress(OSError):
        cmdline = (base / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    state = rest[0] if rest else "?"
    ppid = int(rest[1]) if len(rest) > 1 and rest[1].isdigit() else 0
    return Proc(pid, comm, state, ppid, frozenset(namespaces), cmdline)


def scan(proc_root: Path = Path("/proc")) -> list[Proc]:
    procs = []
    with contextlib.suppress(OSError):
        for entry in proc_root.iterdir():
            if entry.name.isdigit():
                proc = read_proc(int(entry.name), proc_root)
                if proc is not None:
                    procs.append(proc)
    return procs


def namespace_ids(files: Iterable[tuple[str, Path]],
                  nsfs_dev: int | None = None) -> frozenset[str]:
    """`kind:[inode]` of each (kind, namespace file) that is a live namespace binding.

    A namespace file whose bind mount is gone is a plain file: its inode names nothing, so
    only files on the namespace filesystem (nsfs, the device of /proc/self/ns/*) count.
    """
    if nsfs_dev is None:
        nsfs_dev = Path("/proc/self/ns/net").stat().st_dev
    ids = set()
    for kind, path in files:
        with contextlib.suppress(OSError):
            st = path.stat()
            if st.st_dev == nsfs_dev:
                ids.add(f"{kind}:[{st.st_ino}]")
    return frozenset(ids)


def ancestors(pid: int, proc_root: Path = Path("/proc")) -> set[int]:
    """pid and every parent up to init: never signalled, whatever their command line says."""
    chain: set[int] = set()
    while pid > 1 and pid not in chain:
        chain.add(pid)
        proc = read_proc(pid, proc_root)
        if proc is None:
            break
        pid = proc.ppid
    return chain


def members(procs: Iterable[Proc], ns_ids: frozenset[str], marker: str,
            exclude: Iterable[int] = (), home: frozenset[str] = frozenset()) -> dict[int, str]:
    """Running processes of the lab: in one of its namespaces, or started with one of its
    paths on the command line from a namespace that is not `home` (ours): what a crashed
    `down` left after removing the namespace files, but not an operator's `ssh -i <lab key>`.
    """
    skip = set(exclude)
    return {p.pid: p.comm for p in procs
            if p.pid not in skip and not p.exited
            and (p.namespaces & ns_ids
                 or (marker and marker in p.cmdline and not p.namespaces & home))}


def stop(find: Callable[[], dict[int, str]], *, first: int = signal.SIGTERM,
         term_grace: float = 5.0, kill_grace: float = 3.0,
         send: Callable[[int, int], None] | None = None,
         clock: Callable[[], float] = time.monotonic,
         sleep: Callable[[float], None] = time.sleep, poll: float = 0.05) -> dict[int, str]:
    """Send `first` (SIGTERM) to every process `find` returns, SIGKILL whatever still runs
    after term_grace, and return what still runs after kill_grace more (empty when all
    exited). The one stop-and-reap of flatfab: the lab's daemons and the local Nautobot's.

    `find` is asked again on every poll, so what appears meanwhile (a daemon watchfrr
    restarts, an sshd session child) is caught too; it may reap its own children first.
    """
    kill = send or _send
    termed: set[int] = set()
    start = clock()
    while True:
        found = find()
        if not found:
            return {}
        elapsed = clock() - start
        if elapsed >= term_grace + kill_grace:
            return found
        sig = first if elapsed < term_grace else signal.SIGKILL
        for pid in found:
            if sig == signal.SIGKILL or pid not in termed:
                kill(pid, sig)
                termed.add(pid)
        sleep(poll)


def _send(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, sig)


def wait_reaped(pids: Iterable[int], timeout: float, proc_root: Path = Path("/proc"),
                clock: Callable[[], float] = time.monotonic,
                sleep: Callable[[float], None] = time.sleep) -> list[int]:
    """Wait until init has reaped the zombies among pids; return those left at timeout.

    Lab daemons are orphans of init, which reaps on its own schedule (about 1.5 s on the
    firecracker init here), so `ps`/`pgrep` would list them as <defunct> for that long.
    A zombie whose parent is alive and not one of pids is that parent's to reap: not waited.
    """
    ours = set(pids)
    pending = set(ours)
    deadline = clock() + timeout
    while True:
        now = {p: q for p in pending if (q := read_proc(p, proc_root)) is not None and q.exited}
        pending = {p for p, q in now.items() if q.ppid <= 1 or q.ppid in ours}
        if not pending or clock() >= deadline:
            return sorted(pending)
        sleep(0.05)


def unescape_mount(field: str) -> str:
    """/proc/*/mountinfo escapes space, tab, newline and backslash as octal."""
    for code, char in (("\\040", " "), ("\\011", "\t"), ("\\012", "\n"), ("\\134", "\\")):
        field = field.replace(code, char)
    return field


def mounts_matching(mountinfo: str, roots: Iterable[str]) -> list[str]:
    """Mount points in mountinfo text at or below any of roots, deepest first."""
    prefixes = [r.rstrip("/") for r in roots]
    points = set()
    for line in mountinfo.splitlines():
        fields = line.split()
        if len(fields) < 5:
            continue
        point = unescape_mount(fields[4])
        if any(point == r or point.startswith(r + "/") for r in prefixes):
            points.add(point)
    return sorted(points, key=lambda p: (-p.count("/"), p))
