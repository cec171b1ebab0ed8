"""A small gNMI target (server): what each switch of flatfab's embedded lab runs.

It serves Capabilities and Subscribe (STREAM with SAMPLE / ON_CHANGE / TARGET_DEFINED, and
ONCE) over TLS, with username/password taken from the call metadata. The counters come from
a `CounterSource` the caller supplies: a callable returning the current `(path, value)` leaves
(in the lab it reads `tc -s -j class show` and the virtual ASIC; in the tests, a fake).

Run it as a thread (`GnmiTarget(...).start()`) or as a process:
    python -m flatfab.telemetry.gnmi_target --config target.yaml
"""

from __future__ import annotations

import argparse
import hmac
import importlib
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent import futures
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, NoReturn

import grpc
import yaml
from pygnmi.spec.v080 import gnmi_pb2, gnmi_pb2_grpc

from flatfab.telemetry import paths
from flatfab.telemetry.paths import Elem

log = logging.getLogger(__name__)

Value = int | str
CounterSource = Callable[[], Iterable[tuple[str, Value]]]

GNMI_VERSION: Final = "0.8.0"
MIN_INTERVAL_S: Final = 0.05  # floor on a requested sample interval: no busy loops
_STATE_LEAVES: Final = frozenset({"oper-status"})  # TARGET_DEFINED sends these ON_CHANGE
_MODELS: Final = (
    ("openconfig-interfaces", "OpenConfig working group", "3.x"),
    ("openconfig-qos", "OpenConfig working group", "2.0.1"),
    ("flatfab-qos", "flatfab", "0.1.0"),
    ("flatfab-nic", "flatfab", "0.1.0"),
)


@dataclass(frozen=True, slots=True)
class Credentials:
    username: str
    password: str = field(repr=False)  # never printed

    @classmethod
    def from_env(cls, username_env: str, password_env: str) -> Credentials:
        missing = [n for n in (username_env, password_env) if not os.environ.get(n)]
        if missing:
            raise KeyError(f"credentials not set: {', '.join(missing)}")
        return cls(os.environ[username_env], os.environ[password_env])


@dataclass(slots=True)
class _Sub:
    path: tuple[Elem, ...]
    on_change: bool | None  # None: TARGET_DEFINED, decided per leaf
    interval_s: float
    heartbeat_s: float
    due: float = 0.0
    beat_due: float = 0.0
    # leaf -> does this subscription cover it: a stream asks for every leaf every sample
    covered: dict[tuple[Elem, ...], bool] = field(default_factory=dict)

    def covers(self, leaf: tuple[Elem, ...]) -> bool:
        hit = self.covered.get(leaf)
        if hit is None:
            if len(self.covered) >= _CACHE_MAX:
                self.covered.clear()
            hit = self.covered[leaf] = paths.matches(self.path, leaf)
        return hit


_CACHE_MAX: Final = 1 << 16  # leaves remembered (parsed, matched, as protos); past it, anew


def _abort(context: Any, code: Any, message: str) -> NoReturn:
    context.abort(code, message)  # raises inside grpc; the raise below tells the type checker
    raise RuntimeError(message)


def typed_value(value: Value) -> Any:
    if isinstance(value, str):
        return gnmi_pb2.TypedValue(string_val=value)
    if value < 0:
        return gnmi_pb2.TypedValue(int_val=value)
    return gnmi_pb2.TypedValue(uint_val=value)


