"""Read every device of the plan into one observed FabricState (read-only).

Two steps, so a distributed run shares them with a single one: `collect_devices` reads a
set of devices (each on its own: nothing one device reports depends on another), and
`observed_state` puts the devices of one or many such reads into the fabric's observed
state, in plan order.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Container, Mapping
from dataclasses import dataclass

from nornir.core import Nornir
from nornir.core.task import Result, Task

from flatfab.cpupin import threads_on_one_cpu
from flatfab.gcpause import YoungSweep, gc_paused
from flatfab.model.build import share_fields_set
from flatfab.model.state import DeviceState, FabricState, Probe, Source
from flatfab.workflows.devices import device_io
from flatfab.workflows.devices.connections import release, unread_reason
from flatfab.workflows.devices.progress import RichProgress


def unread(planned: DeviceState, reason: str) -> DeviceState:
    """A device that could not be read, and why (device.reachable names it)."""
    return DeviceState(name=planned.name, role=planned.role, platform=planned.platform,
                       reachable=False, errors=[reason])


# more of a read on the device's session, before its state is read (an audit's running
# config): it records its own outcome and failures, the collect goes on either way (but
# for a session that did not open: ConnectError, raised again, is the device's reason)
DeviceRead = Callable[[Task], None]


def _collect(task: Task, plan: FabricState, probes: dict[str, list[Probe]],
             read_only: bool, close: bool, keep_open: Container[str] = (),
             sweep: YoungSweep | None = None, before: DeviceRead | None = None,
             physical: bool = False) -> Result:
    planned = plan.devices[task.host.name]
    try:
        if before is not None:
            before(task)
        device = device_io.observe(task, planned, probes.get(planned.name, []), read_only,
                                   physical)
        share_fields_set(device)  # a fleet's observed state is millions of small models
    except Exception as exc:  # noqa: BLE001 - an unread device is named, not a crash
        device = unread(planned, unread_reason(exc, task))
    finally:
        if close and task.host.name not in keep_open:
            release(task)
        if sweep is not None:
            sweep()
    return Result(host=task.host, result=device)


def spread_heaviest(names: list[str], weight: Callable[[str], int]) -> list[str]:
    """The order to read `names` in: those of at least a quarter of the heaviest's weight
    (planned interfaces) spaced evenly through the others. Read one after another, as a
    fleet's inventory lists them, a fleet's spines (a port per leaf each, tens of megabytes
    of output) would all be parsed at once: half the peak memory of a 5,000-device verify."""
    weights = {n: weight(n) for n in names}
    top = max(weights.values(), default=0)
    heavy = [n for n in names if weights[n] * 4 >= top]
    light = [n for n in names if weights[n] * 4 < top]
    if len(heavy) <= 1 or not light:
        return names
    step = len(light) / len(heavy)
    order: list[str] = []
    placed = 0  # heavy names in order so far
    for index, name in enumerate(light):
        while placed < len(heavy) and placed * step <= index:
            order.append(heavy[placed])
            placed += 1
        order.append(name)
    return order + heavy[placed:]


@dataclass
class Collection:
    state: FabricState
    seconds: float


def collect_devices(nornir: Nornir, plan: FabricState, *,
                    probes: dict[str, list[Probe]] | None = None, read_only: bool = True,
                    progress: RichProgress | None = None, only: set[str] | None = None,
                    name: str = "collect", close: bool = False,
                    keep_open: Container[str] = (),
                    before: DeviceRead | None = None,
                    physical: bool = False) -> dict[str, DeviceState]:
    """Observed state of the plan's devices (or only some), one Nornir run, in plan order.
    An unmanaged host is never read (nor is it in `nornir`): it is left out.

    `probes`: the pings each host sends (flatfab.plan.probes), none when omitted. `close`:
    each device's connection is closed once it is read (a run that reads it only once),
    but those of `keep_open`. `before`: read first on each device's session. `physical`:
    each port's physical layer too (verify --physical).
    """
    wanted = plan.managed()  # an unmanaged host is never read, whatever the inventory lists
    target = nornir.filter(filter_func=lambda h: h.name in wanted
                           and (only is None or h.name in only))
    hosts = target.inventory.hosts  # the filter's own dict: reordering it touches no other
    ordered = {n: hosts[n] for n in spread_heaviest(
        list(hosts), lambda n: len(plan.devices[n].interfaces) if n in plan.devices else 0)}
    hosts.clear()
    hosts.update(ordered)
    if progress is not None:
        target = target.with_processors([progress])
    # a fleet's states are millions of small objects that live on: the cyclic collector
    # would walk them again and again while they arrive (at 1,000 switches, 70 of the 150
    # CPU seconds of a verify); what the run leaves as cyclic garbage is found afterwards
    with gc_paused(long_lived=True), threads_on_one_cpu(len(hosts)):
        results = target.run(task=_collect, name=name, plan=plan, probes=probes or {},
                             read_only=read_only, close=close, keep_open=keep_open,
                             sweep=YoungSweep(), before=before, physical=physical,
                             on_failed=True)
    devices: dict[str, DeviceState] = {}
    for host, planned in plan.devices.items():
        if (only is not None and host not in only) or not planned.managed:
            continue
        outcome = results.get(host)
        if outcome is None or outcome.failed or not isinstance(outcome[0].result, DeviceState):
            error = str(outcome[0].exception) if outcome else "not in the inventory"
            devices[host] = unread(plan.devices[host], error)
        else:
            devices[host] = outcome[0].result
    return devices


def observed_state(plan: FabricState, devices: Mapping[str, DeviceState]) -> FabricState:
    """The fabric as observed: the devices read (in plan order; never an unmanaged host),
    the plan's links and tenants."""
    ordered = {name: devices[name] for name in plan.devices if name in devices}
    return FabricState(fabric=plan.fabric, source=Source.OBSERVED, roce_mtu=plan.roce_mtu,
                       devices=ordered, links=plan.links, tenants=plan.tenants)


def collect(nornir: Nornir, plan: FabricState, *, probes: dict[str, list[Probe]] | None = None,
            read_only: bool = True, progress: RichProgress | None = None,
            only: set[str] | None = None, name: str = "collect",
            close: bool = False, keep_open: Container[str] = (),
            before: DeviceRead | None = None, physical: bool = False) -> Collection:
    """Observed state of the plan's devices (or only some), one Nornir run (`close`,
    `before`: as collect_devices)."""
    started = time.monotonic()
    devices = collect_devices(nornir, plan, probes=probes, read_only=read_only,
                              progress=progress, only=only, name=name, close=close,
                              keep_open=keep_open, before=before, physical=physical)
    return Collection(state=observed_state(plan, devices),
                      seconds=time.monotonic() - started)
