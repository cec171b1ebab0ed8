"""Which lab a `lab down` or `lab status` acts on: the one this fabric's `lab up` made.

Every lab records the topology file it was brought up from (its state, under
/run/flatfab/<prefix>/). A fabric's lab is one whose topology is this project's
labs/<fabric>.clab.yml, so a command never acts on another fabric's lab, nor on another
project's, even when both were brought up under the same default prefix.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from flatfab.lab import netns
from flatfab.lab.netns import LabPaths, LabState
from flatfab.lab.system import LabError


@dataclass(frozen=True)
class Target:
    """The prefix a command acts on, and the lab's state there (None: no lab is up)."""

    paths: LabPaths
    state: LabState | None


def labs_up(root: Path | None = None) -> list[LabState]:
    """Every lab with state under `root` (the lab runtime's, /run/flatfab), by prefix."""
    root = netns.RUN_ROOT if root is None else root
    if not root.is_dir():
        return []
    found = (_load(entry / "state.json") for entry in sorted(root.iterdir()) if entry.is_dir())
    return [state for state in found if state is not None]


def _load(path: Path) -> LabState | None:
    try:
        return LabState(**json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        return None


def _same_file(recorded: str, topology: Path) -> bool:
    return Path(recorded).resolve() == topology.resolve()


def target(topology: Path, fabric: str, default_prefix: str, prefix: str | None, *,
           sweep: bool = False, root: Path | None = None) -> Target:
    """The lab `fabric` (topology file `topology`) acts on.

    With a prefix, that prefix, refused if a lab of another topology is up there (unless
    `sweep`: the operator named the prefix to clear). Without one, the fabric's own lab:
    the one at the topology's prefix, else the only one up; several elsewhere are refused,
    naming their prefixes; a lab of another topology is never chosen."""
    states = labs_up(root)
    if prefix is not None:
        state = next((s for s in states if s.prefix == prefix), None)
        if state is not None and not _same_file(state.topology, topology) and not sweep:
            raise LabError(_foreign(state, fabric))
        return Target(LabPaths(prefix), state)
    ours = [s for s in states if _same_file(s.topology, topology)]
    at_default = next((s for s in ours if s.prefix == default_prefix), None)
    if at_default is not None:
        return Target(LabPaths(default_prefix), at_default)
    if len(ours) == 1:
        return Target(LabPaths(ours[0].prefix), ours[0])
    if len(ours) > 1:
        raise LabError(f"labs of fabric {fabric} are up under prefixes "
                       f"{', '.join(s.prefix for s in ours)}; say which with --prefix")
    foreign = next((s for s in states if s.prefix == default_prefix), None)
    if foreign is not None:
        raise LabError(f"no lab of fabric {fabric} is up; {_foreign(foreign, fabric)}")
    return Target(LabPaths(default_prefix), None)


def _foreign(state: LabState, fabric: str) -> str:
    return (f"the lab with prefix {state.prefix!r} is another fabric's (topology "
            f"{state.topology}), not fabric {fabric}'s: left alone")
