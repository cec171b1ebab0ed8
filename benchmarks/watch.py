"""How many switches x ports x queues one controller watches over gNMI; one JSON line per
size.

    python benchmarks/watch.py [--targets 10 100 300 1000] [--ports 64] [--queues 8]
                               [--interval 10] [--intervals 3] [--procs 2]
                               [--sim fast|flatfab] [--health] [--shards 1] [--gc-default]
                               [--physical] [--spread]

e.g. `--targets 100 300 500 1000 --health` (about a minute a size), then the sizes that did
not keep up again with `--shards 2`.

The targets are simulated on 127.0.0.1 in `--procs` processes, each serving its share of
the targets, one TLS port each, with a password (the lab CA of tasks/telemetry/tls.py).
Every target serves, per port, 6 counters per queue index (queue tx/drops/ECN, PFC rx/tx and
watchdog per priority: `--queues` queues and as many priorities) and oper-status; with
`--physical`, the physical layer too, per port: FEC codewords corrected and uncorrectable,
link state changes, the pre-FEC BER and each of 8 lanes' receive power (float gauges). The
counters grow every interval as
a healthy loaded fabric's do (pauses and ECN marks on the lab plan's lossless class 3 only,
corrected codewords and nothing uncorrectable: no finding holds). `--sim flatfab` runs
flatfab's own GnmiTarget (one gRPC server per target: heavy, for small sizes); `--sim fast`
(default) answers the same Capabilities and Subscribe on one asyncio gRPC server per
process, sending a notification serialized once per interval per process (its timestamp set
per target and send), so the simulated switches cost the 2 cores as little as possible.
Every target sends on the interval's boundary: the controller gets the whole fabric as one
burst, the worst case. With `--spread` each target samples from its own subscription on, as
gNMI targets' timers do, so the fabric arrives spread over the connecting time (the pool
dials 200 targets a second, as a watch's does: 1,000 over 5 s).

The controller is this process: one SubscriberPool (one event loop thread, one channel per
target) subscribing at `--interval` as the watcher does, or with `--shards N` a ShardedPool
(N spawned worker processes, each a SubscriberPool for its share, sending values up to this
process, which makes the Samples: `Watch(shards=N)`); with `--health`, a HealthEngine fed
every interval from the samples received. The GC thresholds are raised as `Watch.start`
does (`--gc-default` keeps CPython's). After every target has connected and one interval
has passed (`--warmup`), `--intervals` intervals are measured:
- cpu_s_per_interval / cpu_util: this process's CPU (time.process_time) per interval and as
  cores used; loop_util: the pool's event loop thread alone (decode runs there, under the
  GIL: 1.0 is the ceiling however many cores there are; null with shards); shards_cpu_util:
  the worker processes' CPU in cores over the run (connecting included); us_per_update: this
  process's CPU per leaf value received; health_cpu_s: the engine's feed + tick per interval
  (main thread); gc_s_per_interval: CPU in the cyclic GC (gc_full: full collections);
- updates_per_s vs expected_per_s (targets x ports x queues x 6 / interval), complete: every
  target delivered all it stamped within the measured intervals (what a burst on the last
  boundary brings is waited for, up to one more interval, fed to the engine as before); late:
  samples that arrived more than one interval after the target stamped them, max_lag_s the
  worst; loop_lag_ms: the longest a callback waited for the event loop (null with shards);
  window_s: the measured wall time (it runs past the intervals when the loop is too busy to
  answer that probe);
- decode_us: GnmiSubscriber's decode of one target's notification into a Block alone (no
  gRPC), per update, parsing included, its paths already known (as from the second
  notification on); rss_mib and kib_per_target (this process's resident set at the end, after
  a tick, and its growth from before the pool divided by the targets); measured_max_rss_mib:
  the highest resident set seen during the measured intervals (read every half second: a
  burst included); peak_rss_mib: the process's peak over its life; target_cpu_util: the
  simulated targets' CPU in cores; states: the subscribers' transitions other than
  connecting (silent, reconnected, refused) from the start, trouble the first three such
  lines.
keeps_up is complete and no late samples. Figures are this 2-core machine's, measured under
whatever else runs (load1 is printed with each line, at start and end): to quote, not assert.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import hmac
import json
import multiprocessing as mp
import os
import resource
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # tasks from this checkout, in the target processes too

import grpc  # noqa: E402
from pygnmi.spec.v080 import gnmi_pb2  # noqa: E402

from flatfab.telemetry import (  # noqa: E402
    gnmi_client,
    gnmi_lite,
    health,
    memtrim,
    paths,
    tls,
)
from flatfab.telemetry.gnmi_client import (  # noqa: E402
    GnmiSubscriber,
    ShardedPool,
    SubscriberPool,
)
from flatfab.telemetry.gnmi_target import Credentials, GnmiTarget  # noqa: E402
from flatfab.telemetry.layout import Block  # noqa: E402
from flatfab.telemetry.samples import Metric, Sample  # noqa: E402
from flatfab.workflows.commands.watch import FEED_S  # noqa: E402

USER, PASSWORD = "flatfab", "bench-only"
USER_ENV, PASS_ENV = "FLATFAB_BENCH_GNMI_USER", "FLATFAB_BENCH_GNMI_PASS"
PER_KEY = (Metric.QUEUE_TX, Metric.QUEUE_DROPS, Metric.QUEUE_ECN,
           Metric.PFC_RX, Metric.PFC_TX, Metric.WATCHDOG)
GROWTH = {Metric.QUEUE_TX: 100_000, Metric.QUEUE_DROPS: 0, Metric.QUEUE_ECN: 40,
          Metric.PFC_RX: 50, Metric.PFC_TX: 50, Metric.WATCHDOG: 0}
LOSSLESS = 3  # the lab plan's lossless priority and queue: pauses and marks happen there only
ON_LOSSLESS = (Metric.QUEUE_ECN, Metric.PFC_RX, Metric.PFC_TX)
# per port, with --physical: a healthy link's FEC corrects a steady trickle, loses nothing
PHYSICAL_GROWTH = {Metric.FEC_CORRECTED: 5_000, Metric.FEC_UNCORRECTABLE: 0,
                   Metric.CARRIER_TRANSITIONS: 0}
HEALTHY_BER = 1e-9
LANES = 8  # an 800G (or 400G) optic's lanes, each streaming its receive power
HEALTHY_RX_DBM = -2.5


def counter_leaves(ports: int, queues: int, physical: bool = False) -> list[tuple[str, int]]:
    """(path, growth per interval) of every counter one switch serves: a healthy fabric
    under load (no finding holds), so the engine's cost is judging, not reporting."""
    leaves = [(paths.leaf_path(m, f"Ethernet{p}", q),
               GROWTH[m] if m not in ON_LOSSLESS or q == LOSSLESS else 0)
              for p in range(1, ports + 1) for q in range(queues) for m in PER_KEY]
    if physical:
        leaves += [(paths.leaf_path(m, f"Ethernet{p}"), growth)
                   for p in range(1, ports + 1) for m, growth in PHYSICAL_GROWTH.items()]
    return leaves


