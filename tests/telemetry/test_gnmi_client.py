"""flatfab's gNMI subscriber against the lab target on 127.0.0.1: samples, state flips,
refusals in one line, and coming back after the target does."""

from __future__ import annotations

import asyncio
import itertools
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, cast

import pytest
from pygnmi.spec.v080 import gnmi_pb2

from flatfab.telemetry import gnmi_client, paths
from flatfab.telemetry.gnmi_client import GnmiSubscriber, SubscriberPool
from flatfab.telemetry.gnmi_target import Credentials, GnmiTarget
from flatfab.telemetry.samples import Metric, Sample
from tests.doubles.gnmi import PFC_PRIORITY, QUEUE, FakeCounters, LabPki
from tests.telemetry.gnmi_support import PASS_ENV, USER_ENV, Recording

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.usefixtures("subscriber_login")


class Recorder(Recording):
    def __init__(self) -> None:
        self.samples: list[Sample] = []
        self.states: list[tuple[str, str]] = []
        super().__init__()

    def sample(self, s: Sample) -> None:
        with self._lock:
            self.samples.append(s)

    def state(self, state: str, line: str) -> None:
        with self._lock:
            self.states.append((state, line))

    def kinds(self) -> list[str]:
        return [s for s, _ in self.states]


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> LabPki:
    return LabPki(tmp_path_factory.mktemp("pki"))


def _target(pki: LabPki, counters: FakeCounters, port: int = 0) -> GnmiTarget:
    t = GnmiTarget("127.0.0.1", port, counters, Credentials("flatfab", "s3cret"),
                   pki.cert, pki.key, name="sw1", poll_s=0.02)
    t.start()
    return t


def _subscriber(rec: Recorder, port: int, ca: Path, device: str = "sw1",
                silent_after_s: float | None = None) -> GnmiSubscriber:
    return GnmiSubscriber(device, "127.0.0.1", port, ca_file=ca, on_sample=rec.sample,
                          on_state=rec.state, interval_s=0.1, username_env=USER_ENV,
                          password_env=PASS_ENV, backoff_s=(0.05, 0.2),
                          silent_after_s=silent_after_s)


@pytest.fixture
def watching(pki: LabPki) -> Iterator[Callable[..., SubscriberPool]]:
    pools: list[SubscriberPool] = []

    def start(*subs: GnmiSubscriber) -> SubscriberPool:
        pool = SubscriberPool(subs)
        pool.start()
        pools.append(pool)
        return pool

    yield start
    for pool in pools:
        pool.stop()


