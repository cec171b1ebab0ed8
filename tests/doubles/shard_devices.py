"""The devices of a fabric as the per-device phase sees them, without a network: a double of
flatfab.workflows.devices.device_io for tests that run shards in this process.

Every device answers as a healthy fabric would (the plan, sessions up, every leaf's routes
over all its uplinks, probes answered as planned); faults are per device (unreachable,
config drift, slow). A single run and a sharded one read the same devices through it, so
their reports must be equal. (Worker processes read the simulated fleet,
tests/doubles/fleet/, over real SSH; tests/doubles/shard_faults.py breaks whole shards.)
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any

from nornir.core.task import Task

from flatfab.model.state import (
    DEFAULT_VRF,
    DeviceState,
    FabricState,
    IfKind,
    NextHop,
    Probe,
    Role,
    Route,
)
from flatfab.platforms.cli_driver import unified_diff
from flatfab.workflows.devices import device_io


@dataclass
class Faults:
    unreachable: dict[str, str] = field(default_factory=dict)  # device -> error
    drift: dict[str, str] = field(default_factory=dict)  # device -> a line it adds
    slow_s: float = 0.0  # every device takes this long to read


class HealthyFabric:
    """Per device, what a correct fabric reports (computed once per device kind)."""

    def __init__(self, plan: FabricState) -> None:
        self.plan = plan
        self._routes: dict[str, dict[str, dict[str, Route]]] = {}
        self._lock = threading.Lock()

    def _leaf_routes(self, leaf: DeviceState) -> dict[str, dict[str, Route]]:
        routes: dict[str, dict[str, Route]] = {}
        for vrf in (DEFAULT_VRF, *leaf.vrfs):
            uplinks = [i.name for i in leaf.interfaces.values()
                       if i.kind is IfKind.FABRIC and i.vrf == vrf]
            table = routes.setdefault(vrf, {})
            for other in self.plan.of_role(Role.LEAF):
                if other.name != leaf.name and vrf in other.bgp:
                    for prefix in other.bgp[vrf].networks:
                        table[prefix] = Route(protocol="bgp", nexthops=[
                            NextHop(interface=p) for p in uplinks])
        return routes

    def device(self, name: str, probes: list[Probe]) -> DeviceState:
        device = self.plan.devices[name].model_copy(deep=True)
        for instance in device.bgp.values():
            for peer in instance.peers.values():
                peer.state = "Established"
        device.probes = [p.model_copy(update={"replied": p.expect_reply}) for p in probes]
        if device.role is Role.LEAF:
            with self._lock:
                if name not in self._routes:
                    self._routes[name] = self._leaf_routes(device)
            device.routes = {vrf: dict(table) for vrf, table in self._routes[name].items()}
        return device


class ShardDevices:
    """The double: install() patches the seams, uninstall() puts them back."""

    def __init__(self, plan: FabricState, faults: Faults | None = None) -> None:
        self.fabric = HealthyFabric(plan)
        self.faults = faults or Faults()
        self._saved: list[tuple[Any, str, Any]] = []

    # ---- device_io's three functions
    def _check(self, name: str) -> None:
        if self.faults.slow_s:
            time.sleep(self.faults.slow_s)
        if name in self.faults.unreachable:
            raise ConnectionError(self.faults.unreachable[name])

    def observe(self, task: Task, planned: DeviceState, probes: list[Probe],
                read_only: bool, physical: bool = False) -> DeviceState:
        assert read_only, "verify and audit read devices read-only"
        self._check(planned.name)
        return self.fabric.device(planned.name, probes)

    def _running(self, name: str, intended: str) -> str:
        extra = self.faults.drift.get(name)
        return intended + extra + "\n" if extra else intended

    def config_texts(self, task: Task, intended: str) -> tuple[str, str]:
        self._check(task.host.name)
        return self._running(task.host.name, intended), intended

    def config_diff(self, task: Task, intended: str, read_only: bool) -> tuple[str, list[str]]:
        assert read_only, "a dry run diffs read-only"
        self._check(task.host.name)
        running = self._running(task.host.name, intended)
        diff = unified_diff(running, intended, task.host.name) if running != intended else ""
        return diff, []

    def install(self) -> ShardDevices:
        for module, name, value in ((device_io, "observe", self.observe),
                                    (device_io, "config_texts", self.config_texts),
                                    (device_io, "config_diff", self.config_diff)):
            self._saved.append((module, name, getattr(module, name)))
            setattr(module, name, value)
        return self

    def uninstall(self) -> None:
        while self._saved:
            module, name, value = self._saved.pop()
            setattr(module, name, value)
