"""The Project every subcommand works on, set by the top-level callback, and the Nornir
a command reads devices through."""

from __future__ import annotations

import typer
from nornir.core import Nornir

from flatfab.sot import inventory as sot_inventory
from flatfab.workflows.connections import with_timeouts
from flatfab.workflows.project import Project


def project_of(ctx: typer.Context) -> Project:
    project = ctx.find_root().obj
    assert isinstance(project, Project)
    return project


def nornir_for(project: Project, workers: int) -> Nornir:
    """The fabric's Nornir (inventory files or Nautobot), with the run's timeouts."""
    return with_timeouts(sot_inventory.build(project.inventory_dir, project.plan, workers,
                                             project.address_spaces), project.timeouts)
