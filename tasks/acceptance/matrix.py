"""The pair results laid out as a matrix a report renders: rows are sources, columns are
destinations, each cell the figure and its verdict (None: that pair was not measured).
Data only; how it looks is the report's."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from flatfab.acceptance.results import NicRef, PairKind, PairResult
from flatfab.acceptance.verdict import Outcome


@dataclass(frozen=True)
class Cell:
    figure_gbps: float
    reference_gbps: float
    outcome: Outcome
    margin: float
    kind: PairKind


@dataclass(frozen=True)
class PairMatrix:
    engine: str | None  # the engine the cells are of (None: the results had one only)
    rows: tuple[NicRef, ...]  # sources, sorted
    columns: tuple[NicRef, ...]  # destinations, sorted
    cells: tuple[tuple[Cell | None, ...], ...]  # cells[row][column]

    def cell(self, source: NicRef, destination: NicRef) -> Cell | None:
        return self.cells[self.rows.index(source)][self.columns.index(destination)]


def pair_matrix(pairs: Iterable[PairResult], engine: str | None = None) -> PairMatrix:
    """The matrix of `pairs` (of `engine` only, when given). Two results for one cell are
    refused: a matrix shows one figure per pair, so mixed engines need `engine`."""
    chosen = [p for p in pairs if engine is None or p.engine == engine]
    by_pair: dict[tuple[NicRef, NicRef], PairResult] = {}
    for result in chosen:
        key = (result.source, result.destination)
        if key in by_pair:
            raise ValueError(f"two results for {result.source} -> {result.destination} "
                             f"({by_pair[key].engine}, {result.engine}): choose an engine")
        by_pair[key] = result
    rows = tuple(sorted({p.source for p in chosen}))
    columns = tuple(sorted({p.destination for p in chosen}))
    cells = tuple(tuple(_cell(by_pair.get((row, column))) for column in columns)
                  for row in rows)
    return PairMatrix(engine=engine, rows=rows, columns=columns, cells=cells)


def _cell(result: PairResult | None) -> Cell | None:
    if result is None:
        return None
    return Cell(figure_gbps=result.figure_gbps, reference_gbps=result.reference_gbps,
                outcome=result.verdict.outcome, margin=result.verdict.margin,
                kind=result.kind)
