"""NCCL tests (github.com/NVIDIA/nccl-tests): all_reduce_perf and alltoall_perf over MPI, read
from their table.

Each row is one message size, out-of-place then in-place (nccl-tests README, PERFORMANCE.md):

    #       size         count      type   redop    root     time   algbw   busbw #wrong ...
         8388608       2097152     float     sum      -1    571.9   14.67   27.50      0 ...

then `# Out of bounds values : N OK|FAILED` and `# Avg bus bandwidth    : X`. Bandwidths are
GB/s of 10^9 bytes (`AllReduceGetBw`: count * typesize / 1.0E9 / sec).

The judged figure is busbw, never algbw: algbw (size / time) falls as ranks are added, busbw
applies the collective's correction (all_reduce x 2(n-1)/n, alltoall x (n-1)/n) so that it
compares with the hardware's bandwidth whatever the rank count (PERFORMANCE.md). It is taken
at the largest size, the lower of out-of-place and in-place: the `Avg bus bandwidth` line
averages every size, latency-bound small ones included, so it is kept for the report only.
A non-zero #wrong (values that differ from the expected result) fails the run whatever the
bandwidth; `N/A` is a size that was not checked (-c 0, or an in-place alltoall).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from flatfab.acceptance.engines.base import (
    BITS_PER_GIGABIT,
    EngineOutputError,
    EngineSpecError,
    Measurement,
)

NAME = "nccl-tests"
GIGABYTE = 1e9  # nccl-tests' GB
# mpirun --output-filename/--tag-output prefixes every line with [job,rank]<stdout>:
_TAG = re.compile(r"^\[\d+,\d+\]<std(?:out|err)>:")
_AVG = re.compile(r"^#\s*Avg bus bandwidth\s*:\s*(?P<value>[\d.eE+-]+)")
_OOB = re.compile(r"^#\s*Out of bounds values\s*:\s*(?P<count>\d+)")
_INT = re.compile(r"^\d+$")


class Collective(StrEnum):
    ALL_REDUCE = "all_reduce"
    ALLTOALL = "alltoall"

    @property
    def binary(self) -> str:
        # nccl-tests builds src/<name>.cu into build/<name>_perf
        return f"{self.value}_perf"


@dataclass(frozen=True)
class Placement:
    """One buffer placement's figures for a size: time (us), algbw and busbw (GB/s), and
    #wrong (None: not checked)."""

    time_us: float
    algbw_gbs: float
    busbw_gbs: float
    wrong: int | None


@dataclass(frozen=True)
class NcclRow:
    size_bytes: int
    count: int
    out_of_place: Placement
    in_place: Placement

    @property
    def busbw_gbs(self) -> float:
        return min(self.out_of_place.busbw_gbs, self.in_place.busbw_gbs)

    @property
    def wrong(self) -> int:
        return sum(p.wrong or 0 for p in (self.out_of_place, self.in_place))


@dataclass(frozen=True, kw_only=True)
class NcclMeasurement(Measurement):
    collective: Collective
    size_bytes: int  # the size the figure is taken at (the largest)
    busbw_gbs: float  # the judged figure in nccl-tests' unit (gbps = this x 8)
    avg_busbw_gbs: float  # the `# Avg bus bandwidth` line: every size averaged
    wrong: int  # wrong values over every size and placement
    rows: tuple[NcclRow, ...]


@dataclass(frozen=True, kw_only=True)
class CollectiveSpec:
    """A collective's launch over MPI (Open MPI's mpirun): one rank per GPU on each host.
    `env`: what mpirun exports to every rank (-x), e.g. NCCL_IB_HCA, NCCL_IB_GID_INDEX,
    NCCL_IB_TC. `check`: iterations validated (-c; 0 leaves #wrong at N/A)."""

    collective: Collective
    hosts: tuple[str, ...]
    gpus_per_host: int
    min_bytes: int = 256 * 2**20
    max_bytes: int = 8 * 2**30
    step_factor: int = 2
    iters: int = 20
    warmup_iters: int = 5
    check: int = 1
    datatype: str = "float"
    op: str = "sum"
    env: Mapping[str, str] = field(default_factory=dict)
    binary_dir: str = ""

    def __post_init__(self) -> None:
        if not self.hosts:
            raise EngineSpecError(NAME, "no hosts to run on")
        if self.gpus_per_host < 1:
            raise EngineSpecError(NAME, f"gpus per host {self.gpus_per_host}: at least 1")
        if not 0 < self.min_bytes <= self.max_bytes:
            raise EngineSpecError(NAME, f"sizes {self.min_bytes}..{self.max_bytes} B: "
                                        f"0 < min <= max")


