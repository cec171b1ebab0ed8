"""The check catalog: small declarative checks, each a pure function of fabric state.

A check runs statically on the plan (before anything is pushed) and/or live on observed
state. It sees the subject state and the plan, so "what should be" is always at hand.

What a check cannot judge (a setting the device does not state, a counter a switch does not
keep, a host flatfab never logs in to) is a finding of severity `not-judged` that says why:
never a pass, never a failure. Live, every check that reads hosts (`hosts=`) reports each
unmanaged host it would have judged that way, here, in one place.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from functools import cached_property
from typing import Any

from flatfab.gcpause import gc_paused
from flatfab.model.state import UNMANAGED, DeviceState, FabricState, Role
from flatfab.model.transition import Side, part, sides, source_plan


class Severity(StrEnum):
    CRITICAL = "critical"
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"
    # not a verdict: what could not be judged, and why (a setting the device does not state,
    # an unmanaged host); a device that could not be read is unread, never this
    NOT_JUDGED = "not-judged"

    @property
    def rank(self) -> int:
        return _RANK[self]

    @property
    def fails(self) -> bool:
        """Whether a finding of this severity makes verify/check exit 1."""
        return self not in (Severity.INFO, Severity.NOT_JUDGED)


_RANK = {severity: index for index, severity in enumerate(Severity)}


class Scope(StrEnum):
    DEVICE = "device"
    LINK = "link"
    PATH = "path"
    FABRIC = "fabric"


class Stage(StrEnum):
    STATIC = "static"  # on the plan, before any push
    LIVE = "live"  # on state collected from devices


@dataclass(frozen=True)
class Finding:
    check: str
    severity: Severity
    device: str | None
    message: str
    port: str | None = None
    link: str | None = None
    vrf: str | None = None
    expected: str = ""
    actual: str = ""
    virtual: bool = False  # rests on the lab's virtual ASIC state

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["severity"] = self.severity.value
        return data

    @property
    def sort_key(self) -> tuple[int, str, str, str, str, str]:
        return (self.severity.rank, self.check, self.device or "", self.port or "",
                self.vrf or "", self.message)


# the checks whose finding on a device says no more than that it was not read (its session,
# or every sample of its stream): a run names such a device unread, and judges the rest
NOT_READ_CHECKS = frozenset({"device.reachable", "telemetry.silent"})


def about_read(findings: Iterable[Finding], unread: Collection[str]) -> list[Finding]:
    """The findings on what was read: all but those saying a device of `unread` was not."""
    return [f for f in findings
            if not (f.check in NOT_READ_CHECKS and f.device is not None and f.device in unread)]


# the checks whose not-judged finding leaves the run incomplete (exit 3), never passed: a
# setting a device should have stated and did not; a port whose LLDP still holds a moved
# cable's old neighbour beside the planned one; a physical fact or a burn-in's link unread
UNREAD_SETTING_CHECKS = frozenset({"state.unknown", "cabling.lldp", "phy.unread",
                                   "burnin.link", "host.rdma_unread"})


def unread_settings(findings: Iterable[Finding]) -> list[Finding]:
    """The findings naming what was not read or not settled yet (a run with any is
    incomplete)."""
    return [f for f in findings
            if f.check in UNREAD_SETTING_CHECKS and f.severity is Severity.NOT_JUDGED
            and f.actual != UNMANAGED_ACTUAL]  # an unmanaged host is never read, by design


def fails(findings: Iterable[Finding], unread: Collection[str] = ()) -> bool:
    """Whether a finding on what was read fails the run (exit 1)."""
    return any(f.severity.fails for f in about_read(findings, unread))


@dataclass(frozen=True)
class CheckContext:
    state: FabricState  # the subject: the plan itself, or observed state
    plan: FabricState
    stage: Stage

    @property
    def live(self) -> bool:
        return self.stage is Stage.LIVE

    def observed(self, name: str) -> DeviceState | None:
        """The subject's device if it was read successfully (live) or planned (static)."""
        return self.readable.get(name)

    @cached_property
    def readable(self) -> dict[str, DeviceState]:
        """The subject's readable devices by name (a plain dict for hot loops)."""
        return {n: d for n, d in self.state.devices.items() if d.reachable}

    @cached_property
    def memo(self) -> dict[str, Any]:
        """Views of the subject that several checks walk (its lossless ports, its NICs),
        made once per context: a run of the catalog shares one context."""
        return {}


CheckFunc = Callable[["Check", CheckContext], Iterable[Finding]]
# which hosts a check judges from what it reads on them (the plan, a planned host): an
# unmanaged one of those is reported not judged by that check
HostScope = Callable[[FabricState, DeviceState], bool]


def every_host(_plan: FabricState, _host: DeviceState) -> bool:
    return True


def not_judged(check_id: str, device: str, why: str, *, port: str | None = None,
               what: str | None = None, expected: str = "read from the device",
               actual: str = "unknown", virtual: bool = False) -> Finding:
    """What a check could not judge on `device` (`what`: which part of it, else the device
    itself), and why: neither a pass nor a failure."""
    return Finding(check=check_id, severity=Severity.NOT_JUDGED, device=device,
                   message=f"{what or device} is not judged: {why}", port=port,
                   expected=expected, actual=actual, virtual=virtual)


