"""A small gNMI target (server): what each switch of flatfab's embedded lab runs.

It serves Capabilities, Get and Subscribe (ONCE, POLL, and STREAM with SAMPLE, ON_CHANGE and
TARGET_DEFINED) over TLS, optionally mutual TLS, with username/password from the call
metadata, in each encoding it advertises (JSON, JSON_IETF, PROTO). The values come from a
`CounterSource` the caller supplies: a callable returning the current `(path, value)` leaves
(in the lab it reads `tc -s -j class show` and the virtual ASIC; in the tests, a fake).

What it does, per the gNMI specification (openconfig/reference rpc/gnmi/
gnmi-specification.md, read 2026-11-29; section numbers are that document's):
- Capabilities (3.2): the models (`gnmi_schema.MODELS`), JSON, JSON_IETF and PROTO.
- Get (3.3): one Notification per requested path; `type` CONFIG is UNIMPLEMENTED (every leaf
  served is state); an encoding not served is UNIMPLEMENTED (3.3.1); a path that matches no
  leaf now is NOT_FOUND (3.3.4's table).
- Subscribe (3.5): the first request must carry a SubscriptionList, else INVALID_ARGUMENT
  (3.5.1.1); so is a second list, an alias list (client-defined aliases are not accepted,
  3.5.1.6) or a Poll on a subscription that is not POLL. ONCE sends the data, a
  `sync_response` and closes (3.5.1.5.1); POLL sends the data and a `sync_response` at the
  start and after every Poll (3.5.1.5.3, 3.5.2.3); STREAM sends the data, a `sync_response`,
  then per subscription: SAMPLE every `sample_interval` (0: this target's minimum; below the
  minimum INVALID_ARGUMENT, 3.5.1.5.2) with `suppress_redundant` sending only changed leaves
  and `heartbeat_interval` all of them again; ON_CHANGE on change (and every heartbeat);
  TARGET_DEFINED oper-status on change, counters sampled. `updates_only` skips the first
  data (3.5.1.2). A leaf that disappears is sent as a delete (3.5.2.3).
- Paths (2.2.2, gnmi-path-conventions.md, mixed-schema.md): judged by `gnmi_schema`
  (INVALID_ARGUMENT for a malformed path, UNIMPLEMENTED for an origin or a path this target
  does not serve, 3.5.2.4's table); the prefix's `target` is echoed in every answer's prefix
  (2.2.2.1); the answers' paths carry the origin the request named (flatfab's own models
  `flatfab` where it named none: an unset origin means openconfig).
- `use_models` (2.6) restricts the data to the models named.
- Mutual TLS (rpc/gnmi/gnmi-authentication.md): with `client_ca`, a client must present a
  certificate that CA signed; a verified certificate authenticates the call by itself, and
  a username/password sent as well must still be right ("either" in that document).

Run it as a thread (`GnmiTarget(...).start()`) or as a process:
    python -m flatfab.telemetry.gnmi_target --config target.yaml
"""

from __future__ import annotations

import argparse
import hmac
import importlib
import logging
import os
import queue
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

from flatfab.telemetry import gnmi_encode, gnmi_schema, paths
from flatfab.telemetry.gnmi_encode import Encoder, Shapes, Value
from flatfab.telemetry.gnmi_schema import GnmiError, Resolved, Schema
from flatfab.telemetry.paths import Elem

log = logging.getLogger(__name__)

CounterSource = Callable[[], Iterable[tuple[str, Value]]]
Leaf = tuple[Elem, ...]

GNMI_VERSION: Final = "0.8.0"
MIN_INTERVAL_S: Final = 0.05  # the shortest sample interval a target serves by default
_STATE_LEAVES: Final = frozenset({"oper-status"})  # TARGET_DEFINED sends these ON_CHANGE
_CACHE_MAX: Final = 1 << 16  # leaves remembered (parsed, matched); past it, anew