@dataclass(frozen=True)
class NcclEngine:
    collective: Collective
    name: str = NAME

    def launch_argv(self, spec: CollectiveSpec) -> list[str]:
        if spec.collective is not self.collective:
            raise EngineSpecError(NAME, f"a {spec.collective} spec given to the "
                                        f"{self.collective} engine")
        ranks = len(spec.hosts) * spec.gpus_per_host
        argv = ["mpirun", "-np", str(ranks),
                "-H", ",".join(f"{host}:{spec.gpus_per_host}" for host in spec.hosts),
                "--bind-to", "none"]
        for key in sorted(spec.env):
            argv += ["-x", f"{key}={spec.env[key]}"]
        binary = f"{spec.binary_dir.rstrip('/')}/{self.collective.binary}" \
            if spec.binary_dir else self.collective.binary
        # -g 1: one GPU per rank, MPI places the ranks (nccl-tests README, "mpirun -np")
        argv += [binary, "-b", str(spec.min_bytes), "-e", str(spec.max_bytes),
                 "-f", str(spec.step_factor), "-g", "1", "-n", str(spec.iters),
                 "-w", str(spec.warmup_iters), "-c", str(spec.check), "-d", spec.datatype]
        if self.collective is Collective.ALL_REDUCE:
            argv += ["-o", spec.op]
        return argv

    def parse(self, output: str) -> NcclMeasurement:
        return parse(output, self.collective)


def parse(output: str, collective: Collective) -> NcclMeasurement:
    """An nccl-tests run's output (rank 0's, MPI tags and NCCL INFO lines allowed)."""
    engine = collective.binary
    lines = [_TAG.sub("", line) for line in output.splitlines()]
    _header(lines, engine)
    rows = tuple(row for line in lines if (row := _row(line, engine)) is not None)
    if not rows:
        raise EngineOutputError(engine, "the result table has no rows (run cut short?)")
    average = _average(lines, engine)
    judged = max(rows, key=lambda r: r.size_bytes)
    wrong = max(sum(r.wrong for r in rows), _out_of_bounds(lines))
    problems = (f"{wrong} wrong values (#wrong): the collective's results are not what was "
                f"sent",) if wrong else ()
    return NcclMeasurement(
        engine=NAME, collective=collective, gbps=judged.busbw_gbs * GIGABYTE * 8
        / BITS_PER_GIGABIT, busbw_gbs=judged.busbw_gbs, size_bytes=judged.size_bytes,
        avg_busbw_gbs=average, wrong=wrong, rows=rows, problems=problems)


def _header(lines: Sequence[str], engine: str) -> None:
    for line in lines:
        words = line.lstrip("#").split()
        if line.startswith("#") and {"size", "algbw", "busbw"} <= set(words):
            if "#wrong" not in words:
                raise EngineOutputError(engine, "the table has no #wrong column (older "
                                                "nccl-tests print `error`): not read")
            return
    raise EngineOutputError(engine, "no result table (# size count type ... busbw #wrong "
                                    "header) in the output")


def _row(line: str, engine: str) -> NcclRow | None:
    """A data row: size and count first, then (time algbw busbw #wrong) out-of-place and
    in-place as the last eight words (an alltoall of older releases leaves redop empty, so
    the columns between are not counted)."""
    words = line.split()
    if len(words) < 2 or not (_INT.match(words[0]) and _INT.match(words[1])):
        return None
    if len(words) < 10:
        raise EngineOutputError(engine, f"a result row is cut short: {line.strip()!r}")
    try:
        return NcclRow(size_bytes=int(words[0]), count=int(words[1]),
                       out_of_place=_placement(words[-8:-4]), in_place=_placement(words[-4:]))
    except ValueError:
        raise EngineOutputError(engine, f"a result row is not numbers where time, algbw, "
                                        f"busbw and #wrong go: {line.strip()!r}") from None


def _placement(words: Sequence[str]) -> Placement:
    time, algbw, busbw, wrong = words
    return Placement(time_us=float(time), algbw_gbs=float(algbw), busbw_gbs=float(busbw),
                     wrong=None if wrong == "N/A" else int(wrong))


def _average(lines: Sequence[str], engine: str) -> float:
    for line in lines:
        if match := _AVG.match(line):
            try:
                return float(match["value"])
            except ValueError:
                break
    raise EngineOutputError(engine, "no `# Avg bus bandwidth` line: the run did not finish")


def _out_of_bounds(lines: Sequence[str]) -> int:
    return next((int(m["count"]) for line in lines if (m := _OOB.match(line))), 0)
