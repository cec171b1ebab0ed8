"""flatfab's subscriber against targets that answer as real switches do (the target's
`shapes` test option, and hand-made notifications for what the target never sends): JSON
IETF subtrees with module-qualified members and keyed lists, prefixes with origin and
target, target-defined aliases, deletes, sync responses, bundles, leaf-lists; and mutual TLS
from the inventory to the subscriber."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from pygnmi.spec.v080 import gnmi_pb2

from flatfab.errors import InputError
from flatfab.lab import gnmi as lab_gnmi
from flatfab.lab.topology import LabNode
from flatfab.telemetry import gnmi_target, paths
from flatfab.telemetry.gnmi_client import GnmiSubscriber
from flatfab.telemetry.gnmi_encode import Shapes
from flatfab.telemetry.gnmi_target import GnmiTarget, target_from_config
from flatfab.telemetry.samples import Gone, Metric, Sample
from flatfab.telemetry.targets import gnmi_targets
from flatfab.workflows.devices import inventory as files
from tests.support.telemetry_streams import lab_plan
from tests.telemetry.gnmi_support import (
    PASS_ENV,
    PRIORITY,
    QUEUE,
    USER_ENV,
    Pki,
    Source,
    Watcher,
    gnmi_inventory,
    start_target,
)

pytestmark = pytest.mark.usefixtures("subscriber_login")
PORTS = ("swp1", "swp2")
# every (port, metric, key) the lab's leaves carry
EVERY = {(p, m, QUEUE) for p in PORTS
         for m in (Metric.QUEUE_TX, Metric.QUEUE_DROPS, Metric.QUEUE_ECN)} | {
    (p, m, PRIORITY) for p in PORTS for m in (Metric.PFC_RX, Metric.PFC_TX, Metric.WATCHDOG)} | {
    (p, Metric.OPER_UP, None) for p in PORTS}


@pytest.fixture
def serve(pki: Pki) -> Iterator[Callable[..., GnmiTarget]]:
    started: list[GnmiTarget] = []

    def start(source: Source, **kw: Any) -> GnmiTarget:
        target = start_target(pki, source, **kw)
        started.append(target)
        return target

    yield start
    for target in started:
        target.stop()


TARGETED = paths.PathTable("flatfab, under a target name", paths.LEAVES,
                           paths.COUNTER_SUBSCRIPTIONS, paths.STATE_SUBSCRIPTIONS,
                           target="sw1")


@pytest.mark.parametrize("encoding", ["JSON_IETF", "JSON"])
def test_json_subtrees_with_module_members_under_prefixes_give_every_sample(
        pki: Pki, serve: Callable[..., GnmiTarget], encoding: str) -> None:
    # the target answers `/qos/interfaces` as one object of keyed lists, the prefix carrying
    # the origin and the target the subscription named
    target = serve(Source(), shapes=Shapes(subtree_depth=2, prefixed=True))
    with Watcher(target.port, pki.ca_file, encoding=encoding, table=TARGETED) as w:

        def tx() -> list[int]:
            return [s.value for s in w.samples
                    if (s.port, s.metric) == ("swp1", Metric.QUEUE_TX)]

        assert w.wait(lambda: w.seen() == EVERY), sorted(EVERY - w.seen())
        assert w.wait(lambda: w.sub.synced)
        assert w.wait(lambda: len(tx()) >= 3)  # samples after the first data too
    assert w.sub.unknown_paths == 0
    assert tx() == sorted(tx())  # JSON_IETF's string counters read as numbers


def test_target_defined_aliases_are_followed(pki: Pki,
                                             serve: Callable[..., GnmiTarget]) -> None:
    target = serve(Source(), shapes=Shapes(aliases=True))
    with Watcher(target.port, pki.ca_file, use_aliases=True) as w:
        assert w.wait(lambda: w.seen() == EVERY), sorted(EVERY - w.seen())
        before = len(w.samples)
        assert w.wait(lambda: len(w.samples) > before + 20)  # later samples: by alias only
    assert w.sub.unknown_paths == 0
    assert w.sub._aliases._paths  # announced, then used


def test_a_target_aliases_nothing_unless_asked(pki: Pki,
                                               serve: Callable[..., GnmiTarget]) -> None:
    target = serve(Source(), shapes=Shapes(aliases=True))
    with Watcher(target.port, pki.ca_file) as w:  # use_aliases not set
        assert w.wait(lambda: w.seen() == EVERY)
    assert not w.sub._aliases._paths


def test_deletes_end_the_series_they_name(pki: Pki, serve: Callable[..., GnmiTarget]) -> None:
    source = Source()
    target = serve(source)
    with Watcher(target.port, pki.ca_file) as w:
        assert w.wait(lambda: w.seen() == EVERY)
        for path in [p for p in source.leaves if "swp2" in p]:
            source.drop(path)
        assert w.wait(lambda: len(w.gone) == 7)
    assert {(g.port, g.metric, g.key) for g in w.gone} == {e for e in EVERY if e[0] == "swp2"}
    assert all(g.device == "sw1" and g.time > 0 for g in w.gone)


def test_leaf_lists_are_read_and_never_taken_for_a_counter(
        pki: Pki, serve: Callable[..., GnmiTarget]) -> None:
    source = Source()
    cnp = paths.leaf_path(Metric.NIC_CNP_SENT, "swp1")
    source.set(cnp, (3, 4))  # a leaf-list where a counter was expected
    source.set("/flatfab-nic/interfaces/interface[name=swp1]/state/priorities", (3,))
    target = serve(source, shapes=Shapes(subtree_depth=3))
    for encoding in ("PROTO", "JSON_IETF"):
        with Watcher(target.port, pki.ca_file, encoding=encoding) as w:
            assert w.wait(lambda w=w: w.seen() == EVERY)
            assert w.wait(lambda w=w: w.sub.unknown_paths > 0)
        assert not any(s.metric is Metric.NIC_CNP_SENT for s in w.samples)


@pytest.mark.parametrize(("shapes", "line"), [
    ({"subtree": 2}, "shapes.subtree: unknown key"),
    ({"subtree_depth": -1}, "shapes.subtree_depth: must be an integer >= 0"),
    ({"aliases": "yes"}, "shapes.aliases: must be true or false"),
])
def test_a_bad_shapes_option_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                         shapes: dict[str, Any], line: str) -> None:
    config = tmp_path / "sw1.yaml"
    config.write_text(yaml.safe_dump({"insecure": True, "port": 0, "shapes": shapes,
                                      "source": "tests.doubles.gnmi:fake_source"}))
    assert gnmi_target.main(["--config", str(config)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"gnmi_target: {line}") and err.count("\n") == 1


# --- shapes the lab's target never sends: hand-made notifications ------------------------

def _decoding() -> tuple[GnmiSubscriber, list[Sample], list[Gone]]:
    got: list[Sample] = []
    gone: list[Gone] = []
    sub = GnmiSubscriber("sw1", "127.0.0.1", 1, ca_file=None, insecure=True,
                         on_sample=got.append, on_state=lambda *_: None,
                         on_deletes=gone.extend)
    return sub, got, gone


def _path(text: str) -> Any:
    return paths.to_proto(text)


def test_module_qualified_path_elements_and_enum_values_decode() -> None:
    sub, got, _ = _decoding()
    sub._notification(gnmi_pb2.Notification(
        timestamp=5_000_000_000,
        prefix=gnmi_pb2.Path(origin="openconfig", target="sw1",
                             elem=[gnmi_pb2.PathElem(name="openconfig-interfaces:interfaces")]),
        update=[gnmi_pb2.Update(path=_path("/interface[name=swp1]/state/oper-status"),
                                val=gnmi_pb2.TypedValue(
                                    json_ietf_val=b'"openconfig-interfaces:UP"'))]))
    assert got == [Sample("sw1", "swp1", Metric.OPER_UP, None, 1, 5.0)]


def test_a_list_sent_at_its_own_path_is_read_entry_by_entry() -> None:
    sub, got, _ = _decoding()
    entries = [{"name": "swp1", "state": {"oper-status": "DOWN"}},
               {"openconfig-interfaces:name": "swp2", "state": {"oper-status": "UP"}},
               {"state": {"oper-status": "UP"}}]  # no key: unread, counted
    sub._notification(gnmi_pb2.Notification(timestamp=5_000_000_000, update=[
        gnmi_pb2.Update(path=_path("/interfaces/interface"),
                        val=gnmi_pb2.TypedValue(json_ietf_val=json.dumps(entries).encode()))]))
    assert sorted((s.port, s.value) for s in got) == [("swp1", 0), ("swp2", 1)]


def test_an_alias_never_announced_or_withdrawn_is_unread() -> None:
    sub, got, _ = _decoding()
    tx = gnmi_pb2.Update(path=_path("/output/queues/queue[name=3]/state/transmit-pkts"),
                         val=gnmi_pb2.TypedValue(uint_val=9))
    by_alias = gnmi_pb2.Notification(timestamp=5_000_000_000, update=[tx], prefix=gnmi_pb2.Path(
        elem=[gnmi_pb2.PathElem(name="#7")]))
    sub._notification(by_alias)
    assert got == [] and sub.unknown_paths == 1
    sub._notification(gnmi_pb2.Notification(timestamp=1, alias="#7", prefix=_path(
        "/qos/interfaces/interface[interface-id=swp1]")))
    sub._notification(by_alias)
    assert got == [Sample("sw1", "swp1", Metric.QUEUE_TX, 3, 9, 5.0)]
    sub._notification(gnmi_pb2.Notification(timestamp=1, alias="#7"))  # withdrawn
    sub._notification(by_alias)
    assert len(got) == 1 and sub.unknown_paths == 2


def test_a_deleted_subtree_ends_every_series_below_it() -> None:
    sub, got, gone = _decoding()
    sub._notification(gnmi_pb2.Notification(
        timestamp=5_000_000_000, prefix=gnmi_pb2.Path(target="sw1"),
        delete=[_path("/qos/interfaces/interface[interface-id=swp1]"),
                _path("/flatfab-qos/interfaces/interface[name=swp2]/pfc/priorities"
                      "/priority[id=3]/state/rx-pause-frames"),
                _path("/interfaces/interface[name=swp9]/ethernet/state/counters")]))  # no metric
    assert got == []
    assert [(g.metric, g.port, g.key) for g in gone] == [
        (Metric.QUEUE_DROPS, "swp1", None), (Metric.QUEUE_ECN, "swp1", None),
        (Metric.QUEUE_TX, "swp1", None), (Metric.PFC_RX, "swp2", 3)]  # None: every queue
    assert {g.time for g in gone} == {5.0}
    assert sub.deleted == 4


def test_a_bundle_of_mixed_values_gives_what_it_can_and_counts_the_rest() -> None:
    sub, got, _ = _decoding()
    tx = paths.leaf_path(Metric.QUEUE_TX, "swp1", QUEUE)
    sub._notification(gnmi_pb2.Notification(timestamp=5_000_000_000, update=[
        gnmi_pb2.Update(path=_path(tx), val=gnmi_pb2.TypedValue(json_ietf_val=b'"77"')),
        gnmi_pb2.Update(path=_path(paths.leaf_path(Metric.QUEUE_DROPS, "swp1", QUEUE)),
                        val=gnmi_pb2.TypedValue(leaflist_val=gnmi_pb2.ScalarArray(
                            element=[gnmi_pb2.TypedValue(uint_val=1)]))),
        gnmi_pb2.Update(path=_path(paths.leaf_path(Metric.OPER_UP, "swp1")),
                        val=gnmi_pb2.TypedValue(string_val="SOMETHING")),
    ]))
    assert got == [Sample("sw1", "swp1", Metric.QUEUE_TX, QUEUE, 77, 5.0)]
    assert sub.unknown_paths == 2  # the leaf-list and the oper-status that is none


# --- mutual TLS: the subscriber, the inventory and the lab ---------------------------------

def test_the_subscriber_presents_its_certificate(pki: Pki, serve: Callable[..., GnmiTarget],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    target = serve(Source(), mutual=True)
    monkeypatch.setenv(USER_ENV, "")
    monkeypatch.setenv(PASS_ENV, "")  # the certificate authenticates by itself
    with Watcher(target.port, pki.ca_file, cert_file=pki.file("client.crt"),
                 key_file=pki.file("client.key")) as w:
        assert w.wait(lambda: w.seen() == EVERY)
    assert [s for s, _ in w.states] == ["connected"]
    for cert, why in ((None, "it may require a client certificate (cert_file, key_file)"),
                      ("stranger", "it may not trust the client certificate "
                                   f"{pki.file('stranger.crt')}")):
        certs = {} if cert is None else {"cert_file": pki.file(f"{cert}.crt"),
                                         "key_file": pki.file(f"{cert}.key")}
        monkeypatch.setenv(USER_ENV, "flatfab")
        monkeypatch.setenv(PASS_ENV, "s3cret")
        with Watcher(target.port, pki.ca_file, **certs) as w:
            assert w.wait(lambda w=w: bool(w.states))
            time.sleep(0.3)  # retries: still one line
        assert w.samples == []
        assert w.states == [("refused", f"sw1 127.0.0.1:{target.port}: the target closed "
                                        f"the TLS handshake: {why}")]


def test_a_client_certificate_needs_its_key_and_tls(pki: Pki) -> None:
    with pytest.raises(ValueError, match="both cert_file and key_file"):
        GnmiSubscriber("sw1", "127.0.0.1", 1, ca_file=pki.ca_file, on_sample=print,
                       on_state=print, cert_file=pki.file("client.crt"))
    with pytest.raises(ValueError, match="needs TLS"):
        GnmiSubscriber("sw1", "127.0.0.1", 1, ca_file=None, insecure=True, on_sample=print,
                       on_state=print, cert_file=pki.file("client.crt"),
                       key_file=pki.file("client.key"))


def _inventory(where: Path, extras: dict[str, Any]) -> Path:
    return gnmi_inventory(where, {"ca_file": "ca.pem", **extras})


def test_the_inventory_names_a_client_certificate(tmp_path: Path) -> None:
    key = tmp_path / "watch.key"
    key.write_text("key")
    key.chmod(0o600)
    targets = gnmi_targets(files.build(_inventory(
        tmp_path, {"cert_file": "watch.crt", "key_file": str(key)}), lab_plan()), tmp_path)
    assert (targets["leaf1"].cert_file, targets["leaf1"].key_file) == (
        tmp_path / "watch.crt", key)


@pytest.mark.parametrize(("extras", "mode", "reason"), [
    ({"cert_file": "watch.crt"}, 0o600, "extras.key_file: a client certificate needs both"),
    ({"cert_file": "watch.crt", "key_file": "watch.key", "insecure": True}, 0o600,
     "extras.cert_file: a client certificate needs TLS"),
    ({"cert_file": "watch.crt", "key_file": "watch.key"}, 0o644, "others may read it"),
])
def test_a_bad_client_certificate_entry_is_one_line(tmp_path: Path, extras: dict[str, Any],
                                                    mode: int, reason: str) -> None:
    key = tmp_path / "watch.key"
    key.write_text("key")
    key.chmod(mode)
    with pytest.raises(InputError) as caught:
        gnmi_targets(files.build(_inventory(tmp_path, extras), lab_plan()), tmp_path)
    assert str(caught.value).count("\n") == 0 and reason in str(caught.value)


def test_the_lab_offers_mutual_tls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    node = LabNode("leaf1", "leaf", "frr", "127.0.0.1")
    lab_gnmi.prepare(tmp_path, [node], mutual_tls=True)
    entry = lab_gnmi.inventory_entry(tmp_path, mutual_tls=True)
    extras = entry["extras"]
    assert isinstance(extras, dict)
    assert extras["cert_file"] == str(lab_gnmi.client_cert_file(tmp_path))
    assert lab_gnmi.client_key_file(tmp_path).stat().st_mode & 0o077 == 0
    config = yaml.safe_load((lab_gnmi.gnmi_dir(tmp_path) / "leaf1.yaml").read_text())
    assert config["client_ca_file"] == str(lab_gnmi.ca_file(tmp_path))
    # the switch's own config, served from a test source, takes only the lab's client
    creds = lab_gnmi.credentials(tmp_path)
    for name, value in creds.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv(USER_ENV, "flatfab")
    monkeypatch.setenv(PASS_ENV, creds["FLATFAB_GNMI_PASSWORD"])  # the right password
    target = target_from_config({**config, "port": 0,
                                 "source": "tests.doubles.gnmi:fake_source",
                                 "source_args": {"ports": list(PORTS)}})
    target.start()
    try:
        with Watcher(target.port, lab_gnmi.ca_file(tmp_path),
                     cert_file=Path(str(extras["cert_file"])),
                     key_file=Path(str(extras["key_file"])),
                     tls_server_name="leaf1") as w:
            assert w.wait(lambda: (("swp1", Metric.OPER_UP, None) in w.seen()))
        with Watcher(target.port, lab_gnmi.ca_file(tmp_path), tls_server_name="leaf1") as w:
            assert w.wait(lambda: bool(w.states))
        assert w.samples == []  # no certificate: no session, even with the right password
    finally:
        target.stop()
    assert lab_gnmi.inventory_entry(tmp_path)["extras"] == {  # the default: TLS and password
        "ca_file": str(lab_gnmi.ca_file(tmp_path)), "env_file": str(lab_gnmi.env_file(tmp_path))}