def gauge_leaves(ports: int, physical: bool) -> list[tuple[str, float]]:
    """(path, level) of every gauge one switch serves: each port's pre-FEC BER and each of
    its LANES lanes' receive power."""
    if not physical:
        return []
    return [leaf for p in range(1, ports + 1) for leaf in (
        (paths.leaf_path(Metric.PRE_FEC_BER, f"Ethernet{p}"), HEALTHY_BER),
        *((paths.leaf_path(Metric.RX_POWER, f"Ethernet{p}", lane), HEALTHY_RX_DBM)
          for lane in range(1, LANES + 1)))]


def leaves_per_switch(ports: int, queues: int, physical: bool) -> int:
    return len(counter_leaves(ports, queues, physical)) + len(gauge_leaves(ports, physical))


def oper_leaves(ports: int) -> list[tuple[str, str]]:
    return [(paths.leaf_path(Metric.OPER_UP, f"Ethernet{p}"), paths.OPER_STATUS_UP)
            for p in range(1, ports + 1)]


# --- the simulated switches (in the target processes) --------------------------------------

class _Source:
    """flatfab's GnmiTarget source: every counter grows on each read."""

    def __init__(self, ports: int, queues: int, physical: bool) -> None:
        self._counters = counter_leaves(ports, queues, physical)
        self._gauges = gauge_leaves(ports, physical)
        self._oper = oper_leaves(ports)
        self._reads = 0

    def __call__(self) -> list[tuple[str, int | float | str]]:
        self._reads += 1
        out: list[tuple[str, int | float | str]] = [(p, 1000 + g * self._reads)
                                                    for p, g in self._counters]
        return out + list(self._gauges) + list(self._oper)


