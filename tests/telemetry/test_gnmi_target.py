"""The gNMI target on 127.0.0.1, spoken to by a plain gRPC client (not flatfab's own)."""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from pygnmi.spec.v080 import gnmi_pb2, gnmi_pb2_grpc

from flatfab.telemetry import paths
from flatfab.telemetry.gnmi_target import Credentials, GnmiTarget
from flatfab.telemetry.samples import Metric
from tests.doubles.gnmi import PFC_PRIORITY, QUEUE, FakeCounters, LabPki

GOOD = (("username", "flatfab"), ("password", "s3cret"))
BAD = (("username", "flatfab"), ("password", "guess"))


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> LabPki:
    return LabPki(tmp_path_factory.mktemp("pki"))


@pytest.fixture
def counters() -> FakeCounters:
    return FakeCounters()


@pytest.fixture
def target(pki: LabPki, counters: FakeCounters) -> Iterator[GnmiTarget]:
    t = GnmiTarget("127.0.0.1", 0, counters, Credentials("flatfab", "s3cret"),
                   pki.cert, pki.key, name="sw1", poll_s=0.02)
    t.start()
    yield t
    t.stop()


def _stub(pki: LabPki, target: GnmiTarget) -> Any:
    creds = grpc.ssl_channel_credentials(root_certificates=pki.ca_file.read_bytes())
    return gnmi_pb2_grpc.gNMIStub(grpc.secure_channel(f"127.0.0.1:{target.port}", creds))


def _request(path: str, mode: int, interval_s: float = 0.0,
             list_mode: int = gnmi_pb2.SubscriptionList.STREAM) -> Any:
    sub = gnmi_pb2.Subscription(path=paths.to_proto(path), mode=mode,
                                sample_interval=int(interval_s * 1e9))
    # PROTO: scalar values, as flatfab's subscriber asks (unset is JSON, gNMI 3.2;
    # tests/telemetry/test_gnmi_spec.py tests every encoding)
    return gnmi_pb2.SubscribeRequest(subscribe=gnmi_pb2.SubscriptionList(
        subscription=[sub], mode=list_mode, encoding=gnmi_pb2.Encoding.PROTO))


def _collect(stub: Any, request: Any, seconds: float, md: Any = GOOD,
             until: int | None = None) -> list[Any]:
    """Every response that arrives within `seconds` (the deadline ends the stream), or the
    first `until` of them (the stream is then cancelled)."""
    out: list[Any] = []
    call = stub.Subscribe(iter([request]), metadata=md, timeout=seconds)
    try:
        for resp in call:
            out.append(resp)
            if until is not None and len(out) >= until:
                call.cancel()
                break
    except grpc.RpcError as exc:
        if exc.code() != grpc.StatusCode.DEADLINE_EXCEEDED:
            raise
    return out


def _leaves(resp: Any) -> dict[tuple[Metric, str, int | None], Any]:
    out = {}
    for u in resp.update.update:
        hit = paths.metric_of(paths.render(paths.from_proto(u.path)))
        assert hit is not None, u.path
        metric, port, key = hit
        out[(metric, port, key)] = u.val
    return out


def test_capabilities_name_the_models(pki: LabPki, target: GnmiTarget) -> None:
    caps = _stub(pki, target).Capabilities(gnmi_pb2.CapabilityRequest(), metadata=GOOD)
    assert caps.gNMI_version == "0.8.0"
    assert {"openconfig-interfaces", "openconfig-qos", "flatfab-qos"} <= {
        m.name for m in caps.supported_models}


@pytest.mark.parametrize("md", [BAD, (), (("username", "root"), ("password", "s3cret"))])
def test_bad_credentials_are_unauthenticated(pki: LabPki, target: GnmiTarget, md: Any) -> None:
    stub = _stub(pki, target)
    with pytest.raises(grpc.RpcError) as caps:
        stub.Capabilities(gnmi_pb2.CapabilityRequest(), metadata=md)
    assert caps.value.code() == grpc.StatusCode.UNAUTHENTICATED
    assert caps.value.details() == "bad username or password"
    with pytest.raises(grpc.RpcError) as sub:
        _collect(stub, _request("/qos", gnmi_pb2.SubscriptionMode.SAMPLE, 0.1), 2.0, md)
    assert sub.value.code() == grpc.StatusCode.UNAUTHENTICATED


