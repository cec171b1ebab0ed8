"""The devices of a fabric as the per-device phase sees them, without a network: a double of
tasks.workflows.device_io (and, for faults of a whole shard, of shard_run.run_shard).

Every device answers as a healthy fabric would (the plan, sessions up, every leaf's routes
over all its uplinks, probes answered as planned); faults are per device (unreachable,
config drift, slow) or per shard (an exception, or the process dying, on its first N
deliveries). It stands in for the simulated fleet (tests/doubles/fleet/) until that serves
the shard tests over real SSH: the single-process and the distributed runs go through the
same seam, so both read the same devices.

In a subprocess (a `flatfab worker`, a single-process `flatfab verify`), `install_from_env()`
reads the faults from the JSON file FLATFAB_TEST_SHARD_DEVICES names (keys: root, fabric,
unreachable, drift, slow_s, fail_shard, die_shard, state_dir); `launcher()` is the Python
code that installs it and then runs the real CLI.
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nornir.core import Nornir
from nornir.core.task import Task

from tasks.model.state import (
    DEFAULT_VRF,
    DeviceState,
    FabricState,
    IfKind,
    NextHop,
    Probe,
    Role,
    Route,
)
from tasks.platforms.shell_driver import unified_diff
from tasks.workflows import device_io, shard_run
from tasks.workflows.project import Project
from tasks.workflows.shard_run import RunSpec, ShardOutput

ENV = "FLATFAB_TEST_SHARD_DEVICES"


@dataclass
class Faults:
    unreachable: dict[str, str] = field(default_factory=dict)  # device -> error
    drift: dict[str, str] = field(default_factory=dict)  # device -> a line it adds
    slow_s: float = 0.0  # every device takes this long to read
    fail_shard: dict[str, int] = field(default_factory=dict)  # raise on first N deliveries
    die_shard: dict[str, int] = field(default_factory=dict)  # SIGKILL itself on first N
    state_dir: str = ""  # where deliveries are counted across processes

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Faults:
        return cls(**{k: v for k, v in data.items() if k in cls.__dataclass_fields__})


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
                        table[prefix] = Route(prefix=prefix, protocol="bgp", nexthops=[
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

    def __init__(self, plan: FabricState, faults: Faults | None = None,
                 faults_file: Path | None = None) -> None:
        self.fabric = HealthyFabric(plan)
        self.faults = faults or Faults()
        self.faults_file = faults_file  # read again at every shard: tests change faults
        self._saved: list[tuple[Any, str, Any]] = []

    # ---- device_io's three functions
    def _check(self, name: str) -> None:
        if self.faults.slow_s:
            time.sleep(self.faults.slow_s)
        if name in self.faults.unreachable:
            raise ConnectionError(self.faults.unreachable[name])

    def observe(self, task: Task, planned: DeviceState, probes: list[Probe],
                read_only: bool) -> DeviceState:
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

    # ---- faults of a whole shard
    def _delivery(self, shard: str) -> int:
        """This delivery's number for the shard, counted in a file (across processes)."""
        path = Path(self.faults.state_dir) / f"{shard}.deliveries"
        with path.open("a", encoding="utf-8") as handle:
            handle.write(f"{os.getpid()}\n")
        return len(path.read_text(encoding="utf-8").splitlines())

    def wrap(self, real: Callable[..., ShardOutput]) -> Callable[..., ShardOutput]:
        def run_shard(nornir: Nornir, plan: FabricState, spec: RunSpec, shard: str,
                      devices: tuple[str, ...]) -> ShardOutput:
            if self.faults_file is not None:
                self.faults = read_faults(self.faults_file)
            if shard in self.faults.fail_shard or shard in self.faults.die_shard:
                n = self._delivery(shard)
                if n <= self.faults.die_shard.get(shard, 0):
                    os.kill(os.getpid(), signal.SIGKILL)
                if n <= self.faults.fail_shard.get(shard, 0):
                    raise RuntimeError(f"injected failure of shard {shard} (delivery {n})")
            return real(nornir, plan, spec, shard, devices)
        return run_shard

    def install(self) -> ShardDevices:
        for module, name, value in ((device_io, "observe", self.observe),
                                    (device_io, "config_texts", self.config_texts),
                                    (device_io, "config_diff", self.config_diff),
                                    (shard_run, "run_shard", self.wrap(shard_run.run_shard))):
            self._saved.append((module, name, getattr(module, name)))
            setattr(module, name, value)
        return self

    def uninstall(self) -> None:
        while self._saved:
            module, name, value = self._saved.pop()
            setattr(module, name, value)


def read_faults(path: Path) -> Faults:
    return Faults.from_dict(json.loads(path.read_text(encoding="utf-8")))


def install_from_env() -> ShardDevices:
    """In a subprocess: the double for the project and faults FLATFAB_TEST_SHARD_DEVICES
    names (a worker reads them again at every shard)."""
    path = Path(os.environ[ENV])
    data = json.loads(path.read_text(encoding="utf-8"))
    plan = Project(root=Path(data["root"]), fabric=data["fabric"]).plan
    return ShardDevices(plan, Faults.from_dict(data), faults_file=path).install()


def launcher() -> str:
    """`python -c` code: install the double, then run the real flatfab CLI (argv as given)."""
    return ("import sys; sys.argv[0] = 'flatfab'; "
            "import tests.doubles.shard_devices as d; d.install_from_env(); "
            "from tasks.cli.app import main; main()")