_SAMPLE: Final = gnmi_pb2.SubscriptionMode.SAMPLE
_ON_CHANGE: Final = gnmi_pb2.SubscriptionMode.ON_CHANGE
_TARGET_DEFINED: Final = gnmi_pb2.SubscriptionMode.TARGET_DEFINED
_ONCE: Final = gnmi_pb2.SubscriptionList.ONCE
_POLL: Final = gnmi_pb2.SubscriptionList.POLL
_STREAM: Final = gnmi_pb2.SubscriptionList.STREAM


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
    resolved: Resolved
    on_change: bool | None  # None: TARGET_DEFINED, decided per leaf
    interval_s: float
    heartbeat_s: float
    suppress: bool = False
    due: float = 0.0
    beat_due: float = 0.0
    last: dict[Leaf, Value] = field(default_factory=dict)  # sent by this one (suppress)
    # leaf -> does this subscription cover it: a stream asks for every leaf every sample
    covered: dict[Leaf, bool] = field(default_factory=dict)


def _abort(context: Any, code: Any, message: str) -> NoReturn:
    context.abort(code, message)  # raises inside grpc; the raise below tells the type checker
    raise RuntimeError(message)


def _refuse(context: Any, error: GnmiError) -> NoReturn:
    _abort(context, grpc.StatusCode[error.code], str(error))


