"""A run's results: each pair (source server/NIC to destination server/NIC, on which rail,
of which kind), each collective, the engine, the figure, the reference and the verdict; in
one order whatever order they were measured in."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum

from flatfab.acceptance.engines.base import Measurement
from flatfab.acceptance.reference import Reference
from flatfab.acceptance.verdict import DEFAULT_TOLERANCE, Verdict, judge


class PairKind(StrEnum):
    """Where a pair's traffic goes, as the caller (who knows the topology) says."""

    SAME_RAIL = "same-rail"  # two NICs on one rail: one leaf apart
    CROSS_RAIL = "cross-rail"  # two rails of one pod: through the spines
    CROSS_POD = "cross-pod"  # two pods: through the super-spines
    CROSS_PLANE = "cross-plane"  # two planes of a multi-plane fabric


@dataclass(frozen=True, order=True)
class NicRef:
    server: str
    nic: str

    def __str__(self) -> str:
        return f"{self.server}/{self.nic}"


@dataclass(frozen=True)
class PairResult:
    source: NicRef
    destination: NicRef
    kind: PairKind
    engine: str
    figure_gbps: float
    reference_gbps: float
    verdict: Verdict
    rail: str | None = None

    @property
    def sort_key(self) -> tuple[NicRef, NicRef, str]:
        return self.source, self.destination, self.engine


@dataclass(frozen=True)
class CollectiveResult:
    collective: str  # "all_reduce", "alltoall"
    servers: tuple[str, ...]
    engine: str
    figure_gbps: float
    reference_gbps: float
    verdict: Verdict

    @property
    def sort_key(self) -> tuple[str, tuple[str, ...], str]:
        return self.collective, self.servers, self.engine


@dataclass(frozen=True)
class RunResult:
    """Every result of a run, sorted (source, destination, engine; collectives by name and
    servers) so that two runs of one plan compare line by line."""

    pairs: tuple[PairResult, ...] = ()
    collectives: tuple[CollectiveResult, ...] = field(default=())

    def __post_init__(self) -> None:
        object.__setattr__(self, "pairs", tuple(sorted(self.pairs, key=lambda p: p.sort_key)))
        object.__setattr__(self, "collectives",
                           tuple(sorted(self.collectives, key=lambda c: c.sort_key)))

    @property
    def results(self) -> tuple[PairResult | CollectiveResult, ...]:
        return (*self.pairs, *self.collectives)

    @property
    def passed(self) -> bool:
        return all(r.verdict.passed for r in self.results)

    @property
    def failed(self) -> tuple[PairResult | CollectiveResult, ...]:
        return tuple(r for r in self.results if not r.verdict.passed)


def pair_result(source: NicRef, destination: NicRef, kind: PairKind, measurement: Measurement,
                reference: Reference, *, rail: str | None = None,
                tolerance: float = DEFAULT_TOLERANCE) -> PairResult:
    """One pair's measurement judged against its reference."""
    verdict = judge(measurement, reference, tolerance)
    return PairResult(source=source, destination=destination, kind=kind,
                      engine=measurement.engine, figure_gbps=measurement.gbps,
                      reference_gbps=reference.gbps, verdict=verdict, rail=rail)


def collective_result(collective: str, servers: Iterable[str], measurement: Measurement,
                      reference: Reference, *,
                      tolerance: float = DEFAULT_TOLERANCE) -> CollectiveResult:
    """One collective's measurement judged against its reference (servers in name order)."""
    verdict = judge(measurement, reference, tolerance)
    return CollectiveResult(collective=collective, servers=tuple(sorted(servers)),
                            engine=measurement.engine, figure_gbps=measurement.gbps,
                            reference_gbps=reference.gbps, verdict=verdict)
