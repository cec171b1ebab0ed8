"""References from link speed and NIC count, and verdicts against them: busbw is what is
judged, #wrong fails whatever the figure, the tolerance is a default and configurable."""

from __future__ import annotations

import pytest

from flatfab.acceptance.engines.base import Measurement
from flatfab.acceptance.engines.nccl import Collective, parse
from flatfab.acceptance.reference import (
    ETHERNET_FRAMING_BYTES,
    Reference,
    ib_write_bw_reference,
    iperf3_reference,
    nccl_reference,
    pair_reference,
    roce_payload_share,
)
from flatfab.acceptance.verdict import DEFAULT_TOLERANCE, Outcome, judge
from flatfab.model.wire import ROCE_HEADER_BYTES
from tests.support.paths import FIXTURES

NCCL = FIXTURES / "acceptance" / "nccl"
G400 = 400_000  # Mb/s, as the model keeps link speeds


def test_the_roce_share_is_payload_over_packet_and_framing() -> None:
    assert ETHERNET_FRAMING_BYTES == 38 and ROCE_HEADER_BYTES == 96
    assert roce_payload_share(4096) == pytest.approx(4096 / 4230)
    assert roce_payload_share(1024) < roce_payload_share(4096)
    with pytest.raises(ValueError, match="RoCE MTU"):
        roce_payload_share(100)


def test_ib_write_bw_reference_is_the_roce_share_of_the_link() -> None:
    reference = ib_write_bw_reference(G400)
    assert reference.gbps == pytest.approx(387.33, abs=0.01)
    assert "0.968" in reference.basis and "MTU 4096" in reference.basis
    assert ib_write_bw_reference(100_000).gbps == pytest.approx(96.83, abs=0.01)
    assert pair_reference("ib_write_bw", G400) == reference


def test_iperf3_reference_is_a_lower_fraction() -> None:
    assert iperf3_reference(100_000).gbps == pytest.approx(70.0)
    assert iperf3_reference(100_000).gbps < ib_write_bw_reference(100_000).gbps
    assert iperf3_reference(100_000, fraction=0.9).gbps == pytest.approx(90.0)
    assert pair_reference("iperf3", 100_000) == iperf3_reference(100_000)
    for bad in (0.0, 1.5):
        with pytest.raises(ValueError, match="fraction"):
            iperf3_reference(100_000, fraction=bad)
    with pytest.raises(ValueError, match="no reference for engine"):
        pair_reference("netperf", 100_000)
    with pytest.raises(ValueError, match="not a speed"):
        ib_write_bw_reference(0)


def test_all_reduce_reference_is_every_nic_of_a_server() -> None:
    reference = nccl_reference(Collective.ALL_REDUCE, nic_speed_mbps=G400, nics_per_server=8,
                               gpus_per_server=8, servers=2)
    assert reference.gbps == pytest.approx(4096 / 4230 * 400 * 8)
    assert reference.gbps / 8 == pytest.approx(387.3, abs=0.1)  # GB/s, nccl-tests' unit
    four = nccl_reference(Collective.ALL_REDUCE, nic_speed_mbps=G400, nics_per_server=4,
                          gpus_per_server=8, servers=16)
    assert four.gbps == pytest.approx(reference.gbps / 2)


@pytest.mark.parametrize(("gpus", "servers", "factor"), [
    (1, 4, 1.0),  # one GPU a server: one NIC's bandwidth
    (8, 2, 15 / 8),  # two servers of 8: about twice it
    (8, 64, 511 / 504),  # many servers: towards N/(N-1)
])
def test_alltoall_reference(gpus: int, servers: int, factor: float) -> None:
    reference = nccl_reference(Collective.ALLTOALL, nic_speed_mbps=G400, nics_per_server=gpus,
                               gpus_per_server=gpus, servers=servers)
    assert reference.gbps == pytest.approx(4096 / 4230 * 400 * factor)


def test_a_collective_on_one_server_has_no_reference() -> None:
    with pytest.raises(ValueError, match="one server"):
        nccl_reference(Collective.ALL_REDUCE, nic_speed_mbps=G400, nics_per_server=8,
                       gpus_per_server=8, servers=1)
    with pytest.raises(ValueError, match="at least one NIC"):
        nccl_reference(Collective.ALL_REDUCE, nic_speed_mbps=G400, nics_per_server=0,
                       gpus_per_server=8, servers=2)


def _measured(gbps: float) -> Measurement:
    return Measurement(engine="ib_write_bw", gbps=gbps)


def test_more_than_the_tolerance_under_fails() -> None:
    reference = Reference(400.0, "test")
    assert DEFAULT_TOLERANCE == 0.20
    passed = judge(_measured(324.0), reference)
    assert passed.outcome is Outcome.PASS and passed.passed and passed.reasons == ()
    assert passed.margin == pytest.approx(-0.19)
    failed = judge(_measured(316.0), reference)
    assert failed.outcome is Outcome.FAIL and failed.margin == pytest.approx(-0.21)
    assert failed.reasons == ("316.0 Gb/s is 21% under the reference 400.0 Gb/s "
                              "(more than 20% fails)",)
    assert judge(_measured(420.0), reference).margin == pytest.approx(0.05)


def test_the_tolerance_is_configurable() -> None:
    reference = Reference(400.0, "test")
    assert not judge(_measured(370.0), reference, tolerance=0.05).passed
    assert judge(_measured(370.0), reference, tolerance=0.1).passed
    for bad in (-0.1, 1.0):
        with pytest.raises(ValueError, match="tolerance"):
            judge(_measured(370.0), reference, tolerance=bad)
    with pytest.raises(ValueError, match="not a figure"):
        judge(_measured(1.0), Reference(0.0, "none"))


def test_nccl_is_judged_on_busbw_never_algbw() -> None:
    result = parse((NCCL / "all_reduce_2x8.txt").read_text(encoding="utf-8"),
                   Collective.ALL_REDUCE)
    reference = nccl_reference(Collective.ALL_REDUCE, nic_speed_mbps=G400, nics_per_server=8,
                               gpus_per_server=8, servers=2)
    verdict = judge(result, reference)
    assert verdict.passed and verdict.figure_gbps == pytest.approx(370.86 * 8)
    assert verdict.margin == pytest.approx(370.86 * 8 / reference.gbps - 1)
    # algbw at that size is about half: judged on it, the same run would fail
    algbw = min(result.rows[-1].out_of_place.algbw_gbs, result.rows[-1].in_place.algbw_gbs)
    assert not judge(_measured(algbw * 8), reference).passed


def test_wrong_values_fail_whatever_the_bandwidth() -> None:
    result = parse((NCCL / "all_reduce_wrong.txt").read_text(encoding="utf-8"),
                   Collective.ALL_REDUCE)
    reference = Reference(result.gbps / 2, "half of it: far above")
    verdict = judge(result, reference)
    assert verdict.outcome is Outcome.FAIL and verdict.margin > 0
    assert verdict.reasons == result.problems
