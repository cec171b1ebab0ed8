"""`flatfab cluster`: what the cluster's schedulers read about the fabric, written from the
plan (Slurm's topology.conf, Kubernetes node labels)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from flatfab import exitcodes
from flatfab.cli.console import console, err_console
from flatfab.cli.context import project_of
from flatfab.errors import InputError

cluster_app = typer.Typer(no_args_is_help=True, help="The cluster's side: the scheduler "
                          "topology (Slurm topology.conf, Kubernetes node labels) from the "
                          "plan.")

OutOpt = Annotated[Path | None, typer.Option(
    "--out", help="write it to this file (default: standard output)")]


def _emit(text: str, out: Path | None, what: str) -> None:
    from flatfab.atomic import write_atomic

    if out is None:
        console.print(text, end="", highlight=False, markup=False, soft_wrap=True)
        return
    try:
        write_atomic(out, text)
    except OSError as error:
        raise InputError.single("--out", str(out), f"cannot write it: {error}") from None
    err_console.print(f"wrote {what} {escape(str(out))}", soft_wrap=True)


@cluster_app.command()
def topology(ctx: typer.Context,
             plane: Annotated[int | None, typer.Option(
                 min=1, help="only this plane's switches (a multi-plane fabric)")] = None,
             out: OutOpt = None) -> None:
    """Slurm's topology.conf (TopologyPlugin=topology/tree) from the plan: each block of
    nodes on the same leaves, the spines and super-spines above."""
    from flatfab.cluster import slurm, tree

    project = project_of(ctx)
    plan = project.plan
    planes = sorted({d.plane for d in plan.devices.values() if d.plane is not None})
    if plane is not None and plane not in planes:
        there = f"its planes are {', '.join(map(str, planes))}" if planes else "it has none"
        raise InputError.single("--plane", str(plane), f"not a plane of fabric "
                                f"{project.fabric} ({there})")
    _emit(slurm.render(tree.planned_tree(plan, plane)), out, "Slurm topology")


@cluster_app.command()
def labels(ctx: typer.Context, out: OutOpt = None,
           apply: Annotated[bool, typer.Option(
               "--apply", help="set them on the cluster's nodes with the Kubernetes client "
               "(flatfab's labels only; a node not in the cluster is named, never "
               "created)")] = False,
           kubeconfig: Annotated[Path | None, typer.Option(
               help="with --apply: the kubeconfig (default: KUBECONFIG, ~/.kube/config)")]
           = None,
           context: Annotated[str | None, typer.Option(
               help="with --apply: the kubeconfig context (default: its current one)")]
           = None) -> None:
    """Kubernetes node labels from the plan (fabric.flatfab.io/: fabric, pod, block, su,
    leaf, rail-<n>): a manifest for server-side apply, or set with --apply."""
    from flatfab.cluster import labels as node_labels
    from flatfab.cluster import tree

    project = project_of(ctx)
    if not apply and (kubeconfig is not None or context is not None):
        raise InputError.single("--kubeconfig" if kubeconfig else "--context", "",
                                "only with --apply")
    plan = project.plan
    try:
        wanted = node_labels.node_labels(plan, tree.planned_tree(plan))
    except node_labels.LabelsError as error:
        raise InputError.single("labels", "", str(error)) from None
    if not apply:
        _emit(node_labels.manifest(wanted, project.fabric), out, "node labels")
        return
    from flatfab.workflows.commands.node_labels import apply_labels

    result = apply_labels(wanted, kubeconfig, context)
    for node, change in result.changed.items():
        console.print(f"{escape(node)}: {escape(change)}", soft_wrap=True)
    for node in result.missing:
        err_console.print(f"[yellow]not in the cluster:[/] {escape(node)}", soft_wrap=True)
    err_console.print(f"labels {project.fabric}: {len(result.changed)} nodes changed, "
                      f"{len(result.unchanged)} already labelled, {len(result.missing)} not "
                      "in the cluster", soft_wrap=True)
    if result.missing:  # changes that did not land
        raise typer.Exit(exitcodes.FINDINGS)
