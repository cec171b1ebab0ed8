"""One change run per fabric at a time: a lock file with owner, pid and start time."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import time
from collections.abc import Iterator
from pathlib import Path

from tasks.errors import FlatfabError


class LockedError(FlatfabError):
    """Another run holds the fabric's lock."""


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@contextlib.contextmanager
def fabric_lock(state_dir: Path, fabric: str, purpose: str) -> Iterator[Path]:
    """Hold the fabric's lock; a lock left by a dead process on this host is taken over."""
    locks = state_dir / "locks"
    locks.mkdir(parents=True, exist_ok=True)
    path = locks / f"{fabric}.lock"
    me = {"pid": os.getpid(), "host": socket.gethostname(), "user": os.environ.get("USER", ""),
          "purpose": purpose, "since": time.time()}
    for _ in range(2):
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            try:
                owner = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                owner = {}
            stale = owner.get("host") == me["host"] and not alive(int(owner.get("pid", 0)))
            if stale:
                path.unlink(missing_ok=True)
                continue
            age = time.time() - float(owner.get("since", time.time()))
            raise LockedError(f"fabric {fabric!r} is locked by {owner.get('purpose', '?')} "
                              f"(pid {owner.get('pid', '?')} on {owner.get('host', '?')}, "
                              f"user {owner.get('user') or '?'}, {age:.0f} s ago); "
                              f"lock file {path}") from None
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(me, handle)
        break
    try:
        yield path
    finally:
        path.unlink(missing_ok=True)
