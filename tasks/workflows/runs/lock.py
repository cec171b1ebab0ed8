"""One change run per fabric at a time: a lock file with owner, pid and start time.

A lock left by a dead process on this host is taken over by itself. A lock held from
another host (a state directory on shared storage) cannot be checked from here: it is
refused with its owner and age until the operator breaks it (`--break-lock`), and the
runs that owner left marked running are then treated as interrupted.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from flatfab.errors import FlatfabError


class LockedError(FlatfabError):
    """Another run holds the fabric's lock."""


@dataclass(frozen=True)
class LockOwner:
    pid: int
    host: str
    user: str
    purpose: str
    since: float

    @classmethod
    def read(cls, path: Path) -> LockOwner:
        """The owner a lock file names; an unreadable file names nobody (pid 0)."""
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            return cls(pid=int(data.get("pid", 0)), host=str(data.get("host", "?")),
                       user=str(data.get("user", "")), purpose=str(data.get("purpose", "?")),
                       since=float(data.get("since", time.time())))
        except (OSError, ValueError, TypeError, AttributeError):
            return cls(pid=0, host="?", user="", purpose="?", since=time.time())

    def describe(self) -> str:
        if not self.pid:
            return "an unreadable lock file"
        return (f"{self.purpose} (pid {self.pid} on {self.host}, user {self.user or '?'}, "
                f"{time.time() - self.since:.0f} s ago)")


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@dataclass
class Held:
    """The lock this process holds, and whose lock it broke to get it (if any)."""

    path: Path
    broken: LockOwner | None = None


@contextlib.contextmanager
def fabric_lock(state_dir: Path, fabric: str, purpose: str,
                break_lock: bool = False) -> Iterator[Held]:
    """Hold the fabric's lock for the block; see the module docstring for takeovers."""
    locks = state_dir / "locks"
    locks.mkdir(parents=True, exist_ok=True)
    path = locks / f"{fabric}.lock"
    here = socket.gethostname()
    me = {"pid": os.getpid(), "host": here, "user": os.environ.get("USER", ""),
          "purpose": purpose, "since": time.time()}
    held = Held(path)
    for _ in range(3):
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            owner = LockOwner.read(path)
            local = owner.host == here
            if local and owner.pid and alive(owner.pid):
                raise LockedError(f"fabric {fabric!r} is locked by {owner.describe()}, "
                                  f"still running; lock file {path}") from None
            if not local and not break_lock:
                raise LockedError(f"fabric {fabric!r} is locked by {owner.describe()}; "
                                  "its process cannot be checked from this host. If that "
                                  "run is gone, pass --break-lock") from None
            if not local:
                held.broken = owner
            path.unlink(missing_ok=True)  # a dead owner's lock, or one the operator broke
            continue
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(me, handle)
        break
    else:
        raise LockedError(f"fabric {fabric!r}: could not take the lock {path}")
    try:
        yield held
    finally:
        path.unlink(missing_ok=True)
