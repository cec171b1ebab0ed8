"""Load intents/<fabric>/ into a validated Intent, or fail with precise errors."""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from flatfab.errors import InputError, InputProblem
from flatfab.intent import capabilities, ports, semantics
from flatfab.intent.acceptance import AcceptanceIntent
from flatfab.intent.models import FabricIntent, HostsIntent, Intent, TenantsIntent
from flatfab.intent.problem import FABRIC, Problem
from flatfab.intent.qos import QosIntent
from flatfab.platforms.base import Platform
from flatfab.yamlio import PathPart, format_path, line_of, load_yaml

# file stem -> (model, required)
INTENT_FILES: dict[str, tuple[type[BaseModel], bool]] = {
    "fabric": (FabricIntent, True),
    "hosts": (HostsIntent, False),
    "tenants": (TenantsIntent, False),
    "qos": (QosIntent, False),
    "acceptance": (AcceptanceIntent, False),
}


def _reason(error: Any) -> str:
    kind = error["type"]
    loc = error["loc"]
    if kind == "extra_forbidden":
        return f"unknown key {loc[-1]!r}"
    if kind == "missing":
        return "required key is missing"
    message = str(error["msg"])
    for prefix in ("Value error, ", "Assertion failed, "):
        message = message.removeprefix(prefix)
    if kind in {"int_parsing", "float_parsing"}:
        return f"{error['input']!r} is not {'an integer' if kind == 'int_parsing' else 'a number'}"
    if kind == "bool_type":
        shown = "null" if error["input"] is None else repr(error["input"])
        return f"{shown} is not true or false"
    if kind.startswith("string_pattern"):
        return f"{error['input']!r} is not a valid name ({message})"
    return message


def validation_problems(file: str, doc: Any, exc: ValidationError) -> list[InputProblem]:
    """Pydantic errors as InputProblems naming file, key path and line."""
    problems = []
    for error in exc.errors():
        loc: tuple[PathPart, ...] = tuple(error["loc"])
        problems.append(
            InputProblem(file=file, path=format_path(loc), reason=_reason(error),
                         line=line_of(doc, loc))
        )
    return problems


def _directory_problem(directory: Path) -> str | None:
    """Why `directory` cannot be read as an intent folder (None when it can)."""
    try:
        mode = directory.stat().st_mode
    except FileNotFoundError:
        return (f"intent directory not found: dangling symbolic link (to "
                f"{directory.readlink()})" if directory.is_symlink()
                else "intent directory not found")
    except OSError as exc:
        why = ("symbolic link loop" if exc.errno == errno.ELOOP
               else "a part of its path is a file, not a directory"
               if exc.errno == errno.ENOTDIR else exc.strerror or str(exc))
        return f"cannot read the intent directory: {why}"
    if not stat.S_ISDIR(mode):
        kind = "a FIFO" if stat.S_ISFIFO(mode) else "a file" if stat.S_ISREG(mode) \
            else "not a directory"
        return f"is {kind}, not an intent directory"
    return None


def _listing(directory: Path) -> list[Path]:
    """The folder's YAML files, whatever the case of their extension (a `qos.YAML` is named,
    never skipped), or one InputError when the folder cannot be listed."""
    try:
        return sorted(p for p in directory.iterdir() if p.suffix.lower() in (".yaml", ".yml"))
    except OSError as exc:
        raise InputError.single(str(directory), "", "cannot list the intent directory: "
                                f"{exc.strerror or exc}") from None


def _present(path: Path) -> bool:
    """Whether anything (a dangling link included, which is read and refused) is there."""
    try:
        return os.path.lexists(path)
    except OSError:  # pragma: no cover - lstat on a listable folder; read and refused then
        return True


def load_intent(directory: Path,
                known_platforms: Mapping[str, Platform] | None = None, *,
                fabric: str | None = None,
                warn: Callable[[InputProblem], None] | None = None) -> Intent:
    """Read and validate every intent file of one fabric. `fabric`: the name the fabric was
    asked for by (--fabric), which fabric.yaml's name must be. `warn` hears what loads but
    deserves a word (each with file, key path, line and why)."""
    why = _directory_problem(directory)
    if why is not None:
        raise InputError.single(str(directory), "", why)
    shown = {stem: str(directory / f"{stem}.yaml") for stem in INTENT_FILES}
    for path in _listing(directory):
        if path.stem not in INTENT_FILES:
            raise InputError.single(str(path), "", "unknown intent file; expected one of "
                                    + ", ".join(f"{s}.yaml" for s in INTENT_FILES))
        if path.suffix != ".yaml":
            # read only under one name: a second spelling would be silently ignored
            both = _present(directory / f"{path.stem}.yaml")
            raise InputError.single(str(path), "", (f"shadows {path.stem}.yaml; keep one"
                                                    if both else "")
                                    or f"flatfab reads {path.stem}.yaml; rename this file")
    docs: dict[str, Any] = {}
    parts: dict[str, BaseModel] = {}
    problems: list[InputProblem] = []
    for stem, (model, required) in INTENT_FILES.items():
        path = directory / f"{stem}.yaml"
        if not _present(path):  # a broken link is read, and refused
            if required:
                problems.append(InputProblem(shown[stem], "", "file not found"))
                continue
            doc: Any = {}
        else:
            doc = load_yaml(path, display=shown[stem])
            doc = {} if doc is None else doc
        docs[stem] = doc
        if not isinstance(doc, dict):
            problems.append(InputProblem(shown[stem], "", "top level must be a mapping",
                                         line_of(doc, ())))
            continue
        try:
            parts[stem] = model.model_validate(doc)
        except ValidationError as exc:
            problems.extend(validation_problems(shown[stem], doc, exc))
    if problems:
        raise InputError(problems)
    intent = Intent(
        fabric=parts["fabric"],
        hosts=parts["hosts"],
        tenants=parts["tenants"],
        qos=parts["qos"],
        acceptance=parts["acceptance"],
    )
    found = semantics.check(intent)
    if fabric is not None and intent.fabric.name != fabric:
        found.append(Problem(
            FABRIC, ("name",),
            f"{intent.fabric.name!r} is not {fabric!r}, the fabric asked for (--fabric, "
            f"the folder intents/{fabric}/): journals, locks and labs/<name>.clab.yml go by "
            "the name; rename the folder or the fabric"))
    if known_platforms is not None:
        found.extend(capabilities.problems(intent, known_platforms))
        if not found:  # port names need a sound intent and known platforms
            found.extend(ports.override_problems(intent, known_platforms))

    def located(problems: list[Problem]) -> list[InputProblem]:
        return [InputProblem(file=shown[p.file], path=format_path(p.path), reason=p.reason,
                             line=line_of(docs[p.file], p.path)) for p in problems]

    if found:
        raise InputError(located(found))
    if warn is not None:
        said = semantics.warnings(intent)
        if known_platforms is not None:
            said.extend(capabilities.warnings(intent, known_platforms))
        for problem in sorted(located(said), key=lambda p: (p.file, p.line or 0, p.path)):
            warn(problem)
    return intent
