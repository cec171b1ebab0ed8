"""What a worker process works from: one project root, its plans cached by intent, and
the Redis client of its broker. Set once when `flatfab --root DIR worker` starts; the
prefork pool's processes inherit it and each builds its own plans and client."""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import redis
from nornir.core import Nornir

from flatfab.distributed.config import Config
from flatfab.distributed.store import client
from flatfab.model.state import FabricState
from flatfab.platforms.base import DEFAULT_TIMEOUTS, Timeouts
from flatfab.sot import inventory as sot_inventory
from flatfab.workflows.devices.connections import with_timeouts
from flatfab.workflows.devices.credentials import Credentials
from flatfab.workflows.project.layout import Project
from flatfab.workflows.runs.fingerprint import intent_digest, plan_hash


@dataclass
class WorkerContext:
    root: Path
    config: Config
    workers: int = 20  # Nornir threads of one shard (devices read at once)
    inventory_override: Path | None = None
    state_override: Path | None = None
    timeouts: Timeouts = DEFAULT_TIMEOUTS  # the worker's own (its options, its project file)
    # device passwords: the environment, and those typed at `worker --ask-pass` (memory)
    credentials: Credentials = field(default_factory=Credentials, repr=False)
    _plans: dict[str, tuple[str, Project, FabricState, str]] = field(default_factory=dict,
                                                                    repr=False)
    # per fabric, what every shard of it needs and no shard changes: its Nornir (the
    # inventory read and checked once), its shards and each run's probes; key: the plan and
    # the inventory files as they are (a change to either builds them again)
    _fabric: dict[str, tuple[tuple[object, ...], Nornir, dict[tuple[object, ...], Any]]] = field(
        default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _store: tuple[int, redis.Redis] | None = field(default=None, repr=False)

    def project(self, fabric: str) -> Project:
        """The fabric in this worker's project (a bad name is refused as on the CLI)."""
        return Project(root=self.root, fabric=fabric,
                       inventory_override=self.inventory_override,
                       state_override=self.state_override)

    def plan(self, fabric: str) -> tuple[Project, FabricState, str]:
        """The fabric's project, plan and plan hash, loaded and planned again only when its
        intent files changed (the Project keeps the intent: address spaces come free)."""
        fresh = self.project(fabric)
        digest = intent_digest(fresh.intent_dir)
        with self._lock:
            cached = self._plans.get(fabric)
        if cached is not None and cached[0] == digest:
            return cached[1], cached[2], cached[3]
        planned = fresh.plan
        found = (digest, fresh, planned, plan_hash(planned))
        with self._lock:
            self._plans[fabric] = found
        return fresh, planned, found[3]

    def fabric_parts(self, fabric: str, project: Project, plan: FabricState, mine: str
                     ) -> tuple[Nornir, dict[tuple[object, ...], Any]]:
        """The fabric's Nornir and a cache for what its shards share (shards, probes), kept
        while its plan and inventory files are unchanged: read per shard, a fleet's
        inventory would be parsed and checked once per shard (its size times theirs)."""
        files = sorted(project.inventory_dir.glob("*.yaml"))
        key = (mine, tuple((str(p), p.stat().st_mtime_ns, p.stat().st_size) for p in files))
        with self._lock:
            cached = self._fabric.get(fabric)
        if cached is not None and cached[0] == key:
            return cached[1], cached[2]
        nornir = with_timeouts(sot_inventory.build(project.inventory_dir, plan, self.workers,
                                                   project.address_spaces,
                                                   credentials=self.credentials),
                               self.timeouts)
        with self._lock:
            self._fabric[fabric] = (key, nornir, {})
        return nornir, self._fabric[fabric][2]

    @property
    def store(self) -> redis.Redis:
        """This process's client (a forked pool process makes its own)."""
        if self._store is None or self._store[0] != os.getpid():
            self._store = (os.getpid(), client(self.config))
        return self._store[1]


_CONTEXT: WorkerContext | None = None


def install(context: WorkerContext) -> None:
    global _CONTEXT  # noqa: PLW0603 - one context per worker process, set at start
    _CONTEXT = context


def current() -> WorkerContext:
    if _CONTEXT is None:
        raise RuntimeError("no worker context: start workers with `flatfab --root DIR worker`")
    return _CONTEXT
