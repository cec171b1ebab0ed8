"""What a report's picture colours: each device's and each link's status, and the colours
that say it (the HTML page, its fabric diagram and `plan --diagram` share them)."""

from __future__ import annotations

import re
from collections import defaultdict

from flatfab.checks import Finding, Severity
from flatfab.reports.model import AuditReport

RED, AMBER, BLUE = "#d62728", "#ff9f1c", "#1f77b4"
PURPLE, GREY, GREEN = "#9467bd", "#7f7f7f", "#2ca02c"
OLIVE, PALE = "#bcbd22", "#d9dde2"  # apart from every rail colour too
# "unread": flatfab tried and could not read the device; "unmanaged": a host it never
# logs in to by design (hosts.yaml `managed: false`); "not-judged": a device with nothing
# wrong but something a check could not judge (a setting it does not state)
COLOURS = {"critical": RED, "error": RED, "warning": AMBER, "info": BLUE, "drift": PURPLE,
           "unread": GREY, "not-judged": OLIVE, "unmanaged": PALE, "clean": GREEN}
# Worst first: which devices a crowded picture draws, and the colour of what it folds.
STATUS_ORDER = ("critical", "error", "warning", "unread", "drift", "info", "not-judged",
                "unmanaged", "clean")
LEGEND = (("critical / error", RED), ("warning", AMBER), ("info", BLUE),
          ("config drift only", PURPLE), ("not read", GREY), ("not judged", OLIVE),
          ("unmanaged host: never read", PALE), ("clean", GREEN))
OUTLINED = frozenset({"unread", "unmanaged"})  # statuses drawn with a dashed outline
DASHED = frozenset(COLOURS[s] for s in OUTLINED)  # their legend swatches
DARK_TEXT = frozenset({"warning", "not-judged", "unmanaged"})  # light fills: a label in dark text
LINK_OK = "#b4bcc6"
LINK_COLOURS = {"critical": RED, "error": RED, "warning": AMBER}
LINK_LAYER = {"warning": 1, "error": 2, "critical": 3}  # drawn last = on top
_VRF_SUFFIX = re.compile(r"\.\d+$")


def device_statuses(report: AuditReport) -> dict[str, str]:
    """Device -> diagram status: an unmanaged host is "unmanaged" (never read by design: its
    own findings are all not judged); otherwise unread wins (what was not read cannot be
    judged)."""
    worst = report.worst_by_device()
    return {d.name: "unmanaged" if not d.managed
            else "unread" if not d.reachable or d.name in report.unread
            else worst.get(d.name, "clean") for d in report.devices}


def rank(status: str) -> int:
    """A status's place in STATUS_ORDER (0 is the worst)."""
    return STATUS_ORDER.index(status)


def physical_port(port: str) -> str:
    """The physical port under a VRF subinterface (`swp51.100` -> `swp51`)."""
    return _VRF_SUFFIX.sub("", port)


def _physical_link_id(link_id: str) -> str:
    """A VRF sub-link's id mapped onto its physical link's (`a:p.100--b:q.100`)."""
    ends = []
    for end in link_id.split("--"):
        device, sep, port = end.rpartition(":")
        ends.append(f"{device}{sep}{physical_port(port)}" if sep else end)
    return "--".join(ends)


def _links_named(finding: Finding, ids: set[str],
                 ends: dict[tuple[str, str], list[str]]) -> set[str]:
    named = set()
    if finding.link is not None:
        named |= {finding.link, _physical_link_id(finding.link)} & ids
    if finding.device is not None and finding.port is not None:
        named.update(ends.get((finding.device, physical_port(finding.port)), ()))
    return named


def link_statuses(report: AuditReport) -> dict[str, str]:
    """Link id -> worst severity of the findings that name it, or "ok"."""
    ids = {link.id for link in report.links}
    ends: dict[tuple[str, str], list[str]] = defaultdict(list)
    for link in report.links:
        ends[(link.a_device, physical_port(link.a_port))].append(link.id)
        ends[(link.b_device, physical_port(link.b_port))].append(link.id)
    worst: dict[str, Severity] = {}
    for finding in report.findings:
        for link_id in _links_named(finding, ids, ends):
            current = worst.get(link_id)
            if current is None or finding.severity.rank < current.rank:
                worst[link_id] = finding.severity
    return {link_id: worst[link_id].value if link_id in worst else "ok" for link_id in ids}
