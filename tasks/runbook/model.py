"""The rollout plan a phased rollout follows, as validated pydantic models."""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, field_validator, model_validator

from flatfab.intent.base import Strict
from flatfab.model.state import Role
from flatfab.telemetry import conditions

NAME = r"^[a-z0-9][a-z0-9_.-]{0,62}$"
DEFAULT_GATE_CHECKS = ("device.reachable", "bgp.session")
_PERCENT = re.compile(r"^(\d{1,3})%$")
# what a telemetry gate can require quiet (telemetry.silent is not one: a changed switch
# without counters always fails the gate, whatever the checks)
TELEMETRY_CHECKS = (conditions.PAUSE_STORM, conditions.LOSSLESS_DROPS, conditions.WATCHDOG,
                    conditions.PAUSE_WITHOUT_ECN, conditions.ECN_ON_LOSSY,
                    conditions.DCQCN_IDLE, *conditions.PHYSICAL_CONDITIONS)
DEFAULT_TELEMETRY_CHECKS = TELEMETRY_CHECKS[:3]


class RollbackScope(StrEnum):
    DEVICE = "device"  # only the devices that failed or that the gate names
    PHASE = "phase"  # every device changed in the failing phase
    RUN = "run"  # every device changed by the run


class Select(Strict):
    """Which devices a phase takes: all conditions must hold (an empty select takes all)."""

    role: list[Role] = Field(default_factory=list)
    names: list[str] = Field(default_factory=list)  # shell-style patterns: leaf*, spine[12]
    group: str | None = None  # an inventory group
    attached_hosts: bool = False  # a selected leaf brings its hosts into the same batch
    # AI back-ends: devices of these scalable units (leaves and servers), pods (spines and
    # leaves) or planes (switches), as the plan places them
    sus: list[Annotated[int, Field(ge=1)]] = Field(default_factory=list)
    pods: list[Annotated[int, Field(ge=1)]] = Field(default_factory=list)
    planes: list[Annotated[int, Field(ge=1)]] = Field(default_factory=list)

    @field_validator("role", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value


def _telemetry_check(value: str) -> str:
    if value not in TELEMETRY_CHECKS:
        raise ValueError(f"unknown telemetry check {value!r} (known: "
                         f"{', '.join(TELEMETRY_CHECKS)})")
    return value


class TelemetryGate(Strict):
    """After the gate's checks pass: no finding of `checks` that was not already active
    before the commit may be raised on the batch's changed devices (or on their peers'
    ports facing them) for `quiet_s` seconds of streamed or polled counters."""

    quiet_s: Annotated[float, Field(ge=1, le=3600)] = 60
    checks: Annotated[list[Annotated[str, AfterValidator(_telemetry_check)]],
                      Field(min_length=1)] = Field(
        default_factory=lambda: list(DEFAULT_TELEMETRY_CHECKS))
    # how long the devices are watched before the commit to learn what is already active
    # (default: three intervals, plus the storm time when pause storms are checked)
    baseline_s: Annotated[float, Field(ge=0, le=600)] | None = None

    @field_validator("checks")
    @classmethod
    def _once(cls, value: list[str]) -> list[str]:
        twice = sorted({c for c in value if value.count(c) > 1})
        if twice:
            raise ValueError(f"telemetry check {twice[0]!r} is listed twice")
        return value


class Gate(Strict):
    """Checks that must pass after each batch before its commits are confirmed."""

    checks: list[str] = Field(default_factory=lambda: list(DEFAULT_GATE_CHECKS))
    lossless: bool = False  # add the whole lossless catalog
    wait_s: Annotated[float, Field(ge=0, le=600)] = 0
    interval_s: Annotated[float, Field(gt=0, le=60)] = 2
    timeout_s: Annotated[float, Field(gt=0, le=3600)] = 90
    telemetry: TelemetryGate | None = None  # then also quiet live counters


class Phase(Strict):
    name: Annotated[str, Field(pattern=NAME)]
    select: Select = Field(default_factory=Select)
    batch: int | str = "100%"  # devices per batch: a count or a percentage of the phase
    # batches of whole pods, SUs or planes (`batch` then counts those, not devices)
    batch_by: Literal["pod", "su", "plane"] | None = None
    concurrency: Annotated[int, Field(ge=1, le=500)] = 20
    gate: Gate = Field(default_factory=Gate)
    pause: bool = False  # ask the operator before the next phase

    @field_validator("batch")
    @classmethod
    def _batch(cls, value: int | str) -> int | str:
        if isinstance(value, int):
            if value < 1:
                raise ValueError("batch must be at least 1 device")
            return value
        match = _PERCENT.match(value)
        if not match or not 1 <= int(match.group(1)) <= 100:
            raise ValueError(f"batch {value!r} is neither a device count nor a percentage "
                             "from 1% to 100%")
        return value

    def batch_size(self, devices: int) -> int:
        """Devices per batch for a phase of `devices` (at least one)."""
        if isinstance(self.batch, int):
            return self.batch
        percent = int(self.batch[:-1])
        return max(1, -(-devices * percent // 100))


class Failure(Strict):
    max_failed_devices: Annotated[int, Field(ge=0)] = 0  # device errors tolerated per run
    rollback: RollbackScope = RollbackScope.RUN


class RolloutPlan(Strict):
    name: Annotated[str, Field(pattern=NAME)]
    description: str = ""
    revert_in: Annotated[int, Field(ge=30, le=3600)] = 180
    phases: Annotated[list[Phase], Field(min_length=1)]
    failure: Failure = Field(default_factory=Failure)

    @model_validator(mode="after")
    def _unique_phases(self) -> RolloutPlan:
        seen: set[str] = set()
        for phase in self.phases:
            if phase.name in seen:
                raise ValueError(f"phase name {phase.name!r} is used twice")
            seen.add(phase.name)
        return self


def whole_fabric(revert_in: int = 180, gate_timeout: float = 90,
                 concurrency: int = 20) -> RolloutPlan:
    """The plan of a rollout without --runbook: every device in one batch."""
    return RolloutPlan(name="whole-fabric", revert_in=revert_in,
                       phases=[Phase(name="all", gate=Gate(timeout_s=gate_timeout),
                                     concurrency=concurrency)])
