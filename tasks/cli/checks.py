"""`flatfab checks`: every finding flatfab can raise, from the one catalog (flatfab.catalog),
and what one means: what it reads, expects, when it fails and what to do about it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table
from rich.text import Text

from flatfab.cli.console import Format, console, emit_json
from flatfab.cli.options import FormatOpt
from flatfab.errors import FlatfabError

if TYPE_CHECKING:
    from flatfab.catalog import Entry

# how the list's title counts each source's ids
SOURCES = {"check": "checks", "sot": "source of truth"}


def _complete(incomplete: str) -> list[str]:
    """The ids that begin with what was typed (shell completion)."""
    from flatfab.catalog import entries

    return [i for i in entries() if i.startswith(incomplete)]


def checks(finding_id: Annotated[str | None, typer.Argument(
               metavar="ID", autocompletion=_complete, show_default=False,
               help="a finding id to explain, as a finding names it (default: list them all)")
           ] = None,
           fmt: FormatOpt = Format.TABLE) -> None:
    """List every finding flatfab can raise (static, live or streamed), or explain one."""
    from flatfab.catalog import closest, entries

    found = entries()
    if finding_id is None:
        _list(list(found.values()), fmt)
        return
    entry = found.get(finding_id.strip())
    if entry is None:
        near = closest(finding_id)
        raise FlatfabError(f"no finding {finding_id!r} in the catalog; "
                           + (f"closest: {', '.join(near)}" if near else "none is close")
                           + " (`flatfab checks` lists every id)")
    if fmt is Format.JSON:
        emit_json(entry.as_dict())
    else:
        _explain(entry)


def _list(found: list[Entry], fmt: Format) -> None:
    by_source: dict[str, int] = {}
    for entry in found:
        by_source[entry.source.value] = by_source.get(entry.source.value, 0) + 1
    if fmt is Format.JSON:
        emit_json({"count": len(found), "by_source": by_source,
                   "entries": [entry.as_dict() for entry in found]})
        return
    from flatfab.cli.output import SEVERITY_STYLE

    sources = ", ".join(f"{count} {SOURCES.get(source, source)}"
                        for source, count in by_source.items())
    table = Table(title=f"every finding flatfab can raise: {len(found)} ({sources})",
                  title_justify="left")
    for column in ("id", "what it holds", "severity", "raised by"):
        table.add_column(column, overflow="fold")
    for entry in found:
        table.add_row(Text(entry.id), Text(entry.title),
                      Text(entry.severity.value, style=SEVERITY_STYLE[entry.severity.value]),
                      Text(entry.where))
    console.print(table)
    console.print("explain one: flatfab checks ID")


def _explain(entry: Entry) -> None:
    console.print(Text.assemble((entry.id, "bold"), "  ", entry.title), soft_wrap=True)
    console.print(Text(entry.facts[0].upper() + entry.facts[1:] + "."))
    for label, text in (("Reads", entry.reads), ("Expects", entry.expects),
                        ("Fails when", entry.fails_when), ("Fix", entry.fix)):
        console.print(Text.assemble((f"{label}:", "bold"), " ", text))
