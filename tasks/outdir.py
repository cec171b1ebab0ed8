"""Output directories named on the command line: made ready, or one clear error."""

from __future__ import annotations

import tempfile
from pathlib import Path

from flatfab.errors import InputError


def ready_dir(path: Path, option: str) -> Path:
    """`path` as an existing, writable directory (created when missing)."""
    if path.exists() and not path.is_dir():
        raise InputError.single(option, "", f"{path} exists and is not a directory")
    try:
        path.mkdir(parents=True, exist_ok=True)
        # proves writability for root too (os.access says yes to root even on a read-only
        # mount); the probe file is gone when this returns
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError as exc:
        raise InputError.single(option, "", f"cannot write to {path}: "
                                f"{exc.strerror or exc}") from None
    return path
