"""nccl-tests: all_reduce_perf and alltoall_perf tables parsed (busbw judged, never algbw;
#wrong a failure of its own), malformed outputs, and the launch line."""

from __future__ import annotations

import pytest

from flatfab.acceptance.engines.base import EngineOutputError, EngineSpecError
from flatfab.acceptance.engines.nccl import (
    Collective,
    CollectiveSpec,
    NcclEngine,
    NcclMeasurement,
    parse,
)
from tests.support.paths import FIXTURES

HERE = FIXTURES / "acceptance" / "nccl"


def _read(name: str, collective: Collective = Collective.ALL_REDUCE) -> NcclMeasurement:
    return parse((HERE / name).read_text(encoding="utf-8"), collective)


def test_all_reduce_is_judged_on_busbw_at_the_largest_size() -> None:
    result = _read("all_reduce_2x8.txt")
    judged = result.rows[-1]
    assert len(result.rows) == 6 and result.size_bytes == 8 * 2**30
    # the lower of out-of-place (371.38) and in-place (370.86) GB/s, in Gb/s
    assert result.busbw_gbs == pytest.approx(370.86)
    assert result.gbps == pytest.approx(370.86 * 8)
    assert judged.out_of_place.algbw_gbs == pytest.approx(198.07)  # read, never judged
    assert result.gbps != pytest.approx(judged.out_of_place.algbw_gbs * 8)
    assert result.avg_busbw_gbs == pytest.approx(345.607) and result.wrong == 0
    assert result.problems == ()


def test_out_of_place_and_in_place_are_both_read() -> None:
    row = _read("all_reduce_2x8.txt").rows[0]
    assert row.size_bytes == 268435456 and row.count == 67108864
    assert row.out_of_place.busbw_gbs == pytest.approx(291.62)
    assert row.in_place.busbw_gbs == pytest.approx(292.05)
    assert row.out_of_place.time_us == pytest.approx(1725.9)
    assert row.out_of_place.wrong == 0 and row.in_place.wrong == 0


def test_wrong_values_are_a_problem_of_their_own() -> None:
    result = _read("all_reduce_wrong.txt")
    assert result.wrong == 3 and result.busbw_gbs == pytest.approx(370.86)
    assert result.rows[0].in_place.wrong == 2 and result.rows[1].out_of_place.wrong == 1
    assert len(result.problems) == 1 and "3 wrong values" in result.problems[0]


def test_alltoall_with_unchecked_in_place() -> None:
    result = _read("alltoall_2x8.txt", Collective.ALLTOALL)
    assert result.collective is Collective.ALLTOALL
    assert all(r.in_place.wrong is None for r in result.rows)
    assert result.wrong == 0 and result.busbw_gbs == pytest.approx(94.05)
    assert result.rows[0].count == 268435456 // 4 // 16


def test_mpi_tags_and_nccl_info_lines_are_skipped() -> None:
    tagged = _read("all_reduce_mpi_tagged.txt")
    plain = _read("all_reduce_2x8.txt")
    assert tagged.rows == plain.rows and tagged.gbps == plain.gbps


@pytest.mark.parametrize(("name", "said"), [
    ("truncated.txt", "no `# Avg bus bandwidth` line"),
    ("all_reduce_error_column.txt", "no #wrong column"),
])
def test_truncated_and_older_outputs_are_one_clear_error(name: str, said: str) -> None:
    with pytest.raises(EngineOutputError) as caught:
        _read(name)
    assert str(caught.value).startswith("all_reduce_perf: ") and said in str(caught.value)


def test_malformed_outputs() -> None:
    text = (HERE / "all_reduce_2x8.txt").read_text(encoding="utf-8")
    with pytest.raises(EngineOutputError, match="no result table"):
        parse("NCCL WARN NET/IB : Got completion with error 12\n", Collective.ALL_REDUCE)
    header_only = "\n".join(line for line in text.splitlines() if not line.startswith(" "))
    with pytest.raises(EngineOutputError, match="no rows"):
        parse(header_only, Collective.ALL_REDUCE)
    last = next(line for line in text.splitlines() if line.split()[:1] == ["8589934592"])
    with pytest.raises(EngineOutputError, match="cut short"):
        parse(text.replace(last, " ".join(last.split()[:5])), Collective.ALL_REDUCE)
    with pytest.raises(EngineOutputError, match="not numbers"):
        parse(text.replace("371.38", "fast"), Collective.ALL_REDUCE)


def test_the_launch_line() -> None:
    spec = CollectiveSpec(collective=Collective.ALL_REDUCE, hosts=("gpu-a01", "gpu-a02"),
                          gpus_per_host=8, binary_dir="/opt/nccl-tests/build/",
                          env={"NCCL_IB_TC": "106", "NCCL_IB_GID_INDEX": "3"})
    assert NcclEngine(Collective.ALL_REDUCE).launch_argv(spec) == [
        "mpirun", "-np", "16", "-H", "gpu-a01:8,gpu-a02:8", "--bind-to", "none",
        "-x", "NCCL_IB_GID_INDEX=3", "-x", "NCCL_IB_TC=106",
        "/opt/nccl-tests/build/all_reduce_perf", "-b", str(256 * 2**20), "-e", str(8 * 2**30),
        "-f", "2", "-g", "1", "-n", "20", "-w", "5", "-c", "1", "-d", "float", "-o", "sum"]


def test_alltoall_launch_has_no_reduction_op() -> None:
    spec = CollectiveSpec(collective=Collective.ALLTOALL, hosts=("gpu-a01",), gpus_per_host=4)
    argv = NcclEngine(Collective.ALLTOALL).launch_argv(spec)
    assert "alltoall_perf" in argv and "-o" not in argv
    with pytest.raises(EngineSpecError, match="alltoall spec given to the all_reduce"):
        NcclEngine(Collective.ALL_REDUCE).launch_argv(spec)


@pytest.mark.parametrize("bad", [{"hosts": ()}, {"gpus_per_host": 0},
                                 {"min_bytes": 2**20, "max_bytes": 1024}])
def test_a_collective_spec_refuses_impossible_values(bad: dict[str, object]) -> None:
    fields: dict[str, object] = {"collective": Collective.ALL_REDUCE, "hosts": ("a", "b"),
                                 "gpus_per_host": 8, **bad}
    with pytest.raises(EngineSpecError):
        CollectiveSpec(**fields)  # type: ignore[arg-type]
