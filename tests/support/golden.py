"""Golden files of one platform's renders: compare, or rewrite with FLATFAB_REGEN_GOLDEN=1
(`make golden`), then review `git diff tests/golden`."""

from __future__ import annotations

import difflib
import os
from pathlib import Path

import pytest

REGEN = bool(os.environ.get("FLATFAB_REGEN_GOLDEN"))


def match_golden(folder: Path, fabric: str, produced: dict[str, str], suffix: str) -> None:
    """`produced` (<fabric>/<device><suffix> -> text) equals the files of folder/<fabric>:
    the same names, byte for byte; regenerated (stale files removed) when REGEN is set."""
    assert produced, f"{fabric}: nothing rendered"
    if REGEN:
        for stale in (folder / fabric).glob(f"*{suffix}"):
            stale.unlink()
        for relative, text in produced.items():
            (folder / relative).parent.mkdir(parents=True, exist_ok=True)
            (folder / relative).write_text(text, encoding="utf-8")
    on_disk = {str(p.relative_to(folder)) for p in folder.glob(f"{fabric}/*{suffix}")}
    assert on_disk == set(produced), "golden files differ in number: FLATFAB_REGEN_GOLDEN=1"
    for relative, text in produced.items():
        expected = (folder / relative).read_text(encoding="utf-8")
        if text != expected:
            diff = "".join(difflib.unified_diff(expected.splitlines(True),
                                                text.splitlines(True), relative, "rendered"))
            pytest.fail(f"{relative} differs from its golden file:\n{diff[:4000]}")
