"""`flatfab sot`: import a fabric from the source of truth, and check the two agree."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from flatfab.cli.console import Format, console, emit_json, err_console
from flatfab.cli.context import project_of
from flatfab.cli.options import FormatOpt

if TYPE_CHECKING:
    from flatfab.checks import Finding
    from flatfab.model.state import FabricState
    from flatfab.sot.snapshot import Snapshot
    from flatfab.sot.source import NautobotSource
    from flatfab.workflows.commands.audit import SotChecks
    from flatfab.workflows.project.layout import Project

sot_app = typer.Typer(no_args_is_help=True, help="The source of truth (Nautobot): import the "
                      "fabric from it, check where it and the intent disagree.")


def read(project: Project) -> tuple[NautobotSource, Snapshot]:
    from flatfab.platforms.registry import loopback_names
    from flatfab.sot.client import Nautobot
    from flatfab.sot.nautobot import read_snapshot
    from flatfab.sot.source import load_source

    source = load_source(project.inventory_dir)
    token = source.token(str(project.inventory_dir / "source.yaml"))
    with Nautobot(source.url, token) as api:
        return source, read_snapshot(api, source.filters, loopback_names())


def audit_checks(project: Project) -> SotChecks:
    """The source-of-truth checks an audit adds (the snapshot is read once, up front)."""
    from flatfab.sot.audit import SOT_CHECKS, sot_findings

    source, snapshot = read(project)

    def judge(observed: FabricState) -> list[Finding]:
        return sot_findings(snapshot, observed, source.mapping, project.plan)

    return list(SOT_CHECKS), judge


@sot_app.command("import")
def import_(ctx: typer.Context,
            write: Annotated[bool, typer.Option(
                "--write", help="write the intent files (default: show the diff only)")] = False,
            fmt: FormatOpt = Format.TABLE) -> None:
    """Edit intents/<fabric>/ to what the source of truth holds; a dry run by default."""
    from flatfab.sot.workflow import run_import

    project = project_of(ctx)
    source, snapshot = read(project)
    report = run_import(snapshot, project.intent_dir, source.mapping, write=write)
    if fmt is Format.JSON:
        emit_json({"fabric": project.fabric, "source": source.api_url, "changed": report.changed,
                   "written": report.written, "notes": report.notes, "diff": report.diff})
        return
    if report.diff:
        console.print(escape(report.diff), end="", highlight=False, soft_wrap=True)
    for note in report.notes:
        err_console.print(f"[yellow]note:[/] {escape(note)}", soft_wrap=True)
    what = ("no changes: the intent already says what the source holds" if not report.changed
            else f"{'wrote' if report.written else 'would change'} "
            f"{', '.join(report.changed)}{'' if report.written else ' (--write to write)'}")
    err_console.print(f"sot import {project.fabric}: {what}")


@sot_app.command()
def sync(ctx: typer.Context,
         write: Annotated[bool, typer.Option(
             "--write", help="write to Nautobot (default: list the changes only)")] = False,
         create: Annotated[bool, typer.Option(
             "--create", help="also create the planned devices, ports (every server NIC) "
             "and cables Nautobot lacks, in the location the source's filters name")] = False,
         fmt: FormatOpt = Format.TABLE) -> None:
    """Write what the planner allocated (ASNs, where each switch sits, VRFs, loopbacks,
    sub-interfaces, link addresses) onto the devices Nautobot holds, with --create also the
    devices, ports and cables; never deletes; a dry run by default."""
    from flatfab.sot.client import Nautobot
    from flatfab.sot.source import load_source
    from flatfab.sot.sync import sync as run_sync
    from flatfab.workflows.runs.journal import Journal

    project = project_of(ctx)
    source = load_source(project.inventory_dir)
    token = source.token(str(project.inventory_dir / "source.yaml"))
    journal = None
    if write:  # every write is recorded before it is sent, an update with what it replaces
        journal = Journal.start(project.state_dir, "sot-sync", project.fabric)
        journal.event("source", url=source.api_url, filters=dict(source.filters),
                      **({"create": True} if create else {}))
    with Nautobot(source.url, token) as api:
        report = run_sync(api, project.plan, project.intent, dict(source.filters),
                          write=write, journal=journal, create=create)
    if journal is not None:
        journal.event("end", changes=len(report.changes), skipped=report.skipped)
        err_console.print(f"journal: {journal.directory}", soft_wrap=True)
    if fmt is Format.JSON:
        emit_json({"fabric": project.fabric, "source": source.api_url,
                   "written": report.written, "skipped": report.skipped,
                   "changes": [str(c) for c in report.changes]})
        return
    for change in report.changes:
        console.print(escape(str(change)), highlight=False)
    for note in report.skipped:
        err_console.print(f"[yellow]skipped:[/] {escape(note)}", soft_wrap=True)
    what = ("no changes: Nautobot already holds what the plan allocated"
            if not report.changes else f"{len(report.changes)} changes "
            f"{'written' if report.written else 'to write (--write to write)'}")
    err_console.print(f"sot sync {project.fabric}: {what}")


@sot_app.command()
def check(ctx: typer.Context, fmt: FormatOpt = Format.TABLE) -> None:
    """Where the source of truth and the intent disagree, each naming the source object."""
    from rich.table import Table

    from flatfab.sot.workflow import run_check

    project = project_of(ctx)
    source, snapshot = read(project)
    found = run_check(snapshot, project.intent_dir, source.mapping)
    if fmt is Format.JSON:
        emit_json({"fabric": project.fabric, "source": source.api_url, "agree": not found,
                   "disagreements": [{"device": d.device, "object": d.subject,
                                      "message": d.message} for d in found]})
    else:
        table = Table(title=f"{project.fabric} against {source.api_url}", title_justify="left")
        for column in ("device", "object", "disagreement"):
            table.add_column(column, overflow="fold")
        for item in found:
            table.add_row(item.device, item.subject, item.message)
        if found:
            console.print(table)
        err_console.print(f"sot check {project.fabric}: "
                          f"{'agree' if not found else f'{len(found)} disagreements'}")
    if found:
        raise typer.Exit(1)
