"""The columnar path of the stream: notifications read with their paths as bytes
(gnmi_lite), readings held by column (layout.Block), counters in per-device arrays
(rates), and drains that list only what the conditions need (conditions.listing). Each
must judge exactly as the sample-by-sample path does."""

from __future__ import annotations

import os
import random
import threading
from array import array
from pathlib import Path

import pytest
from pygnmi.spec.v080 import gnmi_pb2

from flatfab.telemetry import conditions, gnmi_lite, memtrim, paths
from flatfab.telemetry.gnmi_client import GnmiSubscriber
from flatfab.telemetry.health import HealthEngine
from flatfab.telemetry.layout import Block, Layout, Readings
from flatfab.telemetry.rates import Level, Listing, Rates, Window
from flatfab.telemetry.samples import Metric, Sample
from flatfab.telemetry.thresholds import Thresholds
from tests.support.telemetry_streams import Stream, lab_plan


def _blocks(samples: list[Sample], layout: Layout) -> list[Block]:
    """A step's samples as the subscriber hands them over: a block per device and time."""
    out: dict[tuple[str, float], Block] = {}
    for s in samples:
        block = out.get((s.device, s.time))
        if block is None:
            block = out[(s.device, s.time)] = Block(s.device, s.time, layout, [], [])
        block.cols.append(layout.column(s.metric, s.port, s.key))
        block.values.append(s.value)
    return list(out.values())


# ---- the notification as read -------------------------------------------------------------

def _notification() -> gnmi_pb2.Notification:
    leaves = [(paths.leaf_path(Metric.QUEUE_DROPS, "swp1", 3), 7),
              (paths.leaf_path(Metric.PFC_RX, "swp2", 3), 2**63 + 5)]
    return gnmi_pb2.Notification(timestamp=5_000_000_000, update=[
        gnmi_pb2.Update(path=paths.to_proto(p), val=gnmi_pb2.TypedValue(uint_val=v))
        for p, v in leaves] + [gnmi_pb2.Update(
            path=paths.to_proto(paths.leaf_path(Metric.PRE_FEC_BER, "swp1")),
            val=gnmi_pb2.TypedValue(double_val=2.5e-7))])


def test_the_lite_message_reads_the_same_wire_with_each_path_as_its_bytes() -> None:
    full = gnmi_pb2.SubscribeResponse(update=_notification())
    lite = gnmi_lite.SubscribeResponse.FromString(full.SerializeToString())
    assert lite.WhichOneof("response") == "update"
    assert lite.update.timestamp == 5_000_000_000
    for mine, theirs in zip(lite.update.update, full.update.update, strict=True):
        assert mine.path == theirs.path.SerializeToString()
        assert gnmi_pb2.Path.FromString(mine.path) == theirs.path
        assert mine.val == theirs.val
    sync = gnmi_pb2.SubscribeResponse(sync_response=True).SerializeToString()
    assert gnmi_lite.SubscribeResponse.FromString(sync).sync_response is True


def test_a_notification_becomes_one_block_and_the_same_samples() -> None:
    blocks: list[Block] = []
    samples: list[Sample] = []
    by_block = GnmiSubscriber("leaf1", "127.0.0.1", 1, ca_file=None, insecure=True,
                              on_sample=samples.append, on_state=lambda *_: None,
                              on_block=blocks.append)
    by_sample = GnmiSubscriber("leaf1", "127.0.0.1", 1, ca_file=None, insecure=True,
                               on_sample=samples.append, on_state=lambda *_: None)
    by_block._notification(_notification())
    by_sample._notification(_notification())
    assert len(blocks) == 1 and blocks[0].device == "leaf1" and blocks[0].time == 5.0
    # packed: the counters as unsigned 64-bit integers, the gauges as doubles
    assert blocks[0].counters and isinstance(blocks[0].values, array)
    assert isinstance(blocks[0].more_values, array) and blocks[0].more_values.typecode == "d"
    assert list(blocks[0]) == samples == [
        Sample("leaf1", "swp1", Metric.QUEUE_DROPS, 3, 7, 5.0),
        Sample("leaf1", "swp2", Metric.PFC_RX, 3, 2**63 + 5, 5.0),
        Sample("leaf1", "swp1", Metric.PRE_FEC_BER, None, 2.5e-7, 5.0)]


