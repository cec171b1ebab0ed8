"""Build a project from an example, check it as flatfab will read it, then write it.

Every argument is judged before anything is built, each bad one its own line. The new intent
is then loaded and planned from a private folder, exactly as `flatfab plan` will read it;
the inventory is validated against that plan and the rollout plans are loaded against it,
so the project plans and checks clean as written. Only then is anything written into the
project folder, all or nothing.
"""

from __future__ import annotations

import shlex
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from flatfab import bundled
from flatfab.checks import CATALOG
from flatfab.errors import InputError, InputProblem
from flatfab.intent.loader import load_intent
from flatfab.intent.names import fabric_problem
from flatfab.model.state import FabricState
from flatfab.plan.planner import plan as make_plan
from flatfab.platforms.base import Platform
from flatfab.platforms.registry import PLATFORMS
from flatfab.scaffold import choices, files, intent_files, project_files, runbooks
from flatfab.scaffold import inventory as inventory_files
from flatfab.workflows.devices import inventory as inventory_check
from flatfab.workflows.project.projectfile import FILE_NAME

DEFAULT_EXAMPLE = bundled.DEFAULT_EXAMPLE


@dataclass(frozen=True)
class Built:
    """A project's files (relative path -> text, in writing order) and what they hold."""

    fabric: str
    example: str
    files: dict[str, str]
    plan: FabricState
    runbooks: tuple[str, ...]  # file names under runbooks/
    notes: tuple[str, ...]  # how the lossless profile was fitted to the platforms


def command_line(directory: str, example: str, fabric: str | None,
                 platform_values: Sequence[str]) -> str:
    parts = ["flatfab", "init", directory]
    if example != DEFAULT_EXAMPLE:
        parts += ["--example", example]
    if fabric is not None:
        parts += ["--fabric", fabric]
    for value in platform_values:
        parts += ["--platform", value]
    return shlex.join(parts)


def _arguments(example: str, fabric: str | None, platform_values: Sequence[str],
               platforms: Mapping[str, Platform]) -> tuple[str, choices.PlatformChoice]:
    """The fabric's name and the platform choice, or one problem per bad argument."""
    problems: list[InputProblem] = []
    known = bundled.examples()
    if example not in known:
        problems.append(InputProblem("--example", "", f"unknown example {example!r} "
                                     f"(examples: {', '.join(known)})"))
    name = fabric or example
    why = fabric_problem(name)
    if why is not None:
        problems.append(InputProblem("--fabric", "", why))
    try:
        choice = choices.parse(platform_values, platforms)
    except InputError as exc:
        problems += exc.problems
        choice = choices.PlatformChoice()
    if problems:
        raise InputError(problems)
    return name, choice


def _load_checked(texts: Mapping[str, str], fabric: str, example: str,
                  platforms: Mapping[str, Platform]) -> FabricState:
    """The new intent planned as flatfab will read it; a problem (a platform that cannot
    express what the example asks) is named against the option that chose it."""
    with tempfile.TemporaryDirectory(prefix="flatfab-init-") as scratch:
        folder = Path(scratch) / fabric
        folder.mkdir()
        for name, text in texts.items():
            (folder / name).write_text(text, encoding="utf-8")
        warned: list[InputProblem] = []
        try:
            intent = load_intent(folder, known_platforms=platforms, fabric=fabric,
                                 warn=warned.append)
        except InputError as exc:
            raise InputError([_against_option(example, p) for p in exc.problems]) from None
    if warned:  # a warning would greet every command of the new project
        raise InputError([_against_option(example, p) for p in warned])
    return make_plan(intent)


def _against_option(example: str, problem: InputProblem) -> InputProblem:
    where = Path(problem.file).name + (f" {problem.path}" if problem.path else "")
    return InputProblem("--platform", "", f"example {example} on these platforms: {where}: "
                        f"{problem.reason}")


def build(example: str, fabric: str, choice: choices.PlatformChoice, command: str,
          platforms: Mapping[str, Platform] = PLATFORMS) -> Built:
    """Every file of the project, checked."""
    source = bundled.folder("examples") / example
    intent = load_intent(source, known_platforms=platforms)
    original = make_plan(intent)
    chosen = choices.fit(choice, example, original,
                         generated=intent.fabric.scalable_units is not None)
    edited = intent_files.edited(source, intent, fabric, chosen, platforms,
                                 intent_files.asic_catalogue(bundled.folder("examples")),
                                 command)
    plan = _load_checked(edited.files, fabric, example, platforms)
    inventory = inventory_files.files(plan, fabric, platforms)
    with tempfile.TemporaryDirectory(prefix="flatfab-init-") as scratch:
        for name, text in inventory.items():
            (Path(scratch) / name).write_text(text, encoding="utf-8")
        # as Nornir reads it and against the plan; its logins are the operator's to fill in
        # (placeholder addresses, no keys yet), so they are checked at the first connection
        inventory_check.validate(Path(scratch), plan, connects=False)
    groups = inventory_files.layout(plan).host_groups
    plans = runbooks.fitting(bundled.folder("runbooks"), plan, groups, CATALOG)
    out: dict[str, str] = {FILE_NAME: project_files.project_file(fabric)}
    out |= {f"intents/{fabric}/{name}": text for name, text in edited.files.items()}
    out |= {f"inventory/{fabric}/{name}": text for name, text in inventory.items()}
    out |= {f"runbooks/{p.file}": p.text for p in plans}
    out[".gitignore"] = project_files.gitignore(fabric)
    out["README.md"] = project_files.readme(
        fabric, example, command, plan, platforms,
        [(p.file, p.plan.description or p.plan.name) for p in plans],
        edited.notes)
    return Built(fabric=fabric, example=example, files=out, plan=plan,
                 runbooks=tuple(p.file for p in plans), notes=tuple(edited.notes))


def init(directory: Path, *, example: str = DEFAULT_EXAMPLE, fabric: str | None = None,
         platform_values: Sequence[str] = (), shown: str | None = None) -> Built:
    """Write a new project into `directory` (made if missing). `shown`: how the folder was
    given, for the messages."""
    name, choice = _arguments(example, fabric, platform_values, PLATFORMS)
    command = command_line(shown or str(directory), example, fabric, platform_values)
    built = build(example, name, choice, command)
    files.write_new(directory, built.files, shown or str(directory))
    return built
