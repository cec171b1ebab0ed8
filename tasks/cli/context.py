"""The Project every subcommand works on, set by the top-level callback."""

from __future__ import annotations

import typer

from flatfab.workflows.project import Project


def project_of(ctx: typer.Context) -> Project:
    project = ctx.find_root().obj
    assert isinstance(project, Project)
    return project
