"""`flatfab watch`: stream the fabric's lossless counters and judge them live, read-only.

Switches with a gNMI target in the inventory (`connection_options.gnmi`, see
tasks/telemetry/targets.py) are subscribed to; the others are polled for their class
counters where their platform keeps any. At the end the active findings are printed as
`verify` prints its own: exit 0 none, 1 findings, 2 could not run, 3 a device watched and
never heard (each named with why), nothing heard is wrong. `--report-dir` also
writes them, with what was raised and cleared, in every format `audit --report-dir` writes
(flatfab-watch-<fabric>.html, .json, .junit.xml, .md, .prom).
"""

from __future__ import annotations

import sys
import time
from contextlib import nullcontext
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.live import Live
from rich.markup import escape

from flatfab.cli.console import Format, console, emit_json, err_console
from flatfab.cli.context import nornir_for, project_of
from flatfab.cli.options import FormatOpt, WorkersOpt
from flatfab.errors import FlatfabError, InputError
from flatfab.extras import require

if TYPE_CHECKING:
    from flatfab.model.state import FabricState
    from flatfab.telemetry.metrics import MetricsServer, TelemetryMetrics
    from flatfab.workflows.commands.watch import TickView, WatchResult

def parse_listen(value: str) -> tuple[str, int]:
    """HOST:PORT (IPv6 in brackets) for --prometheus."""
    host, sep, port = value.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) < 65536:
        raise InputError.single("--prometheus", "", f"{value!r} is not HOST:PORT "
                                "(e.g. 127.0.0.1:9464)")
    return host, int(port)


def parse_args(interval: str | None, duration: str | None, count: str | None,
               ) -> tuple[float | None, float | None, int | None]:
    """The timing options, parsed here so a bad value is one line like every other error
    (seconds, or 30s / 15m / 1h)."""
    from flatfab.workflows.commands.audit import parse_duration

    seconds = [None if text is None else parse_duration(text, option)
               for text, option in ((interval, "--interval"), (duration, "--duration"))]
    rounds = None
    if count is not None:
        if not count.strip().isdigit() or int(count) < 1:
            raise InputError.single("--count", "", f"{count!r} is not a whole number >= 1")
        rounds = int(count)
    if duration is not None and count is not None:
        raise InputError.single("--duration", "", "give --duration or --count, not both")
    return seconds[0], seconds[1], rounds


def _exporter(listen: tuple[str, int] | None, plan: FabricState, devices: list[str]
              ) -> tuple[TelemetryMetrics, MetricsServer] | None:
    """The Prometheus exporter on HOST:PORT (a port it cannot bind: one line, exit 2)."""
    if listen is None:
        return None
    from flatfab.telemetry.metrics import TelemetryMetrics

    metrics = TelemetryMetrics(targets=devices, plan=plan)
    server = metrics.serve(listen[0], listen[1])
    err_console.print(f"serving metrics for Prometheus on {server.url}", soft_wrap=True)
    return metrics, server