def typed_value(value: Value) -> Any:
    """A leaf's value as a PROTO-encoded scalar TypedValue."""
    return gnmi_encode.typed_value(value, gnmi_encode.PROTO)


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
        client_ca: bytes | None = None,
        min_interval_s: float = MIN_INTERVAL_S,
        shapes: Shapes = gnmi_encode.PLAIN,
        schema: Schema | None = None,
    ) -> None:
        if not insecure and (tls_cert is None or tls_key is None):
            raise ValueError("a gNMI target needs tls_cert and tls_key (or insecure=True)")
        if insecure and client_ca is not None:
            raise ValueError("mutual TLS (client_ca) needs TLS: not with insecure=True")
        if min_interval_s <= 0 or default_interval_s < min_interval_s:
            raise ValueError(f"intervals: 0 < min_interval_s ({min_interval_s:g}) <= "
                             f"default_interval_s ({default_interval_s:g})")
        self.address, self.port, self.name = address, port, name or f"{address}:{port}"
        self._source = source
        self._creds = credentials
        self._tls = None if insecure else (tls_key, tls_cert)
        self._client_ca = client_ca
        self.default_interval_s = default_interval_s
        self.min_interval_s = min_interval_s
        self._poll_s = poll_s  # how often ON_CHANGE leaves are compared
        self._max_streams = max_streams
        self.shapes = shapes
        self.schema = schema or Schema.of_leaves()
        self.modules = {root: m.name for m in self.schema.models for root in m.roots}
        self._server: Any = None
        # a source gives the same leaves every read: each path string parsed once
        self._parsed: dict[str, Leaf] = {}

    # --- lifecycle -------------------------------------------------------------------------

    def start(self) -> int:
        # one worker per live stream (a stream holds its worker, a POLL or a STREAM one more
        # for its requests), plus room for Capabilities and Get
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
            creds = grpc.ssl_server_credentials(
                [self._tls], root_certificates=self._client_ca,
                require_client_auth=self._client_ca is not None)
            bound = server.add_secure_port(where, creds)
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
        md = {k.lower(): v for k, v in context.invocation_metadata() or ()}
        if self._client_ca is not None and not md.get("username") and not md.get("password"):
            return  # the handshake verified the client's certificate against the CA
        if self._creds is None:
            return
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
            supported_models=[gnmi_pb2.ModelData(name=m.name, organization=m.organization,
                                                 version=m.version)
                              for m in self.schema.models],
            supported_encodings=list(gnmi_encode.ENCODINGS),
            gNMI_version=GNMI_VERSION,
        )

    def read(self) -> dict[Leaf, Value]:
        parsed = self._parsed
        out: dict[Leaf, Value] = {}
        for p, v in self._source():
            elems = parsed.get(p)
            if elems is None:
                if len(parsed) >= _CACHE_MAX:
                    parsed.clear()
                elems = parsed[p] = paths.parse(p)
                self.schema.add(elems)  # a leaf the source serves is never "unimplemented"
            out[elems] = v
        return out

    def get(self, request: Any, context: Any) -> Any:
        # read first: a leaf the source serves is in the schema before a path is judged
        snap = self._read_or_abort(context)
        try:
            encoding = self.encoding(request.encoding)
            if request.type == gnmi_pb2.GetRequest.CONFIG:
                raise GnmiError(gnmi_schema.UNIMPLEMENTED, "type CONFIG: this target serves "
                                "state data only, no configuration")
            roots = self.schema.allowed_roots(request.use_models)
            prefix = request.prefix if request.HasField("prefix") else None
            asked = list(request.path) or [gnmi_pb2.Path()]
            wanted = [self.schema.resolve(prefix, p, roots) for p in asked]
        except GnmiError as exc:
            _refuse(context, exc)
        stamp = time.time_ns()
        encoder = Encoder(encoding, prefix.target if prefix is not None else "", self.shapes,
                          module_of=self.modules.get)
        notes: list[Any] = []
        for resolved in wanted:
            hits = {p: (v, resolved.echo) for p, v in snap.items()
                    if self.schema.covers(resolved, p)}
            if not hits:
                _abort(context, grpc.StatusCode.NOT_FOUND,
                       f"{resolved.render()}: no data at this path now")
            notes += encoder.notifications(stamp, hits)
        return gnmi_pb2.GetResponse(notification=notes)

    def session(self, sl: Any) -> Session:
        """The state of one subscription list, judged (raises GnmiError if refused)."""
        return Session(self, sl)

    def subscribe(self, requests: Iterator[Any], context: Any) -> Iterator[Any]:
        first = next(requests, None)
        if first is None:
            return  # the client closed before asking anything
        if first.WhichOneof("request") != "subscribe":
            _abort(context, grpc.StatusCode.INVALID_ARGUMENT,
                   "the first SubscribeRequest must carry a subscription list (this was "
                   f"{first.WhichOneof('request') or 'empty'}: an operation on a subscription "
                   "that does not exist)")
        sl = first.subscribe
        snap = self._read_or_abort(context)  # first: the source's leaves join the schema
        try:
            session = self.session(sl)
        except GnmiError as exc:
            _refuse(context, exc)
        done = threading.Event()
        wake = threading.Event()  # the reader has news, or the RPC ended
        news: queue.SimpleQueue[str] = queue.SimpleQueue()

        def finished() -> None:
            done.set()
            wake.set()

        context.add_callback(finished)  # client gone or server stopping: end the loop
        if sl.mode != _ONCE:
            threading.Thread(target=_read_requests, args=(requests, sl.mode, news, wake, done),
                             name=f"gnmi-{self.name}-requests", daemon=True).start()
        yield from session.initial(snap)
        if sl.mode == _ONCE:
            return
        if sl.mode == _POLL:
            while not done.is_set():
                wake.wait()
                wake.clear()
                for item in _drained(news):
                    if done.is_set() or item == "closed":
                        return  # a client that half-closed sends no more polls
                    if item != "poll":
                        _abort(context, grpc.StatusCode.INVALID_ARGUMENT, item)
                    yield from session.poll(self._read_or_abort(context))
            return
        session.start(time.monotonic())
        while not done.is_set():
            next_due = session.next_due()
            wait = next_due - time.monotonic()
            wake.wait(max(0.0, min(wait, self._poll_s) if session.polled else wait))
            wake.clear()
            if done.is_set():
                break
            for item in _drained(news):
                if item not in ("closed", "poll"):
                    _abort(context, grpc.StatusCode.INVALID_ARGUMENT, item)
            now = time.monotonic()
            if not session.polled and next_due > now:
                continue
            tick = self._read_quietly()
            if tick is None:
                continue  # source failed this tick: say nothing rather than something wrong
            yield from session.tick(tick, now)

    # --- helpers ---------------------------------------------------------------------------

    def encoding(self, encoding: int) -> int:
        """The encoding asked for, if served (else UNIMPLEMENTED, naming it: 3.3.1)."""
        if encoding not in gnmi_encode.ENCODINGS:
            served = ", ".join(gnmi_encode.encoding_name(e) for e in gnmi_encode.ENCODINGS)
            raise GnmiError(gnmi_schema.UNIMPLEMENTED,
                            f"encoding {gnmi_encode.encoding_name(encoding)} is not supported "
                            f"by this target (supported: {served})")
        return encoding

    def interval(self, ns: int, what: str, where: str) -> float:
        seconds = ns / 1e9
        if ns and seconds < self.min_interval_s:
            raise GnmiError(gnmi_schema.INVALID_ARGUMENT,
                            f"{where}: {what} {ns} ns is below this target's minimum "
                            f"{round(self.min_interval_s * 1e9)} ns")
        return seconds

    def _read_or_abort(self, context: Any) -> dict[Leaf, Value]:
        snap = self._read_quietly()
        if snap is None:
            _abort(context, grpc.StatusCode.UNAVAILABLE, "counter source failed")
        return snap

    def _read_quietly(self) -> dict[Leaf, Value] | None:
        try:
            return self.read()
        except Exception as exc:  # noqa: BLE001 - the lab's source may fail any way it likes
            log.warning("%s: counter source failed: %s", self.name, exc)
            return None