class GnmiTarget:
    """One gNMI server. `port=0` picks a free port; `start()` returns the bound one."""

    def __init__(
        self,
        address: str,
        port: int,
        source: CounterSource,
        credentials: Credentials | None,
        tls_cert: bytes | None,
        tls_key: bytes | None,
        *,
        name: str = "",
        insecure: bool = False,
        default_interval_s: float = 1.0,
        poll_s: float = 0.1,
        max_streams: int = 16,
    ) -> None:
        if not insecure and (tls_cert is None or tls_key is None):
            raise ValueError("a gNMI target needs tls_cert and tls_key (or insecure=True)")
        self.address, self.port, self.name = address, port, name or f"{address}:{port}"
        self._source = source
        self._creds = credentials
        self._tls = None if insecure else (tls_key, tls_cert)
        self._default_interval_s = default_interval_s
        self._poll_s = poll_s  # how often ON_CHANGE leaves are compared
        self._max_streams = max_streams
        self._server: Any = None
        # a source gives the same leaves every read: each path string parsed once
        self._parsed: dict[str, tuple[Elem, ...]] = {}

    # --- lifecycle -------------------------------------------------------------------------

    def start(self) -> int:
        # one worker per live stream (a stream holds its worker), plus room for Capabilities
        server = grpc.server(
            futures.ThreadPoolExecutor(max_workers=self._max_streams + 2,
                                       thread_name_prefix=f"gnmi-{self.name}"),
            maximum_concurrent_rpcs=self._max_streams + 2,
        )
        gnmi_pb2_grpc.add_gNMIServicer_to_server(_Servicer(self), server)
        where = f"{self.address}:{self.port}"
        if self._tls is None:
            bound = server.add_insecure_port(where)
        else:
            bound = server.add_secure_port(where, grpc.ssl_server_credentials([self._tls]))
        if not bound:
            raise OSError(f"{self.name}: cannot listen on {where}")
        server.start()
        self._server, self.port = server, int(bound)
        log.info("%s: gNMI target listening on %s:%d", self.name, self.address, self.port)
        return self.port

    def stop(self, grace_s: float | None = 0.0) -> None:
        """Stop listening and cancel every stream (subscribers see the target go away)."""
        if self._server is not None:
            self._server.stop(grace_s).wait()
            self._server = None

    def __enter__(self) -> GnmiTarget:
        self.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop()

    # --- RPC bodies ------------------------------------------------------------------------

    def authenticate(self, context: Any) -> None:
        if self._creds is None:
            return
        md = {k.lower(): v for k, v in context.invocation_metadata() or ()}
        user = str(md.get("username", "")).encode()
        password = str(md.get("password", "")).encode()
        # compare both, always, in constant time: no hint which one was wrong
        ok_user = hmac.compare_digest(user, self._creds.username.encode())
        ok_pass = hmac.compare_digest(password, self._creds.password.encode())
        if not (ok_user and ok_pass):
            log.warning("%s: refused %s: bad username or password", self.name, context.peer())
            _abort(context, grpc.StatusCode.UNAUTHENTICATED, "bad username or password")

    def capabilities(self) -> Any:
        return gnmi_pb2.CapabilityResponse(
            supported_models=[gnmi_pb2.ModelData(name=n, organization=o, version=v)
                              for n, o, v in _MODELS],
            supported_encodings=[gnmi_pb2.Encoding.JSON, gnmi_pb2.Encoding.PROTO],
            gNMI_version=GNMI_VERSION,
        )

    def read(self) -> dict[tuple[Elem, ...], Value]:
        parsed = self._parsed
        out: dict[tuple[Elem, ...], Value] = {}
        for p, v in self._source():
            elems = parsed.get(p)
            if elems is None:
                if len(parsed) >= _CACHE_MAX:
                    parsed.clear()
                elems = parsed[p] = paths.parse(p)
            out[elems] = v
        return out

    def subscribe(self, requests: Iterator[Any], context: Any) -> Iterator[Any]:
        first = next(requests, None)
        if first is None or not first.HasField("subscribe"):
            _abort(context, grpc.StatusCode.INVALID_ARGUMENT, "first request must be subscribe")
        sl = first.subscribe
        if sl.mode == gnmi_pb2.SubscriptionList.POLL:
            _abort(context, grpc.StatusCode.UNIMPLEMENTED, "POLL mode is not supported")
        subs = [self._sub(sl.prefix if sl.HasField("prefix") else None, s)
                for s in sl.subscription]
        if not subs:
            _abort(context, grpc.StatusCode.INVALID_ARGUMENT, "no subscriptions")
        done = threading.Event()
        context.add_callback(done.set)  # client gone or server stopping: end the loop

        snap = self._read_or_abort(context)
        sent: dict[tuple[Elem, ...], Value] = {}
        initial = {p: v for p, v in snap.items() if any(s.covers(p) for s in subs)}
        if initial and not sl.updates_only:  # updates_only: changes from now on, no snapshot
            yield _notification(initial, [])
        sent.update(initial)
        yield gnmi_pb2.SubscribeResponse(sync_response=True)
        if sl.mode == gnmi_pb2.SubscriptionList.ONCE:
            return
        now = time.monotonic()
        for s in subs:
            s.due, s.beat_due = now + s.interval_s, now + s.heartbeat_s
        # ON_CHANGE leaves are compared every poll_s; SAMPLE-only streams read the source
        # only when a sample is due (in the lab a read runs `tc`)
        polled = any(s.on_change is not False for s in subs)
        while not done.is_set():
            wake = min(min(s.due, s.beat_due if s.heartbeat_s else s.due) for s in subs)
            wait = wake - time.monotonic()
            if done.wait(max(0.0, min(wait, self._poll_s) if polled else wait)):
                break
            now = time.monotonic()
            if not polled and wake > now:
                continue
            tick = self._read_quietly()
            if tick is None:
                continue  # source failed this tick: say nothing rather than something wrong
            updates, deletes = self._due(subs, tick, sent, now)
            if updates or deletes:
                sent.update(updates)
                for p in deletes:
                    sent.pop(p, None)
                yield _notification(updates, deletes)

    # --- helpers ---------------------------------------------------------------------------

    def _sub(self, prefix: Any, sub: Any) -> _Sub:
        mode = sub.mode
        on_change = {gnmi_pb2.SubscriptionMode.ON_CHANGE: True,
                     gnmi_pb2.SubscriptionMode.SAMPLE: False}.get(mode)
        interval = sub.sample_interval / 1e9 if sub.sample_interval else self._default_interval_s
        return _Sub(
            path=paths.from_proto(sub.path, prefix),
            on_change=on_change,
            interval_s=max(MIN_INTERVAL_S, interval),
            heartbeat_s=max(MIN_INTERVAL_S, sub.heartbeat_interval / 1e9)
            if sub.heartbeat_interval else 0.0,
        )

    def _due(
        self, subs: list[_Sub], snap: dict[tuple[Elem, ...], Value],
        sent: dict[tuple[Elem, ...], Value], now: float,
    ) -> tuple[dict[tuple[Elem, ...], Value], list[tuple[Elem, ...]]]:
        updates: dict[tuple[Elem, ...], Value] = {}
        deletes: list[tuple[Elem, ...]] = []
        for s in subs:
            sample_due = s.due <= now
            beat_due = bool(s.heartbeat_s) and s.beat_due <= now
            if sample_due:
                # keep the cadence; if we fell behind, do not burst to catch up
                s.due = s.due + s.interval_s if s.due + s.interval_s > now else now + s.interval_s
            if beat_due:
                s.beat_due = now + s.heartbeat_s
            for p, v in snap.items():
                if not s.covers(p):
                    continue
                change = s.on_change if s.on_change is not None else p[-1][0] in _STATE_LEAVES
                if (change and (sent.get(p) != v or beat_due)) or (not change and sample_due):
                    updates[p] = v
            deletes.extend(p for p in sent if p not in snap and s.covers(p))
        return updates, sorted(set(deletes))

    def _read_or_abort(self, context: Any) -> dict[tuple[Elem, ...], Value]:
        snap = self._read_quietly()
        if snap is None:
            _abort(context, grpc.StatusCode.UNAVAILABLE, "counter source failed")
        return snap or {}

    def _read_quietly(self) -> dict[tuple[Elem, ...], Value] | None:
        try:
            return self.read()
        except Exception as exc:  # noqa: BLE001 - the lab's source may fail any way it likes
            log.warning("%s: counter source failed: %s", self.name, exc)
            return None