UNMANAGED_ACTUAL = "unmanaged"


def unmanaged_finding(check_id: str, host: str) -> Finding:
    """`check_id` did not judge `host`: flatfab never logs in to an unmanaged host."""
    return not_judged(check_id, host, UNMANAGED, actual=UNMANAGED_ACTUAL)


@dataclass(frozen=True)
class Check:
    id: str
    title: str
    scope: Scope
    severity: Severity
    stages: frozenset[Stage]
    func: CheckFunc = field(repr=False)
    hosts: HostScope | None = field(default=None, repr=False)  # None: it reads no host

    def finding(self, device: str | None, message: str, **details: Any) -> Finding:
        return Finding(check=self.id, severity=details.pop("severity", self.severity),
                       device=device, message=message, **details)

    @property
    def lossless(self) -> bool:
        """Part of the lossless catalog (run live only with `verify --lossless`)."""
        return self.func.__module__.startswith("flatfab.checks.lossless")

    @property
    def physical(self) -> bool:
        """Part of the physical-layer catalog (run live only with `verify --physical`)."""
        return self.func.__module__ == "flatfab.checks.physical"

    def run(self, ctx: CheckContext) -> Iterator[Finding]:
        yield from self.func(self, ctx)


CATALOG: dict[str, Check] = {}


@dataclass(frozen=True)
class FindingKind:
    """A kind of finding raised outside the checks' run (`flatfab watch`, `verify --traffic`,
    `audit --sot`): its id, title, severity and scope, and `doc` in a check docstring's form
    (`Reads:`, `Expects:`, `Fails when:`, `Fix:`). Declared in the `KINDS` of the module that
    raises it, which the one catalog of every finding collects (flatfab.catalog)."""

    id: str
    title: str
    severity: Severity
    scope: Scope
    doc: str


def check(check_id: str, title: str, *, scope: Scope, severity: Severity,
          stages: Iterable[Stage] = (Stage.STATIC, Stage.LIVE),
          hosts: HostScope | None = None) -> Callable[[CheckFunc], CheckFunc]:
    """Register a check function in the catalog under `check_id`. `hosts`: the hosts whose
    own state it judges live (None: it reads none; what a switch shows of a host is not a
    host's own state)."""

    def register(func: CheckFunc) -> CheckFunc:
        if check_id in CATALOG:
            raise ValueError(f"check {check_id} is registered twice")
        CATALOG[check_id] = Check(id=check_id, title=title, scope=scope, severity=severity,
                                  stages=frozenset(stages), func=func, hosts=hosts)
        return func

    return register


def device_sides(ctx: CheckContext) -> dict[str, Side]:
    """Which profile each read device is in, during a move between profiles (read once per
    run: the contexts and congestion.transition share it)."""
    found: dict[str, Side] | None = ctx.memo.get("sides")
    if found is None:
        found = ctx.memo["sides"] = sides(ctx.state, ctx.plan)
    return found


def _profile_contexts(ctx: CheckContext) -> list[CheckContext]:
    """Where the lossless catalog runs: the whole subject, or, live during a move between
    congestion profiles, the devices still in the profile the fabric leaves against that
    profile's plan and all others against the plan (links between the two parts are
    congestion.transition's)."""
    moving = ctx.plan.transition
    if not ctx.live or moving is None:
        return [ctx]
    leaving = {name for name, at in device_sides(ctx).items() if at is Side.SOURCE}
    if not leaving:
        return [ctx]
    rest = (ctx.state.devices.keys() | ctx.plan.devices.keys()) - leaving
    return [CheckContext(part(ctx.state, rest), part(ctx.plan, rest), ctx.stage),
            CheckContext(part(ctx.state, leaving), source_plan(ctx.plan, moving, leaving),
                         ctx.stage)]


def run_checks(ctx: CheckContext, only: Iterable[str] | None = None) -> list[Finding]:
    """Run every check of the stage but the physical ones (or the named ones); findings in a
    stable order. Live, each unmanaged host a host-side check would judge is reported not
    judged by it."""
    wanted = set(only) if only is not None else None
    findings: list[Finding] = []
    unmanaged = ([d for d in ctx.plan.devices.values() if not d.managed and d.role is Role.HOST]
                 if ctx.live else [])
    lossless_contexts = _profile_contexts(ctx)
    with gc_paused():
        for check_id in sorted(CATALOG):
            item = CATALOG[check_id]
            # the physical catalog runs when named (verify --physical): it reads what a
            # plain verify does not ask devices for
            if ctx.stage in item.stages and (check_id in wanted if wanted is not None
                                             else not item.physical):
                for each in lossless_contexts if item.lossless else [ctx]:
                    findings.extend(item.run(each))
                scope = item.hosts
                if scope is not None:
                    findings += [unmanaged_finding(check_id, host.name) for host in unmanaged
                                 if scope(ctx.plan, host)]
    return sorted(findings, key=lambda f: f.sort_key)
