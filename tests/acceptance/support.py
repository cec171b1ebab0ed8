"""An acceptance run on the lab's plan through the real workflow and the linux_host
platform, every host a double (tests/doubles/engines.py) and the counters canned: what the
workflow and report tests share."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest
from nornir.core import Nornir
from nornir.core.inventory import Defaults, Groups, Host, Hosts, Inventory
from nornir.core.task import Result, Task
from nornir.plugins.runners import ThreadedRunner

from flatfab.acceptance.selection import ends
from flatfab.intent.acceptance import AcceptanceIntent, EngineReference
from flatfab.intent.loader import load_intent
from flatfab.model.state import FabricState
from flatfab.plan.planner import plan
from flatfab.workflows.commands import acceptance as acc
from tests.doubles.engines import EngineShell, engine_host
from tests.support.paths import ROOT

EPOCH = 1_795_424_400.0  # 2026-11-23T09:00:00Z, as the other report goldens
LAB_INTENT = AcceptanceIntent(iperf3=EngineReference(
    gbps={"100G": 2.0}, why="the lab's iperf3 runs over veth on one machine's CPUs"))


def lab_plan() -> FabricState:
    return plan(load_intent(ROOT / "intents" / "lab"))


def address_of(state: FabricState, server: str) -> str:
    return next(e.address for e in ends(state) if e.server == server)


def nornir_of(state: FabricState, shells: dict[str, EngineShell],
              figure: Callable[[str, str], float | None], **host_kwargs: Any) -> Nornir:
    """Every planned device as an inventory host; every server's NAPALM connection already
    open on its engine double."""
    hosts = Hosts({name: Host(name=name, hostname="127.0.0.1", platform=d.platform)
                   for name, d in state.devices.items()})
    for name, device in state.devices.items():
        if device.role.value == "host":
            driver, shell = engine_host(name, figure=figure, **host_kwargs)
            shells[name] = shell
            hosts[name].connections["napalm"] = SimpleNamespace(connection=driver)  # type: ignore[assignment]
    return Nornir(inventory=Inventory(hosts=hosts, groups=Groups(), defaults=Defaults()),
                  runner=ThreadedRunner(num_workers=8))


def canned_counters(monkeypatch: pytest.MonkeyPatch,
                    grow: dict[tuple[str, str], dict[str, int]] | None = None,
                    unread: set[str] = frozenset()) -> None:  # type: ignore[assignment]
    """Every device's counters: 0 before, `grow` more on (device, port) after; a device in
    `unread` fails its read."""
    calls: dict[str, int] = {}

    def counters(task: Task, plan: FabricState) -> Result:
        name = task.host.name
        if name in unread:
            raise RuntimeError("SSH session closed")
        calls[name] = calls.get(name, 0) + 1
        after = calls[name] > 1
        device = plan.devices[name]
        found = {port: {"drops.tc3": 0, "packets.tc3": 100 * after}
                 for port in device.interfaces}
        for (dev, port), more in (grow or {}).items():
            if dev == name:
                found.setdefault(port, {}).update({key: value * after
                                                   for key, value in more.items()})
        return Result(host=task.host, result=found)

    monkeypatch.setattr(acc, "_counters", counters)


def slow_to_and_from(state: FabricState, server: str, slow: float = 0.19,
                     healthy: float = 2.4) -> Callable[[str, str], float | None]:
    """A figure per (client host, server address): `slow` where `server` is either end."""
    address = address_of(state, server)

    def figure(host: str, target: str) -> float | None:
        return slow if server == host or target == address else healthy

    return figure


def fixed(run: acc.AcceptanceRun) -> acc.AcceptanceRun:
    """The run with its clock's readings fixed (for byte-identical reports)."""
    timings = {"measure_s": 12.5, "total_s": 14.0}
    info = dataclasses.replace(run.info, timings=timings)
    return dataclasses.replace(run, info=info, started_epoch=EPOCH, timings=timings)
