"""Options several commands share, declared once so their names and help agree."""

from __future__ import annotations

from typing import Annotated

import typer

from flatfab.cli.output import Format

FormatOpt = Annotated[Format, typer.Option("--format", "-f", help="table or json")]
WorkersOpt = Annotated[int, typer.Option("--workers", min=1, max=500,
                                         help="devices worked on at once")]
BreakLockOpt = Annotated[bool, typer.Option(
    "--break-lock", help="take over a lock held from another host whose run is gone "
    "(its runs are then treated as interrupted)")]