def _notification(updates: dict[tuple[Elem, ...], Value], deletes: list[tuple[Elem, ...]]) -> Any:
    return gnmi_pb2.SubscribeResponse(update=gnmi_pb2.Notification(
        timestamp=time.time_ns(),
        update=[gnmi_pb2.Update(path=_proto(p), val=typed_value(v))
                for p, v in sorted(updates.items())],
        delete=[_proto(p) for p in deletes],
    ))


_PROTOS: dict[tuple[Elem, ...], Any] = {}


def _proto(path: tuple[Elem, ...]) -> Any:
    """A leaf's gNMI Path, built once (a message given to another is copied, never shared)."""
    proto = _PROTOS.get(path)
    if proto is None:
        if len(_PROTOS) >= _CACHE_MAX:
            _PROTOS.clear()
        proto = _PROTOS[path] = paths.to_proto(path)
    return proto


class _Servicer:
    """The four gNMI RPCs (grpc looks them up by name); Get and Set are not served."""

    def __init__(self, target: GnmiTarget) -> None:
        self._t = target

    def Capabilities(self, request: Any, context: Any) -> Any:  # noqa: N802 - gRPC's name
        self._t.authenticate(context)
        return self._t.capabilities()

    def Subscribe(self, requests: Iterator[Any], context: Any) -> Iterator[Any]:  # noqa: N802
        self._t.authenticate(context)
        yield from self._t.subscribe(requests, context)

    def Get(self, request: Any, context: Any) -> Any:  # noqa: N802
        self._t.authenticate(context)
        _abort(context, grpc.StatusCode.UNIMPLEMENTED, "Get is not served; use Subscribe ONCE")

    def Set(self, request: Any, context: Any) -> Any:  # noqa: N802
        self._t.authenticate(context)
        _abort(context, grpc.StatusCode.UNIMPLEMENTED, "this target is read-only")


