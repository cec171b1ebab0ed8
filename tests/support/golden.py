"""Golden files: compare what flatfab produces with tests/golden/, or rewrite it with
FLATFAB_REGEN_GOLDEN=1 (`make golden`), then review `git diff tests/golden`.

A golden folder holds files a reviewer reads. Where many devices are built from one
template, only representatives are kept as files (`representatives`: the first and last
device of each role and every device of a shape of its own); each other file's sha256 is a
line of the folder's `not-kept.sha256`, so a change to any of them still fails, naming it.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import re
from collections.abc import Collection, Iterable, Mapping
from pathlib import Path
from typing import Any

import pytest

REGEN = bool(os.environ.get("FLATFAB_REGEN_GOLDEN"))
NOT_KEPT = "not-kept.sha256"
WIDTH = 100  # pretty_json's line length


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# ---- reviewable JSON -----------------------------------------------------------------------


def pretty_json(value: Any, width: int = WIDTH) -> str:
    """`value` as JSON a reviewer reads and a diff keeps small: whatever fits in `width` on
    one line, a long list of numbers wrapped like a paragraph, every other container one
    entry per line (indent 1, keys in the order given). json.loads reads it back as value."""
    return _pretty(value, "", 0, width) + "\n"


def _flat(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


def _pretty(value: Any, prefix: str, indent: int, width: int) -> str:
    pad = " " * indent
    flat = _flat(value)
    if not isinstance(value, dict | list) or not value or indent + len(prefix) + len(flat) < width:
        return pad + prefix + flat
    if isinstance(value, dict):
        entries = [_pretty(v, _flat(str(k)) + ": ", indent + 1, width) for k, v in value.items()]
        return pad + prefix + "{\n" + ",\n".join(entries) + "\n" + pad + "}"
    if all(not isinstance(v, dict | list) for v in value):  # a paragraph of scalars
        lines: list[str] = []
        row = 16 if all(isinstance(v, int) for v in value) else len(value)  # DSCP 0-15, ...
        for index, item in enumerate(_flat(v) for v in value):
            if index % row and indent + 1 + len(lines[-1]) + len(item) + 2 < width:
                lines[-1] += ", " + item
            else:
                lines.append(item)
        entries = [pad + " " + line for line in lines]
    else:
        entries = [_pretty(v, "", indent + 1, width) for v in value]
    return pad + prefix + "[\n" + ",\n".join(entries) + "\n" + pad + "]"


# ---- which devices keep their files ----------------------------------------------------------


def shape(text: str) -> str:
    """`text` with every number one placeholder: leaf3's files have leaf7's shape when they
    differ only in numbers (names, addresses, ASNs, VLANs), as devices of one template do."""
    return re.sub(r"\d+", "#", text)


def representatives(devices: Iterable[tuple[str, str, str]]) -> list[str]:
    """Of (name, role, text) in plan order: the names whose files are kept. Per role the first
    and the last device, and every device whose text has a shape no kept device of its role
    has; every other device is one of those with other numbers."""
    by_role: dict[str, list[tuple[str, str]]] = {}
    order = []
    for name, role, text in devices:
        by_role.setdefault(role, []).append((name, shape(text)))
        order.append(name)
    kept: set[str] = set()
    for members in by_role.values():
        ends = [members[0], members[-1]]
        shapes = {s for _, s in ends}
        kept.update(n for n, _ in ends)
        for name, form in members:
            if form not in shapes:
                kept.add(name)
                shapes.add(form)
    return [n for n in order if n in kept]


# ---- a golden folder --------------------------------------------------------------------------


def golden_files(produced: Mapping[str, str], keep: Collection[str] | None,
                 why: str = "") -> dict[str, str]:
    """What a golden folder holds for `produced` (relative path -> text): every file when
    `keep` is None, else the files in `keep` and not-kept.sha256 with the others' sha256
    (sorted by path; `why` its first line, saying what represents them)."""
    if keep is None:
        return dict(produced)
    files = {r: t for r, t in produced.items() if r in keep}
    others = sorted(r for r in produced if r not in keep)
    if others:
        head = [f"# {line}" for line in why.splitlines()] if why else []
        files[NOT_KEPT] = "\n".join(
            [*head, *(f"{sha256(produced[r])}  {r}" for r in others)]) + "\n"
    return files


def not_kept(folder: Path) -> dict[str, str]:
    """folder/not-kept.sha256 read: relative path -> sha256 ({} when there is none)."""
    path = folder / NOT_KEPT
    if not path.is_file():
        return {}
    lines = path.read_text(encoding="utf-8").splitlines()
    return {rel: digest for digest, _, rel in (line.partition("  ") for line in lines
                                               if line and not line.startswith("#"))}


def regenerate(folder: Path, files: Mapping[str, str], patterns: Iterable[str] = ("**/*",),
               ) -> None:
    """Rewrite folder with `files`: files matching a pattern that are not among them go."""
    for pattern in patterns:
        for stale in folder.glob(pattern):
            if stale.is_file() and str(stale.relative_to(folder)) not in files:
                stale.unlink()
    for relative, text in files.items():
        (folder / relative).parent.mkdir(parents=True, exist_ok=True)
        (folder / relative).write_text(text, encoding="utf-8")
    for empty in sorted(folder.glob("**/"), key=lambda p: len(p.parts), reverse=True):
        if empty != folder and not any(empty.iterdir()):
            empty.rmdir()


def differences(folder: Path, produced: Mapping[str, str], keep: Collection[str] | None,
                shown: str) -> list[str]:
    """Each file of `produced` that differs from folder, one message each naming it
    (`shown`/relative): a kept file with its diff, a file not kept by its sha256."""
    hashes = not_kept(folder) if keep is not None else {}
    found = []
    for relative, text in produced.items():
        name = f"{shown}/{relative}"
        if keep is not None and relative not in keep:
            if hashes.get(relative) != sha256(text):
                found.append(f"{name} (not kept as a file: a representative stands for it) "
                             f"differs from its sha256 in {shown}/{NOT_KEPT}"
                             if relative in hashes else
                             f"{name} is not listed in {shown}/{NOT_KEPT}")
            continue
        path = folder / relative
        if not path.is_file():
            found.append(f"{name}: no golden file")
            continue
        expected = path.read_text(encoding="utf-8")
        if text != expected:
            diff = "".join(difflib.unified_diff(expected.splitlines(True),
                                                text.splitlines(True), name, "produced"))
            found.append(f"{name} differs from its golden file:\n{diff[:4000]}")
    return found


def fail_on(found: list[str]) -> None:
    if found:
        pytest.fail("\n".join(found) + "\n(`make golden` to accept, then review "
                    "`git diff tests/golden`)", pytrace=False)


def represented(texts: Mapping[str, str], roles: Mapping[str, str], suffix: str,
                judged_by: str) -> tuple[dict[str, str], set[str]]:
    """A platform's renders of one fabric (<device><suffix> -> text; `roles`: device -> role,
    in plan order) as golden files when its oracle (`judged_by`: the test) judges every
    render: the representatives' files and not-kept.sha256. Returns the files and the kept."""
    names = representatives((d, role, texts[f"{d}{suffix}"]) for d, role in roles.items())
    kept = {f"{d}{suffix}" for d in names}
    why = ("The renders not kept, as sha256sum prints them. Each is a render of one of these\n"
           "with other numbers (tests/support/golden.py `representatives`):\n"
           f"{', '.join(names)}.\nEvery render is judged by\n{judged_by}.")
    return golden_files(texts, kept, why), kept


