"""The Project every subcommand works on, from the top-level callback's options, and the
Nornir a command reads devices through.

The project is made when a command first asks for it: help, `--version` and `init` never read
the project file or the intent, so a broken one cannot stand in their way. Like every module
of the CLI, this one imports the workflows it calls when it calls them: `--help` and shell
completion load only the commands' options.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:
    from nornir.core import Nornir

    from flatfab.workflows.project.layout import Project


@dataclass
class LazyProject:
    make: Callable[[], Project]
    _made: list[Project] = field(default_factory=list)

    def get(self) -> Project:
        if not self._made:
            self._made.append(self.make())
        return self._made[0]


def project_of(ctx: typer.Context) -> Project:
    holder = ctx.find_root().obj
    assert isinstance(holder, LazyProject)
    return holder.get()


def nornir_for(project: Project, workers: int) -> Nornir:
    """The fabric's Nornir (inventory files or Nautobot), checked before any connection,
    with the run's credentials and timeouts."""
    from flatfab.sot import inventory as sot_inventory
    from flatfab.workflows.devices.connections import with_timeouts

    return with_timeouts(sot_inventory.build(project.inventory_dir, project.plan, workers,
                                             project.address_spaces,
                                             credentials=project.credentials),
                         project.timeouts)
