"""The lab's gNMI target against the gNMI specification, RPC by RPC, spoken to by a plain
gRPC client (openconfig/reference rpc/gnmi/gnmi-specification.md; the section each test
follows is named in it)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from pygnmi.spec.v080 import gnmi_pb2

from flatfab.telemetry import paths
from flatfab.telemetry.gnmi_target import GnmiTarget
from flatfab.telemetry.samples import Metric
from tests.telemetry.gnmi_support import (
    GOOD,
    PRIORITY,
    QUEUE,
    Call,
    Pki,
    Source,
    request,
    start_target,
    stub,
    sub,
    updates,
)

SAMPLE = gnmi_pb2.SubscriptionMode.SAMPLE
ON_CHANGE = gnmi_pb2.SubscriptionMode.ON_CHANGE
TARGET_DEFINED = gnmi_pb2.SubscriptionMode.TARGET_DEFINED
ONCE, POLL = gnmi_pb2.SubscriptionList.ONCE, gnmi_pb2.SubscriptionList.POLL
OPER = paths.leaf_path(Metric.OPER_UP, "swp1")
TX = paths.leaf_path(Metric.QUEUE_TX, "swp1", QUEUE)
PFC_RX = paths.leaf_path(Metric.PFC_RX, "swp1", PRIORITY)


@pytest.fixture
def target(pki: Pki, source: Source) -> Iterator[GnmiTarget]:
    t = start_target(pki, source, min_interval_s=0.05)
    yield t
    t.stop()


@pytest.fixture
def gnmi(pki: Pki, target: GnmiTarget) -> Any:
    return stub(pki, target)


def _get(gnmi: Any, *path_texts: str, origin: str = "", **kw: Any) -> Any:
    return gnmi.Get(gnmi_pb2.GetRequest(path=[paths.to_proto(p, origin) for p in path_texts],
                                        **kw), metadata=GOOD, timeout=5)


def _got(resp: Any) -> dict[str, Any]:
    """A GetResponse's leaves, as `updates` gives a stream's."""
    return updates([gnmi_pb2.SubscribeResponse(update=n) for n in resp.notification])


def _refused(call: Any) -> tuple[Any, str]:
    with pytest.raises(grpc.RpcError) as exc:
        call()
    return exc.value.code(), exc.value.details()


# --- Capabilities (3.2) -------------------------------------------------------------------

def test_capabilities_advertise_the_encodings_served(gnmi: Any) -> None:
    caps = gnmi.Capabilities(gnmi_pb2.CapabilityRequest(), metadata=GOOD)
    assert list(caps.supported_encodings) == [gnmi_pb2.JSON, gnmi_pb2.JSON_IETF,
                                              gnmi_pb2.PROTO]
    assert {m.name for m in caps.supported_models} == {
        "openconfig-interfaces", "openconfig-qos", "openconfig-platform",
        "openconfig-platform-transceiver", "flatfab-qos", "flatfab-nic", "flatfab-phy"}


# --- Get (3.3) ------------------------------------------------------------------------------

def test_get_answers_one_notification_per_path_in_each_encoding(gnmi: Any) -> None:
    asked = [paths.to_proto(OPER), paths.to_proto(TX)]
    got = {}
    for encoding in (gnmi_pb2.JSON, gnmi_pb2.JSON_IETF, gnmi_pb2.PROTO):
        resp = gnmi.Get(gnmi_pb2.GetRequest(path=asked, encoding=encoding), metadata=GOOD)
        assert len(resp.notification) == 2  # 3.3.2: never collapsed across paths
        assert all(n.timestamp > 0 for n in resp.notification)
        got[encoding] = _got(resp)
    assert got[gnmi_pb2.JSON][OPER].json_val == b'"UP"'
    assert json.loads(got[gnmi_pb2.JSON][TX].json_val) > 100  # a JSON number
    assert got[gnmi_pb2.JSON_IETF][OPER].json_ietf_val == b'"UP"'
    # RFC 7951 6.1: a 64-bit counter is a JSON string in JSON_IETF
    assert isinstance(json.loads(got[gnmi_pb2.JSON_IETF][TX].json_ietf_val), str)
    assert got[gnmi_pb2.PROTO][OPER].string_val == "UP"
    assert got[gnmi_pb2.PROTO][TX].WhichOneof("value") == "uint_val"


def test_get_without_encoding_is_json(gnmi: Any) -> None:
    resp = _get(gnmi, OPER)
    assert resp.notification[0].update[0].val.WhichOneof("value") == "json_val"


def test_get_of_a_subtree_with_wildcards_answers_every_leaf_below(gnmi: Any) -> None:
    got = _got(_get(gnmi, "/qos/interfaces/interface[interface-id=*]/output/queues"))
    assert set(got) == {paths.leaf_path(m, p, QUEUE) for p in ("swp1", "swp2")
                        for m in (Metric.QUEUE_TX, Metric.QUEUE_DROPS, Metric.QUEUE_ECN)}


@pytest.mark.parametrize("encoding", [gnmi_pb2.BYTES, gnmi_pb2.ASCII])
def test_get_in_an_encoding_not_served_is_unimplemented(gnmi: Any, encoding: int) -> None:
    code, details = _refused(lambda: _get(gnmi, OPER, encoding=encoding))
    assert code == grpc.StatusCode.UNIMPLEMENTED
    assert gnmi_pb2.Encoding.Name(encoding) in details and "not supported" in details


def test_get_of_config_is_unimplemented(gnmi: Any) -> None:
    code, details = _refused(lambda: _get(gnmi, OPER, type=gnmi_pb2.GetRequest.CONFIG))
    assert code == grpc.StatusCode.UNIMPLEMENTED and "state data only" in details
    assert _get(gnmi, OPER, type=gnmi_pb2.GetRequest.STATE).notification


def test_get_of_a_path_that_does_not_exist_is_not_found(gnmi: Any) -> None:
    # 3.3.4: syntactically right, implemented, but no such port now
    code, details = _refused(lambda: _get(gnmi, paths.leaf_path(Metric.OPER_UP, "swp9")))
    assert code == grpc.StatusCode.NOT_FOUND and "swp9" in details


def test_get_echoes_the_target_and_the_origin_asked(gnmi: Any) -> None:
    resp = gnmi.Get(gnmi_pb2.GetRequest(
        prefix=gnmi_pb2.Path(target="leaf1", origin="openconfig"),
        path=[paths.to_proto(OPER)]), metadata=GOOD)
    [note] = resp.notification
    assert note.prefix.target == "leaf1"  # 2.2.2.1
    assert note.update[0].path.origin == "openconfig"
    plain = _get(gnmi, OPER).notification[0]
    assert not plain.HasField("prefix") and plain.update[0].path.origin == ""


# --- paths and origins (2.2.2, path conventions, mixed-schema, 3.3.4 / 3.5.2.4) ------------

@pytest.mark.parametrize(("path", "origin", "why"), [
    ("/interfaces/interface/state/counters/in-octets", "", "not implemented"),
    ("/system/state/hostname", "", "not implemented"),
    ("/interfaces/interface[ifindex=3]/state", "", "not implemented"),  # no such key
    ("/flatfab-qos/interfaces", "openconfig", "not implemented"),  # not OpenConfig
    ("/interfaces", "somebody-native", "origin 'somebody-native' is not served"),
])
def test_paths_and_origins_not_served_are_unimplemented(
        gnmi: Any, path: str, origin: str, why: str) -> None:
    code, details = _refused(lambda: _get(gnmi, path, origin=origin))
    assert code == grpc.StatusCode.UNIMPLEMENTED and why in details
    call = Call(gnmi, request(sub(path, ON_CHANGE, origin=origin)))
    assert call.status() == grpc.StatusCode.UNIMPLEMENTED
    assert call.error is not None and why in call.error.details()


def _bad_paths() -> list[tuple[Any, Any, str]]:
    empty = paths.to_proto("/interfaces/interface")
    empty.elem.add(name="")
    dots = gnmi_pb2.Path(elem=[gnmi_pb2.PathElem(name="interfaces"),
                               gnmi_pb2.PathElem(name="...", key={"name": "swp1"})])
    keyless = gnmi_pb2.Path(elem=[gnmi_pb2.PathElem(name="interfaces"),
                                  gnmi_pb2.PathElem(name="interface", key={"": "swp1"})])
    return [
        (None, empty, "has no name"),
        (None, dots, "takes no keys"),
        (None, keyless, "a key with no name"),
        (None, gnmi_pb2.Path(target="leaf1", elem=[gnmi_pb2.PathElem(name="interfaces")]),
         "belongs only in the prefix"),
        (gnmi_pb2.Path(origin="openconfig"), paths.to_proto("/interfaces", "openconfig"),
         "both the prefix and the path"),
        (None, gnmi_pb2.Path(element=["interfaces", "interface"]), "deprecated"),
    ]


@pytest.mark.parametrize(("prefix", "path", "why"), _bad_paths())
def test_malformed_paths_are_invalid_arguments(gnmi: Any, prefix: Any, path: Any,
                                               why: str) -> None:
    code, details = _refused(lambda: gnmi.Get(gnmi_pb2.GetRequest(prefix=prefix, path=[path]),
                                              metadata=GOOD))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and why in details
    call = Call(gnmi, gnmi_pb2.SubscribeRequest(subscribe=gnmi_pb2.SubscriptionList(
        prefix=prefix, subscription=[gnmi_pb2.Subscription(path=path, mode=ON_CHANGE)])))
    assert call.status() == grpc.StatusCode.INVALID_ARGUMENT


def test_an_unset_origin_is_openconfig_and_flatfab_models_carry_their_own(gnmi: Any) -> None:
    root = _got(gnmi.Get(gnmi_pb2.GetRequest(path=[gnmi_pb2.Path()]), metadata=GOOD))
    # the root without an origin is OpenConfig's tree only
    assert root and all(p.startswith(("/interfaces/", "/qos/")) for p in root)
    flat = _got(gnmi.Get(gnmi_pb2.GetRequest(path=[gnmi_pb2.Path(origin="flatfab")]),
                         metadata=GOOD))
    assert flat and all(p.startswith("flatfab:/flatfab-qos/") for p in flat)
    # flatfab's own subscriber names no origin for its paths: answered, labelled flatfab
    named = _got(_get(gnmi, PFC_RX))
    assert list(named) == [f"flatfab:{PFC_RX}"]


@pytest.mark.parametrize(("path", "leaves"), [
    ("/interfaces/.../oper-status", {OPER, paths.leaf_path(Metric.OPER_UP, "swp2")}),
    ("/.../queue[name=3]/state/transmit-pkts", {TX, paths.leaf_path(Metric.QUEUE_TX, "swp2",
                                                                       QUEUE)}),
    ("/qos/interfaces/interface[interface-id=swp1]/.../ecn-marked-pkts",
     {paths.leaf_path(Metric.QUEUE_ECN, "swp1", QUEUE)}),
    ("/qos/*/interface[interface-id=swp2]/*/queues/queue/state/dropped-pkts",
     {paths.leaf_path(Metric.QUEUE_DROPS, "swp2", QUEUE)}),
    ("/interfaces/interface[name=swp1]/...", {OPER}),  # `...` spans none too
])
def test_wildcards_select_what_the_path_conventions_say(gnmi: Any, path: str,
                                                        leaves: set[str]) -> None:
    got = _got(_get(gnmi, path))
    assert set(got) == leaves


def test_use_models_restricts_the_data_and_an_unknown_model_is_unimplemented(
        gnmi: Any) -> None:
    oc_intf = gnmi_pb2.ModelData(name="openconfig-interfaces")
    got = _got(gnmi.Get(gnmi_pb2.GetRequest(path=[gnmi_pb2.Path()], use_models=[oc_intf]),
                        metadata=GOOD))
    assert got and all(p.startswith("/interfaces/") for p in got)
    code, details = _refused(lambda: gnmi.Get(gnmi_pb2.GetRequest(
        path=[paths.to_proto("/qos")], use_models=[oc_intf]), metadata=GOOD))
    assert code == grpc.StatusCode.UNIMPLEMENTED and "use_models" in details
    for model in (gnmi_pb2.ModelData(name="openconfig-bgp"),
                  gnmi_pb2.ModelData(name="openconfig-qos", version="0.1.0")):
        code, details = _refused(lambda m=model: gnmi.Get(gnmi_pb2.GetRequest(
            path=[gnmi_pb2.Path()], use_models=[m]), metadata=GOOD))
        assert code == grpc.StatusCode.UNIMPLEMENTED and "is not served" in details
    # flatfab's models are under their own origin (an unset one is OpenConfig's tree)
    call = Call(gnmi, request(sub("/", ON_CHANGE, origin="flatfab"),
                              use_models=[gnmi_pb2.ModelData(name="flatfab-qos")], mode=ONCE))
    got = updates(call.until_sync())
    assert got and all(p.startswith("flatfab:/flatfab-qos/") for p in got)


# --- Subscribe (3.5) ------------------------------------------------------------------------

def test_once_sends_the_data_a_sync_and_closes(gnmi: Any) -> None:
    call = Call(gnmi, request(sub("/interfaces"), mode=ONCE, encoding=gnmi_pb2.JSON_IETF))
    first = call.until_sync()
    assert call.status() == grpc.StatusCode.OK
    got = updates(first)
    assert set(got) == {OPER, paths.leaf_path(Metric.OPER_UP, "swp2")}
    assert all(v.WhichOneof("value") == "json_ietf_val" for v in got.values())


def test_once_updates_only_sends_only_the_sync(gnmi: Any) -> None:
    call = Call(gnmi, request(sub("/interfaces"), mode=ONCE, updates_only=True))
    assert [r.WhichOneof("response") for r in call.until_sync()] == ["sync_response"]
    assert call.status() == grpc.StatusCode.OK


def test_poll_answers_each_poll_then_a_sync(gnmi: Any) -> None:
    call = Call(gnmi, request(sub(TX), mode=POLL))
    initial = updates(call.until_sync())
    assert list(initial) == [TX]
    values = [initial[TX].json_val]
    for _ in range(2):
        call.send(gnmi_pb2.SubscribeRequest(poll=gnmi_pb2.Poll()))
        values.append(updates(call.until_sync())[TX].json_val)
    assert [int(v) for v in values] == sorted(int(v) for v in values)
    assert len({int(v) for v in values}) == 3  # a fresh read per poll
    call.half_close()  # a poller that is done: the RPC ends cleanly
    assert call.status() == grpc.StatusCode.OK


def test_poll_with_updates_only_starts_with_a_bare_sync(gnmi: Any) -> None:
    call = Call(gnmi, request(sub(TX), mode=POLL, updates_only=True))
    assert [r.WhichOneof("response") for r in call.until_sync()] == ["sync_response"]
    call.send(gnmi_pb2.SubscribeRequest(poll=gnmi_pb2.Poll()))
    assert list(updates(call.until_sync())) == [TX]
    call.cancel()


@pytest.mark.parametrize("later", [
    request(sub(OPER, ON_CHANGE)),  # a second subscription list: 3.5.1.1
    gnmi_pb2.SubscribeRequest(aliases=gnmi_pb2.AliasList(alias=[gnmi_pb2.Alias(
        path=paths.to_proto(OPER), alias="#oper")])),  # client aliases: 3.5.1.6
    gnmi_pb2.SubscribeRequest(poll=gnmi_pb2.Poll()),  # a poll on a STREAM
])
def test_a_later_request_a_stream_cannot_take_is_invalid(gnmi: Any, later: Any) -> None:
    call = Call(gnmi, request(sub(TX, SAMPLE, 0.1)))
    call.until_sync()
    call.send(later)
    assert call.status() == grpc.StatusCode.INVALID_ARGUMENT


def test_a_second_subscription_list_on_a_poll_is_invalid(gnmi: Any) -> None:
    call = Call(gnmi, request(sub(TX), mode=POLL))
    call.until_sync()
    call.send(request(sub(OPER)))
    assert call.status() == grpc.StatusCode.INVALID_ARGUMENT
    assert call.error is not None and "second subscription list" in call.error.details()


@pytest.mark.parametrize(("first", "why"), [
    (gnmi_pb2.SubscribeRequest(poll=gnmi_pb2.Poll()), "must carry a subscription list"),
    (gnmi_pb2.SubscribeRequest(subscribe=gnmi_pb2.SubscriptionList()), "is empty"),
    (request(sub(TX, SAMPLE, 0.01)), "below this target's minimum"),
    (request(sub(OPER, ON_CHANGE, heartbeat_interval=1_000_000)), "heartbeat_interval"),
])
def test_requests_the_target_cannot_take_are_invalid_arguments(gnmi: Any, first: Any,
                                                               why: str) -> None:
    call = Call(gnmi, first)
    assert call.status() == grpc.StatusCode.INVALID_ARGUMENT
    assert call.error is not None and why in call.error.details()


@pytest.mark.parametrize(("kw", "why"), [
    ({"encoding": gnmi_pb2.BYTES}, "BYTES is not supported"),
    ({"encoding": gnmi_pb2.ASCII}, "ASCII is not supported"),
    ({"qos": gnmi_pb2.QOSMarking(marking=46)}, "DSCP 0 only"),
])
def test_a_list_the_target_cannot_serve_is_unimplemented(gnmi: Any, kw: dict[str, Any],
                                                         why: str) -> None:
    call = Call(gnmi, request(sub(TX, SAMPLE, 0.1), **kw))
    assert call.status() == grpc.StatusCode.UNIMPLEMENTED
    assert call.error is not None and why in call.error.details()


def test_a_path_that_does_not_exist_yet_keeps_the_stream_open_and_quiet(
        gnmi: Any, source: Source) -> None:
    swp9 = paths.leaf_path(Metric.OPER_UP, "swp9")
    call = Call(gnmi, request(sub(swp9, ON_CHANGE)))
    assert [r.WhichOneof("response") for r in call.until_sync()] == ["sync_response"]
    assert call.gather(0.3) == [] and not call.ended.is_set()  # 3.5.2.4: not closed
    source.set(swp9, "UP")  # it appears: sent
    assert updates([call.next()]) == {swp9: gnmi_pb2.TypedValue(json_val=b'"UP"')}
    call.cancel()


def test_sample_interval_zero_samples_at_the_target_minimum(pki: Pki, source: Source) -> None:
    target = start_target(pki, source, min_interval_s=0.1)
    try:
        call = Call(stub(pki, target), request(sub(TX, SAMPLE, 0.0)))
        call.until_sync()
        samples = [r for r in call.gather(1.05) if r.WhichOneof("response") == "update"]
        call.cancel()
    finally:
        target.stop()
    assert 7 <= len(samples) <= 11, len(samples)  # ~10 at 0.1 s, loose for a busy box


def test_suppress_redundant_sends_only_changes_and_heartbeats_send_all(gnmi: Any) -> None:
    subs = [sub(p, SAMPLE, 0.1, suppress_redundant=True, heartbeat_interval=400_000_000)
            for p in (TX, PFC_RX)]
    call = Call(gnmi, request(*subs))
    assert set(updates(call.until_sync())) == {TX, f"flatfab:{PFC_RX}"}
    later = [set(updates([r])) for r in call.gather(0.95)]
    call.cancel()
    # PFC_RX never changes: only the heartbeats (~every 0.4 s) carry it; TX changes each read
    with_pfc = [u for u in later if f"flatfab:{PFC_RX}" in u]
    assert 1 <= len(with_pfc) <= 3, later
    assert sum(TX in u for u in later) >= 5, later


def test_on_change_heartbeats_resend_what_did_not_change(gnmi: Any) -> None:
    call = Call(gnmi, request(sub(OPER, ON_CHANGE, heartbeat_interval=200_000_000)))
    call.until_sync()
    beats = [r for r in call.gather(0.7) if OPER in updates([r])]
    call.cancel()
    assert 2 <= len(beats) <= 4, len(beats)  # ~every 0.2 s, the value unchanged


def test_updates_only_stream_starts_with_the_sync(gnmi: Any) -> None:
    call = Call(gnmi, request(sub(TX, SAMPLE, 0.1), updates_only=True))
    assert call.next().sync_response  # first message: the sync
    assert list(updates([call.next()])) == [TX]  # then the next sample
    call.cancel()


def test_target_defined_sends_state_on_change_and_counters_sampled(
        gnmi: Any, source: Source) -> None:
    call = Call(gnmi, request(sub("/interfaces/interface[name=swp1]", TARGET_DEFINED),
                              sub(TX, TARGET_DEFINED, 0.1)))
    assert set(updates(call.until_sync())) == {OPER, TX}
    time.sleep(0.25)
    source.set(OPER, "DOWN")
    later = call.gather(0.4)
    call.cancel()
    opers = [updates([r])[OPER].json_val for r in later if OPER in updates([r])]
    assert opers == [b'"DOWN"']  # once, on the change
    assert sum(TX in updates([r]) for r in later) >= 4


def test_a_leaf_that_disappears_is_sent_as_a_delete(gnmi: Any, source: Source) -> None:
    call = Call(gnmi, request(sub("/interfaces", ON_CHANGE)))
    call.until_sync()
    source.drop(OPER)
    resp = call.next()
    call.cancel()
    assert [paths.render(paths.from_proto(d)) for d in resp.update.delete] == [OPER]


def test_a_subscribe_prefix_target_is_echoed_in_every_answer(gnmi: Any) -> None:
    call = Call(gnmi, gnmi_pb2.SubscribeRequest(subscribe=gnmi_pb2.SubscriptionList(
        prefix=gnmi_pb2.Path(target="leaf1"), subscription=[sub(TX, SAMPLE, 0.1)])))
    responses = [*call.until_sync(), call.next()]
    call.cancel()
    notes = [r.update for r in responses if r.WhichOneof("response") == "update"]
    assert len(notes) == 2 and all(n.prefix.target == "leaf1" for n in notes)


# --- mutual TLS (gnmi-authentication.md) --------------------------------------------------

def test_mutual_tls_wants_a_client_certificate_the_ca_signed(pki: Pki, source: Source) -> None:
    target = start_target(pki, source, mutual=True)
    try:
        caps = gnmi_pb2.CapabilityRequest()
        # a certificate the CA signed authenticates, with or without a password
        assert stub(pki, target, "client").Capabilities(caps, timeout=5).supported_models
        assert stub(pki, target, "client").Capabilities(caps, metadata=GOOD, timeout=5)
        bad = (("username", "flatfab"), ("password", "guess"))
        code, _ = _refused(lambda: stub(pki, target, "client").Capabilities(
            caps, metadata=bad, timeout=5))
        assert code == grpc.StatusCode.UNAUTHENTICATED  # a password sent must still be right
        for client in (None, "stranger"):  # none, or one from another CA: no session
            code, _ = _refused(lambda c=client: stub(pki, target, c).Capabilities(
                caps, metadata=GOOD, timeout=5))
            assert code == grpc.StatusCode.UNAVAILABLE
    finally:
        target.stop()


def test_mutual_tls_needs_tls(source: Source, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="mutual TLS"):
        GnmiTarget("127.0.0.1", 0, source, None, None, None, insecure=True, client_ca=b"x")
