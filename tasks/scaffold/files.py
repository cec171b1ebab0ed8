"""Write a set of new files under a folder, all or none, never over anything that exists.

Every path is judged first: one that exists (a file, a folder, a link, even a dangling one),
or that sits below something that is not a folder, refuses the whole set in one line naming
them all. Files are then created exclusively (O_EXCL: one made in the meantime is refused
too); a failure part-way removes what this call created, files and folders.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping
from pathlib import Path

from flatfab.errors import InputError


def _blocked(root: Path, relative: str) -> str | None:
    """Why `relative` cannot be created under `root` (None when it can)."""
    path = root / relative
    if os.path.lexists(path):
        return relative
    for parent in reversed(path.relative_to(root).parents[:-1]):
        below = root / parent
        if os.path.lexists(below) and not below.is_dir():
            return f"{parent} (not a folder)"
    return None


def refuse_taken(root: Path, files: Mapping[str, str], shown: str) -> None:
    if os.path.lexists(root) and not root.is_dir():
        raise InputError.single(shown, "", "is not a folder: flatfab init writes a project "
                                "folder (nothing was written)")
    taken = sorted({why for rel in files if (why := _blocked(root, rel)) is not None})
    if taken:
        raise InputError.single(shown, "", f"{', '.join(taken)} already there; flatfab init "
                                "never overwrites: move them, or choose another folder "
                                "(nothing was written)")


def write_new(root: Path, files: Mapping[str, str], shown: str) -> None:
    """Create every file (relative path -> text) under `root` (made if missing)."""
    refuse_taken(root, files, shown)
    made_dirs: list[Path] = []
    made_files: list[Path] = []

    def folder(path: Path) -> None:
        missing = [p for p in (path, *path.parents) if not os.path.lexists(p)]
        for directory in reversed(missing):
            directory.mkdir()
            made_dirs.append(directory)

    current = root
    try:
        folder(root)
        for relative, text in files.items():
            current = root / relative
            folder(current.parent)
            fd = os.open(current, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            made_files.append(current)
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
    except OSError as exc:
        for path in reversed(made_files):
            path.unlink(missing_ok=True)
        for directory in reversed(made_dirs):
            with contextlib.suppress(OSError):  # holds what another made meanwhile
                directory.rmdir()
        raise InputError.single(str(current), "", f"cannot write: {exc.strerror or exc} "
                                "(nothing was written)") from None
