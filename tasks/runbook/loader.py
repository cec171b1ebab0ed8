"""Load a rollout plan and check it against the fabric before anything is touched."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from flatfab.errors import InputError, InputProblem
from flatfab.intent.loader import validation_problems
from flatfab.model.state import FabricState
from flatfab.runbook.model import RolloutPlan
from flatfab.runbook.profile_order import order_problems
from flatfab.runbook.schedule import Schedule, matches, schedule
from flatfab.yamlio import PathPart, format_path, line_of, load_yaml


def load_runbook(path: Path) -> tuple[RolloutPlan, Any]:
    """The validated plan and its YAML document (for line numbers in later errors)."""
    shown = str(path)
    doc = load_yaml(path, display=shown)
    if not isinstance(doc, dict):
        raise InputError.single(shown, "", "a rollout plan is a mapping with `name` and "
                                "`phases`")
    try:
        return RolloutPlan.model_validate(doc), doc
    except ValidationError as exc:
        raise InputError(validation_problems(shown, doc, exc)) from None


def check_against_fabric(rollout: RolloutPlan, doc: Any, file: str, plan: FabricState,
                         groups: Mapping[str, Sequence[str]],
                         known_checks: Iterable[str]) -> Schedule:
    """The schedule, or every problem: unknown checks or groups, phases selecting nothing."""
    known = set(known_checks)
    all_groups = {g for names in groups.values() for g in names}
    problems: list[InputProblem] = []

    def problem(parts: tuple[PathPart, ...], reason: str) -> None:
        problems.append(InputProblem(file=file, path=format_path(parts), reason=reason,
                                     line=line_of(doc, parts)))

    for i, phase in enumerate(rollout.phases):
        for j, check_id in enumerate(phase.gate.checks):
            if check_id not in known:
                hint = " (telemetry checks go under gate.telemetry.checks)" \
                    if check_id.startswith("telemetry.") else ""
                problem(("phases", i, "gate", "checks", j),
                        f"unknown check id {check_id!r}{hint}")
        select = phase.select
        if select.group is not None and select.group not in all_groups:
            problem(("phases", i, "select", "group"),
                    f"no inventory group {select.group!r}; groups: "
                    + (", ".join(sorted(all_groups)) or "none"))
        for j, pattern in enumerate(select.names):
            if not any(matches(select.model_copy(update={"names": [pattern]}), d,
                               groups.get(n, ())) for n, d in plan.devices.items()):
                problem(("phases", i, "select", "names", j),
                        f"{pattern!r} matches no {'/'.join(select.role) or 'device'} of "
                        f"fabric {plan.fabric}")
        placed: dict[str, set[int | None]] = {
            "sus": {d.su for d in plan.devices.values()},
            "pods": {d.pod for d in plan.devices.values()},
            "planes": {d.plane for d in plan.devices.values()}}
        for key, have in placed.items():
            for j, number in enumerate(getattr(select, key)):
                if number not in have:
                    listed = ", ".join(str(n) for n in sorted(n for n in have if n)) or "none"
                    problem(("phases", i, "select", key, j),
                            f"fabric {plan.fabric} has no {key[:-1]} {number} ({key}: "
                            f"{listed})")
    result = schedule(rollout, plan, groups)
    if not problems:
        for scheduled in result.phases:
            if not scheduled.batches:
                why = ("earlier phases took every match, and no rollout takes an "
                       "unmanaged host" if result.unmanaged else "earlier phases took every "
                       "match")
                problem(("phases", scheduled.index, "select"),
                        f"phase {scheduled.phase.name!r} selects no device ({why})")
        for index, reason in order_problems(plan, result):
            problem(("phases", index, "select"), reason)
    if problems:
        raise InputError(problems)
    return result