def watch(ctx: typer.Context,
          interval: Annotated[str | None, typer.Option(
              help="seconds per sample and judgement, e.g. 10, 0.5, 30s, 1m (default: the "
              "intent's telemetry.interval_s)")] = None,
          duration: Annotated[str | None, typer.Option(
              help="stop after this long, e.g. 30, 90s, 15m (default: run until Ctrl-C)")
          ] = None,
          count: Annotated[str | None, typer.Option(
              help="stop after this many intervals")] = None,
          prometheus: Annotated[str | None, typer.Option(
              help="also serve the metrics for Prometheus on HOST:PORT")] = None,
          report_dir: Annotated[Path | None, typer.Option(
              help="at the end, write the findings and what was raised and cleared in every "
              "report format here (html, json, junit.xml, md, prom)")
          ] = None,
          shards: Annotated[int, typer.Option(
              min=1, max=64, help="gNMI subscriber processes (1: all in this process, "
              "which keeps up with 1,000 switches of 64 ports; more for larger fleets)")] = 1,
          workers: WorkersOpt = 20, fmt: FormatOpt = Format.TABLE) -> None:
    """Stream lossless counters (gNMI, else polling) and show live findings; read-only."""
    from flatfab import reports
    from flatfab.intent.thresholds import thresholds_of
    from flatfab.outdir import ready_dir
    from flatfab.telemetry.targets import gnmi_targets
    from flatfab.telemetry.view import PortCounts, render
    from flatfab.workflows.commands.watch import NornirPoller, Watch, pollable
    from flatfab.workflows.commands.watch_report import History, watch_report

    interval_s, duration_s, rounds = parse_args(interval, duration, count)
    listen = parse_listen(prometheus) if prometheus is not None else None
    if listen is not None:
        require("telemetry", "flatfab watch --prometheus")
    # an unwritable folder is refused now, not after an hour of watching
    out_dir = ready_dir(report_dir, "--report-dir") if report_dir is not None else None
    project = project_of(ctx)
    limits = thresholds_of(project.intent.qos.telemetry)
    if interval_s is not None:
        limits = replace(limits, interval_s=interval_s)
    nornir = nornir_for(project, workers)
    targets = gnmi_targets(nornir, project.inventory_dir)
    others = [d for d in project.plan.devices if d not in targets]
    polled, blind = pollable(project.plan, others)
    if not targets and not polled:
        raise FlatfabError(f"nothing to watch in {project.inventory_dir}: no device has a "
                           "gNMI target (connection_options.gnmi) or class counters to poll")
    live = fmt is Format.TABLE and err_console.is_terminal
    note = _notes(len(targets), polled, blind, project.plan.devices)
    unmanaged = project.plan.unmanaged()
    if unmanaged:
        note += (f"; {len(unmanaged)} unmanaged hosts not watched (never connected to: their "
                 "NIC counters are not judged)")
    err_console.print(note, soft_wrap=True)
    poller = NornirPoller(nornir, project.plan, polled) if polled else None
    lines: list[str] = []

    def said(line: str) -> None:
        lines.append(line)
        del lines[:-5]  # the view keeps the last few; each was printed once already
        err_console.print(escape(line), soft_wrap=True)

    # the exporter reads every reading; else they are let go once the engine has them
    runner = Watch(project.plan, limits, list(targets.values()), poller=poller, on_line=said,
                   shards=shards, keep_readings=listen is not None)
    exporter = _exporter(listen, project.plan, sorted(targets) + polled)
    counts = PortCounts()
    history = History()
    title = f"watch {project.fabric}: every {limits.interval_s:g} s"
    # the view goes to stderr: stdout carries only the report (and JSON alone)
    view = Live(render(title, counts, [], []), console=err_console, auto_refresh=False,
                transient=True) if live else None
    started = time.time()
    try:
        with view if view is not None else nullcontext():
            def ticked(tick: TickView) -> None:
                if view is not None:  # the live view's port rows
                    counts.update(tick.windows)
                if tick.changes:
                    history.record(tick.number, time.time(), tick.changes)
                if exporter is not None:
                    exporter[0].observe(tick.samples)
                    exporter[0].forget(tick.gone)
                    exporter[0].set_findings(tick.active)
                if view is not None:
                    view.update(render(f"{title} - tick {tick.number} "
                                       f"{time.strftime('%H:%M:%S')}", counts, tick.active,
                                       lines), refresh=True)
                elif fmt is Format.TABLE:
                    for f in tick.changes.raised:
                        err_console.print(f"raised: {escape(f.message)}", soft_wrap=True)
                    for f in tick.changes.cleared:
                        err_console.print(f"cleared: {escape(f.message)}", soft_wrap=True)

            result = runner.run(count=rounds, duration_s=duration_s, on_tick=ticked)
    finally:
        if poller is not None:
            poller.close()
        if exporter is not None:
            exporter[1].stop()
    _report(project.fabric, result, fmt, limits.interval_s)
    if out_dir is not None:
        written = reports.write_all(watch_report(
            project.plan, result, watched=runner.watched, started_epoch=started,
            duration_s=time.time() - started, interval_s=limits.interval_s,
            history=history), out_dir)
        if fmt is Format.TABLE:
            console.print(f"reports: {out_dir} (open {written['html'].name})", soft_wrap=True)
    raise typer.Exit(result.exit_code)


def _notes(streamed: int, polled: list[str], blind: list[str], devices: Any) -> str:
    parts = [f"{streamed} gNMI targets", f"{len(polled)} devices polled (class counters of "
             "switches, NIC counters of hosts)"]
    if blind:
        platforms = sorted({devices[d].platform for d in blind})
        parts.append(f"{len(blind)} not watched ({', '.join(platforms)}: no gNMI target and "
                     "nothing to poll on this platform yet)")
    return "watching " + ", ".join(parts)


def _report(fabric: str, result: WatchResult, fmt: Format, interval_s: float) -> None:
    from flatfab.cli import output
    from flatfab.reports.model import judged

    output.unread_lines(result.unread)
    if fmt is Format.JSON:
        emit_json(output.findings_json(result.findings, fabric=fabric, stage="telemetry",
                                       ticks=result.ticks, interval_s=interval_s,
                                       streamed=result.streamed, unread=result.unread,
                                       exit_code=result.exit_code))
        return
    found = output.read_findings(result.findings, result.unread)
    output.findings_table(found, f"active findings on {fabric}")
    verdicts = judged(found)
    skipped = len(found) - len(verdicts)  # an unmanaged host's NIC counters: never polled
    status = ("[red]FINDINGS" if result.failed else "[yellow]INCOMPLETE" if result.unread
              else "[green]healthy")
    ticks = f"{result.ticks} intervals" + (" (stopped by Ctrl-C)" if result.interrupted
                                           else "")
    console.print(f"watch {fabric}: {status}[/] - {ticks} of {interval_s:g} s, "
                  f"{len(result.streamed)} devices heard"
                  f"{escape(output.unread_note(result.unread))}, {len(verdicts)} findings"
                  f"{f', {skipped} not judged' if skipped else ''}", soft_wrap=True)
    sys.stdout.flush()
