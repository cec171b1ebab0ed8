"""An acceptance run as its reports show it: the results, what was not run and why, and for
the pairs that failed the links they crossed with those links' counters before and after.
Data only, in a stable order (the reports are byte-identical for the same run)."""

from __future__ import annotations

from dataclasses import dataclass, field

from flatfab.acceptance.counters import PortDelta
from flatfab.acceptance.paths import LinkRef
from flatfab.acceptance.results import NicRef, PairKind, RunResult


@dataclass(frozen=True)
class Unrun:
    """A pair (or collective) that could not be measured, and why: never a pass."""

    what: str  # "leaf1-h1/eth1 -> leaf2-h1/eth1", "all_reduce over 4 servers"
    kind: str  # a PairKind, or "collective"
    why: str
    device: str  # the server it failed on (or the source's)


@dataclass(frozen=True)
class FailedPath:
    """The links a failing pair crossed: its servers' own for certain, the fabric's it may
    have (ECMP)."""

    source: NicRef
    destination: NicRef
    certain: tuple[LinkRef, ...]
    maybe: tuple[LinkRef, ...]


@dataclass(frozen=True)
class LinkCounters:
    """A link failing pairs crossed: its ends' counters before and after, how many measured
    pairs crossed it for certain (failed, passed), and whether it is the suspect: crossed
    for certain by failing pairs only."""

    link: LinkRef
    ends: tuple[PortDelta, ...]
    failed: int
    passed: int

    @property
    def suspect(self) -> bool:
        return self.failed > 0 and self.passed == 0


@dataclass(frozen=True)
class AcceptanceInfo:
    engine: str
    kinds: tuple[PairKind, ...]
    per_kind: int
    results: RunResult
    bases: tuple[tuple[str, str], ...] = ()  # (what it judges, the reference's basis)
    unrun: tuple[Unrun, ...] = ()
    skipped: tuple[tuple[str, str], ...] = ()  # (kind, why)
    unmanaged: tuple[str, ...] = ()
    paths: tuple[FailedPath, ...] = ()
    links: tuple[LinkCounters, ...] = ()
    waves: int = 0
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def complete(self) -> bool:
        return not self.unrun