class Session:
    """One subscription list's state: its subscriptions, what was sent, the encoder. The
    target's thread loop and an asyncio server alike drive it: `initial`, then `poll` per
    Poll (POLL) or `start` and `tick` whenever `next_due` comes (STREAM)."""

    def __init__(self, target: GnmiTarget, sl: Any) -> None:
        if sl.mode not in (_ONCE, _POLL, _STREAM):
            raise GnmiError(gnmi_schema.INVALID_ARGUMENT, f"subscription list mode {sl.mode} "
                            "is none of STREAM, ONCE, POLL")
        encoding = target.encoding(sl.encoding)
        if sl.HasField("qos") and sl.qos.marking:
            raise GnmiError(gnmi_schema.UNIMPLEMENTED, f"qos marking {sl.qos.marking}: this "
                            "target marks its telemetry with DSCP 0 only")
        if not sl.subscription:
            raise GnmiError(gnmi_schema.INVALID_ARGUMENT, "the subscription list is empty "
                            "(3.5.1.2: it MUST hold at least one subscription)")
        self._t = target
        self.mode, self.updates_only = sl.mode, sl.updates_only
        roots = target.schema.allowed_roots(sl.use_models)
        prefix = sl.prefix if sl.HasField("prefix") else None
        self.subs = [self._sub(prefix, s, roots) for s in sl.subscription]
        self.encoder = Encoder(encoding, prefix.target if prefix is not None else "",
                               target.shapes, use_aliases=sl.use_aliases,
                               module_of=target.modules.get)
        self.sent: dict[Leaf, Value] = {}
        self._origins: dict[Leaf, str] = {}  # leaf -> the origin its subscription writes
        # ON_CHANGE leaves are compared every poll; SAMPLE-only streams read the source only
        # when a sample or a heartbeat is due (in the lab a read runs `tc`)
        self.polled = any(s.on_change is not False for s in self.subs)

    def initial(self, snap: dict[Leaf, Value]) -> list[Any]:
        """The first answers: every covered leaf (unless updates_only), then sync_response."""
        covered = self._covered(snap)
        out: list[Any] = []
        if covered and not self.updates_only:  # updates_only: changes from now on only
            out = self._responses(covered, [])
            for s in self.subs:
                s.last.update((p, v) for p, v in covered.items() if self._covers(s, p))
        self.sent.update(covered)
        return [*out, gnmi_pb2.SubscribeResponse(sync_response=True)]

    def poll(self, snap: dict[Leaf, Value]) -> list[Any]:
        """One Poll's answers: every covered leaf, deletes of those gone, sync_response."""
        covered = self._covered(snap)
        gone = sorted(p for p in self.sent if p not in snap)
        out = self._responses(covered, gone)
        for p in gone:
            self.sent.pop(p, None)
        self.sent.update(covered)
        return [*out, gnmi_pb2.SubscribeResponse(sync_response=True)]

    def start(self, now: float) -> None:
        for s in self.subs:
            s.due, s.beat_due = now + s.interval_s, now + s.heartbeat_s

    def next_due(self) -> float:
        return min(min(s.due, s.beat_due if s.heartbeat_s else s.due) for s in self.subs)

    def tick(self, snap: dict[Leaf, Value], now: float) -> list[Any]:
        """What is due at `now` (STREAM): samples, changes, heartbeats, deletes."""
        updates, deletes = self._due(snap, now)
        out = self._responses(updates, deletes)
        self.sent.update(updates)
        for p in deletes:
            self.sent.pop(p, None)
        return out

    # --- helpers ---------------------------------------------------------------------------

    def _sub(self, prefix: Any, sub: Any, roots: frozenset[str] | None) -> _Sub:
        t = self._t
        resolved = t.schema.resolve(prefix, sub.path if sub.HasField("path") else None, roots)
        if self.mode != _STREAM:  # ONCE and POLL: a subscription's mode and intervals unused
            return _Sub(resolved, None, t.default_interval_s, 0.0)
        mode = sub.mode
        if mode not in (_SAMPLE, _ON_CHANGE, _TARGET_DEFINED):
            raise GnmiError(gnmi_schema.INVALID_ARGUMENT, f"subscription mode {mode} is none "
                            "of TARGET_DEFINED, ON_CHANGE, SAMPLE")
        where = resolved.render()
        interval = t.default_interval_s  # ON_CHANGE: no samples (sample_interval unused)
        if mode != _ON_CHANGE:
            interval = t.interval(sub.sample_interval, "sample_interval", where)
            if not sub.sample_interval:
                # 0: SAMPLE at the lowest interval this target serves (3.5.1.5.2);
                # TARGET_DEFINED counters at the target's own cadence
                interval = t.min_interval_s if mode == _SAMPLE else t.default_interval_s
        heartbeat = t.interval(sub.heartbeat_interval, "heartbeat_interval", where)
        return _Sub(resolved, {_ON_CHANGE: True, _SAMPLE: False}.get(mode), interval,
                    heartbeat, suppress=sub.suppress_redundant and mode != _ON_CHANGE)

    def _responses(self, updates: dict[Leaf, Value], deletes: list[Leaf]) -> list[Any]:
        origins = self._origins
        notes = self.encoder.notifications(
            time.time_ns(), {p: (v, origins[p]) for p, v in updates.items()},
            [(p, origins.get(p, "")) for p in deletes])
        return [gnmi_pb2.SubscribeResponse(update=n) for n in notes]

    def _covers(self, s: _Sub, leaf: Leaf) -> bool:
        hit = s.covered.get(leaf)
        if hit is None:
            if len(s.covered) >= _CACHE_MAX:
                s.covered.clear()
            hit = s.covered[leaf] = self._t.schema.covers(s.resolved, leaf)
        return hit

    def _covered(self, snap: dict[Leaf, Value]) -> dict[Leaf, Value]:
        out: dict[Leaf, Value] = {}
        for p, v in snap.items():
            first = next((s for s in self.subs if self._covers(s, p)), None)
            if first is not None:
                out[p] = v
                self._origins.setdefault(p, first.resolved.echo)
        return out

    def _due(self, snap: dict[Leaf, Value], now: float) -> tuple[dict[Leaf, Value], list[Leaf]]:
        updates: dict[Leaf, Value] = {}
        deletes: set[Leaf] = set()
        sent = self.sent
        for s in self.subs:
            sample_due = s.due <= now
            beat_due = bool(s.heartbeat_s) and s.beat_due <= now
            if sample_due:
                # keep the cadence; if we fell behind, do not burst to catch up
                s.due = s.due + s.interval_s if s.due + s.interval_s > now else now + s.interval_s
            if beat_due:
                s.beat_due = now + s.heartbeat_s
            for p, v in snap.items():
                if not self._covers(s, p):
                    continue
                change = s.on_change if s.on_change is not None else p[-1][0] in _STATE_LEAVES
                if change:
                    send = sent.get(p) != v or beat_due
                elif s.suppress:  # only what changed since this subscription last sent it
                    send = (sample_due and s.last.get(p) != v) or beat_due
                else:
                    send = sample_due
                if send:
                    updates[p] = v
                    s.last[p] = v
                    self._origins.setdefault(p, s.resolved.echo)
            for p in sent:
                if p not in snap and self._covers(s, p):
                    deletes.add(p)
                    s.last.pop(p, None)
        return updates, sorted(deletes)


