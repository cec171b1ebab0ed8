"""gNMI targets for the fleet's switches: each switch streams healthy counters of its planned
lossless ports, at its platform's paths (tasks/platforms/<name>/telemetry.yaml), over TLS
with a username and password, so `flatfab watch` subscribes to the fleet as to a fabric.

The counters are tests/doubles/gnmi.py `HealthyCounters` (the watch tests' healthy switch:
traffic on the lossy and lossless queues, drops only on the lossy one, ECN marks only on the
lossless one, no pause frame), keyed by the platform's leaf paths; a platform whose target
reads a string database (SONiC's COUNTERS_DB) sends them as decimal strings, one update per
leaf, as tests/telemetry/test_platform_paths.py serves them. A metric the platform has no
leaf for is not sent.

Serving: what a switch answers is flatfab's own GnmiTarget (its reads, subscription modes,
sample and heartbeat bookkeeping, notifications), never started; the transport is the one
benchmarks/watch.py measured cheapest on this machine: asyncio gRPC servers on the fleet's
event loop, not a thread pool per switch. A gRPC server cannot tell which of its ports a
call came in on, so each switch has a server of its own (about 1 ms and one socket each).
One CA and server certificate (for 127.0.0.1) serve every switch; the credentials go to an
`env_file` only the fleet's user may read, which the inventory names (as `lab up` does).
"""

from __future__ import annotations

import asyncio
import hmac
import os
import secrets
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import grpc
from pygnmi.spec.v080 import gnmi_pb2, gnmi_pb2_grpc

from flatfab.model.state import DeviceState, FabricState, Role
from flatfab.platforms.registry import get as get_platform
from flatfab.telemetry import paths, platform_paths, tls
from flatfab.telemetry.gnmi_schema import GnmiError
from flatfab.telemetry.gnmi_target import Credentials, GnmiTarget
from flatfab.telemetry.paths import PathError
from flatfab.telemetry.samples import Metric
from flatfab.telemetry.targets import PASSWORD_ENV, USERNAME_ENV
from tests.doubles.gnmi import LAB_LOSSLESS_Q, LAB_LOSSY_Q, HealthyCounters

USERNAME = "flatfab"
POLL_S = 1.0  # how often ON_CHANGE leaves are compared (oper state moves only by a fault)


def lossless_ports(planned: DeviceState) -> tuple[str, ...]:
    """The switch's physical ports with lossless settings (what `watch` judges)."""
    return tuple(sorted(n for n, i in planned.interfaces.items()
                        if i.qos is not None and i.parent is None))


class SwitchCounters:
    """A CounterSource: `HealthyCounters` of the switch's lossless ports at its platform's
    paths (module docstring)."""

    def __init__(self, planned: DeviceState) -> None:
        found = get_platform(planned.platform).telemetry
        if found is None:
            raise ValueError(f"{planned.name}: platform {planned.platform} has no gNMI paths")
        ports = lossless_ports(planned)
        for port in ports:
            qos = planned.interfaces[port].qos
            assert qos is not None
            if LAB_LOSSLESS_Q not in qos.pfc or LAB_LOSSY_Q in qos.pfc:
                # HealthyCounters pauses and marks on the lab profile's classes only
                raise ValueError(f"{planned.name} {port}: the fleet streams the canonical "
                                 f"profile (lossless {LAB_LOSSLESS_Q}), not PFC {qos.pfc}")
        self.healthy = HealthyCounters(ports)
        self.strings = found.values is platform_paths.Values.JSON
        self._paths: dict[tuple[Metric, str, int], str | None] = {}
        for key in self.healthy.values:
            try:
                self._paths[key] = found.table.leaf_path(*key)
            except PathError:
                self._paths[key] = None  # the platform exports no such leaf
        try:
            self._oper = [(found.table.leaf_path(Metric.OPER_UP, p),
                           paths.leaf_value(Metric.OPER_UP, 1)) for p in ports]
        except PathError:
            self._oper = []

    def __call__(self) -> list[tuple[str, int | str]]:
        self.healthy()  # every counter grows once, as the watch tests' healthy switch does
        out: list[tuple[str, int | str]] = []
        for key, value in self.healthy.values.items():
            path = self._paths[key]
            if path is not None:
                out.append((path, str(value) if self.strings else value))
        return out + list(self._oper)