class _Payloads:
    """One serialized SubscribeResponse per interval tick, shared by a process's targets."""

    def __init__(self, ports: int, queues: int, physical: bool = False) -> None:
        leaves = counter_leaves(ports, queues, physical)
        self._note = gnmi_pb2.Notification(update=[
            gnmi_pb2.Update(path=paths.to_proto(p), val=gnmi_pb2.TypedValue(uint_val=0))
            for p, _ in leaves])
        self._growth = [g for _, g in leaves]
        # the gauges (constant levels) after the counters: `at` sets the counters only
        self._note.update.extend(
            gnmi_pb2.Update(path=paths.to_proto(p), val=gnmi_pb2.TypedValue(double_val=v))
            for p, v in gauge_leaves(ports, physical))
        self._cache: dict[int, bytes] = {}
        self.oper = gnmi_pb2.SubscribeResponse(update=gnmi_pb2.Notification(update=[
            gnmi_pb2.Update(path=paths.to_proto(p), val=gnmi_pb2.TypedValue(string_val=v))
            for p, v in oper_leaves(ports)])).SerializeToString()
        self.sync = gnmi_pb2.SubscribeResponse(sync_response=True).SerializeToString()

    def at(self, tick: int) -> bytes:
        if tick not in self._cache:
            # the counters lead the notification; the gauges after them keep their level
            for update, growth in zip(self._note.update, self._growth, strict=False):
                update.val.uint_val = 1000 + growth * tick
            self._cache = {tick: gnmi_pb2.SubscribeResponse(update=self._note)
                           .SerializeToString(), **{k: v for k, v in self._cache.items()
                                                    if k >= tick - 1}}
        return self._cache[tick]


def _stamp() -> bytes:
    # serialized messages merge when concatenated: the last timestamp wins
    return gnmi_pb2.SubscribeResponse(
        update=gnmi_pb2.Notification(timestamp=time.time_ns())).SerializeToString()