def match_golden(folder: Path, fabric: str, produced: dict[str, str], suffix: str,
                 roles: Mapping[str, str] | None = None, judged_by: str = "") -> None:
    """`produced` (<fabric>/<device><suffix> -> text) equals the files of folder/<fabric>:
    the same names, byte for byte, regenerated (stale files removed) when REGEN is set.
    With `roles` (device -> role, plan order), only representatives keep their files and the
    others are held by their sha256 in folder/<fabric>/not-kept.sha256: for a platform whose
    oracle (`judged_by`) judges every device's render."""
    assert produced, f"{fabric}: nothing rendered"
    texts = {r.removeprefix(f"{fabric}/"): t for r, t in produced.items()}
    files, kept = (dict(texts), None) if roles is None else represented(
        texts, roles, suffix, judged_by)
    if REGEN:
        regenerate(folder / fabric, files, (f"*{suffix}", NOT_KEPT))
    shown = f"{folder.name}/{fabric}"
    on_disk = {p.name for p in (folder / fabric).glob(f"*{suffix}")} | (
        {NOT_KEPT} if (folder / fabric / NOT_KEPT).is_file() else set())
    assert on_disk == set(files), (
        f"golden files of {shown} differ in number (`make golden`): missing "
        f"{sorted(set(files) - on_disk)}, stale {sorted(on_disk - set(files))}")
    assert set(not_kept(folder / fabric)) == set(texts) - set(files), (
        f"{shown}/{NOT_KEPT} lists other files than those not kept: `make golden`")
    fail_on(differences(folder / fabric, texts, kept, shown))
