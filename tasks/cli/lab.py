"""`flatfab lab`: generate the containerlab topology, bring the lab up, inspect it, tear it down."""

from __future__ import annotations

import time
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any

import typer

from flatfab.cli.console import Format, console, emit_json, err_console
from flatfab.cli.context import project_of
from flatfab.errors import InputError

if TYPE_CHECKING:
    from flatfab.lab import topology, which
    from flatfab.workflows.project.layout import Project

lab_app = typer.Typer(no_args_is_help=True, help="The fabric's lab: containerlab topology, "
                      "realized without Docker (embedded) or by containerlab.")


class Runtime(StrEnum):
    EMBEDDED = "embedded"
    CLAB = "clab"


PrefixOpt = Annotated[str | None, typer.Option(
    help="name prefix of every lab object (default: the topology's)")]
SubnetOpt = Annotated[str | None, typer.Option(
    "--mgmt-subnet", help="management IPv4 subnet (default: the topology's)")]
RuntimeOpt = Annotated[Runtime, typer.Option(help="embedded (netns) or clab (containerlab)")]


def _generate(project: Project, prefix: str, subnet: str) -> tuple[dict[str, Any],
                                                                   dict[str, str]]:
    from flatfab.lab import topology

    options = topology.LabOptions(prefix=prefix, mgmt_subnet=subnet)
    return topology.generate(project.plan, options, project.address_spaces)


@lab_app.command()
def generate(ctx: typer.Context, prefix: PrefixOpt = None, mgmt_subnet: SubnetOpt = None) -> None:
    """Write labs/<fabric>.clab.yml (and the files it binds) from the intent."""
    from flatfab.lab import topology

    project = project_of(ctx)
    defaults = topology.LabOptions()
    doc, files = _generate(project, prefix or defaults.prefix,
                           mgmt_subnet or defaults.mgmt_subnet)
    path = topology.write(doc, files, project.labs_dir)
    err_console.print(f"wrote {path} ({len(doc['topology']['nodes'])} nodes, "
                      f"{len(doc['topology']['links'])} links) and {len(files)} bound files")


def _spec(project: Project, prefix: str | None, subnet: str | None) -> topology.LabSpec:
    from flatfab.lab import topology
    from flatfab.yamlio import dump_yaml, read_text_file

    path = project.topology_file
    if not path.exists():
        raise InputError.single(str(path), "", "topology not found; run `flatfab lab generate`")
    spec = topology.read(path)
    expected, files = _generate(project, spec.prefix, str(spec.mgmt_subnet))
    fresh = topology.HEADER.format(fabric=expected["name"]) + dump_yaml(expected)
    stale = read_text_file(path, str(path)) != fresh or any(
        not (project.labs_dir / rel).exists()
        or read_text_file(project.labs_dir / rel, str(project.labs_dir / rel)) != text
        for rel, text in files.items())
    if stale:
        raise InputError.single(str(path), "", f"out of date with {project.intent_dir}; run "
                                "`flatfab lab generate`")
    if subnet:
        topology.check_mgmt_overlap(project.plan, topology.check_mgmt_subnet(subnet),
                                    project.address_spaces)
    return topology.read(path, prefix=prefix, mgmt_subnet=subnet) if prefix or subnet else spec


@lab_app.command()
def up(ctx: typer.Context, prefix: PrefixOpt = None, mgmt_subnet: SubnetOpt = None,
       runtime: RuntimeOpt = Runtime.EMBEDDED,
       gnmi_mutual_tls: Annotated[bool, typer.Option(
           "--gnmi-mutual-tls",
           help="the switches' gNMI targets also require a client certificate (the lab CA "
                "signs one; the inventory names it)")] = False) -> None:
    """Bring the lab up and write a Nornir inventory that points at it (see --inventory)."""
    from flatfab import extras
    from flatfab.lab import clab
    from flatfab.lab import gnmi as lab_gnmi
    from flatfab.lab.netns import NetnsRuntime
    from flatfab.workflows.devices import inventory
    from flatfab.workflows.runs.runstate import abandon_interrupted

    project = project_of(ctx)
    if gnmi_mutual_tls and runtime is Runtime.CLAB:
        raise InputError.single("--gnmi-mutual-tls", "", "the embedded lab's gNMI targets "
                                "only: containerlab's switches run their own")
    if gnmi_mutual_tls and not extras.installed("telemetry"):
        raise InputError.single("--gnmi-mutual-tls", "", "the switches serve no gNMI without "
                                "flatfab's telemetry extra (pip install 'flatfab[telemetry]')")
    spec = _spec(project, prefix, mgmt_subnet)
    started = time.monotonic()
    if runtime is Runtime.CLAB:
        clab.up(spec.file)
        err_console.print(f"containerlab deployed {spec.file} in "
                          f"{time.monotonic() - started:.1f} s")
        return
    inventory.refuse_hand_written(project.inventory_dir)
    runtime_ = NetnsRuntime(spec, gnmi_mutual_tls=gnmi_mutual_tls)
    serves_gnmi = extras.installed("telemetry")
    if not serves_gnmi:
        err_console.print("[dim]lab up: the switches serve no gNMI (flatfab's telemetry extra "
                          "is not installed: pip install 'flatfab[telemetry]'); flatfab watch "
                          "polls them", soft_wrap=True)
    state = runtime_.up(progress=lambda step: err_console.print(f"[dim]lab up: {step}"))
    paths = runtime_.paths
    files = inventory.lab_inventory(
        project.plan, state.nodes, user=paths.user, key_file=paths.client_key,
        known_hosts=paths.known_hosts,
        lldp_sockets={n.name: paths.lldp_socket(n.name) for n in spec.nodes.values()
                      if n.role != "host"},
        lldp_vrf_sockets={n.name: [paths.lldp_vrf_socket(n.name, v) for v in n.vrfs]
                          for n in spec.nodes.values() if n.role != "host" and n.vrfs},
        gnmi={n.name: lab_gnmi.inventory_entry(paths.root, mutual_tls=gnmi_mutual_tls)
              for n in spec.nodes.values() if n.role != "host" and serves_gnmi})
    target = project.inventory_dir
    inventory.write(target, files)
    for run_id in abandon_interrupted(project.state_dir, project.fabric, "lab recreated"):
        err_console.print(f"[dim]lab up: run {run_id} was interrupted on the old lab; "
                          "marked abandoned")
    console.print(f"lab {spec.name} up (prefix {spec.prefix}, management {spec.mgmt_subnet}): "
                  f"{len(spec.nodes)} nodes, {len(spec.links)} links in "
                  f"{time.monotonic() - started:.1f} s; inventory in {target}")