def test_sample_sends_the_full_set_then_sync_then_every_interval(
    pki: LabPki, target: GnmiTarget
) -> None:
    req = _request("/qos/interfaces/interface/output/queues/queue/state",
                   gnmi_pb2.SubscriptionMode.SAMPLE, 0.1)
    # the full set, the sync, then six samples: waited for, not counted within a time (the
    # offline session shares a busy machine)
    resps = _collect(_stub(pki, target), req, 20, until=8)
    assert resps[1].sync_response and not resps[0].sync_response
    first = _leaves(resps[0])
    assert set(first) == {(m, p, QUEUE) for p in ("swp1", "swp2")
                          for m in (Metric.QUEUE_TX, Metric.QUEUE_DROPS, Metric.QUEUE_ECN)}
    assert all(v.WhichOneof("value") == "uint_val" for v in first.values())
    later = [r for r in resps[2:] if r.HasField("update")]
    assert len(later) == 6, resps
    stamps = [r.update.timestamp / 1e9 for r in later]
    gaps = sorted(b - a for a, b in itertools.pairwise(stamps))
    # never faster than the interval; about the interval (loose: a busy machine starves the
    # target's thread now and then)
    assert gaps[0] > 0.05 and 0.08 < gaps[len(gaps) // 2] < 0.3, gaps
    assert all(set(_leaves(r)) == set(first) for r in later)  # a sample is the whole set
    tx = [_leaves(r)[(Metric.QUEUE_TX, "swp1", QUEUE)].uint_val for r in later]
    assert tx == sorted(tx) and tx[-1] > tx[0]


def test_pfc_comes_on_the_flatfab_path_per_priority(pki: LabPki, target: GnmiTarget) -> None:
    req = _request("/flatfab-qos/interfaces/interface[name=swp2]/pfc",
                   gnmi_pb2.SubscriptionMode.SAMPLE, 0.1, gnmi_pb2.SubscriptionList.ONCE)
    resps = _collect(_stub(pki, target), req, 2.0)
    assert [r.sync_response for r in resps] == [False, True]  # ONCE: set, sync, end
    assert set(_leaves(resps[0])) == {(Metric.PFC_RX, "swp2", PFC_PRIORITY),
                                      (Metric.PFC_TX, "swp2", PFC_PRIORITY),
                                      (Metric.WATCHDOG, "swp2", PFC_PRIORITY)}


def test_on_change_sends_only_the_flip(
    pki: LabPki, target: GnmiTarget, counters: FakeCounters
) -> None:
    req = _request("/interfaces/interface/state/oper-status",
                   gnmi_pb2.SubscriptionMode.ON_CHANGE)
    threading.Timer(0.3, counters.set_oper, ("swp1", False)).start()
    resps = _collect(_stub(pki, target), req, 0.8)
    initial = _leaves(resps[0])
    assert {k: v.string_val for k, v in initial.items()} == {
        (Metric.OPER_UP, "swp1", None): "UP", (Metric.OPER_UP, "swp2", None): "UP"}
    assert resps[1].sync_response
    changes = [_leaves(r) for r in resps[2:]]
    assert [{k: v.string_val for k, v in c.items()} for c in changes] == [
        {(Metric.OPER_UP, "swp1", None): "DOWN"}]


def test_poll_mode_answers_the_subscription_once_then_ends_with_the_client(
    pki: LabPki, target: GnmiTarget
) -> None:
    # POLL is served (tests/telemetry/test_gnmi_spec.py polls it): the first answer is the
    # data and a sync; a client that half-closes after its request gets no more
    req = _request(paths.leaf_path(Metric.QUEUE_TX, "swp1", QUEUE),
                   gnmi_pb2.SubscriptionMode.SAMPLE, 0.1, gnmi_pb2.SubscriptionList.POLL)
    resps = _collect(_stub(pki, target), req, 2.0)
    assert [r.sync_response for r in resps] == [False, True]
    assert set(_leaves(resps[0])) == {(Metric.QUEUE_TX, "swp1", QUEUE)}


def test_a_sample_only_stream_reads_the_source_only_when_due(
    pki: LabPki, target: GnmiTarget, counters: FakeCounters
) -> None:
    req = _request("/qos", gnmi_pb2.SubscriptionMode.SAMPLE, 0.2)
    start = time.monotonic()
    _collect(_stub(pki, target), req, 0.9)
    elapsed = time.monotonic() - start
    assert counters.reads <= elapsed / 0.2 + 2  # not every poll tick (0.02 s)


def test_tls_is_required_unless_asked_off(counters: FakeCounters, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="tls_cert"):
        GnmiTarget("127.0.0.1", 0, counters, None, None, None)


def test_credentials_never_print_the_password() -> None:
    assert "s3cret" not in repr(Credentials("flatfab", "s3cret"))


def test_a_read_parses_each_path_once_and_gives_the_same_leaves() -> None:
    leaves = [(paths.leaf_path(Metric.QUEUE_TX, "swp1", 0), 5),
              (paths.leaf_path(Metric.OPER_UP, "swp1"), "UP")]
    t = GnmiTarget("127.0.0.1", 0, lambda: leaves, None, None, None, insecure=True)
    first, second = t.read(), t.read()
    assert first == second == {paths.parse(p): v for p, v in leaves}
    # the second read's keys are the first's objects: nothing parsed again
    assert all(a is b for a, b in zip(first, second, strict=True))
