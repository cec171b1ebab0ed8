"""`sot import` and `sot check`: a snapshot against a fabric's intent.

Import never writes an intent that does not load, and never one that still disagrees with
the source: the new files are loaded and planned in a scratch directory first, and whatever
the plan and the source still disagree on (a cable on a port the port scheme does not give
that link) refuses the import, naming the source objects.
"""

from __future__ import annotations

import difflib
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from flatfab.atomic import write_atomic
from flatfab.errors import InputError, InputProblem
from flatfab.intent.loader import load_intent
from flatfab.model.state import FabricState
from flatfab.plan.planner import plan
from flatfab.platforms.registry import PLATFORMS
from flatfab.sot.compare import Disagreement, compare
from flatfab.sot.importer import SotMapping, classify, import_fabric
from flatfab.sot.snapshot import Snapshot


@dataclass(frozen=True)
class ImportReport:
    changed: list[str]  # intent files whose text changes
    diff: str  # unified diff of those files
    notes: list[str]
    written: bool


def _scratch_plan(intent_dir: Path, files: dict[str, str]) -> FabricState:
    """Plan the intent as it would be with `files` replaced; problems name the real files."""
    with tempfile.TemporaryDirectory(prefix="flatfab-sot-") as tmp:
        scratch = Path(tmp) / intent_dir.name
        scratch.mkdir()
        for path in intent_dir.glob("*.yaml"):
            shutil.copyfile(path, scratch / path.name)
        for name, text in files.items():
            (scratch / name).write_text(text, encoding="utf-8")
        try:
            return plan(load_intent(scratch, known_platforms=PLATFORMS))
        except InputError as exc:
            raise InputError([InputProblem(
                file=p.file.replace(str(scratch), str(intent_dir)) + " (as imported)",
                path=p.path, reason=p.reason, line=p.line) for p in exc.problems]) from None


def _same_data(old: str, new: str) -> bool:
    """The same YAML data written another way (a file another tool wrote, with its own
    indentation): not a change, so an import that changes nothing leaves it as it is."""
    try:
        return bool(YAML(typ="safe").load(old) == YAML(typ="safe").load(new))
    except YAMLError:
        return False


def run_import(snapshot: Snapshot, intent_dir: Path, mapping: SotMapping, *,
               write: bool) -> ImportReport:
    intent = load_intent(intent_dir, known_platforms=PLATFORMS)
    result = import_fabric(snapshot, intent_dir, intent, mapping, PLATFORMS,
                           lambda files: _scratch_plan(intent_dir, files))
    left = compare(snapshot, _scratch_plan(intent_dir, result.files), mapping)
    # link classes are the operator's: a cable longer than its class is noted, not imported
    notes = [*result.notes, *(f"{d.subject}: {d.message} (choose a link class that fits)"
                              for d in left if not d.importable)]
    left = [d for d in left if d.importable]
    if left:
        raise InputError([InputProblem(file=snapshot.source, path=d.subject,
                                       reason=f"{d.message} (the intent cannot say this)")
                          for d in left])
    changed: list[str] = []
    diff: list[str] = []
    for name, text in sorted(result.files.items()):
        path = intent_dir / name
        old = path.read_text(encoding="utf-8") if path.exists() else ""
        if old != text and not _same_data(old, text):
            changed.append(name)
            diff += difflib.unified_diff(old.splitlines(keepends=True),
                                         text.splitlines(keepends=True),
                                         f"a/{intent_dir.name}/{name}",
                                         f"b/{intent_dir.name}/{name}")
    if write:
        for name in changed:
            write_atomic(intent_dir / name, result.files[name])
    return ImportReport(changed=changed, diff="".join(diff), notes=notes,
                        written=write and bool(changed))


def run_check(snapshot: Snapshot, intent_dir: Path, mapping: SotMapping) -> list[Disagreement]:
    """Disagreements; bad data in the source (what import refuses) is refused here too."""
    classify(snapshot, mapping)
    return compare(snapshot, plan(load_intent(intent_dir, known_platforms=PLATFORMS)), mapping)
