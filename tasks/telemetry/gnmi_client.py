"""The gNMI subscriber behind `flatfab watch`: counters as SAMPLE, oper-state as ON_CHANGE.

Each notification becomes one `Block` of readings by column (`on_block`; flatfab.telemetry.
layout), or its `Sample`s for a caller that takes those. Each target gets one channel and one
coroutine; many targets share one event loop in one thread (`SubscriberPool`), so a thousand
switches cost a thousand sockets, not a thousand threads. The connection's story is told
through `on_state(state, line)` with one line per transition: connected, silent,
reconnected, refused.

TLS is verified against the CA file given; plaintext only when `insecure=True` is asked for;
mutual TLS with a client certificate and key where given. Credentials come from environment
variables (their names are given, never their values); with a client certificate they may be
left unset (the certificate authenticates: openconfig/reference rpc/gnmi/
gnmi-authentication.md).

What a target sends is read in every shape real switches use (`gnmi_decode`): scalar or
JSON / JSON_IETF values, whole subtrees as JSON objects with module-qualified members and
lists, leaf-lists (never a sample), prefixes with origin and target, target-defined aliases
(where `use_aliases` is asked), bundles of updates, deletes (to `on_deletes`: a series ends,
never read as zero) and sync responses (`synced`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import multiprocessing as mp
import os
import random
import threading
import time
from array import array
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any, Final

# gRPC's core logs a failed TLS handshake on stderr by itself, at every retry; what went
# wrong reaches the operator as one line of ours instead (read when gRPC loads)
os.environ.setdefault("GRPC_VERBOSITY", "ERROR")

import grpc
from google.protobuf.message import DecodeError
from pygnmi.spec.v080 import gnmi_pb2, gnmi_pb2_grpc

from flatfab.telemetry import gnmi_decode, gnmi_lite, paths
from flatfab.telemetry.layout import Block, Layout
from flatfab.telemetry.samples import COUNTERS, GAUGES, Gone, Metric, Number, Sample
from flatfab.telemetry.targets import PASSWORD_ENV, USERNAME_ENV

log = logging.getLogger(__name__)

CONNECTED: Final = "connected"
SILENT: Final = "silent"
RECONNECTED: Final = "reconnected"
REFUSED: Final = "refused"

SampleCallback = Callable[[Sample], None]
BatchCallback = Callable[[list[Sample]], None]  # one notification's samples at once
BlockCallback = Callable[[Block], None]  # one notification's readings, by column
# (stamp, the layout, each value's column in it, the values): what a shard sends up
ValuesCallback = Callable[[float, Layout, list[int], list[Number]], None]
StateCallback = Callable[[str, str], None]  # (state, one line for a human)
DeletesCallback = Callable[[list[Gone]], None]  # what one notification's deletes took away


_TLS_UNTRUSTED: Final = ("CERTIFICATE_VERIFY_FAILED", "certificate verify failed",
                         "unable to get local issuer", "self signed certificate",
                         "self-signed certificate")
_TLS_OTHER: Final = ("Ssl handshake failed", "SSL_ERROR", "TSI_", "handshake")


_READ_BUFFER: Final = 8192
# a loop that answers within this is not behind; past it, a quiet stream's wait is extended
_BUSY_S: Final = 0.05


class _SilentError(Exception):
    """The stream ended or went quiet; the text says how."""


class GnmiSubscriber:
    """One target. `await run()` until `stop()`; or hand many to a `SubscriberPool`."""

    def __init__(
        self,
        device: str,
        host: str,
        port: int,
        *,
        ca_file: Path | None,
        on_sample: SampleCallback,
        on_state: StateCallback,
        on_samples: BatchCallback | None = None,
        interval_s: float = 1.0,
        username_env: str = USERNAME_ENV,
        password_env: str = PASSWORD_ENV,
        insecure: bool = False,
        tls_server_name: str | None = None,
        silent_after_s: float | None = None,
        backoff_s: tuple[float, float] = (0.5, 30.0),
        table: paths.PathTable = paths.FLATFAB,
        encoding: str = "PROTO",
        cert_file: Path | None = None,
        key_file: Path | None = None,
        use_aliases: bool = False,
        on_deletes: DeletesCallback | None = None,
        on_block: BlockCallback | None = None,
    ) -> None:
        if ca_file is None and not insecure:
            raise ValueError(f"{device}: a CA file is needed to verify the target "
                             "(plaintext only with insecure=True)")
        if (cert_file is None) != (key_file is None):
            raise ValueError(f"{device}: a client certificate needs both cert_file and "
                             "key_file")
        if cert_file is not None and insecure:
            raise ValueError(f"{device}: a client certificate needs TLS: not with "
                             "insecure=True")
        # what a worker process needs to build this subscriber again (no callbacks)
        self.spec: dict[str, Any] = {
            "device": device, "host": host, "port": port, "ca_file": ca_file,
            "interval_s": interval_s, "username_env": username_env,
            "password_env": password_env, "insecure": insecure,
            "tls_server_name": tls_server_name, "silent_after_s": silent_after_s,
            "backoff_s": backoff_s, "table": table, "encoding": encoding,
            "cert_file": cert_file, "key_file": key_file, "use_aliases": use_aliases}
        self.on_values: ValuesCallback | None = None  # set by a shard: values, no Samples
        # a Block per notification where the caller takes them: no Sample is made
        self.on_block = on_block
        self._last_cols: list[int] = []
        self.device, self.host, self.port = device, host, port
        self._ca_file, self._insecure, self._server_name = ca_file, insecure, tls_server_name
        self._on_sample, self._on_state = on_sample, on_state
        # a batch per notification where the caller takes one (one lock, not thousands)
        self._on_samples: BatchCallback = on_samples or self._one_by_one
        self._interval_s = interval_s
        self._env = (username_env, password_env)
        self._backoff = backoff_s
        self._table = table
        self._decoder = decoder_for(table)
        self._counter_paths = table.counter_subscriptions
        self._state_paths = table.state_subscriptions
        self._encoding = encoding
        self._cert = (cert_file, key_file) if cert_file is not None else None
        self._use_aliases = use_aliases
        self._on_deletes = on_deletes
        self._aliases = gnmi_decode.Aliases()
        self.synced = False  # this session's target said it sent everything once
        # a SAMPLE stream speaks every interval: three missed intervals mean it went quiet
        # (ON_CHANGE alone may rightly say nothing for hours: no timer then)
        self._silent_after_s = (silent_after_s or max(3 * interval_s, 1.0)
                                if self._counter_paths else None)
        self._stopping: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._session_task: asyncio.Task[None] | None = None
        self._streamed = False  # the current session delivered something
        self._last_line: str | None = None
        self._last_state: str | None = None
        self._was_up = False
        self._lost = False
        self.unknown_paths = 0  # updates on leaves no Metric maps (counted, not reported)
        self.deleted = 0  # deletes of leaves (or subtrees) that held metrics

    @property
    def where(self) -> str:
        return f"{self.device} {self.host}:{self.port}"

    # --- control ---------------------------------------------------------------------------

    def stop(self) -> None:
        """Safe from any thread."""
        if self._loop is None or self._stopping is None:
            return
        self._loop.call_soon_threadsafe(self._stop_here)

    def _stop_here(self) -> None:
        if self._stopping is not None:
            self._stopping.set()
        if self._session_task is not None:
            self._session_task.cancel()  # mid-connect or mid-stream alike

    async def run(self) -> None:
        self._loop, self._stopping = asyncio.get_running_loop(), asyncio.Event()
        delay = self._backoff[0]
        while not self._stopping.is_set():
            self._streamed = False
            self._session_task = asyncio.create_task(self._session())
            try:
                await self._session_task
            except _SilentError as exc:
                self._lose(str(exc))
            except grpc.aio.AioRpcError as exc:
                if self._stopping.is_set():
                    break
                self._rpc_failed(exc.code(), str(exc.details() or ""))
            except KeyError as exc:  # credentials missing from the environment
                self._say(REFUSED, f"{self.where}: {exc.args[0]}")
            except OSError as exc:  # the CA file, or the client certificate and key
                what = "CA file" if exc.filename in (None, str(self._ca_file)) else (
                    f"client certificate file {exc.filename}")
                self._say(REFUSED, f"{self.where}: cannot read {what}: {exc.strerror or exc}")
            except asyncio.CancelledError:
                if not self._stopping.is_set():
                    raise
                break  # stop() cancelled the session under us
            finally:
                self._session_task = None
            if self._streamed:
                delay = self._backoff[0]  # it worked for a while: come back quickly
            # jitter: a thousand watchers must not knock on a restarted target in lockstep
            pause = delay * random.uniform(0.8, 1.2)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), pause)
            delay = min(delay * 2, self._backoff[1])

    # --- one connection --------------------------------------------------------------------

    async def _session(self) -> None:
        """Subscribe and read until the stream fails (it always ends in an exception)."""
        metadata = self._metadata()
        options: list[tuple[str, int | str]] = [
            ("grpc.keepalive_time_ms", 10_000), ("grpc.keepalive_timeout_ms", 5_000),
            # no bandwidth-delay probing: it grows each stream's receive window (and the
            # buffers behind it) towards megabytes, for a stream that sends a notification
            # an interval; kept, they were a fifth of a 1,000-target watch's memory
            ("grpc.http2.bdp_probe", 0),
            # reads of at most 8 KiB: a read buffer grown to a large notification stays
            # allocated on every idle connection (-230 KiB a target, measured)
            ("grpc.experimental.tcp_max_read_buffer_size", _READ_BUFFER)]
        where = f"{self.host}:{self.port}"
        if self._insecure:
            channel = grpc.aio.insecure_channel(where, options=options)
        else:
            assert self._ca_file is not None
            chain = key = None
            if self._cert is not None:
                cert_file, key_file = self._cert
                assert key_file is not None
                chain, key = cert_file.read_bytes(), key_file.read_bytes()
            creds = grpc.ssl_channel_credentials(root_certificates=self._ca_file.read_bytes(),
                                                 private_key=key, certificate_chain=chain)
            if self._server_name:
                options.append(("grpc.ssl_target_name_override", self._server_name))
            channel = grpc.aio.secure_channel(where, creds, options=options)
        self._aliases.clear()  # an alias lives as long as the RPC that defined it
        self.synced = False
        try:
            stub = gnmi_pb2_grpc.gNMIStub(channel)
            # Capabilities first: a refusal (credentials, TLS) comes back as a clean status.
            # On a stream, a target that refuses before our first message is written makes
            # grpc report a bare INTERNAL instead of the target's UNAUTHENTICATED.
            await stub.Capabilities(gnmi_pb2.CapabilityRequest(), metadata=metadata,
                                    timeout=max(self._silent_after_s or 0, 5.0))
            # the request comes from a generator that then waits: no half-close
            # read with the path of each update kept as bytes (gnmi_lite): the same wire
            call = channel.stream_stream(
                "/gnmi.gNMI/Subscribe",
                request_serializer=gnmi_pb2.SubscribeRequest.SerializeToString,
                response_deserializer=gnmi_lite.SubscribeResponse.FromString,
            )(self._requests(), metadata=metadata)
            while True:
                resp = await self._read(call)
                if resp is grpc.aio.EOF:
                    raise _SilentError(f"{self.where}: target ended the stream")
                if not self._streamed:
                    self._streamed = True
                    self._up()
                if resp.HasField("update"):
                    self._notification(resp.update)
                elif resp.WhichOneof("response") == "sync_response" and resp.sync_response:
                    self.synced = True
                # a decoded 64x8 notification is ~3 MiB: not kept while the next is awaited
                del resp
        finally:
            await channel.close(grace=None)

    async def _read(self, call: Any) -> Any:
        """The stream's next response. Silent after `silent_after_s` of the loop's own time
        only: while the loop works through a backlog (other targets' notifications), this
        target's response may sit in it unread, so what the loop was behind by is not
        counted against the target."""
        quiet = self._silent_after_s
        if quiet is None:
            return await call.read()
        loop = asyncio.get_running_loop()
        read = asyncio.ensure_future(call.read())
        try:
            deadline = loop.time() + quiet
            # a loop that stays behind (or a machine that stays busy) must not hide a quiet
            # target for ever: at most three times the silence time in all
            latest = deadline + 2 * quiet
            while True:
                await asyncio.wait((read,), timeout=max(0.0, deadline - loop.time()))
                if read.done():
                    return read.result()
                woke = loop.time()
                late = woke - deadline  # the timer itself waited for the loop
                await asyncio.sleep(0)  # to the back of the queue: what else is waiting
                await asyncio.sleep(0)  # (and once more, past the next poll for I/O)
                if read.done():
                    return read.result()
                behind = late + loop.time() - woke
                if behind < _BUSY_S or loop.time() >= latest:
                    raise _SilentError(f"{self.where}: no update in {quiet:g}s")
                deadline = min(loop.time() + behind, latest)
        finally:
            if not read.done():
                read.cancel()

    def _metadata(self) -> tuple[tuple[str, str], ...]:
        missing = [n for n in self._env if not os.environ.get(n)]
        if missing and self._cert is not None and len(missing) == len(self._env):
            return ()  # the client certificate authenticates by itself
        if missing:
            raise KeyError(f"credentials not set: {', '.join(missing)}")
        return (("username", os.environ[self._env[0]]), ("password", os.environ[self._env[1]]))

    async def _requests(self) -> AsyncIterator[Any]:
        yield self._request()
        # then stay open: some targets end the stream when the client half-closes
        assert self._stopping is not None
        await self._stopping.wait()

    def _request(self) -> Any:
        interval_ns = int(self._interval_s * 1e9)
        subs = [gnmi_pb2.Subscription(path=paths.to_proto(p),
                                      mode=gnmi_pb2.SubscriptionMode.SAMPLE,
                                      sample_interval=interval_ns)
                for p in self._counter_paths]
        subs += [gnmi_pb2.Subscription(path=paths.to_proto(p),
                                       mode=gnmi_pb2.SubscriptionMode.ON_CHANGE)
                 for p in self._state_paths]
        prefix = (gnmi_pb2.Path(origin=self._table.origin, target=self._table.target)
                  if self._table.origin or self._table.target else None)
        return gnmi_pb2.SubscribeRequest(subscribe=gnmi_pb2.SubscriptionList(
            prefix=prefix, subscription=subs, mode=gnmi_pb2.SubscriptionList.STREAM,
            encoding=gnmi_pb2.Encoding.Value(self._encoding), use_aliases=self._use_aliases))

    def _notification(self, notif: Any) -> None:
        """One notification (gnmi_lite's; a full gnmi_pb2 one is read as one too)."""
        if not isinstance(notif, gnmi_lite.Notification):
            notif = gnmi_lite.lite(notif)
        if self._aliases.learn(notif):
            return  # it only announced (or withdrew) an alias
        stamp = notif.timestamp / 1e9 if notif.timestamp else time.time()
        prefix, known = self._aliases.resolve(notif.prefix if notif.HasField("prefix")
                                              else None)
        if not known:  # an alias never announced: what it stands for is unknown
            self.unknown_paths += len(notif.update) + len(notif.delete)
            return
        if notif.delete:
            self._deletes(notif.delete, prefix, stamp)
        decoder = self._decoder
        hits = decoder.hits(prefix)
        unknown = 0
        cols: list[int] = []  # integer counters, as sent
        numbers: list[Number] = []
        more_cols: list[int] = []  # the rest: gauges, states, counters sent otherwise
        more: list[Number] = []
        floats = True  # every one of `more` is a float (a gauge's): packed then
        for update in notif.update:
            raw = update.path
            hit = hits.get(raw, _UNSEEN)
            if hit is _UNSEEN:
                hit = decoder.learn(hits, raw, prefix)
            val = update.val
            kind = val.WhichOneof("value")
            if hit is None:
                members = self._members(raw, prefix, val, kind)
                if not members:
                    unknown += 1
                for column, number in members:
                    more_cols.append(column)
                    more.append(number)
                    floats = floats and isinstance(number, float)
                continue
            how = hit[3]
            if how == _COUNTER and kind in _INTEGERS:
                cols.append(hit[4])  # a counter as an integer: the common case
                numbers.append(getattr(val, kind))
                continue
            if how == _GAUGE and kind == "double_val":
                level = val.double_val  # a gauge as a double (decimal64's encoding)
                if level - level == 0.0:  # finite (inf - inf and nan are nan)
                    more_cols.append(hit[4])
                    more.append(level)
                else:
                    unknown += 1
                continue
            floats = floats and how == _GAUGE
            value = scalar(val)
            if value is None:
                unknown += 1
                continue
            try:
                more.append(paths.sample_value(hit[0], value))
            except ValueError:
                unknown += 1
                continue
            more_cols.append(hit[4])
        self.unknown_paths += unknown
        if not cols and not more_cols:
            return
        layout = decoder.layout
        if self.on_values is not None:
            self.on_values(stamp, layout, cols + more_cols, numbers + more)
        elif self.on_block is not None:
            # held until the engine takes it: the same columns as last time are shared,
            # and the counters packed, 8 bytes a value (an int object is 32)
            if cols == self._last_cols:
                cols = self._last_cols
            self._last_cols = cols
            packed = _packed(numbers)
            self.on_block(Block(self.device, stamp, layout, cols, packed, more_cols,
                                array("d", more) if floats else more,
                                counters=packed is not numbers))
        else:
            self._on_samples(list(Block(self.device, stamp, layout, cols, numbers, more_cols,
                                        more)))

    def _members(self, raw_path: bytes, prefix: Any, val: Any, kind: str | None
                 ) -> list[tuple[int, Number]]:
        """A JSON object sent for a whole subtree (SONiC answers a wildcard virtual path so;
        others a container or a list entry, JSON_IETF with module-qualified members and
        lists of keyed entries): each scalar member is a leaf below the update's path,
        decoded with the table. Not cached like scalar leaves: one such update carries a
        whole port's counters."""
        if kind not in _JSON:
            return []
        try:
            loaded = json.loads(getattr(val, kind))
        except ValueError:
            return []
        path = _path(raw_path)
        if path is None:
            return []
        base = paths.from_proto(path, prefix)
        leaves, _ = gnmi_decode.json_leaves(loaded, base, self._table.list_keys)
        out: list[tuple[int, Number]] = []
        column = self._decoder.layout.column
        for raw, bare, value in leaves:
            if isinstance(value, bool) or not isinstance(value, (int, float, str)):
                continue  # a leaf-list, a null: no counter, gauge or state reads so
            found = self._table.decode(raw)
            if found is None and bare != raw:
                found = self._table.decode(bare)
            if found is None:
                continue
            try:
                number = paths.sample_value(found[0], value)
            except ValueError:
                continue
            out.append((column(*found), number))
        return out

    def _deletes(self, deleted: Any, prefix: Any, stamp: float) -> None:
        """What deleted paths took away, as `Gone`s: a leaf's metric, or every metric whose
        leaves lie under a deleted subtree."""
        gone: list[Gone] = []
        for path in deleted:
            elems = paths.from_proto(path, prefix)
            bare = paths.strip_modules(elems)
            hit = self._table.decode(elems) or (self._table.decode(bare)
                                                if bare != elems else None)
            found: list[tuple[Metric, str | None, int | None]] = (
                [hit] if hit is not None else self._table.under(bare))
            gone += [Gone(self.device, metric, port, key, stamp)
                     for metric, port, key in found]
        if gone:
            self.deleted += len(gone)
            if self._on_deletes is not None:
                self._on_deletes(gone)

    def _one_by_one(self, samples: list[Sample]) -> None:
        for sample in samples:
            self._on_sample(sample)

    # --- the story, one line per transition --------------------------------------------------

    def _say(self, state: str, line: str) -> None:
        # one line per transition: retrying into the same wall, or staying silent for a
        # different reason, is not news
        if line == self._last_line or (state == SILENT and self._last_state == SILENT):
            return
        self._last_line, self._last_state = line, state
        self._on_state(state, line)

    def _up(self) -> None:
        if self._lost and self._was_up:
            self._say(RECONNECTED, f"{self.where}: reconnected, subscribed again")
        else:
            self._say(CONNECTED, f"{self.where}: connected, subscribed")
        self._was_up, self._lost = True, False

    def _lose(self, line: str) -> None:
        self._lost = True
        self._say(SILENT, line)

    def _rpc_failed(self, code: Any, details: str) -> None:
        if code == grpc.StatusCode.UNAUTHENTICATED:
            self._lost = True
            self._say(REFUSED, f"{self.where}: refused: {details or 'bad credentials'} "
                               "(UNAUTHENTICATED)")
        elif code == grpc.StatusCode.PERMISSION_DENIED:
            self._lost = True
            self._say(REFUSED, f"{self.where}: refused: {details} (PERMISSION_DENIED)")
        elif any(s in details for s in _TLS_UNTRUSTED):
            self._lost = True
            self._say(REFUSED, f"{self.where}: TLS certificate not trusted "
                               f"(not signed by {self._ca_file})")
        elif "not in peer certificate" in details or "hostname" in details.lower():
            self._lost = True
            self._say(REFUSED, f"{self.where}: TLS certificate does not name "
                               f"{self._server_name or self.host}")
        elif any(s in details for s in _TLS_OTHER):
            self._lost = True
            self._say(REFUSED, f"{self.where}: TLS handshake failed")
        elif "Socket closed" in details and not self._insecure and not self._streamed:
            # a target that verifies its clients (mutual TLS) closes the handshake of one
            # without a certificate it trusts; the client sees only the socket close
            self._lost = True
            why = ("it may require a client certificate (cert_file, key_file)"
                   if self._cert is None else
                   f"it may not trust the client certificate {self._cert[0]}")
            self._say(REFUSED, f"{self.where}: the target closed the TLS handshake: {why}")
        else:
            why = "connection refused" if "Connection refused" in details else code.name
            self._lose(f"{self.where}: target unreachable ({why})")


def scalar(val: Any) -> Number | str | None:
    """A gNMI TypedValue as a number or a string; JSON-encoded scalars too (some NOSes). A
    decimal64 comes as `double_val` (gNMI 0.8.0 2.2.3), `float_val` or the deprecated
    `decimal_val` (digits and precision)."""
    kind = val.WhichOneof("value")
    if kind in ("uint_val", "int_val", "string_val", "double_val", "float_val"):
        out: Number | str = getattr(val, kind)
        return out
    if kind == "decimal_val":
        return float(val.decimal_val.digits / 10 ** val.decimal_val.precision)
    if kind in ("json_val", "json_ietf_val"):
        try:
            loaded = json.loads(getattr(val, kind))
        except ValueError:
            return None
        if isinstance(loaded, (int, float, str)) and not isinstance(loaded, bool):
            return loaded
    return None


def _packed(numbers: list[Number]) -> Sequence[Number]:
    """The values as unsigned 64-bit integers where every one is one (a notification of
    counters), else as they are."""
    try:
        return array("Q", numbers)
    except (TypeError, OverflowError):  # a gauge's float, a negative or huge integer
        return numbers


def _path(raw: bytes) -> Any:
    """An update's path from its bytes (gnmi_lite keeps them so); None if they do not parse."""
    try:
        return gnmi_pb2.Path.FromString(raw)
    except DecodeError:
        return None


_INTEGERS: Final = frozenset({"uint_val", "int_val"})
_JSON: Final = frozenset({"json_val", "json_ietf_val"})


_CACHE_MAX: Final = 1 << 20  # paths remembered per table; past that, start over
# (metric, port, key, how its value reads: _COUNTER an integer as is, _GAUGE a double as
# is, else through paths.sample_value; its column in the decoder's layout)
_Decoded = tuple[Metric, str, int | None, int, int]
_UNSEEN: Final[_Decoded] = (Metric.OPER_UP, "", None, 0, -1)  # compared by identity
_COUNTER: Final = 1
_GAUGE: Final = 2


def _how(metric: Metric) -> int:
    return _COUNTER if metric in COUNTERS else _GAUGE if metric in GAUGES else 0


class _Decoder:
    """A table's decode, remembered per serialized path: the switches of one platform serve
    the same leaves every interval, so after the first notification a value costs a dict
    hit, not a parse (shared by every subscriber on the table; dict operations hold the
    GIL). Keyed on the prefix's bytes, then the path's: the same path under another prefix
    is another leaf. Its `layout` numbers the series its subscribers send."""

    def __init__(self, table: paths.PathTable) -> None:
        self._table = table
        self.layout = Layout()
        self._by_prefix: dict[bytes, dict[bytes, _Decoded | None]] = {}
        self._size = 0

    def hits(self, prefix: Any) -> dict[bytes, _Decoded | None]:
        raw = b"" if prefix is None else prefix.SerializeToString()
        hits = self._by_prefix.get(raw)
        if hits is None:
            hits = self._by_prefix.setdefault(raw, {})
        return hits

    def learn(self, hits: dict[bytes, _Decoded | None], raw: bytes,
              prefix: Any) -> _Decoded | None:
        path = _path(raw)
        if path is None:  # not a Path: no leaf of ours, whatever else it was
            hits[raw] = None
            return None
        elems = paths.from_proto(path, prefix)
        found = self._table.decode(elems)
        if found is None:  # a target that qualifies elements with their module
            bare = paths.strip_modules(elems)
            found = self._table.decode(bare) if bare != elems else None
        decoded = None if found is None else (
            *found, _how(found[0]), self.layout.column(*found))
        if self._size >= _CACHE_MAX:  # a target inventing paths must not grow us forever
            for other in self._by_prefix.values():
                other.clear()
            self._size = 0
        hits[raw] = decoded
        self._size += 1
        return decoded


_DECODERS: dict[paths.PathTable, _Decoder] = {}
_DECODERS_LOCK = threading.Lock()


def decoder_for(table: paths.PathTable) -> _Decoder:
    """The one decoder of a table (equal tables decode alike, so they share it)."""
    with _DECODERS_LOCK:
        decoder = _DECODERS.get(table)
        if decoder is None:
            decoder = _DECODERS[table] = _Decoder(table)
        return decoder


DIAL_BATCH: Final = 50  # targets dialled at once when a pool starts ...
DIAL_GAP_S: Final = 0.25  # ... and the pause before the next batch: 200 a second


class SubscriberPool:
    """Many subscribers on one event loop in one background thread."""

    def __init__(self, subscribers: Iterable[GnmiSubscriber] = ()) -> None:
        self.subscribers = list(subscribers)
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closing: asyncio.Event | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._spawned: set[int] = set()  # the subscribers running (or ran), by id
        self._ready = threading.Event()

    def start(self) -> None:
        self._thread = threading.Thread(target=self._main, name="gnmi-subscribers", daemon=True)
        self._thread.start()
        self._ready.wait(5.0)

    def add(self, sub: GnmiSubscriber) -> None:
        """Watch one more target; from any thread, before or after `start()`."""
        self.subscribers.append(sub)
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._spawn, sub)

    def stop(self, timeout_s: float = 5.0) -> None:
        if self._loop is not None and self._closing is not None:
            with contextlib.suppress(RuntimeError):  # the loop may already be gone
                self._loop.call_soon_threadsafe(self._closing.set)
        if self._thread is not None:
            self._thread.join(timeout_s)

    def _main(self) -> None:
        asyncio.run(self._serve())

    def _spawn(self, sub: GnmiSubscriber) -> None:
        if id(sub) in self._spawned:
            return
        self._spawned.add(id(sub))
        task = asyncio.create_task(sub.run(), name=f"gnmi {sub.where}")
        self._tasks.add(task)
        task.add_done_callback(self._finished)

    def _finished(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("%s: subscriber stopped: %s", task.get_name(), task.exception())

    async def _serve(self) -> None:
        self._loop, self._closing = asyncio.get_running_loop(), asyncio.Event()
        self._ready.set()
        # dialled a batch at a time: a thousand targets' TLS handshakes and first snapshots
        # (a whole switch each) do not all land at once (1,000: +180 MB at the top, measured)
        index = 0
        while index < len(self.subscribers) and not self._closing.is_set():
            if index and index % DIAL_BATCH == 0:
                await asyncio.sleep(DIAL_GAP_S)
            self._spawn(self.subscribers[index])  # (one `add` spawned already: skipped)
            index += 1
        await self._closing.wait()
        for sub in self.subscribers:
            sub._stop_here()  # we are on its loop already
        if self._tasks:
            _, late = await asyncio.wait(set(self._tasks), timeout=2.0)
            for task in late:
                task.cancel()


# --- more than one core: subscribers in worker processes ---------------------------------

class ShardedPool:
    """`SubscriberPool` over `processes` worker processes, for more targets than one core
    decodes: each worker runs a pool for its share of the targets and sends each
    notification as its values (what each value is, sent once per shape), the parent makes
    the Samples and calls each subscriber's own callbacks, as one pool would. Workers are
    spawned, not forked (gRPC's threads do not survive a fork). `start()` returns once every
    worker runs its subscribers (a spawned worker imports for a second or more on a busy
    machine: a watch's first ticks must not pass before its targets are even dialled)."""

    def __init__(self, subscribers: Iterable[GnmiSubscriber] = (), processes: int = 2,
                 ready_timeout_s: float = 60.0) -> None:
        self.subscribers = list(subscribers)
        self.processes = max(1, processes)
        self._conns: list[Connection] = []
        self._workers: list[BaseProcess] = []
        self._readers: list[threading.Thread] = []
        self._ready: list[threading.Event] = []  # one per worker: it runs, or it is gone
        self._ready_timeout_s = ready_timeout_s
        self._lock = threading.Lock()  # the subscriber list and the messages to the workers
        self._stopping = False
        self.cpu_s: list[float] = []  # each worker's CPU seconds, sent as it stops
        self.layout = Layout()  # the columns of what every worker sends up

    def start(self) -> None:
        with self._lock:  # an add() meanwhile goes either in a share or to a started worker
            self._start()
        deadline = time.monotonic() + self._ready_timeout_s
        for ready in self._ready:
            if not ready.wait(max(0.0, deadline - time.monotonic())):
                log.warning("a gNMI subscriber worker process was not running after %gs; "
                            "going on without waiting for it", self._ready_timeout_s)
                break

    def _start(self) -> None:
        ctx = mp.get_context("spawn")
        shares: list[list[tuple[int, dict[str, Any]]]] = [[] for _ in range(self.processes)]
        for index, sub in enumerate(self.subscribers):
            shares[index % self.processes].append((index, sub.spec))
        for share in shares:
            ours, theirs = ctx.Pipe()
            worker = ctx.Process(target=_shard_main, args=(theirs, share), daemon=True,
                                 name="gnmi-shard")
            worker.start()
            theirs.close()
            ready = threading.Event()
            reader = threading.Thread(target=self._read, args=(ours, ready), daemon=True,
                                      name="gnmi-shard-reader")
            reader.start()
            self._conns.append(ours)
            self._workers.append(worker)
            self._readers.append(reader)
            self._ready.append(ready)

    def add(self, sub: GnmiSubscriber) -> None:
        """Watch one more target; from any thread, before or after `start()`."""
        with self._lock:
            index = len(self.subscribers)
            self.subscribers.append(sub)
            if self._conns:  # under the lock: two threads' messages must not interleave
                self._conns[index % len(self._conns)].send(("add", index, sub.spec))

    def stop(self, timeout_s: float = 5.0) -> None:
        self._stopping = True
        with self._lock:
            for conn in self._conns:
                with contextlib.suppress(OSError):
                    conn.send(("stop",))
        for reader in self._readers:
            reader.join(timeout_s)
        for worker in self._workers:
            worker.join(timeout_s)
            if worker.is_alive():
                worker.terminate()

    def _read(self, conn: Connection, ready: threading.Event) -> None:
        """The parent's side of one worker: values become a Block (or Samples) for their
        subscriber, by columns of the parent's own layout."""
        shapes: dict[int, list[int]] = {}
        layout = self.layout
        while True:
            try:
                msg = conn.recv()
            except (EOFError, OSError):
                ready.set()  # a worker that died before it ran is not waited for
                if not self._stopping:  # its targets fall silent: say why once, here
                    log.error("a gNMI subscriber worker process ended unexpectedly")
                return
            kind = msg[0]
            if kind == "values":
                _, index, stamp, shape, numbers = msg
                sub = self.subscribers[index]
                block = Block(sub.device, stamp, layout, shapes[shape], numbers)
                if sub.on_block is not None:
                    sub.on_block(block)
                else:
                    sub._on_samples(list(block))
            elif kind == "shape":
                shapes[msg[1]] = [layout.column(*series) for series in msg[2]]
            elif kind == "state":
                self.subscribers[msg[1]]._on_state(msg[2], msg[3])
            elif kind == "gone":
                on_deletes = self.subscribers[msg[1]]._on_deletes
                if on_deletes is not None:
                    on_deletes(msg[2])
            elif kind == "ready":
                ready.set()
            elif kind == "stopped":
                self.cpu_s.append(msg[1])
                return


def _shard_main(conn: Connection, share: list[tuple[int, dict[str, Any]]]) -> None:
    """A worker process: a SubscriberPool for `share`, its news sent up `conn`."""
    started = time.process_time()
    send_lock = threading.Lock()  # the loop thread sends news, the main thread "stopped"
    shapes: dict[tuple[int, ...], int] = {}

    def send(msg: tuple[Any, ...]) -> None:
        with send_lock:
            conn.send(msg)

    def build(index: int, spec: dict[str, Any]) -> GnmiSubscriber:
        sub = GnmiSubscriber(**spec, on_sample=lambda _: None,
                             on_state=lambda state, line: send(("state", index, state, line)))

        def values(stamp: float, layout: Layout, cols: list[int], numbers: list[Number]
                   ) -> None:
            # a target sends the same leaves in the same order: a shape is sent once (the
            # worker's layouts are its own: a shape names its series, not columns)
            key = (id(layout), *cols)
            shape = shapes.get(key)
            if shape is None:
                shape = shapes[key] = len(shapes)
                send(("shape", shape, [layout.ids[col] for col in cols]))
            send(("values", index, stamp, shape, numbers))

        sub.on_values = values
        sub._on_deletes = lambda gone: send(("gone", index, gone))
        return sub

    pool = SubscriberPool(build(index, spec) for index, spec in share)
    pool.start()
    send(("ready",))
    try:
        while True:
            msg = conn.recv()
            if msg[0] == "add":
                pool.add(build(msg[1], msg[2]))
            elif msg[0] == "stop":
                break
    except (EOFError, OSError):
        pass  # the parent is gone
    finally:
        pool.stop()
        with contextlib.suppress(OSError):
            send(("stopped", time.process_time() - started))