class _FastTargets:
    """Capabilities and Subscribe (STREAM, SAMPLE at the asked interval) for many ports."""

    def __init__(self, payloads: _Payloads, spread: bool = False) -> None:
        self._payloads = payloads
        self._spread = spread
        self._caps = GnmiTarget("127.0.0.1", 0, list, None, None, None,
                                insecure=True).capabilities()

    @staticmethod
    async def _auth(context: Any) -> None:
        md = {k.lower(): v for k, v in context.invocation_metadata() or ()}
        ok_user = hmac.compare_digest(str(md.get("username", "")).encode(), USER.encode())
        ok_pass = hmac.compare_digest(str(md.get("password", "")).encode(), PASSWORD.encode())
        if not (ok_user and ok_pass):
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, "bad username or password")

    async def capabilities(self, request: Any, context: Any) -> Any:
        await self._auth(context)
        return self._caps

    async def subscribe(self, requests: AsyncIterator[Any], context: Any) -> AsyncIterator[bytes]:
        await self._auth(context)
        first = await requests.__anext__()
        asked = [s.sample_interval for s in first.subscribe.subscription if s.sample_interval]
        interval = max(0.05, (min(asked) / 1e9) if asked else 1.0)
        loop = asyncio.get_running_loop()
        tick = int(time.time() / interval)
        yield self._payloads.at(tick) + self._payloads.oper + _stamp()
        yield self._payloads.sync
        # aligned: every target samples on the interval's boundary (the whole fabric as one
        # burst: the worst case); spread: each from its own subscription on
        due = loop.time() + (interval if self._spread else interval - time.time() % interval)
        while True:
            await asyncio.sleep(max(0.0, due - loop.time()))
            yield self._payloads.at(int(time.time() / interval)) + _stamp()
            due += interval
            if due < loop.time():  # fell behind: keep the cadence, no burst
                due = loop.time() + interval

    def handler(self) -> Any:
        return grpc.method_handlers_generic_handler("gnmi.gNMI", {
            "Capabilities": grpc.unary_unary_rpc_method_handler(
                self.capabilities, request_deserializer=gnmi_pb2.CapabilityRequest.FromString,
                response_serializer=gnmi_pb2.CapabilityResponse.SerializeToString),
            "Subscribe": grpc.stream_stream_rpc_method_handler(
                self.subscribe, request_deserializer=gnmi_pb2.SubscribeRequest.FromString,
                response_serializer=None),  # the payloads are bytes already
        })


async def _serve_fast(count: int, ports: int, queues: int, physical: bool, pem: tls.Pem,
                      conn: Connection, spread: bool = False) -> None:
    server = grpc.aio.server(options=[("grpc.max_concurrent_streams", 8)])
    server.add_generic_rpc_handlers(
        (_FastTargets(_Payloads(ports, queues, physical), spread).handler(),))
    creds = grpc.ssl_server_credentials([(pem.key, pem.cert)])
    bound = [server.add_secure_port("127.0.0.1:0", creds) for _ in range(count)]
    await server.start()
    conn.send(bound)
    await asyncio.get_running_loop().run_in_executor(None, conn.recv)  # until told to stop
    await server.stop(None)


def serve_targets(count: int, ports: int, queues: int, sim: str, physical: bool,
                  pem: tls.Pem, conn: Connection, spread: bool = False) -> None:
    """A target process: serve `count` targets, send their ports, stop when told; then send
    this process's CPU seconds."""
    _raise_fd_limit()
    started = time.process_time()
    if sim == "fast":
        asyncio.run(_serve_fast(count, ports, queues, physical, pem, conn, spread))
    else:
        targets = [GnmiTarget("127.0.0.1", 0, _Source(ports, queues, physical),
                              Credentials(USER, PASSWORD), pem.cert, pem.key,
                              name=f"sim{i}", poll_s=3600.0, max_streams=2)
                   for i in range(count)]
        conn.send([t.start() for t in targets])
        conn.recv()
        for t in targets:
            t.stop()
    conn.send(time.process_time() - started)


def _raise_fd_limit() -> None:
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


# --- the controller (this process) ---------------------------------------------------------

class Meter:
    """The subscribers' callbacks: counts, lateness, and (with --health) the samples."""

    def __init__(self, interval_s: float, keep: bool) -> None:
        self.interval_s, self.keep = interval_s, keep
        self.connected: set[str] = set()
        self.trouble: list[str] = []
        self.states: dict[str, int] = {}  # every transition but the first connect, by kind
        self.reset()

    def reset(self, intervals: int = 0) -> None:
        self.count = self.late = 0
        self.max_lag = 0.0
        self.batch: list[Block] = []
        # what each target stamped within the measured intervals, whenever it arrived: a
        # burst on the last interval's boundary is still being read when they end
        now = time.time()
        self.window = (now, now + intervals * self.interval_s)
        self.stamped: dict[str, int] = {}

    def sample(self, s: Sample) -> None:
        self.samples([s])

    def block(self, block: Block) -> None:
        # one notification's readings, by column (as Watch takes them)
        self._arrived(block.device, block.time, len(block))
        if self.keep:
            self.batch.append(block)

    def samples(self, batch: list[Sample]) -> None:
        # one notification's samples (a subscriber without on_block: none here)
        self._arrived(batch[0].device, batch[0].time, len(batch))

    def _arrived(self, device: str, stamp: float, n: int) -> None:
        self.count += n
        lag = time.time() - stamp
        self.max_lag = max(self.max_lag, lag)
        if lag > self.interval_s:
            self.late += n
        if self.window[0] <= stamp < self.window[1]:
            self.stamped[device] = self.stamped.get(device, 0) + n

    def state(self, state: str, line: str) -> None:
        if state != gnmi_client.CONNECTED:
            self.states[state] = self.states.get(state, 0) + 1
        if state in (gnmi_client.CONNECTED, gnmi_client.RECONNECTED):
            self.connected.add(line.split(" ", 1)[0])
        else:
            self.trouble.append(line)


