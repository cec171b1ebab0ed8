"""The bundled rollout plans that fit a fabric: those that load against it (every check
known, every phase selecting something) and that, phase after phase, roll out every device.

A plan names its canary by the example fabrics' names (`leaf1`); where the fabric has no
device of that name, the canary becomes the fabric's device of the same role and number
(the plan's leaf4 on a fabric of two leaves: the last), noted beside the phase's `select`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flatfab.errors import InputError
from flatfab.model.state import FabricState
from flatfab.runbook.loader import check_against_fabric, load_runbook
from flatfab.runbook.model import RolloutPlan
from flatfab.runbook.schedule import matches
from flatfab.yamlio import dump_roundtrip


@dataclass(frozen=True)
class Fitting:
    file: str
    text: str
    plan: RolloutPlan


def _number(pattern: str) -> int:
    found = re.search(r"(\d+)$", pattern)
    return int(found.group(1)) if found else 1


def _retarget(rollout: RolloutPlan, doc: Any, plan: FabricState,
              groups: Mapping[str, Sequence[str]]) -> bool:
    """Names that match nothing in the fabric replaced by its device of the same role and
    number. True when the document changed."""
    changed = False
    for index, phase in enumerate(rollout.phases):
        select = phase.select
        candidates = [n for n, d in plan.devices.items()
                      if matches(select.model_copy(update={"names": []}), d, groups.get(n, ()))]
        if not candidates:
            continue
        for position, pattern in enumerate(select.names):
            if any(matches(select.model_copy(update={"names": [pattern]}), d,
                           groups.get(n, ())) for n, d in plan.devices.items()):
                continue
            target = candidates[min(_number(pattern), len(candidates)) - 1]
            entry = doc["phases"][index]
            entry["select"]["names"][position] = target
            entry.yaml_set_comment_before_after_key(
                "select", before=f"{target}: this fabric's device for the plan's {pattern}",
                indent=4)
            changed = True
    return changed


def fitting(folder: Path, plan: FabricState, groups: Mapping[str, Sequence[str]],
            known_checks: Iterable[str]) -> list[Fitting]:
    """Every bundled plan (`folder`: flatfab's runbooks) that fits the fabric, by file name."""
    known = set(known_checks)
    found: list[Fitting] = []
    for path in sorted(folder.glob("*.yaml")):
        rollout, doc = load_runbook(path)
        text = path.read_text(encoding="utf-8")
        if _retarget(rollout, doc, plan, groups):
            text = dump_roundtrip(doc)
            rollout = RolloutPlan.model_validate(doc)
        try:
            scheduled = check_against_fabric(rollout, doc, path.name, plan, groups, known)
        except InputError:
            continue  # a plan for another kind of fabric (pods on a leaf-spine, ...)
        if not scheduled.unselected:
            found.append(Fitting(path.name, text, rollout))
    return found
