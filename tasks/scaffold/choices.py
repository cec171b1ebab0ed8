"""`--platform P` and `--platform ROLE=P`: which platform each switch of the new fabric runs.

A bare platform is every switch's; `ROLE=P` one role's (superspine, spine, leaf), and wins
over a bare one for that role; roles not named keep the example's platforms. Each value is
judged on its own, so every bad one is its own line.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from flatfab.errors import InputError, InputProblem
from flatfab.model.state import SWITCH_ROLES, FabricState
from flatfab.platforms.base import Platform

OPTION = "--platform"
ROLES = tuple(role.value for role in SWITCH_ROLES)


@dataclass(frozen=True)
class PlatformChoice:
    every: str | None = None  # every switch's platform
    by_role: Mapping[str, str] = field(default_factory=dict)  # role -> platform

    @property
    def given(self) -> bool:
        return self.every is not None or bool(self.by_role)

    def platform_for(self, role: str, current: str) -> str:
        return self.by_role.get(role) or self.every or current

    def describe(self) -> str:
        """How the choice reads on a command line (`eos`, `spine=eos leaf=sonic`)."""
        parts = [self.every] if self.every else []
        parts += [f"{role}={name}" for role, name in sorted(self.by_role.items())]
        return " ".join(parts)


def _problem(reason: str) -> InputProblem:
    return InputProblem(OPTION, "", reason)


def parse(values: Sequence[str], platforms: Mapping[str, Platform]) -> PlatformChoice:
    """The choice the values make, or one problem per bad value."""
    switches = sorted(n for n, p in platforms.items() if p.facts.role == "switch")
    problems: list[InputProblem] = []
    every: str | None = None
    by_role: dict[str, str] = {}
    for value in values:
        role, sep, name = value.partition("=")
        if not sep:
            role, name = "", value
        elif role not in ROLES:
            problems.append(_problem(f"{value!r}: unknown role {role!r} (roles: "
                                     f"{', '.join(ROLES)})"))
            continue
        platform = platforms.get(name)
        if platform is None:
            problems.append(_problem(f"{value!r}: unknown platform {name!r} (switch "
                                     f"platforms: {', '.join(switches)})"))
            continue
        if platform.facts.role != "switch":
            problems.append(_problem(f"{value!r}: platform {name!r} is for hosts, not "
                                     f"switches (switch platforms: {', '.join(switches)})"))
            continue
        if not role:
            if every is not None and every != name:
                problems.append(_problem(f"{value!r}: every switch's platform is already "
                                         f"{every!r}; give one, and ROLE=P for the others"))
            every = name
        elif by_role.get(role, name) != name:
            problems.append(_problem(f"{value!r}: role {role} is already given "
                                     f"{by_role[role]!r}"))
        else:
            by_role[role] = name
    if problems:
        raise InputError(problems)
    return PlatformChoice(every=every, by_role=by_role)


def roles_of(plan: FabricState) -> list[str]:
    """The switch roles a fabric has, top tier first."""
    present = {device.role.value for device in plan.devices.values()}
    return [role for role in ROLES if role in present]


def fit(choice: PlatformChoice, example: str, plan: FabricState, *,
        generated: bool) -> dict[str, str]:
    """Each switch's platform in the new fabric (name -> platform), or the problems: a role
    the example has not; different platforms for a fabric whose switches are generated from
    counts (fabric.yaml's one `platform` is all of theirs)."""
    roles = roles_of(plan)
    problems = [_problem(f"'{role}={name}': example {example} has no {role} (roles: "
                         f"{', '.join(roles)})")
                for role, name in sorted(choice.by_role.items()) if role not in roles]
    chosen = {name: choice.platform_for(device.role.value, device.platform)
              for name, device in plan.devices.items() if device.role.value in ROLES}
    if generated and not problems and len(set(chosen.values())) > 1:
        problems.append(_problem(f"{choice.describe()!r}: example {example} generates its "
                                 "switches from counts (scalable units, pods), so they all "
                                 "run fabric.yaml's one platform; give one"))
    if problems:
        raise InputError(problems)
    return chosen