def _target(project: Project, prefix: str | None, *, sweep: bool = False) -> which.Target:
    """The lab this fabric's `lab up` made (or the prefix named, if no other fabric's lab is
    up there)."""
    from flatfab.lab import topology, which

    default = (topology.read(project.topology_file).prefix if project.topology_file.exists()
               else topology.LabOptions().prefix)
    return which.target(project.topology_file, project.fabric, default,
                        topology.check_prefix(prefix) if prefix else None, sweep=sweep)


@lab_app.command()
def down(ctx: typer.Context, prefix: PrefixOpt = None,
         sweep: Annotated[bool, typer.Option(
             "--sweep", help="remove everything of the prefix even without lab state")] = False,
         runtime: RuntimeOpt = Runtime.EMBEDDED) -> None:
    """Tear the lab down and leave nothing behind."""
    from flatfab.lab import clab
    from flatfab.lab.netns import teardown

    project = project_of(ctx)
    started = time.monotonic()
    if runtime is Runtime.CLAB:
        clab.down(project.topology_file)
        return
    lab = _target(project, prefix, sweep=sweep)
    paths = lab.paths
    if lab.state is None and not sweep:
        console.print(f"no lab of fabric {project.fabric} is up (prefix {paths.prefix!r}; use "
                      "--sweep after a crash)")
        return
    teardown(paths, None if sweep else lab.state)
    console.print(f"lab {paths.prefix} down in {time.monotonic() - started:.1f} s")


@lab_app.command("clear-counters")
def clear_counters(ctx: typer.Context, prefix: PrefixOpt = None,
                   node: Annotated[list[str] | None, typer.Option(
                       help="a node to clear (repeatable; default: every node)")] = None,
                   ) -> None:
    """Clear the lab's link-flap counts, as `clear counters` on a switch after work that
    bounced links: `verify --physical` counts every flap of the last hour until then."""
    from flatfab.lab.netns import clear_counters as clear
    from flatfab.lab.system import LabError

    project = project_of(ctx)
    lab = _target(project, prefix)
    if lab.state is None:
        raise LabError(f"no lab of fabric {project.fabric} is up (prefix {lab.paths.prefix!r})")
    cleared = clear(lab.paths, lab.state, node or ())
    console.print(f"lab {lab.paths.prefix}: counters cleared on {len(cleared)} nodes")


@lab_app.command()
def status(ctx: typer.Context, prefix: PrefixOpt = None, runtime: RuntimeOpt = Runtime.EMBEDDED,
           fmt: Annotated[Format, typer.Option("--format", "-f")] = Format.TABLE) -> None:
    """List nodes, their namespaces, management addresses and health."""
    from rich.table import Table

    from flatfab.lab import clab
    from flatfab.lab.netns import NetnsRuntime

    project = project_of(ctx)
    if runtime is Runtime.CLAB:
        rows = clab.status(project.topology_file)
    else:
        lab = _target(project, prefix)
        rows = NetnsRuntime.status_of(lab.paths) if lab.state else []
    healthy = bool(rows) and all(r["healthy"] for r in rows)
    if fmt is Format.JSON:
        emit_json({"up": bool(rows), "healthy": healthy, "nodes": rows})
    elif not rows:
        console.print(f"no lab of fabric {project.fabric} is up")
    else:
        table = Table(title_justify="left", title="lab status")
        for column in ("node", "role", "netns", "mgmt", "ssh", "processes", "health"):
            table.add_column(column)
        for row in rows:
            procs = " ".join(f"{n}{'' if ok else '!'}" for n, ok in row["processes"].items())
            table.add_row(row["node"], row["role"], row["netns"], row["mgmt_ipv4"],
                          "ok" if row["ssh"] else "down", procs,
                          "[green]healthy" if row["healthy"] else "[red]unhealthy")
        console.print(table)
    raise typer.Exit(0 if healthy or not rows else 1)