def _drained(news: queue.SimpleQueue[str]) -> list[str]:
    out: list[str] = []
    while True:
        try:
            out.append(news.get_nowait())
        except queue.Empty:
            return out


def _read_requests(requests: Iterator[Any], mode: int, news: queue.SimpleQueue[str],
                   wake: threading.Event, done: threading.Event) -> None:
    """The client's later requests on a POLL or STREAM subscription, as news for the loop:
    `poll`, `closed` (half-close), or the INVALID_ARGUMENT text of one that is refused."""
    try:
        for request in requests:
            kind = request.WhichOneof("request")
            if kind == "poll" and mode == _POLL:
                news.put("poll")
            elif kind == "subscribe":
                news.put("a second subscription list on one Subscribe RPC (3.5.1.1: a "
                         "subscription is set once; open another RPC for more paths)")
            elif kind == "aliases":
                news.put("client-defined aliases are not accepted by this target (3.5.1.6)")
            elif kind == "poll":
                news.put("a Poll on a subscription that is not POLL mode")
            else:
                news.put("an empty SubscribeRequest")
            wake.set()
            if done.is_set():
                return
        news.put("closed")
    except Exception:  # noqa: BLE001 - the RPC ended under the iterator: nothing to tell
        news.put("closed")
    wake.set()


