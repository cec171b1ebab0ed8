"""Terminal tables and JSON for the CLI. JSON goes to stdout alone; progress to stderr."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.markup import escape
from rich.table import Table
from rich.text import Text

from flatfab.checks import Finding
from flatfab.checks.base import about_read, unread_settings
from flatfab.cli.console import console, err_console
from flatfab.model.state import FabricState, Role
from flatfab.reports.model import BurnInInfo, judged, unjudged

if TYPE_CHECKING:  # the rollout's modules (SSH, gNMI) cost a static command 0.3 s to import
    from flatfab.workflows.commands.rollout import RolloutResult


def plan_table(plan: FabricState) -> None:
    table = Table(title=f"plan of fabric {plan.fabric}: {len(plan.devices)} devices, "
                  f"{len(plan.links)} links", title_justify="left")
    for column in ("device", "role", "platform", "ASN", "loopback / address", "VRFs",
                   "BGP peers", "ports"):
        table.add_column(column)
    unmanaged = plan.unmanaged()
    for device in plan.devices.values():
        if device.role is Role.HOST:
            nic = next(iter(device.interfaces.values()))
            address = ", ".join(nic.addresses)
            vrfs = device.tenant or "default"
        else:
            address = device.loopback or ""
            vrfs = ", ".join(["default", *device.vrfs])
        peers = sum(len(b.peers) for b in device.bgp.values())
        ports = sum(1 for i in device.interfaces.values() if i.peer is not None)
        role = device.role.value + ("" if device.managed else " (unmanaged)")
        table.add_row(device.name, role, device.platform,
                      str(device.asn or ""), address, vrfs, str(peers or ""), str(ports))
    console.print(table)
    if unmanaged:
        console.print(f"unmanaged (planned and rendered, never connected to): "
                      f"{', '.join(unmanaged)}", soft_wrap=True)
    if plan.tenants:
        tenants = Table(title="tenants", title_justify="left")
        for column in ("tenant", "VRF id", "hosts", "leaf subnets"):
            tenants.add_column(column)
        for tenant in plan.tenants.values():
            tenants.add_row(tenant.name, str(tenant.vrf_id), str(len(tenant.members)),
                            ", ".join(f"{leaf} {net}" for leaf, net in tenant.subnets.items()))
        console.print(tenants)


SEVERITY_STYLE = {"critical": "bold red", "error": "red", "warning": "yellow", "info": "blue",
                  "not-judged": "magenta"}


def unread_lines(unread: dict[str, str]) -> None:
    """One line per device that could not be read, with why (stderr: stdout may be JSON)."""
    for name, reason in unread.items():
        err_console.print(Text(f"{name}: not read: {reason}", style="yellow"), soft_wrap=True)


def unread_note(unread: dict[str, str], limit: int = 10) -> str:
    """", 2 not read (leaf1, leaf2)" for a summary line; nothing when all were read."""
    if not unread:
        return ""
    names = list(unread)
    shown = ", ".join(names[:limit]) + (f" and {len(names) - limit} more"
                                        if len(names) > limit else "")
    return f", {len(names)} not read ({shown})"


def settings_note(findings: list[Finding]) -> str:
    """" (N of them leave the run incomplete)": a setting not read, an LLDP entry not settled
    (what makes a run incomplete beside unread devices)."""
    unread = len(unread_settings(findings))
    return f" ({unread} of them leave the run incomplete)" if unread else ""


def read_findings(findings: list[Finding], unread: dict[str, str]) -> list[Finding]:
    """The findings on what was read (an unread device has its own line, not a row)."""
    return about_read(findings, unread)


def findings_table(findings: list[Finding], title: str) -> None:
    """What was not judged, one row per device and reason; then the verdicts, one row each;
    then, under any of them, how to look a finding up in the catalog."""
    not_judged_table(findings)
    verdicts = judged(findings)
    if verdicts:
        _verdicts_table(verdicts, title)
    if findings:
        top = (verdicts or findings)[0].check
        console.print(Text(f"explain a finding: flatfab checks <id> (e.g. flatfab checks {top})"),
                      soft_wrap=True)


def _verdicts_table(findings: list[Finding], title: str) -> None:
    table = Table(title=title, title_justify="left", show_lines=False)
    for column in ("severity", "check", "device", "port", "VRF", "expected", "actual",
                   "finding"):
        table.add_column(column, overflow="fold")
    for f in findings:
        # device output lands in these cells: Text, so brackets are never read as markup
        cells = (f.check, f.device or "", f.port or "", f.vrf or "", f.expected, f.actual,
                 f.message + (" (virtual)" if f.virtual else ""))
        table.add_row(Text(f.severity.value, style=SEVERITY_STYLE[f.severity.value]),
                      *(Text(c) for c in cells))
    console.print(table)


def not_judged_table(findings: list[Finding]) -> None:
    """What was not judged, per device (and port) and reason, with the checks that say so."""
    rows = unjudged(findings)
    if not rows:
        return
    table = Table(title="not judged (neither passed nor failed)", title_justify="left")
    for column in ("device", "port", "why", "checks"):
        table.add_column(column, overflow="fold")
    for row in rows:
        table.add_row(Text(row.device), Text(row.port), Text(row.message),
                      Text(", ".join(row.checks)))
    console.print(table)


def checks_table(check_ids: list[str], findings: list[Finding], title: str,
                 unread: dict[str, str] | None = None, total: int = 0) -> None:
    """One row per check run: passed, how many findings of which severity, or (the check
    that names unread devices) how many devices were not read; and on how many devices it
    judged nothing. `total`: the devices the run reads (every one but the unmanaged hosts)."""
    from flatfab.catalog import entries

    table = Table(title=title, title_justify="left")
    for column in ("check", "scope", "what it asserts", "result"):
        table.add_column(column)
    known = entries()  # the checks and every kind raised outside them (traffic, scheduler)
    for check_id in check_ids:
        item = known[check_id]
        scope, title, severity = item.scope.value, item.title, item.severity
        found = [f for f in findings if f.check == check_id]
        read = about_read(found, unread or {})
        hits = judged(read)
        skipped = len(read) - len(hits)  # not judged (an unmanaged host, an unstated setting)
        missed = len(found) - len(read)  # findings that only say a device was not read
        result = (Text(f"{len(hits)} {severity.value}", style=SEVERITY_STYLE[
            max(hits, key=lambda f: -f.severity.rank).severity.value]) if hits else
            Text(f"{missed} not read", style="yellow") if missed else
            # what was not read was not judged: no pass for the whole fabric
            Text(f"pass on {total - len(unread)} of {total} devices" if total > len(unread)
                 else "nothing read", style="yellow") if unread and total else
            Text("pass", style="green") if not skipped else Text(""))
        if skipped:  # never "pass" for what it did not judge
            result.append(f"{', ' if result.plain else ''}{skipped} not judged",
                          style=SEVERITY_STYLE["not-judged"])
        table.add_row(check_id, scope, title, result)
    console.print(table)


def findings_json(findings: list[Finding], **extra: Any) -> dict[str, Any]:
    by_severity: dict[str, int] = {}
    for f in findings:
        by_severity[f.severity.value] = by_severity.get(f.severity.value, 0) + 1
    # never passed while a device or a setting it should state was not read
    passed = not any(f.severity.fails for f in findings) and not unread_settings(findings)
    return {**extra, "passed": passed,
            "findings": [f.as_dict() for f in findings], "by_severity": by_severity}


def diff_text(device: str, diff: str) -> None:
    console.rule(f"[bold]{device}")
    for line in diff.splitlines():
        style = ("green" if line.startswith("+") and not line.startswith("+++") else
                 "red" if line.startswith("-") and not line.startswith("---") else
                 "cyan" if line.startswith("@@") else "")
        console.print(Text(line, style=style))


def rollout_report(result: RolloutResult, total: int) -> None:
    """Diffs, errors, the phases and one closing line that says what happened."""
    from flatfab.workflows.commands.rollout import DeviceOutcome

    for name, outcome in result.devices.items():
        if outcome.diff:
            diff_text(name, outcome.diff)
    for name, error in result.errors.items():
        if name not in result.unread:  # unread ones have their line already (unread_lines)
            err_console.print(Text(f"{name}: {error}", style="red"), soft_wrap=True)
    if result.schedule is not None and len(result.schedule.phases) > 1:
        table = Table(title="phases", title_justify="left")
        for column in ("phase", "batches", "devices that differ"):
            table.add_column(column)
        for phase in result.schedule.phases:
            differ = [d for d in phase.devices if result.devices.get(d, DeviceOutcome()).diff]
            table.add_row(phase.phase.name, " | ".join(", ".join(b) for b in phase.batches),
                          ", ".join(differ) or "-")
        console.print(table)
        if result.schedule.unselected:
            console.print(f"not in any phase (left alone): "
                          f"{', '.join(result.schedule.unselected)}")
    if result.unmanaged:
        console.print(f"unmanaged, not touched: {', '.join(result.unmanaged)}", soft_wrap=True)
    findings_table(result.gate_findings, "gate: not passed")
    changed = result.changed
    for name, outcome in sorted(result.devices.items()):
        for note in outcome.notes:
            console.print(f"[yellow]{escape(name)}: {escape(note)}")
    if result.dry_run:
        would = sum(1 for o in result.devices.values() if o.diff)
        if result.unread:
            console.print(f"[yellow]dry run INCOMPLETE:[/] {would} of {total - len(result.unread)}"
                          f" devices read would change{escape(unread_note(result.unread))}; "
                          "nothing was pushed", soft_wrap=True)
        else:
            console.print(f"dry run: {would} of {total} devices would change; nothing was "
                          "pushed")
    elif result.status == "halted":
        console.print(f"[red]rollout halted: {escape(result.reason)}; rolled back "
                      f"{len(result.rolled_back)} devices (run {result.run_id})")
    elif result.status == "stopped":
        console.print(f"[yellow]rollout stopped: {escape(result.reason)}")
    elif result.status == "done" and result.tolerated:
        console.print(f"[yellow]rollout done with failures: {escape(result.reason)} "
                      f"(run {result.run_id})")
    elif not changed and not result.errors:
        console.print(f"no changes: all {total} devices already match the intent")
    elif result.ok:
        console.print(f"changed {len(changed)} of {total} devices; converged and confirmed "
                      f"in {result.timings.get('total_s', 0):.1f} s (run {result.run_id})"
                      f"{escape(unread_note(result.unread))}", soft_wrap=True)
    else:
        console.print(f"[red]rollout did not land (run {result.run_id})")


def burn_in_json(info: BurnInInfo) -> dict[str, Any]:
    return {"duration_s": info.duration_s, "rounds": info.rounds, "packets": info.packets,
            "links": [{"link": v.link, "a": v.a, "b": v.b, "verdict": v.verdict,
                       "reasons": list(v.reasons)} for v in info.links]}


_VERDICT_STYLE = {"accepted": "green", "rejected": "red", "not judged": "yellow"}


def burn_in_table(info: BurnInInfo, fabric: str) -> None:
    """Every physical link with its verdict and reasons, in the plan's order."""
    table = Table(title=f"burn-in {fabric}: links", title_justify="left")
    for column in ("link", "verdict", "why"):
        table.add_column(column)
    for v in info.links:
        style = _VERDICT_STYLE[v.verdict]
        table.add_row(f"{v.a} -- {v.b}", f"[{style}]{v.verdict}[/]",
                      escape("; ".join(v.reasons)))
    console.print(table)


def burn_in_summary(info: BurnInInfo, fabric: str, exit_code: int) -> str:
    counts = {word: sum(v.verdict == word for v in info.links)
              for word in ("accepted", "rejected", "not judged")}
    status = "[green]accepted" if exit_code == 0 else "[red]REJECTED" if exit_code == 1 \
        else "[yellow]INCOMPLETE"
    return (f"burn-in {fabric}: {status}[/] - {counts['accepted']} of {len(info.links)} links "
            f"accepted, {counts['rejected']} rejected, {counts['not judged']} not judged; "
            f"{info.rounds} rounds of flows, {info.packets} packets in {info.duration_s:g} s")
