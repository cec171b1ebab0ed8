"""The project file, `flatfab.yaml`: it marks a project's root and holds its defaults.

It is found as git and ruff find theirs: in the working folder or the nearest parent that
has one, so every command works from any folder inside a project. `--root DIR` names the
project instead (its flatfab.yaml, if it has one, still gives the defaults); without either,
the working folder is the root and the defaults are flatfab's own. A command-line option
wins over the file, the file over flatfab's default.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Final

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from flatfab.errors import InputError
from flatfab.intent.loader import validation_problems
from flatfab.intent.names import fabric_problem
from flatfab.yamlio import line_of, load_yaml

FILE_NAME: Final = "flatfab.yaml"
SPELLINGS: Final = ("flatfab.yaml", "flatfab.yml")  # in any case: all but FILE_NAME refused
DEFAULT_FABRIC: Final = "lab"


class ProjectFile(BaseModel):
    """What a project's flatfab.yaml may say (every key optional)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    fabric: str | None = Field(
        default=None, description="the fabric commands work on without --fabric (a folder "
        "of intents/)")
    inventory: str | None = Field(
        default=None, description="the Nornir inventory folder, relative to the project "
        "root; `{fabric}` stands for the fabric's name (default inventory/{fabric})")
    state_dir: str | None = Field(
        default=None, description="journals, locks and backups of change runs, relative to "
        "the project root (default .flatfab)")
    connect_timeout: float | None = Field(
        default=None, gt=0, le=600, description="seconds to wait for a device's session to "
        "open (TCP, SSH, login) before it is named unread")
    command_timeout: float | None = Field(
        default=None, gt=0, le=3600, description="seconds to wait for one command's answer "
        "before the device is named unread")

    @field_validator("fabric")
    @classmethod
    def _fabric(cls, value: str | None) -> str | None:
        why = None if value is None else fabric_problem(value)
        if why is not None:
            raise ValueError(why)
        return value


def _other_spellings(folder: Path) -> list[Path]:
    """Project files under another name (flatfab.yml, Flatfab.YAML): refused, never passed
    over."""
    try:
        entries = sorted(folder.iterdir())
    except OSError:
        return []
    return [e for e in entries if e.name.lower() in SPELLINGS and e.name != FILE_NAME]


def find_root(start: Path) -> Path | None:
    """The nearest folder from `start` upwards that holds a project file."""
    for folder in (start, *start.parents):
        if (folder / FILE_NAME).is_file() or _other_spellings(folder):
            return folder
    return None


def load(root: Path) -> ProjectFile:
    """The project file of `root` (flatfab's defaults where there is none)."""
    path = root / FILE_NAME
    others = _other_spellings(root)
    if others:
        raise InputError.single(str(others[0]), "", f"shadows {FILE_NAME}; keep one"
                                if os.path.lexists(path) else
                                f"flatfab reads {FILE_NAME}; rename this file")
    if not os.path.lexists(path):  # a dangling link is read, and refused
        return ProjectFile()
    doc: Any = load_yaml(path, display=str(path))
    if doc is None:
        return ProjectFile()
    if not isinstance(doc, dict):
        raise InputError.single(str(path), "", "top level must be a mapping of settings",
                                line_of(doc, ()))
    try:
        return ProjectFile.model_validate(dict(doc))
    except ValidationError as exc:
        raise InputError(validation_problems(str(path), doc, exc)) from None
