"""Read every device of the plan into one observed FabricState (read-only)."""

from __future__ import annotations

import time
from dataclasses import dataclass

from nornir.core import Nornir
from nornir.core.task import Result, Task

from tasks.model.state import DeviceState, FabricState, Probe, Source
from tasks.platforms.registry import get as get_platform
from tasks.workflows.connections import driver, release
from tasks.workflows.progress import RichProgress


def _collect(task: Task, plan: FabricState, probes: dict[str, list[Probe]],
             read_only: bool, close: bool) -> Result:
    planned = plan.devices[task.host.name]
    try:
        device = get_platform(planned.platform).collect(
            driver(task, read_only=read_only), planned, probes.get(planned.name, []))
    except Exception as exc:  # noqa: BLE001 - any failure is a finding, not a crash
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        device = DeviceState(name=planned.name, role=planned.role, platform=planned.platform,
                             reachable=False, errors=[reason])
    finally:
        if close:
            release(task)
    return Result(host=task.host, result=device)


@dataclass
class Collection:
    state: FabricState
    seconds: float


def collect(nornir: Nornir, plan: FabricState, *, probes: dict[str, list[Probe]] | None = None,
            read_only: bool = True, progress: RichProgress | None = None,
            only: set[str] | None = None, name: str = "collect",
            close: bool = False) -> Collection:
    """Observed state of the plan's devices (or only some), one Nornir run.

    `probes`: the pings each host sends (tasks.plan.probes), none when omitted. `close`:
    each device's connection is closed once it is read (a run that reads it only once).
    """
    started = time.monotonic()
    target = nornir.filter(filter_func=lambda h: h.name in only) if only is not None else nornir
    if progress is not None:
        target = target.with_processors([progress])
    results = target.run(task=_collect, name=name, plan=plan, probes=probes or {},
                         read_only=read_only, close=close, on_failed=True)
    devices: dict[str, DeviceState] = {}
    for host in plan.devices:
        if only is not None and host not in only:
            continue
        outcome = results.get(host)
        if outcome is None or outcome.failed or not isinstance(outcome[0].result, DeviceState):
            planned = plan.devices[host]
            error = str(outcome[0].exception) if outcome else "not in the inventory"
            devices[host] = DeviceState(name=host, role=planned.role, platform=planned.platform,
                                        reachable=False, errors=[error])
        else:
            devices[host] = outcome[0].result
    state = FabricState(fabric=plan.fabric, source=Source.OBSERVED, roce_mtu=plan.roce_mtu,
                        devices=devices, links=plan.links, tenants=plan.tenants)
    return Collection(state=state, seconds=time.monotonic() - started)
