"""ib_write_bw: its report parsed in MB/sec and Gb/sec, one size or many, errors, and the
argv of both sides with the options RoCE needs."""

from __future__ import annotations

import pytest

from flatfab.acceptance.engines.base import EngineOutputError, EngineSpecError, PairSpec, Side
from flatfab.acceptance.engines.perftest import IbWriteBwEngine, PerftestMeasurement, parse
from tests.support.paths import FIXTURES

HERE = FIXTURES / "acceptance" / "perftest"
SERVER = Side(address="10.0.2.12", device="mlx5_2", gid_index=3)
CLIENT = Side(address="10.0.1.11", device="mlx5_4", gid_index=5)


def _read(name: str) -> PerftestMeasurement:
    return parse((HERE / name).read_text(encoding="utf-8"))


def test_mb_per_second_is_mebibytes_turned_into_gigabits() -> None:
    result = _read("write_bw_mb.txt")
    # perftest's MB is 2^20 bytes: 11235.31 MiB/s x 1048576 x 8 / 10^9
    assert result.gbps == pytest.approx(11235.31 * 1048576 * 8 / 1e9)
    assert result.gbps == pytest.approx(94.25, abs=0.01)
    assert result.reported_in == "MB" and result.message_bytes == 65536
    assert result.peak_gbps == 0.0  # not sampled under -D
    assert result.msg_rate_mpps == pytest.approx(0.179765)


def test_report_gbits_is_taken_as_is() -> None:
    result = _read("write_bw_gbits.txt")
    assert result.reported_in == "Gb" and result.gbps == pytest.approx(387.52)
    assert result.message_bytes == 1048576 and len(result.rows) == 1


def test_all_sizes_judged_at_the_largest() -> None:
    result = _read("write_bw_all_sizes_gbits.txt")
    assert [r.message_bytes for r in result.rows] == [2, 4, 8, 1024, 4096, 65536, 1048576,
                                                      8388608]
    assert result.message_bytes == 8388608 and result.gbps == pytest.approx(96.86)
    assert result.peak_gbps == pytest.approx(96.87)


@pytest.mark.parametrize(("name", "said"), [
    ("connect_failed.txt", "no result table"),
    ("truncated.txt", "the result table has no rows"),
])
def test_failed_and_truncated_runs_are_one_clear_error(name: str, said: str) -> None:
    with pytest.raises(EngineOutputError) as caught:
        _read(name)
    assert str(caught.value).startswith("ib_write_bw: ") and said in str(caught.value)


def test_the_error_names_what_the_tool_said_last() -> None:
    with pytest.raises(EngineOutputError, match="last line: 'Unable to open file descriptor"):
        _read("connect_failed.txt")
    with pytest.raises(EngineOutputError, match=r"\(empty\)"):
        parse("")


def test_a_garbled_row_is_refused() -> None:
    text = (HERE / "write_bw_gbits.txt").read_text(encoding="utf-8")
    with pytest.raises(EngineOutputError, match="a result row is not"):
        parse(text.replace("387.52", "387.5x"))


def test_argv_of_both_sides() -> None:
    spec = PairSpec(server=SERVER, client=CLIENT, duration_s=10, parallel=4,
                    message_bytes=1048576, tclass=106)
    engine = IbWriteBwEngine()
    common = ["-s", "1048576", "-q", "4", "-D", "10", "-F", "--report_gbits", "--tclass=106"]
    assert engine.server_argv(spec) == ["ib_write_bw", "-d", "mlx5_2", "-x", "3",
                                        "-p", "18515", *common]
    assert engine.client_argv(spec) == ["ib_write_bw", "-d", "mlx5_4", "-x", "5",
                                        "-p", "18515", *common, "10.0.2.12"]


def test_rdma_cm_sets_the_tos_with_minus_t() -> None:
    spec = PairSpec(server=SERVER, client=CLIENT, port=18600, tclass=106, rdma_cm=True)
    argv = IbWriteBwEngine(report_gbits=False).client_argv(spec)
    assert argv[-4:] == ["-R", "-T", "106", "10.0.2.12"]
    assert "--report_gbits" not in argv and "--tclass=106" not in argv
    assert argv[argv.index("-p") + 1] == "18600" and argv[argv.index("-s") + 1] == "65536"


@pytest.mark.parametrize(("side", "said"), [
    (Side(address="10.0.1.11", gid_index=3), "client's RDMA device"),
    (Side(address="10.0.1.11", device="mlx5_4"), "client's GID index"),
])
def test_an_rdma_side_needs_its_device_and_gid(side: Side, said: str) -> None:
    with pytest.raises(EngineSpecError, match=said):
        IbWriteBwEngine().client_argv(PairSpec(server=SERVER, client=side))