class GcTimer:
    """CPU time the cyclic garbage collector runs (in whichever thread it runs, holding the
    GIL: its start and stop come in that thread, so thread CPU time is not disturbed by the
    machine's other load as wall time is)."""

    def __init__(self) -> None:
        self.total = 0.0
        self.full = 0  # generation-2 collections: they walk every tracked object
        self._began = 0.0
        gc.callbacks.append(self._event)

    def _event(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._began = time.thread_time()
            return
        self.total += time.thread_time() - self._began
        self.full += info["generation"] == 2

    def close(self) -> None:
        gc.callbacks.remove(self._event)


def rss_mib() -> float:
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def thread_cpu_s(native_id: int) -> float:
    fields = Path(f"/proc/self/task/{native_id}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def decode_us(ports: int, queues: int, physical: bool) -> float:
    """GnmiSubscriber's decode of one target's notification into a Block, per update,
    parsing included (no gRPC)."""
    raw = _Payloads(ports, queues, physical).at(1) + _stamp()
    sub = GnmiSubscriber("sw", "127.0.0.1", 1, ca_file=None, insecure=True,
                         on_sample=lambda _: None, on_state=lambda *_: None,
                         on_block=lambda _: None)
    sub._notification(gnmi_lite.SubscribeResponse.FromString(raw).update)  # paths learnt
    count = len(gnmi_pb2.SubscribeResponse.FromString(raw).update.update)
    best = float("inf")
    for _ in range(3):
        started = time.process_time()
        sub._notification(gnmi_lite.SubscribeResponse.FromString(raw).update)
        best = min(best, time.process_time() - started)
    return 1e6 * best / count


def _engine() -> Any:
    from flatfab.intent.loader import load_intent  # noqa: PLC0415
    from flatfab.plan.planner import plan  # noqa: PLC0415
    from flatfab.telemetry.health import HealthEngine  # noqa: PLC0415
    from flatfab.telemetry.thresholds import Thresholds  # noqa: PLC0415

    # the lab's plan gives the lossless profile; the simulated switches are not in it, so
    # their ports get the fabric-wide profile, as a port the plan does not name does
    return HealthEngine(plan(load_intent(ROOT / "intents" / "lab")), Thresholds())


def _loop_lag(loop: asyncio.AbstractEventLoop) -> float:
    async def nothing() -> None:
        return None

    started = time.perf_counter()
    with contextlib.suppress(TimeoutError):  # a loop that busy is the figure: 30 s or more
        asyncio.run_coroutine_threadsafe(nothing(), loop).result(30)
    return time.perf_counter() - started


def measure(args: argparse.Namespace, targets: int, ca_file: Path,
            pem: tls.Pem) -> dict[str, Any]:
    ctx = mp.get_context("spawn")
    procs = max(1, min(args.procs, targets))
    shares = [targets // procs + (i < targets % procs) for i in range(procs)]
    workers, conns, ports = [], [], []
    for share in shares:
        ours, theirs = ctx.Pipe()
        proc = ctx.Process(target=serve_targets, daemon=True,
                           args=(share, args.ports, args.queues, args.sim, args.physical,
                                 pem, theirs, args.spread))
        proc.start()
        workers.append(proc)
        conns.append(ours)
    for conn in conns:
        ports.extend(conn.recv())
    interval = args.interval
    meter = Meter(interval, args.health)
    engine = _engine() if args.health else None
    rss_before = rss_mib()
    subs = [GnmiSubscriber(f"sw{i:04d}", "127.0.0.1", port, ca_file=ca_file,
                           on_sample=meter.sample, on_samples=meter.samples,
                           on_block=meter.block, on_state=meter.state, interval_s=interval,
                           username_env=USER_ENV, password_env=PASS_ENV,
                           tls_server_name="localhost", backoff_s=(1.0, 5.0))
            for i, port in enumerate(ports)]
    pool: SubscriberPool | ShardedPool = (ShardedPool(subs, args.shards) if args.shards > 1
                                          else SubscriberPool(subs))
    gc_before = None if args.gc_default else health.collect_less()  # as Watch.start does
    memtrim.map_large_blocks()  # as Watch.start does
    load_start = os.getloadavg()[0]
    started = time.monotonic()
    pool.start()
    deadline = started + args.connect_timeout
    while len(meter.connected) < targets and time.monotonic() < deadline:
        time.sleep(0.05)
    connect_s = time.monotonic() - started
    time.sleep(args.warmup * interval)  # the snapshots, and the backlog of connecting
    # one pool: its loop thread's CPU and lag; shards: each worker's CPU, sent as it stops
    loop = pool._loop if isinstance(pool, SubscriberPool) else None
    thread = pool._thread if isinstance(pool, SubscriberPool) else None
    native = thread.native_id if thread is not None else None
    meter.reset(args.intervals)
    gc_timer = GcTimer()
    cpu0, wall0 = time.process_time(), time.monotonic()
    loop0 = thread_cpu_s(native) if native is not None else 0.0
    health_cpu, loop_lag, rounds = 0.0, 0.0, 0
    rss_max = rss_mib()
    for k in range(1, args.intervals + 1):
        end = wall0 + k * interval
        while (left := end - time.monotonic()) > 0:
            time.sleep(min(left, FEED_S))
            rss_max = max(rss_max, rss_mib())
            if loop is not None:
                loop_lag = max(loop_lag, _loop_lag(loop))
            if engine is not None:  # as Watch.run feeds between ticks
                t0 = time.thread_time()
                batch, meter.batch = meter.batch, []
                engine.feed_blocks(batch)
                del batch
                health_cpu += time.thread_time() - t0
        if engine is not None:
            t0 = time.thread_time()
            engine.tick(time.time())
            memtrim.trim()
            health_cpu += time.thread_time() - t0
            rounds += 1
    cpu = time.process_time() - cpu0
    gc_timer.close()
    wall = time.monotonic() - wall0
    loop_cpu = thread_cpu_s(native) - loop0 if native is not None else None
    received = meter.count
    leaves = leaves_per_switch(args.ports, args.queues, args.physical)
    # up to one more interval for what was stamped within the intervals (fed as before)
    drain_end = time.monotonic() + interval
    while time.monotonic() < drain_end and not (
            len(meter.stamped) == targets
            and min(meter.stamped.values()) >= leaves * args.intervals):
        time.sleep(FEED_S)
        if engine is not None:
            batch, meter.batch = meter.batch, []
            engine.feed_blocks(batch)
            del batch
    late, max_lag, stamped = meter.late, meter.max_lag, dict(meter.stamped)
    rss_end = rss_mib()
    load_end = os.getloadavg()[0]
    pool.stop()
    shards_cpu = sum(pool.cpu_s) if isinstance(pool, ShardedPool) else None
    if gc_before is not None:
        gc.set_threshold(*gc_before)
    target_cpu = 0.0
    for conn in conns:
        conn.send("stop")
    for conn, proc in zip(conns, workers, strict=True):
        target_cpu += conn.recv() if conn.poll(30) else float("nan")
        proc.join(10)
    complete = len(stamped) == targets and all(
        n >= leaves * args.intervals for n in stamped.values())
    return {
        "targets": targets, "ports": args.ports, "queues": args.queues, "interval_s": interval,
        "sim": args.sim, "health": args.health, "physical": args.physical,
        "spread": args.spread,
        "leaves_per_switch": leaves, "target_procs": procs,
        "gc_default": args.gc_default,
        "connected": len(meter.connected), "connect_s": round(connect_s, 2),
        "intervals": args.intervals,
        "cpu_s_per_interval": round(cpu / args.intervals, 3),
        "cpu_util": round(cpu / wall, 3),
        "loop_util": None if loop_cpu is None else round(loop_cpu / wall, 3),
        "shards": args.shards,
        "shards_cpu_util": None if shards_cpu is None
        else round(shards_cpu / (time.monotonic() - started), 3),
        "us_per_update": round(1e6 * cpu / received, 2) if received else None,
        "decode_us": round(decode_us(args.ports, args.queues, args.physical), 2),
        "health_cpu_s": round(health_cpu / rounds, 3) if rounds else None,
        "gc_s_per_interval": round(gc_timer.total / args.intervals, 3),
        "gc_full": gc_timer.full,
        "updates_per_s": round(received / wall),
        "expected_per_s": round(targets * leaves / interval), "window_s": round(wall, 1),
        "complete": complete, "late": late, "max_lag_s": round(max_lag, 2),
        "loop_lag_ms": round(1000 * loop_lag, 1) if loop is not None else None,
        "rss_mib": round(rss_end, 1),
        "kib_per_target": round(1024 * (rss_end - rss_before) / targets, 1),
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "measured_max_rss_mib": round(rss_max, 1),
        "target_cpu_util": round(target_cpu / (time.monotonic() - started), 3),
        "keeps_up": complete and late == 0,
        "load1": [round(load_start, 2), round(load_end, 2)],
        "states": meter.states, "trouble": meter.trouble[:3],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", type=int, nargs="+", default=[10, 100, 300, 1000])
    parser.add_argument("--ports", type=int, default=64)
    parser.add_argument("--queues", type=int, default=8)
    parser.add_argument("--interval", type=float, default=10.0, help="seconds")
    parser.add_argument("--intervals", type=int, default=3, help="intervals measured")
    parser.add_argument("--warmup", type=float, default=1.0,
                        help="intervals after every target connected, before measuring")
    parser.add_argument("--procs", type=int, default=2, help="target processes")
    parser.add_argument("--sim", choices=("fast", "flatfab"), default="fast")
    parser.add_argument("--health", action="store_true", help="feed a HealthEngine too")
    parser.add_argument("--spread", action="store_true",
                        help="each target samples from its own subscription on (as gNMI "
                             "targets' timers do), not all on the interval's boundary")
    parser.add_argument("--physical", action="store_true",
                        help="each port also streams FEC codewords, link state changes and "
                             "its pre-FEC BER")
    parser.add_argument("--shards", type=int, default=1,
                        help="subscriber worker processes (ShardedPool); 1: one SubscriberPool")
    parser.add_argument("--gc-default", action="store_true",
                        help="keep CPython's GC thresholds (Watch makes collections rarer)")
    parser.add_argument("--connect-timeout", type=float, default=120.0, help="seconds")
    args = parser.parse_args()
    _raise_fd_limit()
    os.environ[USER_ENV], os.environ[PASS_ENV] = USER, PASSWORD
    ca = tls.make_ca("flatfab bench CA")
    pem = tls.make_server_cert(ca, ["localhost", "127.0.0.1"])
    with tempfile.TemporaryDirectory(prefix="watch-bench-") as tmp:
        ca_file = Path(tmp) / "ca.pem"
        ca_file.write_bytes(ca.cert)
        for targets in args.targets:
            print(json.dumps(measure(args, targets, ca_file, pem)), flush=True)


if __name__ == "__main__":
    main()