def test_a_gauge_that_is_no_finite_number_is_unknown_and_a_state_stays_an_integer() -> None:
    blocks: list[Block] = []
    sub = GnmiSubscriber("leaf1", "127.0.0.1", 1, ca_file=None, insecure=True,
                         on_sample=lambda _: None, on_state=lambda *_: None,
                         on_block=blocks.append)
    note = _notification()
    note.update[2].val.double_val = float("inf")
    note.update.append(gnmi_pb2.Update(
        path=paths.to_proto(paths.leaf_path(Metric.OPER_UP, "swp1")),
        val=gnmi_pb2.TypedValue(string_val="UP")))
    sub._notification(note)
    assert sub.unknown_paths == 1
    assert [(s.metric, s.value) for s in blocks[0]][2:] == [(Metric.OPER_UP, 1)]
    assert isinstance(list(blocks[0])[2].value, int)


def test_a_path_whose_bytes_are_not_a_path_is_unknown_not_a_crash() -> None:
    blocks: list[Block] = []
    sub = GnmiSubscriber("leaf1", "127.0.0.1", 1, ca_file=None, insecure=True,
                         on_sample=lambda _: None, on_state=lambda *_: None,
                         on_block=blocks.append)
    note = gnmi_lite.lite(_notification())
    note.update[0].path = b"\xff\xff\xff"  # a truncated varint: no Path parses from it
    sub._notification(note)
    assert sub.unknown_paths == 1
    assert [(s.metric, s.port) for s in blocks[0]] == [(Metric.PFC_RX, "swp2"),
                                                       (Metric.PRE_FEC_BER, "swp1")]


# ---- blocks and readings --------------------------------------------------------------------

def test_readings_name_devices_and_count_what_they_did_not_keep() -> None:
    layout = Layout()
    block = Block("leaf1", 1.0, layout, [layout.column(Metric.QUEUE_TX, "swp1", 0)], [5])
    loose = Sample("h1", "eth1", Metric.NIC_CNP_SENT, None, 3, 1.0)
    kept = Readings([block], [loose])
    assert list(kept) == [Sample("leaf1", "swp1", Metric.QUEUE_TX, 0, 5, 1.0), loose]
    assert kept.devices() == {"leaf1", "h1"} and len(kept) == 2 and kept.kept
    let_go = Readings()
    let_go.add([block], [loose], keep=False)
    assert let_go.devices() == {"leaf1", "h1"} and len(let_go) == 2
    assert not let_go.kept and list(let_go) == []


def test_a_layout_numbers_each_series_once_and_lists_a_ports_columns() -> None:
    layout = Layout()
    a = layout.column(Metric.PFC_RX, "swp1", 3)
    assert layout.column(Metric.PFC_RX, "swp1", 3) == a
    b = layout.column(Metric.FEC_UNCORRECTABLE, "swp1", None)
    assert layout.of_port("swp1") == [a, b] and layout.find(Metric.PFC_TX, "swp1", 3) is None


# ---- rates: blocks and samples count alike --------------------------------------------------

def test_blocks_and_samples_give_the_same_windows_and_levels() -> None:
    stream = Stream(lab_plan())
    stream.set("leaf1", "swp51", Metric.QUEUE_DROPS, 3, 9)
    by_sample, by_block, layout = Rates(), Rates(), Layout()
    for step in range(4):
        samples = stream.step()
        if step == 2:
            stream.clear("leaf2")  # a reset in the middle
        by_sample.add_all(samples)
        by_block.add_blocks(_blocks(samples, layout))
        mine, theirs = by_block.drain(), by_sample.drain()
        assert dict(mine) == dict(theirs) and mine.levels == theirs.levels
        assert mine.by_metric == theirs.by_metric
    assert len(by_block) == len(by_sample) and by_block.resets == by_sample.resets > 0


