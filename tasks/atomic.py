"""Atomic file writes: a reader (or a run killed mid-write) sees the old file or the new one."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_atomic(path: Path, text: str) -> None:
    """Write a temp file in the same directory, flush it to disk, rename it over `path`."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        Path(tmp).chmod(0o644)  # mkstemp makes 0600; report collectors run as other users
        Path(tmp).replace(path)  # atomic within one file system
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
