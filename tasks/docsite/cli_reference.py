"""The CLI reference: every command and option of `flatfab`, from the Typer app itself.

Each command's usage, help and options are what `flatfab <command> --help` prints (click's
help records), so a command or option added to the CLI appears here at the next build.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from typing import Any

import typer.main

from flatfab.cli.app import app
from flatfab.docsite.markdown import anchor, code, prose, table


def _commands(command: Any, ctx: Any) -> Iterator[tuple[Any, Any]]:
    """(command, its context) for the group and every command below it, in the order its
    `--help` lists them."""
    yield command, ctx
    if _is_group(command):
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            if sub is None or sub.hidden:
                continue
            yield from _commands(sub, _context(sub, name, ctx))


def _is_group(command: Any) -> bool:
    return hasattr(command, "list_commands")


def _context(command: Any, name: str, parent: Any = None) -> Any:
    """A context for `command` (the click Typer is built on: no parsing, no callback)."""
    return command.context_class(command, info_name=name, parent=parent)


def _option_rows(command: Any, ctx: Any) -> list[tuple[str, str]]:
    rows = []
    for param in command.get_params(ctx):
        if getattr(param, "hidden", False) or "--help" in param.opts:
            continue
        record = param.get_help_record(ctx)
        if record is None:  # an argument: click lists none, typer's help names it
            name = param.make_metavar(ctx) if hasattr(param, "make_metavar") else param.name
            record = (str(name), getattr(param, "help", None) or "")
        rows.append((code(record[0]), prose(record[1])))
    return rows


def markdown() -> str:
    """One section per command: its help, usage and options, global options first."""
    root = typer.main.get_command(app)
    lines: list[str] = []
    for command, ctx in _commands(root, _context(root, "flatfab")):
        path = ctx.command_path  # "flatfab lab up"
        level = "##" if ctx.parent is None or ctx.parent.parent is None else "###"
        lines += ["", f"{level} {code(path)} {{#{anchor(path)}}}", ""]
        if command.help:
            lines += [prose(inspect.cleandoc(command.help).replace("\b\n", "")), ""]
        usage = command.get_usage(ctx).removeprefix("Usage: ")
        lines += ["```text", usage, "```"]
        rows = _option_rows(command, ctx)
        if rows:
            what = "Global options (before the command)" if ctx.parent is None else "Options"
            lines += ["", f"{what}:", "", *table(("option", "what it does"), rows)]
        if _is_group(command) and ctx.parent is not None:
            subs = list(command.list_commands(ctx))
            lines += ["", "Commands: " + ", ".join(
                f"[{code(f'{path} {name}')}](#{anchor(f'{path} {name}')})" for name in subs)
                + "."]
    return "\n".join(lines).strip() + "\n"