def test_a_counter_outside_64_bits_negative_or_fractional_is_not_a_reading() -> None:
    rates, layout = Rates(), Layout()
    col = layout.column(Metric.QUEUE_DROPS, "swp1", 3)
    for stamp, value in ((1.0, 10), (2.0, -4), (3.0, 2**64), (3.5, 12.5), (4.0, 15.0)):
        rates.add_blocks([Block("leaf1", stamp, layout, [col], [value])])
    assert dict(rates.drain()) == {("leaf1", "swp1", Metric.QUEUE_DROPS, 3): Window(5, 1.0, 4.0)}


def test_a_listing_lists_what_moved_always_and_kept_ports_and_looks_up_the_rest() -> None:
    rates, layout = Rates(), Layout()
    drops, tx = layout.column(Metric.QUEUE_DROPS, "swp1", 3), layout.column(
        Metric.QUEUE_TX, "swp1", 3)
    flat = layout.column(Metric.QUEUE_DROPS, "swp2", 3)
    for stamp, values in ((1.0, [0, 0, 0]), (2.0, [4, 100, 0])):
        rates.add_blocks([Block("leaf1", stamp, layout, [drops, tx, flat], values)])
    listing = Listing(moved=frozenset({Metric.QUEUE_DROPS}))
    drained = rates.drain(listing)
    assert drained.by_metric == {Metric.QUEUE_DROPS: [("leaf1", "swp1", Metric.QUEUE_DROPS, 3)]}
    # not listed, still there by key (the CNP queue's, a paused queue's marks)
    assert drained.get(("leaf1", "swp1", Metric.QUEUE_TX, 3)) == Window(100, 1.0, 2.0)
    assert drained[("leaf1", "swp2", Metric.QUEUE_DROPS, 3)] == Window(0, 1.0, 2.0)
    assert len(drained) == 3
    rates.add_blocks([Block("leaf1", 3.0, layout, [drops, tx, flat], [4, 200, 0])])
    kept = rates.drain(Listing(moved=frozenset({Metric.QUEUE_DROPS}),
                               keep=frozenset({("leaf1", "swp2")})))
    assert kept.by_metric == {Metric.QUEUE_DROPS: [("leaf1", "swp2", Metric.QUEUE_DROPS, 3)]}


def test_a_listing_makes_levels_only_of_the_gauges_it_names() -> None:
    # a fabric's lanes' receive power is read by no condition: no Level is made of it, and
    # each gauge's next interval starts afresh either way
    rates, layout = Rates(), Layout()
    ber = layout.column(Metric.PRE_FEC_BER, "swp1", None)
    lanes = [layout.column(Metric.RX_POWER, "swp1", lane) for lane in (1, 2)]
    block = Block("leaf1", 1.0, layout, [], [], [ber, *lanes], [1e-9, -2.5, -3.0])
    rates.add_blocks([block])
    only_ber = rates.drain(Listing(levels=frozenset({Metric.PRE_FEC_BER})))
    assert list(only_ber.levels) == [("leaf1", "swp1", Metric.PRE_FEC_BER, None)]
    assert rates.drain().levels == {}  # drained: nothing pending
    rates.add_blocks([Block("leaf1", 2.0, layout, [], [], lanes, [-4.0, -1.0])])
    rates.add_blocks([Block("leaf1", 3.0, layout, [], [], lanes, [-5.0, -2.0])])
    assert rates.drain().levels == {("leaf1", "swp1", Metric.RX_POWER, 1): Level(-5.0, -4.0, 3.0),
                                    ("leaf1", "swp1", Metric.RX_POWER, 2): Level(-2.0, -1.0, 3.0)}
    assert len(rates) == 3


def test_memory_goes_back_where_the_c_library_can() -> None:
    assert memtrim.trim() in (True, False)  # never raises; True on glibc
    assert memtrim.trim() is (memtrim._trim() is not None)


def _resident_mib() -> float:
    return int(Path("/proc/self/statm").read_text().split()[1]) * os.sysconf("SC_PAGESIZE") / 2**20