# --- process entry point ---------------------------------------------------------------------

def load_source(spec: str, args: dict[str, Any]) -> CounterSource:
    """`package.module:factory` -> factory(**args): the lab names its reader this way."""
    module, _, attr = spec.partition(":")
    factory = getattr(importlib.import_module(module), attr)
    source: CounterSource = factory(**args)
    return source


def target_from_config(config: dict[str, Any]) -> GnmiTarget:
    """Keys: name, address, port, tls_cert, tls_key (files), username_env, password_env
    (names of environment variables: secrets stay out of the file), source, source_args,
    interval_s, insecure."""
    insecure = bool(config.get("insecure", False))
    creds = None
    if config.get("username_env"):
        creds = Credentials.from_env(config["username_env"], config["password_env"])
    cert = None if insecure else Path(config["tls_cert"]).read_bytes()
    key = None if insecure else Path(config["tls_key"]).read_bytes()
    return GnmiTarget(
        str(config.get("address", "127.0.0.1")), int(config.get("port", 57400)),
        load_source(config["source"], dict(config.get("source_args") or {})),
        creds, cert, key, name=str(config.get("name", "")), insecure=insecure,
        default_interval_s=float(config.get("interval_s", 1.0)),
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m flatfab.telemetry.gnmi_target")
    parser.add_argument("--config", required=True, type=Path, help="YAML or JSON file")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    try:
        config = yaml.safe_load(args.config.read_text(encoding="utf-8")) or {}
        target = target_from_config(config)
        target.start()
    except (OSError, KeyError, ValueError, ImportError, AttributeError) as exc:
        why = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        print(f"gnmi_target: {why}", file=sys.stderr)
        return 2
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    print(f"{target.name}: listening on {target.address}:{target.port}", flush=True)
    stop.wait()
    target.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