class _Switch:
    """The gNMI service of one switch: GnmiTarget's behaviour on an asyncio server."""

    def __init__(self, planned: DeviceState, credentials: Credentials) -> None:
        self.name, self.planned, self.credentials = planned.name, planned, credentials
        self._model: GnmiTarget | None = None
        self.streams = 0

    @property
    def model(self) -> GnmiTarget:
        if self._model is None:  # never started: only its reads and bookkeeping are used
            self._model = GnmiTarget("127.0.0.1", 0, SwitchCounters(self.planned),
                                     self.credentials, None, None, name=self.name,
                                     insecure=True, poll_s=POLL_S)
        return self._model

    async def _auth(self, context: Any) -> None:
        md = {k.lower(): v for k, v in context.invocation_metadata() or ()}
        # compare both, always, in constant time, as GnmiTarget.authenticate does
        ok_user = hmac.compare_digest(str(md.get("username", "")).encode(),
                                      self.credentials.username.encode())
        ok_pass = hmac.compare_digest(str(md.get("password", "")).encode(),
                                      self.credentials.password.encode())
        if not (ok_user and ok_pass):
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, "bad username or password")

    async def Capabilities(self, request: Any, context: Any) -> Any:  # noqa: N802 - gRPC's
        await self._auth(context)
        return self.model.capabilities()

    async def Get(self, request: Any, context: Any) -> Any:  # noqa: N802
        await self._auth(context)
        await context.abort(grpc.StatusCode.UNIMPLEMENTED, "Get is not served; use Subscribe")

    async def Set(self, request: Any, context: Any) -> Any:  # noqa: N802
        await self._auth(context)
        await context.abort(grpc.StatusCode.UNIMPLEMENTED, "this target is read-only")

    async def Subscribe(self, requests: AsyncIterator[Any],  # noqa: N802
                        context: Any) -> AsyncIterator[Any]:
        """GnmiTarget.subscribe, with asyncio sleeps instead of a thread's waits."""
        await self._auth(context)
        first = await anext(aiter(requests), None)
        if first is None or not first.HasField("subscribe"):
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT,
                                "first request must be subscribe")
            return  # abort raises; this tells the type checker
        sl = first.subscribe
        if sl.mode == gnmi_pb2.SubscriptionList.POLL:
            await context.abort(grpc.StatusCode.UNIMPLEMENTED, "POLL mode is not supported")
        model = self.model
        snap = model._read_quietly()  # first: the source's leaves join the target's schema
        if snap is None:
            await context.abort(grpc.StatusCode.UNAVAILABLE, "counter source failed")
            return
        try:
            session = model.session(sl)
        except GnmiError as exc:
            await context.abort(grpc.StatusCode[exc.code], str(exc))
            return
        self.streams += 1
        for response in session.initial(snap):
            yield response
        if sl.mode == gnmi_pb2.SubscriptionList.ONCE:
            return
        session.start(time.monotonic())
        while True:
            wake = session.next_due()
            wait = wake - time.monotonic()
            await asyncio.sleep(max(0.0, min(wait, POLL_S) if session.polled else wait))
            now = time.monotonic()
            if not session.polled and wake > now:
                continue
            tick = model._read_quietly()
            if tick is None:
                continue
            for response in session.tick(tick, now):
                yield response


class GnmiFleet:
    """Every switch's gNMI target on 127.0.0.1 (a port each), its CA and credentials in
    `folder`: `ca.pem` and `credentials.env` (0600)."""

    def __init__(self, switches: list[DeviceState], folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.ca_file, self.env_file = folder / "ca.pem", folder / "credentials.env"
        ca = tls.make_ca("flatfab fleet CA")
        self._pem = tls.make_server_cert(ca, ["127.0.0.1", "localhost"])
        self.ca_file.write_bytes(ca.cert)
        self.credentials = Credentials(USERNAME, secrets.token_urlsafe(24))
        fd = os.open(self.env_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as out:
            out.write(f"{USERNAME_ENV}={self.credentials.username}\n"
                      f"{PASSWORD_ENV}={self.credentials.password}\n")
        self.switches = {d.name: _Switch(d, self.credentials) for d in switches}
        self.ports: dict[str, int] = {}
        self._servers: list[Any] = []

    async def start(self) -> dict[str, int]:
        creds = grpc.ssl_server_credentials([(self._pem.key, self._pem.cert)])
        for name, switch in self.switches.items():
            server = grpc.aio.server()
            gnmi_pb2_grpc.add_gNMIServicer_to_server(switch, server)
            self.ports[name] = server.add_secure_port("127.0.0.1:0", creds)
            await server.start()
            self._servers.append(server)
        return self.ports

    async def stop(self) -> None:
        await asyncio.gather(*(s.stop(None) for s in self._servers))

    def connection(self, name: str) -> dict[str, Any]:
        """The switch's `connection_options.gnmi` (inventory/README.md)."""
        return {"port": self.ports[name], "extras": {"ca_file": str(self.ca_file),
                                                     "env_file": str(self.env_file)}}


def switches(plan: FabricState) -> list[DeviceState]:
    """The devices that get a gNMI target: every switch (hosts are polled over SSH)."""
    return [d for d in plan.devices.values() if d.role is not Role.HOST]