def test_a_burst_of_large_blocks_is_given_back_when_freed() -> None:
    # a burst's notifications (half a megabyte each) allocated in a thread of its own (as
    # the subscribers' loop and gRPC's threads do), each followed by a small block that
    # lives on: freed, glibc's default keeps them in that thread's heap (after one large
    # block freed, it raises its threshold past them); mapped apart, they go back at once
    if not memtrim.map_large_blocks():
        pytest.skip("not glibc: no mallopt to keep large blocks out of the heap")
    burst: list[bytearray] = []
    pins: list[bytearray] = []

    def receive() -> None:
        first = bytearray(2_000_000)
        del first
        for _ in range(200):
            burst.append(bytearray(540_000))  # touched: zero-filled
            pins.append(bytearray(4_000))

    before = _resident_mib()
    thread = threading.Thread(target=receive)
    thread.start()
    thread.join()
    assert _resident_mib() - before > 90
    burst.clear()
    assert _resident_mib() - before < 30
    assert len(pins) == 200


# ---- the engine: listing the drain judges as walking every window --------------------------

def _faults(rng: random.Random, stream: Stream) -> None:
    """Start or stop one fault somewhere: a storm, drops, a watchdog, lossy marks, lost
    codewords, flaps, an idle DCQCN reaction, a climbing BER."""
    switch_ports = sorted({(d, p) for d, p, m, _ in stream.values if m is Metric.WATCHDOG})
    nics = sorted({(d, p) for d, p, m, _ in stream.values if m is Metric.NIC_CNP_HANDLED})
    device, port = rng.choice(switch_ports)
    kind = rng.randrange(8)
    if kind == 0:
        stream.set(device, port, rng.choice((Metric.PFC_RX, Metric.PFC_TX)), 3,
                   rng.choice((50, 20_000)))
    elif kind == 1:
        stream.set(device, port, Metric.QUEUE_DROPS, 3, rng.choice((0, 0, 4)))
    elif kind == 2:
        stream.set(device, port, Metric.WATCHDOG, 3, rng.choice((0, 1)))
    elif kind == 3:
        stream.set(device, port, Metric.QUEUE_ECN, 0, rng.choice((0, 300)))
    elif kind == 4 and (device, port, Metric.FEC_UNCORRECTABLE, None) in stream.values:
        stream.set(device, port, Metric.FEC_UNCORRECTABLE, None, rng.choice((0, 3)))
    elif kind == 5 and (device, port, Metric.CARRIER_TRANSITIONS, None) in stream.values:
        stream.set(device, port, Metric.CARRIER_TRANSITIONS, None, rng.choice((0, 2)))
    elif kind == 6:
        nic, nic_port = rng.choice(nics)
        stream.set(nic, nic_port, Metric.NIC_CNP_HANDLED, None, rng.choice((0, 20)))
    elif (device, port, Metric.PRE_FEC_BER, None) in stream.levels:
        stream.level(device, port, Metric.PRE_FEC_BER, rng.choice((1e-9, 1e-6, 5e-5)))


def _walk_all(ctx: conditions.Context, active: object) -> None:
    return None  # a drain without a listing lists every window


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_listed_drain_judges_exactly_as_walking_every_window(
        seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    limits = Thresholds(storm_for_s=20.0)
    listed, walked = HealthEngine(lab_plan(), limits), HealthEngine(lab_plan(), limits)
    stream, rng, layout = Stream(lab_plan()), random.Random(seed), Layout()
    seen = 0
    for step in range(40):
        if step >= 2:
            for _ in range(rng.randrange(4)):
                _faults(rng, stream)
        samples = stream.step()
        listed.feed_blocks(_blocks(samples, layout))
        walked.feed(samples)
        mine = listed.tick(stream.time)
        with monkeypatch.context() as patch:
            patch.setattr(conditions, "listing", _walk_all)
            theirs = walked.tick(stream.time)
        assert mine == theirs, step
        assert listed.active() == walked.active(), step
        seen += len(mine.raised)
    assert seen >= 10  # the faults raised findings: a comparison of nothing proves nothing
