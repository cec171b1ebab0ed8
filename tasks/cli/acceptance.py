"""`flatfab accept`: pairwise (iperf3, ib_write_bw) and collective (NCCL) tests between the
GPU servers, judged against the intent's references (acceptance.yaml), with the fabric's
counters before and after. Exit 0 every result reached its reference, 1 one did not, 2 bad
input, 3 something could not be run or read (each named with why), nothing measured is
wrong. `--report-dir` writes the run in every report format (flatfab-acceptance-<fabric>.*).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from flatfab.cli.console import Format, console, emit_json, err_console
from flatfab.cli.context import nornir_for, project_of
from flatfab.cli.options import FormatOpt, WorkersOpt
from flatfab.errors import InputError


def _kinds(given: list[str] | None) -> tuple[str, ...]:
    from flatfab.acceptance.results import PairKind

    known = [k.value for k in PairKind]
    if not given:
        return tuple(known)
    words = [w.strip() for item in given for w in item.split(",") if w.strip()]
    unknown = [w for w in words if w not in known]
    if unknown:
        raise InputError.single("--kinds", "", f"{unknown[0]!r}: one of {', '.join(known)}")
    return tuple(dict.fromkeys(words))


def _reference(text: str | None) -> float | None:
    if text is None:
        return None
    number = text.strip().upper().removesuffix("G").removesuffix("GBPS")
    try:
        value = float(number)
    except ValueError:
        value = 0.0
    if not value > 0:
        raise InputError.single("--reference", "", f"{text!r} is not a figure in Gb/s "
                                "(e.g. 2 or 2G)")
    return value


def accept(ctx: typer.Context,
           engine: Annotated[str, typer.Option(
               help="iperf3 (TCP, any server), ib_write_bw (RDMA NICs) or nccl "
               "(all_reduce_perf and alltoall_perf over MPI)")] = "iperf3",
           kinds: Annotated[list[str] | None, typer.Option(
               "--kinds", help="pair kinds, comma-separated or repeated: same-rail, "
               "cross-rail, cross-pod, cross-plane (default: all; cross-plane is never "
               "allowed and says why)")] = None,
           pairs: Annotated[int, typer.Option(
               min=1, max=4096, help="pairs per kind at most, spread over the fabric (nccl: "
               "servers per collective)")] = 16,
           reference: Annotated[str | None, typer.Option(
               help="the figure in Gb/s every result must reach, over acceptance.yaml and "
               "the defaults (e.g. a CPU-bound lab's 1G)")] = None,
           duration: Annotated[int | None, typer.Option(
               min=1, max=600, help="seconds per pairwise test (default: acceptance.yaml's "
               "duration_s, else 10)")] = None,
           report_dir: Annotated[Path | None, typer.Option(
               help="write the run in every report format here (html with the pair matrix, "
               "json, junit.xml, md, prom)")] = None,
           workers: WorkersOpt = 20, fmt: FormatOpt = Format.TABLE) -> None:
    """Run acceptance tests between GPU servers and judge them against the intent."""
    from flatfab import reports
    from flatfab.acceptance.results import PairKind
    from flatfab.cli import output
    from flatfab.outdir import ready_dir
    from flatfab.workflows.commands.acceptance import (
        ENGINES,
        AcceptanceOptions,
        acceptance_report,
        run_acceptance,
    )

    if engine not in ENGINES:
        raise InputError.single("--engine", "", f"{engine!r}: one of {', '.join(ENGINES)}")
    options = AcceptanceOptions(engine=engine, kinds=tuple(PairKind(k) for k in _kinds(kinds)),
                                per_kind=pairs, reference_gbps=_reference(reference),
                                duration_s=duration)
    target = ready_dir(report_dir, "--report-dir") if report_dir is not None else None
    project = project_of(ctx)
    nornir = nornir_for(project, workers)
    try:
        run = run_acceptance(nornir, project.plan, project.intent.acceptance, options,
                             tell=lambda what: err_console.print(
                                 f"accept {project.fabric}: {what}", soft_wrap=True))
    finally:
        nornir.close_connections()
    report = acceptance_report(project.plan, run)
    written = reports.write_all(report, target) if target is not None else {}
    code = report.status.exit_code
    output.unread_lines(report.unread)
    if fmt is Format.JSON:
        from flatfab.reports.acceptance import as_json

        emit_json({"fabric": project.fabric, "status": report.status_word, "exit_code": code,
                   **as_json(run.info), "findings": [f.as_dict() for f in run.findings],
                   "unread": dict(report.unread),
                   "reports": {k: str(v) for k, v in sorted(written.items())}})
    else:
        _table(run.info.results.pairs, project.fabric)
        output.findings_table(run.findings, f"acceptance findings on {project.fabric}")
        for fmt_name, path in sorted(written.items()):
            err_console.print(f"wrote {fmt_name} report {path}", soft_wrap=True)
        console.print(f"acceptance {project.fabric}: {report.status_word} (exit {code})",
                      soft_wrap=True)
    raise typer.Exit(code)


def _table(pairs: object, fabric: str) -> None:
    from flatfab.acceptance.results import PairResult

    table = Table(title=f"acceptance pairs of {fabric}")
    for column in ("source", "destination", "kind", "Gb/s", "reference", "verdict"):
        table.add_column(column)
    for pair in pairs if isinstance(pairs, tuple) else ():
        if isinstance(pair, PairResult):
            table.add_row(str(pair.source), str(pair.destination), str(pair.kind),
                          f"{pair.figure_gbps:.2f}", f"{pair.reference_gbps:.2f}",
                          pair.verdict.outcome.value)
    console.print(table)