def test_samples_arrive_at_the_interval_with_metrics_and_keys(
    pki: LabPki, watching: Callable[..., SubscriberPool]
) -> None:
    rec, target = Recorder(), _target(pki, FakeCounters())
    try:
        watching(_subscriber(rec, target.port, pki.ca_file))
        assert rec.wait(lambda: sum(s.metric is Metric.QUEUE_TX for s in rec.samples) >= 12)
        states = list(rec.states)
    finally:
        target.stop()
    assert states == [("connected", f"sw1 127.0.0.1:{target.port}: connected, subscribed")]
    seen = {(s.device, s.port, s.metric, s.key) for s in rec.samples}
    for port in ("swp1", "swp2"):
        for metric in (Metric.QUEUE_TX, Metric.QUEUE_DROPS, Metric.QUEUE_ECN):
            assert ("sw1", port, metric, QUEUE) in seen
        for metric in (Metric.PFC_RX, Metric.PFC_TX, Metric.WATCHDOG):
            assert ("sw1", port, metric, PFC_PRIORITY) in seen
        assert ("sw1", port, Metric.OPER_UP, None) in seen
    tx = [s for s in rec.samples if (s.metric, s.port) == (Metric.QUEUE_TX, "swp1")]
    gaps = sorted(b.time - a.time for a, b in itertools.pairwise(tx))
    assert gaps[0] > 0.05 and 0.08 < gaps[len(gaps) // 2] < 0.14, gaps  # loose: a busy CI box
    assert [s.value for s in tx] == sorted(s.value for s in tx)


def test_on_change_delivers_a_state_flip(
    pki: LabPki, watching: Callable[..., SubscriberPool]
) -> None:
    rec, counters = Recorder(), FakeCounters()
    target = _target(pki, counters)
    try:
        watching(_subscriber(rec, target.port, pki.ca_file))
        assert rec.wait(lambda: any(s.metric is Metric.OPER_UP for s in rec.samples))
        counters.set_oper("swp2", False)
        assert rec.wait(lambda: any(s.metric is Metric.OPER_UP and s.value == 0
                                    for s in rec.samples))
    finally:
        target.stop()
    oper = [(s.port, s.value) for s in rec.samples if s.metric is Metric.OPER_UP]
    assert sorted(oper) == [("swp1", 1), ("swp2", 0), ("swp2", 1)]  # once each, then the flip


def test_bad_password_is_refused_in_one_line(
    pki: LabPki, watching: Callable[..., SubscriberPool], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(PASS_ENV, "guess")
    rec, target = Recorder(), _target(pki, FakeCounters())
    try:
        watching(_subscriber(rec, target.port, pki.ca_file))
        assert rec.wait(lambda: bool(rec.states))
        time.sleep(0.6)  # several retries: still one line
        states = list(rec.states)
    finally:
        target.stop()
    assert states == [("refused", f"sw1 127.0.0.1:{target.port}: refused: bad username "
                                      "or password (UNAUTHENTICATED)")]
    assert rec.samples == []


def test_untrusted_certificate_is_refused_in_one_line(
    pki: LabPki, watching: Callable[..., SubscriberPool]
) -> None:
    rec, target = Recorder(), _target(pki, FakeCounters())
    try:
        watching(_subscriber(rec, target.port, pki.other_ca_file))
        assert rec.wait(lambda: bool(rec.states))
        time.sleep(0.6)
        states = list(rec.states)
    finally:
        target.stop()
    [(state, line)] = states
    assert state == "refused"
    assert line == (f"sw1 127.0.0.1:{target.port}: TLS certificate not trusted "
                    f"(not signed by {pki.other_ca_file})")
    assert rec.samples == []


def test_missing_credentials_are_named_not_guessed(
    pki: LabPki, watching: Callable[..., SubscriberPool], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(PASS_ENV)
    rec = Recorder()
    watching(_subscriber(rec, 1, pki.ca_file))
    assert rec.wait(lambda: bool(rec.states))
    assert rec.states == [("refused", f"sw1 127.0.0.1:1: credentials not set: {PASS_ENV}")]


def test_no_ca_means_no_subscriber_unless_insecure_is_asked(pki: LabPki) -> None:
    rec = Recorder()
    with pytest.raises(ValueError, match="CA file"):
        GnmiSubscriber("sw1", "127.0.0.1", 1, ca_file=None, on_sample=rec.sample,
                       on_state=rec.state)


def test_target_gone_then_back_resubscribes(
    pki: LabPki, watching: Callable[..., SubscriberPool]
) -> None:
    rec, counters = Recorder(), FakeCounters()
    target = _target(pki, counters)
    port = target.port
    watching(_subscriber(rec, port, pki.ca_file))
    assert rec.wait(lambda: len(rec.samples) > 20)
    target.stop()
    assert rec.wait(lambda: "silent" in rec.kinds())
    before = len(rec.samples)
    time.sleep(0.4)  # retries against a closed port: no more lines, no samples
    assert rec.kinds() == ["connected", "silent"]
    assert len(rec.samples) == before
    target = _target(pki, counters, port)
    try:
        assert rec.wait(lambda: "reconnected" in rec.kinds())
        assert rec.wait(lambda: len(rec.samples) > before + 20)
    finally:
        target.stop()
    assert rec.kinds()[:3] == ["connected", "silent", "reconnected"]
    assert rec.states[2][1] == f"sw1 127.0.0.1:{port}: reconnected, subscribed again"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _spawn(config: Path) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "flatfab.telemetry.gnmi_target", "--config", str(config)],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()  # blocks until it listens (or dies)
    assert "listening on" in line, line
    return proc


def test_target_process_killed_and_restarted(
    pki: LabPki, watching: Callable[..., SubscriberPool], tmp_path: Path
) -> None:
    port = _free_port()
    config = tmp_path / "sw1.yaml"
    config.write_text(
        f"name: sw1\naddress: 127.0.0.1\nport: {port}\n"
        f"tls_cert: {pki.cert_file}\ntls_key: {pki.key_file}\n"
        f"username_env: {USER_ENV}\npassword_env: {PASS_ENV}\n"
        "source: tests.doubles.gnmi:fake_source\nsource_args: {ports: [Ethernet1/1]}\n",
        encoding="utf-8",
    )
    rec = Recorder()
    proc = _spawn(config)
    try:
        watching(_subscriber(rec, port, pki.ca_file))
        assert rec.wait(lambda: any(s.port == "Ethernet1/1" for s in rec.samples))
        proc.send_signal(signal.SIGKILL)
        proc.wait(5)
        assert rec.wait(lambda: "silent" in rec.kinds())
        before = len(rec.samples)
        proc = _spawn(config)
        assert rec.wait(lambda: "reconnected" in rec.kinds(), timeout=8.0)
        assert rec.wait(lambda: len(rec.samples) > before)
    finally:
        proc.terminate()
        proc.wait(5)
    assert rec.kinds()[:3] == ["connected", "silent", "reconnected"]


def test_many_targets_share_one_thread(
    pki: LabPki, watching: Callable[..., SubscriberPool]
) -> None:
    targets = [_target(pki, FakeCounters(ports=("swp1",))) for _ in range(8)]
    rec = Recorder()
    try:
        before = set(threading.enumerate())
        pool = watching(*(_subscriber(rec, t.port, pki.ca_file, f"sw{i}")
                          for i, t in enumerate(targets[:-1])))
        pool.add(_subscriber(rec, targets[-1].port, pki.ca_file, "sw7"))  # joins a running pool
        assert rec.wait(lambda: {s.device for s in rec.samples} == {f"sw{i}" for i in range(8)})
        # the targets' stream workers live in this process too: leave them out of the count
        new = [t.name for t in set(threading.enumerate()) - before
               if not t.name.startswith("gnmi-sw1")]
        assert len(new) <= 3, new  # the pool's one thread, plus gRPC's own few
    finally:
        for t in targets:
            t.stop()
    assert gnmi_client.CONNECTED in rec.kinds()


def test_a_target_that_goes_quiet_is_silent(
    pki: LabPki, watching: Callable[..., SubscriberPool]
) -> None:
    rec, counters = Recorder(), FakeCounters()
    target = _target(pki, counters)
    try:
        # the target stays up; only its counters stop
        watching(_subscriber(rec, target.port, pki.ca_file, silent_after_s=0.5))
        assert rec.wait(lambda: len(rec.samples) > 10)
        counters.failing = True
        assert rec.wait(lambda: "silent" in rec.kinds())
        time.sleep(0.5)  # retries meet a target whose source still fails: no new line
        states = list(rec.states)
        counters.failing = False
        assert rec.wait(lambda: "reconnected" in rec.kinds())
    finally:
        target.stop()
    assert states == [
        ("connected", f"sw1 127.0.0.1:{target.port}: connected, subscribed"),
        ("silent", f"sw1 127.0.0.1:{target.port}: no update in 0.5s"),
    ]


def test_a_certificate_for_another_name_is_refused_in_one_line(
    pki: LabPki, watching: Callable[..., SubscriberPool]
) -> None:
    rec, target = Recorder(), _target(pki, FakeCounters())
    try:
        watching(GnmiSubscriber("sw9", "127.0.0.1", target.port, ca_file=pki.ca_file,
                                on_sample=rec.sample, on_state=rec.state, interval_s=0.1,
                                username_env=USER_ENV, password_env=PASS_ENV,
                                backoff_s=(0.05, 0.2), tls_server_name="sw9.lab"))
        assert rec.wait(lambda: bool(rec.states))
        time.sleep(0.4)
        states = list(rec.states)
    finally:
        target.stop()
    assert states == [("refused", f"sw9 127.0.0.1:{target.port}: TLS certificate does not "
                                  "name sw9.lab")]


# --- decode: remembered per path, the same samples as the table's own metric_of ------------

def _note(updates: list[tuple[str, object]], prefix: str = "", target: str = "") -> object:
    def val(v: object) -> object:
        if isinstance(v, str):
            return gnmi_pb2.TypedValue(string_val=v)
        return gnmi_pb2.TypedValue(uint_val=v)

    pre = paths.to_proto(prefix) if prefix else gnmi_pb2.Path()
    pre.target = target
    return gnmi_pb2.Notification(
        timestamp=5_000_000_000, prefix=pre if prefix or target else None,
        update=[gnmi_pb2.Update(path=paths.to_proto(p), val=val(v)) for p, v in updates])


def _decoding(table: paths.PathTable = paths.FLATFAB
              ) -> tuple[GnmiSubscriber, list[list[Sample]]]:
    batches: list[list[Sample]] = []
    sub = GnmiSubscriber("sw1", "127.0.0.1", 1, ca_file=None, insecure=True,
                         on_sample=lambda _: None, on_state=lambda *_: None,
                         on_samples=batches.append,
                         table=table)
    return sub, batches


def test_a_notification_decodes_the_same_when_its_paths_are_remembered() -> None:
    updates: list[tuple[str, object]] = [
        (paths.leaf_path(Metric.PFC_RX, "Ethernet1/1", 3), 7),
        (paths.leaf_path(Metric.OPER_UP, "Ethernet1/1"), "DOWN"),
        ("/interfaces/interface[name=swp1]/state/counters/in-octets", 9),  # no metric
        (paths.leaf_path(Metric.QUEUE_TX, "swp2", 0), "not a number"),
    ]
    sub, batches = _decoding()
    sub._notification(_note(updates))
    sub._notification(_note(updates))  # second time: every path from the cache
    expected = [Sample("sw1", "Ethernet1/1", Metric.PFC_RX, 3, 7, 5.0),
                Sample("sw1", "Ethernet1/1", Metric.OPER_UP, None, 0, 5.0)]
    assert batches == [expected, expected]
    assert sub.unknown_paths == 4


def test_name_embedded_paths_under_a_prefix_decode_through_the_cache() -> None:
    table = paths.PathTable(
        "sonic-like",
        (paths.Leaf(Metric.PFC_RX, "/COUNTERS/{port}/SAI_PORT_STAT_PFC_{key}_RX_PKTS", True),
         paths.Leaf(Metric.QUEUE_TX, "/COUNTERS/{port}/queue[id={key}]/packets", True)),
        ("/COUNTERS",), (), target="COUNTERS_DB")
    leaves: list[tuple[str, object]] = [("Ethernet0/SAI_PORT_STAT_PFC_3_RX_PKTS", 11),
                                        ("Ethernet0/queue[id=2]/packets", 12),
                                        ("Ethernet0/SAI_PORT_STAT_PFC_X_RX_PKTS", 13)]
    sub, batches = _decoding(table)
    for _ in range(2):
        sub._notification(_note(leaves, prefix="/COUNTERS", target="COUNTERS_DB"))
    # the same leaves without the prefix are other paths: not counters of this table
    sub._notification(_note(leaves))
    expected = [Sample("sw1", "Ethernet0", Metric.PFC_RX, 3, 11, 5.0),
                Sample("sw1", "Ethernet0", Metric.QUEUE_TX, 2, 12, 5.0)]
    assert batches == [expected, expected]
    assert sub.unknown_paths == 2 + 3


def test_without_a_batch_callback_samples_come_one_by_one() -> None:
    got: list[Sample] = []
    sub = GnmiSubscriber("sw1", "127.0.0.1", 1, ca_file=None, insecure=True,
                         on_sample=got.append, on_state=lambda *_: None)
    sub._notification(_note([(paths.leaf_path(Metric.QUEUE_DROPS, "swp1", 1), 4)]))
    assert got == [Sample("sw1", "swp1", Metric.QUEUE_DROPS, 1, 4, 5.0)]


class _LateCall:
    """A stream whose response reaches the loop from another thread, then takes a few loop
    turns before the read sees it (as gRPC's completions do)."""

    def __init__(self, loop: asyncio.AbstractEventLoop, arrives_s: float) -> None:
        self._loop = loop
        self._got: asyncio.Future[str] = loop.create_future()
        self.timer = threading.Timer(arrives_s, loop.call_soon_threadsafe, (self._hop, 3))
        self.timer.start()

    def _hop(self, left: int) -> None:
        if left:
            self._loop.call_soon(self._hop, left - 1)
        else:
            self._got.set_result("response")

    async def read(self) -> str:
        return await self._got


def _read_under_backlog(busy_s: float, arrives_s: float, silent_after_s: float) -> str:
    sub = GnmiSubscriber("sw1", "127.0.0.1", 1, ca_file=None, insecure=True,
                         on_sample=lambda _: None, on_state=lambda *_: None,
                         silent_after_s=silent_after_s)

    async def read() -> str:
        loop = asyncio.get_running_loop()
        if busy_s:
            loop.call_later(0.05, time.sleep, busy_s)  # the loop stuck on other work
        call = _LateCall(loop, arrives_s)
        try:
            got: str = await sub._read(call)
        finally:
            call.timer.cancel()
        return got

    return asyncio.run(read())


def test_a_busy_loop_does_not_make_a_talking_target_silent() -> None:
    # the response came at 0.2 s, within silent_after; the loop only saw it at ~0.65 s
    assert _read_under_backlog(busy_s=0.6, arrives_s=0.2, silent_after_s=0.3) == "response"


def test_an_idle_loop_still_finds_a_quiet_target_silent() -> None:
    with pytest.raises(gnmi_client._SilentError, match=r"no update in 0\.2s"):
        _read_under_backlog(busy_s=0.0, arrives_s=1.0, silent_after_s=0.2)


# --- subscribers in worker processes ---------------------------------------------------------

def test_a_sharded_pool_delivers_what_one_pool_does(pki: LabPki) -> None:
    targets = [_target(pki, FakeCounters(ports=("swp1",))) for _ in range(3)]
    rec = Recorder()
    subs = [_subscriber(rec, t.port, pki.ca_file, f"sw{i}") for i, t in enumerate(targets)]
    pool = gnmi_client.ShardedPool(subs[:2], processes=2)
    try:
        pool.start()
        pool.add(subs[2])  # joins a running pool, in one of the workers
        assert rec.wait(lambda: {s.device for s in rec.samples} == {"sw0", "sw1", "sw2"},
                        timeout=30.0)
    finally:
        pool.stop()
        for t in targets:
            t.stop()
    assert not any(w.is_alive() for w in pool._workers)
    assert len(pool.cpu_s) == 2  # each worker said how much CPU it used
    assert sorted(line for _, line in rec.states) == sorted(
        f"sw{i} 127.0.0.1:{t.port}: connected, subscribed" for i, t in enumerate(targets))
    pfc = next(s for s in rec.samples if s.device == "sw2" and s.metric is Metric.PFC_RX)
    assert (pfc.port, pfc.key) == ("swp1", PFC_PRIORITY)
    assert isinstance(pfc.value, int) and pfc.time > 0


def test_a_sharded_pool_starts_once_its_workers_run() -> None:
    # a watch counts its ticks from start(): the workers must be subscribing by then
    pool = gnmi_client.ShardedPool([], processes=2)
    try:
        pool.start()
        assert all(ready.is_set() for ready in pool._ready)
        assert all(worker.is_alive() for worker in pool._workers)
    finally:
        pool.stop()


def test_a_worker_that_dies_while_starting_is_not_waited_for(
        pki: LabPki, caplog: pytest.LogCaptureFixture) -> None:
    rec = Recorder()
    sub = _subscriber(rec, 1, pki.ca_file, "sw1")
    sub.spec.update(ca_file=None, insecure=False)  # the worker's own build of it refuses
    pool = gnmi_client.ShardedPool([sub], processes=1, ready_timeout_s=60.0)
    started = time.monotonic()
    try:
        pool.start()
    finally:
        pool.stop()
    assert time.monotonic() - started < 30.0
    assert "worker process ended unexpectedly" in caplog.text


def test_a_worker_process_that_dies_is_said(caplog: pytest.LogCaptureFixture) -> None:
    pool = gnmi_client.ShardedPool([], processes=1)
    pool.start()
    try:
        pool._workers[0].kill()
        pool._readers[0].join(10.0)
    finally:
        pool.stop()
    assert "worker process ended unexpectedly" in caplog.text


def test_a_loop_that_stays_busy_still_finds_a_quiet_target_silent() -> None:
    sub = GnmiSubscriber("sw1", "127.0.0.1", 1, ca_file=None, insecure=True,
                         on_sample=lambda _: None, on_state=lambda *_: None,
                         silent_after_s=0.2)

    async def read() -> float:
        loop = asyncio.get_running_loop()

        def busy() -> None:  # other work keeps the loop 0.1 s behind, again and again
            time.sleep(0.1)
            loop.call_soon(busy)

        loop.call_soon(busy)
        call = _LateCall(loop, 60.0)  # never answers in this test's time
        started = time.monotonic()
        try:
            await sub._read(call)
        except gnmi_client._SilentError:
            return time.monotonic() - started
        finally:
            call.timer.cancel()
        return -1.0

    took = asyncio.run(read())
    assert 0.2 <= took <= 1.0, took  # three times the silence time at most, and a spell


class _Dialled:
    """A subscriber's stand-in: when the pool started it, and how often."""

    def __init__(self, name: str, started: list[tuple[str, float]]) -> None:
        self.where, self._started = name, started
        self._stopping: asyncio.Event | None = None

    async def run(self) -> None:
        self._started.append((self.where, time.monotonic()))
        self._stopping = asyncio.Event()
        await self._stopping.wait()

    def _stop_here(self) -> None:
        if self._stopping is not None:
            self._stopping.set()


def test_a_pool_dials_its_targets_a_batch_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    # a thousand switches' handshakes and first snapshots must not land in the same instant;
    # one added while the pool dials is started once, not twice
    monkeypatch.setattr(gnmi_client, "DIAL_BATCH", 3)
    monkeypatch.setattr(gnmi_client, "DIAL_GAP_S", 0.3)
    started: list[tuple[str, float]] = []
    subs: list[Any] = [_Dialled(f"t{i}", started) for i in range(7)]
    pool = SubscriberPool(subs)
    begun = time.monotonic()
    pool.start()
    try:
        pool.add(cast(Any, _Dialled("late", started)))
        deadline = time.monotonic() + 10
        while len(started) < 8 and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(0.5)  # past every batch: nothing starts twice
        at = {name: when - begun for name, when in started}
    finally:
        pool.stop()
    assert sorted(name for name, _ in started) == sorted([*at]) and len(started) == 8
    first, second, third = ([at[f"t{i}"] for i in batch] for batch in ((0, 1, 2), (3, 4, 5), (6,)))
    assert max(first) < min(second) - 0.2 and max(second) < min(third) - 0.2
