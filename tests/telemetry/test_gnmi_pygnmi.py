"""pygnmi, a third-party gNMI client (PyPI `pygnmi`), against the lab's gNMI target on
127.0.0.1: Capabilities, Get in each encoding, Subscribe ONCE, POLL and STREAM, errors as
pygnmi raises them, and mutual TLS with pygnmi's client certificate."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from pygnmi.client import gNMIclient, gNMIException

from flatfab.telemetry import paths
from flatfab.telemetry.gnmi_target import GnmiTarget
from flatfab.telemetry.samples import Metric
from tests.telemetry.gnmi_support import PRIORITY, QUEUE, Pki, Source, start_target

# pygnmi reads a stream in a thread of its own that raises when its channel closes under it
# (a closed subscription's stream goes on until then): its exception, not this test's
pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")

OPER = "interfaces/interface[name=swp1]/state/oper-status"
TX = "qos/interfaces/interface[interface-id=swp1]/output/queues/queue[name=3]/state/" \
     "transmit-pkts"


@pytest.fixture
def client(pki: Pki, target: GnmiTarget) -> Iterator[gNMIclient]:
    # path_cert alone is the CA pygnmi verifies the target with
    with gNMIclient(target=("127.0.0.1", target.port), username="flatfab",
                    password="s3cret", path_cert=str(pki.ca_file), gnmi_timeout=5) as gc:
        yield gc


def _leaves(result: dict[str, Any]) -> dict[str, Any]:
    """path -> value from pygnmi's Get answer (its notifications' updates)."""
    out = {}
    for note in result["notification"]:
        for update in note["update"]:
            out[update["path"]] = update["val"]
    return out


def test_capabilities(client: gNMIclient) -> None:
    caps = client.capabilities()
    assert caps["supported_encodings"] == ["json", "json_ietf", "proto"]
    assert caps["gnmi_version"] == "0.8.0"
    assert {"name": "openconfig-qos", "organization": "OpenConfig working group",
            "version": "2.0.1"} in caps["supported_models"]


@pytest.mark.parametrize(("encoding", "tx_type"), [("json", int), ("json_ietf", str),
                                                   ("proto", int)])
def test_get_in_each_encoding(client: gNMIclient, encoding: str, tx_type: type) -> None:
    result = client.get(path=[OPER, TX], encoding=encoding)
    assert len(result["notification"]) == 2  # one per path asked
    got = _leaves(result)
    assert got[OPER] == "UP"
    # JSON_IETF carries a 64-bit counter as a string (RFC 7951 6.1), JSON and PROTO a number
    assert isinstance(got[TX], tx_type) and int(got[TX]) > 100


def test_get_of_flatfab_models_by_origin(client: gNMIclient) -> None:
    result = client.get(path=["flatfab:/flatfab-qos/interfaces/interface[name=swp2]"],
                        encoding="json")
    got = _leaves(result)
    assert set(got) == {paths.leaf_path(m, "swp2", PRIORITY).lstrip("/")
                        for m in (Metric.PFC_RX, Metric.PFC_TX, Metric.WATCHDOG)}


@pytest.mark.parametrize(("path", "code"), [
    ("interfaces/interface[name=swp9]/state/oper-status", grpc.StatusCode.NOT_FOUND),
    ("interfaces/interface/state/counters/in-octets", grpc.StatusCode.UNIMPLEMENTED),
    ("somebody-native:/interfaces", grpc.StatusCode.UNIMPLEMENTED),
])
def test_get_errors_reach_pygnmi_with_the_specification_codes(
        client: gNMIclient, path: str, code: grpc.StatusCode) -> None:
    with pytest.raises(gNMIException) as exc:
        client.get(path=[path])
    assert exc.value.orig_exc.code() == code


def test_subscribe_once(client: gNMIclient) -> None:
    sub = client.subscribe2(subscribe={"subscription": [{"path": "interfaces"}],
                                       "mode": "once", "encoding": "json_ietf"})
    try:
        got = list(sub)
    finally:
        sub.close()
    assert got[-1] == {"sync_response": True}
    [update] = [g["update"] for g in got if "update" in g]
    assert {u["path"]: u["val"] for u in update["update"]} == {
        OPER: "UP", OPER.replace("swp1", "swp2"): "UP"}
    assert update["timestamp"] > 0


def test_subscribe_poll(client: gNMIclient) -> None:
    sub = client.subscribe2(subscribe={"subscription": [{"path": TX}], "mode": "poll",
                                       "encoding": "json"})
    try:
        values = []
        for _ in range(3):  # each: what the target answered up to its next sync
            got = sub.get_update(timeout=5)
            assert got["sync_response"] is True
            [value] = [u["val"] for u in got["update"]["update"] if u["path"] == TX]
            values.append(value)
    finally:
        sub.close()
    assert values == sorted(values) and len(set(values)) == 3  # a fresh read each time


def test_subscribe_stream_sample_and_on_change(client: gNMIclient, source: Source) -> None:
    sub = client.subscribe2(subscribe={
        "subscription": [{"path": TX, "mode": "sample", "sample_interval": 100_000_000},
                         {"path": OPER, "mode": "on_change"}],
        "mode": "stream", "encoding": "json_ietf"})
    try:
        initial = sub.get_update(timeout=5)  # pygnmi merges what comes before the sync
        assert initial["sync_response"] is True
        assert {u["path"] for u in initial["update"]["update"]} == {TX, OPER}
        source.set("/" + OPER, "DOWN")
        later = [sub.get_update(timeout=5) for _ in range(8)]
    finally:
        sub.close()
    seen = [(u["path"], u["val"]) for msg in later for u in msg["update"]["update"]]
    tx = [int(v) for p, v in seen if p == TX]
    assert len(tx) >= 5 and tx == sorted(tx)
    assert (OPER, "DOWN") in seen


def test_pygnmi_with_a_client_certificate(pki: Pki, source: Source) -> None:
    target = start_target(pki, source, mutual=True, credentials=None)
    try:
        with gNMIclient(target=("127.0.0.1", target.port), path_root=str(pki.ca_file),
                        path_cert=str(pki.file("client.crt")),
                        path_key=str(pki.file("client.key")), gnmi_timeout=5) as gc:
            assert _leaves(gc.get(path=[OPER]))[OPER] == "UP"
        # a certificate from another CA: tests/telemetry/test_gnmi_spec.py (pygnmi retries a
        # failed handshake after changing the process's GRPC_SSL_CIPHER_SUITES: not here)
    finally:
        target.stop()


def test_queue_leaves_are_keyed_as_flatfab_serves_them() -> None:
    # the paths above are flatfab's own (pygnmi's form: no leading slash)
    assert paths.leaf_path(Metric.QUEUE_TX, "swp1", QUEUE) == "/" + TX
    assert paths.leaf_path(Metric.OPER_UP, "swp1") == "/" + OPER
