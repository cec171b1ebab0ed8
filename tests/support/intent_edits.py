"""Intent copies with edits: intents/lab/ copied to a temporary directory and broken in one
way, and what load_intent says about it (file, key path, line, reason).

An edit names one file of the copy and maps its text (None: absent) to new text (None:
delete). Expected line numbers are looked up in the edited text (the line carrying a marker),
so the cases do not depend on the example's layout.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from flatfab.errors import InputError, InputProblem
from flatfab.intent.loader import load_intent
from flatfab.platforms.registry import PLATFORMS
from tests.support.paths import ROOT

LAB = ROOT / "intents" / "lab"
FABRIC, HOSTS, TENANTS = "fabric.yaml", "hosts.yaml", "tenants.yaml"

# An edit names one file of the copy and maps its text (None: absent) to new text (None: delete).
Edit = tuple[str, Callable[[str | None], str | None]]


def replace(file: str, old: str, new: str) -> Edit:
    def apply(text: str | None) -> str:
        # a stale `old` would silently test the unmodified example: refuse it
        assert text is not None and old in text, f"{old!r} not found in {file}"
        return text.replace(old, new, 1)

    return file, apply


def append(file: str, extra: str) -> Edit:
    return file, lambda text: (text or "") + extra


def write(file: str, text: str) -> Edit:
    return file, lambda _: text


def delete(file: str) -> Edit:
    return file, lambda _: None


def bad_copy(directory: Path, *edits: Edit) -> Path:
    """Copy intents/lab/ to `directory` and apply the edits there."""
    shutil.copytree(LAB, directory)
    for name, apply in edits:
        path = directory / name
        new = apply(path.read_text(encoding="utf-8") if path.exists() else None)
        if new is None:
            path.unlink()
        else:
            path.write_text(new, encoding="utf-8")
    return directory


def load_error(tmp_path: Path, *edits: Edit) -> tuple[InputError, Path]:
    """The InputError of a broken copy (any other exception fails the test: no tracebacks)."""
    directory = bad_copy(tmp_path / "lab", *edits)
    with pytest.raises(InputError) as info:
        load_intent(directory)
    return info.value, directory


def line_of(path: Path, marker: str) -> int:
    """1-based number of the single line of `path` that contains `marker`."""
    lines = [n for n, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if marker in text]
    assert len(lines) == 1, f"marker {marker!r} must be on exactly one line of {path.name}"
    return lines[0]


def describe(problems: list[InputProblem]) -> str:
    return "\n".join(f"{p.file}:{p.line}: {p.path}: {p.reason}" for p in problems)


def assert_refused(folder: Path, file: str, path: str, phrase: str) -> None:
    """Loading `folder` fails, naming `file`, key `path`, a line, and saying `phrase`."""
    with pytest.raises(InputError) as caught:
        load_intent(folder, known_platforms=PLATFORMS)
    found = [p for p in caught.value.problems if p.file.endswith(file) and p.path == path]
    assert found, "\n".join(map(str, caught.value.problems))
    assert phrase in found[0].reason and found[0].line is not None, found[0]
