"""A run's results in one order whatever order they came in, and the pair matrix a report
renders."""

from __future__ import annotations

import pytest

from flatfab.acceptance.engines.base import Measurement
from flatfab.acceptance.matrix import Cell, pair_matrix
from flatfab.acceptance.reference import Reference
from flatfab.acceptance.results import (
    NicRef,
    PairKind,
    PairResult,
    RunResult,
    collective_result,
    pair_result,
)
from flatfab.acceptance.verdict import Outcome

A0, A1 = NicRef("gpu-a01", "mlx5_0"), NicRef("gpu-a01", "mlx5_1")
B0, B1 = NicRef("gpu-b01", "mlx5_0"), NicRef("gpu-b01", "mlx5_1")
REFERENCE = Reference(387.3, "test")


def _pair(source: NicRef, destination: NicRef, gbps: float, kind: PairKind,
          engine: str = "ib_write_bw") -> PairResult:
    return pair_result(source, destination, kind, Measurement(engine=engine, gbps=gbps),
                       REFERENCE, rail="rail0" if kind is PairKind.SAME_RAIL else None)


def _pairs() -> list[PairResult]:
    return [_pair(B0, A0, 386.0, PairKind.SAME_RAIL), _pair(A0, B1, 381.5, PairKind.CROSS_RAIL),
            _pair(A0, B0, 384.2, PairKind.SAME_RAIL), _pair(A1, B0, 190.4, PairKind.CROSS_RAIL)]


def test_a_pair_result_carries_what_a_report_shows() -> None:
    result = _pair(A0, B0, 384.2, PairKind.SAME_RAIL)
    assert (result.source, result.destination, result.rail) == (A0, B0, "rail0")
    assert result.kind is PairKind.SAME_RAIL and result.engine == "ib_write_bw"
    assert result.figure_gbps == 384.2 and result.reference_gbps == 387.3
    assert result.verdict.passed and str(result.source) == "gpu-a01/mlx5_0"


def test_results_are_ordered_whatever_order_they_were_measured_in() -> None:
    forward, backward = RunResult(pairs=tuple(_pairs())), RunResult(pairs=tuple(_pairs()[::-1]))
    assert forward == backward
    assert [(p.source, p.destination) for p in forward.pairs] == [(A0, B0), (A0, B1),
                                                                  (A1, B0), (B0, A0)]
    assert not forward.passed
    assert [(f.source, f.destination) for f in forward.failed  # type: ignore[union-attr]
            ] == [(A1, B0)]


def test_collectives_are_part_of_the_run() -> None:
    good = collective_result("all_reduce", ["gpu-b01", "gpu-a01"],
                             Measurement(engine="nccl-tests", gbps=2966.9),
                             Reference(3098.6, "test"))
    bad = collective_result("alltoall", ["gpu-a01", "gpu-b01"],
                            Measurement(engine="nccl-tests", gbps=760.0, problems=("3 wrong",)),
                            Reference(726.2, "test"))
    run = RunResult(collectives=(bad, good))
    assert good.servers == ("gpu-a01", "gpu-b01")
    assert [c.collective for c in run.collectives] == ["all_reduce", "alltoall"]
    assert run.failed == (bad,) and not run.passed
    assert RunResult(collectives=(good,)).passed


def test_the_matrix_rows_are_sources_and_columns_destinations() -> None:
    matrix = pair_matrix(_pairs())
    assert matrix.rows == (A0, A1, B0) and matrix.columns == (A0, B0, B1)
    assert matrix.cell(A0, B0) == Cell(figure_gbps=384.2, reference_gbps=387.3,
                                       outcome=Outcome.PASS,
                                       margin=pytest.approx(384.2 / 387.3 - 1),  # type: ignore[arg-type]
                                       kind=PairKind.SAME_RAIL)
    failed = matrix.cell(A1, B0)
    assert failed is not None and failed.outcome is Outcome.FAIL
    assert failed.kind is PairKind.CROSS_RAIL
    assert matrix.cell(A0, A0) is None and matrix.cell(B0, B1) is None  # not measured
    assert [len(row) for row in matrix.cells] == [3, 3, 3]
    assert pair_matrix(_pairs()[::-1]) == matrix


def test_one_figure_per_cell() -> None:
    mixed = [*_pairs(), _pair(A0, B0, 61.0, PairKind.SAME_RAIL, engine="iperf3")]
    with pytest.raises(ValueError, match="two results for gpu-a01/mlx5_0 -> gpu-b01/mlx5_0"):
        pair_matrix(mixed)
    only = pair_matrix(mixed, engine="iperf3")
    assert only.engine == "iperf3" and only.rows == (A0,) and only.columns == (B0,)
    assert only.cell(A0, B0) is not None
    assert pair_matrix([]).cells == ()
