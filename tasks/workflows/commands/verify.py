"""verify: collect the fabric read-only and run the live check catalog on it."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from nornir.core import Nornir

from flatfab import exitcodes
from flatfab.checks import CATALOG, CheckContext, Finding, Stage, run_checks
from flatfab.checks.base import fails, unread_settings
from flatfab.model.state import FabricState, Probe
from flatfab.plan.probes import plan_probes
from flatfab.workflows.devices.collect import DeviceRead, collect
from flatfab.workflows.devices.progress import RichProgress


@dataclass
class Report:
    findings: list[Finding]
    checks_run: list[str]
    devices: int
    timings: dict[str, float] = field(default_factory=dict)
    unmanaged: list[str] = field(default_factory=list)  # planned hosts never read: not judged
    observed: FabricState | None = field(default=None, repr=False)  # what was collected
    unread: dict[str, str] = field(default_factory=dict)  # device -> why it was not read

    @property
    def failed(self) -> bool:
        """A finding on what was read fails (an unread device alone does not: exit 3)."""
        return fails(self.findings, self.unread)

    @property
    def incomplete(self) -> bool:
        """Some device, or some setting a device should state, was not read."""
        return bool(self.unread) or bool(unread_settings(self.findings))

    @property
    def exit_code(self) -> int:
        return exitcodes.judged(failed=self.failed, unread=self.incomplete)


def asks_physical(only_checks: list[str] | None) -> bool:
    """Whether a run's checks judge the physical layer (only then is it read: it costs
    reads per port that no other check needs)."""
    return any(CATALOG[c].physical for c in only_checks or () if c in CATALOG)


def unread_devices(plan: FabricState, observed: FabricState) -> dict[str, str]:
    """Every planned device that was not read, with why, in plan order. An unmanaged host
    is never read by design: it is not judged, never unread."""
    found: dict[str, str] = {}
    for name in plan.managed():
        device = observed.devices.get(name)
        if device is None:
            found[name] = "not collected"
        elif not device.reachable:
            found[name] = "; ".join(device.errors) or "not read"
    return found


def verify_probes(plan: FabricState, probes: bool = True,
                  probe_fanout: int | None = None) -> dict[str, list[Probe]]:
    """The pings each managed host sends in a verify (none without probes); an unmanaged
    host sends none, but is a target like any other."""
    if not probes:
        return {}
    return {host: sent for host, sent in plan_probes(plan, probe_fanout).items()
            if plan.devices[host].managed}


def verify(nornir: Nornir, plan: FabricState, *, probes: bool = True,
           probe_fanout: int | None = None, only_checks: list[str] | None = None,
           progress: RichProgress | None = None, close: bool = True,
           before: DeviceRead | None = None, name: str = "verify: collect") -> Report:
    """Collect read-only and judge. `close`: each device's connection is closed once read
    (False keeps them for the caller, who closes them); `before`: as collect_devices."""
    started = time.monotonic()
    collection = collect(nornir, plan, probes=verify_probes(plan, probes, probe_fanout),
                         read_only=True, progress=progress, name=name, close=close,
                         before=before, physical=asks_physical(only_checks))
    return judge(plan, collection.state, only_checks, collect_s=collection.seconds,
                 started=started)


def judge(plan: FabricState, observed: FabricState, only_checks: list[str] | None, *,
          collect_s: float, started: float) -> Report:
    """The live checks, once, on the whole observed fabric: checks read peers' state (a
    link's far end, a leaf's routes to every other leaf), so a part is never judged alone.
    `started`: the run's monotonic start, for total_s."""
    ctx = CheckContext(state=observed, plan=plan, stage=Stage.LIVE)
    checks_started = time.monotonic()
    findings = run_checks(ctx, only_checks)
    ran = [c for c in sorted(CATALOG) if Stage.LIVE in CATALOG[c].stages
           and (only_checks is None or c in only_checks)]
    return Report(findings=findings, checks_run=ran, devices=len(plan.devices),
                  unmanaged=plan.unmanaged(), observed=observed,
                  unread=unread_devices(plan, observed),
                  timings={"collect_s": round(collect_s, 3),
                           "checks_s": round(time.monotonic() - checks_started, 3),
                           "total_s": round(time.monotonic() - started, 3)})