class _Servicer:
    """The four gNMI RPCs (grpc looks them up by name); Set is refused: read-only."""

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
        return self._t.get(request, context)

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
    """Keys: name, address, port, tls_cert, tls_key (files), client_ca_file (a CA file: mutual
    TLS, client certificates required and verified against it), username_env, password_env
    (names of environment variables: secrets stay out of the file), source, source_args,
    interval_s, min_interval_s, insecure, shapes (a test option, `gnmi_encode.Shapes`)."""
    insecure = bool(config.get("insecure", False))
    creds = None
    if config.get("username_env"):
        creds = Credentials.from_env(config["username_env"], config["password_env"])
    cert = None if insecure else Path(config["tls_cert"]).read_bytes()
    key = None if insecure else Path(config["tls_key"]).read_bytes()
    client_ca = (Path(config["client_ca_file"]).read_bytes()
                 if config.get("client_ca_file") else None)
    return GnmiTarget(
        str(config.get("address", "127.0.0.1")), int(config.get("port", 57400)),
        load_source(config["source"], dict(config.get("source_args") or {})),
        creds, cert, key, name=str(config.get("name", "")), insecure=insecure,
        default_interval_s=float(config.get("interval_s", 1.0)),
        min_interval_s=float(config.get("min_interval_s", MIN_INTERVAL_S)),
        client_ca=client_ca, shapes=Shapes.from_config(config.get("shapes")),
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
