"""`flatfab init`: start a project of one's own from an example fabric."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from flatfab import bundled
from flatfab.cli.console import console

# the switch roles --platform takes (flatfab.scaffold.choices.ROLES, which a test keeps equal:
# naming them here keeps the planner's models out of `--help`)
ROLES = ("superspine", "spine", "leaf")


def init(ctx: typer.Context,
         directory: Annotated[Path | None, typer.Argument(
             help="the project folder, made if missing (default: --root, else this one)",
             show_default=False)] = None,
         example: Annotated[str, typer.Option(
             help="the example fabric to start from: "
             + ", ".join(bundled.examples()))] = bundled.DEFAULT_EXAMPLE,
         fabric: Annotated[str | None, typer.Option(
             help="the new fabric's name (intents/<fabric>/; default: the global --fabric, "
             "else the example's)", show_default=False)] = None,
         platform: Annotated[list[str] | None, typer.Option(
             "--platform", metavar="P | ROLE=P",
             help="the switches' platform: P for every switch, ROLE=P for one role ("
             + ", ".join(ROLES) + "); repeat for several roles (default: the example's)",
             show_default=False)] = None,
         ) -> None:
    """Write a new project: flatfab.yaml, the intent, a commented inventory, runbooks."""
    from flatfab.scaffold.init import init as write_project

    top = ctx.find_root().params
    fabric = fabric or top.get("fabric")
    target = directory if directory is not None else top.get("root") or Path()
    shown = str(target)
    built = write_project(Path(target), example=example, fabric=fabric,
                          platform_values=platform or [], shown=shown)
    groups: dict[str, int] = {}
    for path in built.files:
        head = path.rsplit("/", 1)[0] + "/" if "/" in path else path
        groups[head] = groups.get(head, 0) + 1
    listed = ", ".join(f"{head} ({count})" if head.endswith("/") else head
                       for head, count in groups.items())
    console.print(f"wrote fabric {built.fabric} (from example {built.example}, "
                  f"{len(built.plan.devices)} devices) into {escape(shown)}: {escape(listed)}",
                  soft_wrap=True)
    go = "" if Path(target).resolve() == Path.cwd().resolve() else f"cd {escape(shown)}; "
    console.print(f"next: {go}flatfab plan; flatfab check; then replace the placeholder "
                  f"addresses and user names in inventory/{built.fabric}/ (README.md says "
                  "what comes after)", soft_wrap=True)
