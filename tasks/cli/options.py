"""Options several commands share, declared once so their names and help agree (light,
as tasks/cli/console.py: command modules import them at start)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from flatfab.cli.console import Format

FormatOpt = Annotated[Format, typer.Option("--format", "-f", help="table or json")]
WorkersOpt = Annotated[int, typer.Option("--workers", min=1, max=500,
                                         help="devices worked on at once")]
BreakLockOpt = Annotated[bool, typer.Option(
    "--break-lock", help="take over a lock held from another host whose run is gone "
    "(its runs are then treated as interrupted)")]
ShardByOpt = Annotated[str | None, typer.Option(
    "--shard-by", help="with --distributed: pod, plane, su or leaves:N (default: pod where "
    "the fabric has pods, else leaves:8)")]
TimeoutOpt = Annotated[float | None, typer.Option(
    "--timeout", min=1, help="with --distributed: seconds to wait for every shard (default "
    "900)")]
SchedulerOpt = Annotated[list[Path] | None, typer.Option(
    "--scheduler", dir_okay=False, help="also judge a scheduler topology in use against the "
    "plan (and, with verify, where LLDP sees each server): a Slurm topology.conf, or "
    "Kubernetes nodes (kubectl get nodes -o json); repeatable")]
