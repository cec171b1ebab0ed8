"""The audit (or watch) as one self-contained HTML page: a fabric diagram, findings and config
drift (a watch's: the findings active at the end and what was raised and cleared).

Everything is inline (CSS, SVG, a little JS, no external URL), so the file can be mailed,
attached to a CI run or opened from a jump host without network access. The page is complete
without JS; the script only adds filtering of the findings table (by text, by clicking a
device in the diagram, or from the URL: `#device=leaf1`, `#q=mtu`). All text that comes from
devices (findings, diffs) is escaped, since it may contain `<` and `&`.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from html import escape

from flatfab.checks import Finding, Severity
from flatfab.model.state import UNMANAGED
from flatfab.reports.json_report import event_key
from flatfab.reports.model import (
    AuditReport,
    DeviceDrift,
    DeviceSummary,
    LinkSummary,
    WatchInfo,
    judged,
    unjudged,
)

RED, AMBER, BLUE = "#d62728", "#ff9f1c", "#1f77b4"
PURPLE, GREY, GREEN = "#9467bd", "#7f7f7f", "#2ca02c"
TEAL, PALE = "#17becf", "#d9dde2"
COLOURS = {"critical": RED, "error": RED, "warning": AMBER, "info": BLUE, "drift": PURPLE,
           "unreachable": GREY, "not-judged": TEAL, "unmanaged": PALE, "clean": GREEN}
# Worst first: which hosts a leaf shows when it has more than HOSTS_PER_LEAF.
STATUS_ORDER = ("critical", "error", "warning", "unreachable", "drift", "info", "not-judged",
                "unmanaged", "clean")
LEGEND = (("critical / error", RED), ("warning", AMBER), ("info", BLUE),
          ("config drift only", PURPLE), ("unreachable", GREY),
          ("not judged", TEAL), ("unmanaged host: never read", PALE), ("clean", GREEN))
DASHED = {GREY, PALE}  # legend swatches of the statuses drawn with a dashed outline
LINK_OK = "#b4bcc6"
LINK_COLOURS = {"critical": RED, "error": RED, "warning": AMBER}
LINK_LAYER = {"warning": 1, "error": 2, "critical": 3}  # drawn last = on top
HOSTS_PER_LEAF = 4
NARROW_ABOVE = 64  # leaves; more are drawn as narrow columns
_VRF_SUFFIX = re.compile(r"\.\d+$")


# ---------------------------------------------------------------- statuses


def device_statuses(report: AuditReport) -> dict[str, str]:
    """Device -> diagram status: an unmanaged host is never read (its own findings are all
    not judged); unreachable wins otherwise (nothing it reports can be trusted)."""
    worst = report.worst_by_device()
    return {d.name: "unmanaged" if not d.managed else "unreachable" if not d.reachable
            else worst.get(d.name, "clean") for d in report.devices}


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


# ---------------------------------------------------------------- layout


@dataclass(frozen=True)
class Box:
    """A device node's rectangle in the diagram."""

    x: float
    y: float
    w: float
    h: float

    @property
    def cx(self) -> float:
        return self.x + self.w / 2


@dataclass
class Column:
    """One slot of the leaf row: a leaf (or None for hosts with no leaf) and its hosts."""

    leaf: str | None
    hosts: list[str]


@dataclass
class Layout:
    width: float
    height: float
    narrow: bool
    boxes: dict[str, Box]
    more: list[tuple[float, float, list[str]]]  # "+N" labels: x, y, hidden hosts


def _hosts_by_leaf(report: AuditReport, roles: dict[str, str]) -> dict[str | None, list[str]]:
    """Each host under the leaf its (first, by link id) host link lands on."""
    owner: dict[str, str] = {}
    for link in sorted(report.links, key=lambda lk: lk.id):
        if link.kind != "host":
            continue
        for host, leaf in ((link.a_device, link.b_device), (link.b_device, link.a_device)):
            if roles.get(host) == "host" and roles.get(leaf, "host") != "host":
                owner.setdefault(host, leaf)
    grouped: dict[str | None, list[str]] = defaultdict(list)
    for name in sorted(n for n, role in roles.items() if role == "host"):
        grouped[owner.get(name)].append(name)
    return grouped


def _columns(report: AuditReport) -> tuple[list[str], list[str], list[Column]]:
    """(super-spines, spines, leaf columns), each row in name order."""
    roles = {d.name: d.role for d in report.devices}
    hosts = _hosts_by_leaf(report, roles)
    middle = sorted(n for n, r in roles.items() if r not in ("superspine", "spine", "host"))
    columns = [Column(name, hosts.get(name, [])) for name in middle]
    if hosts.get(None):
        columns.append(Column(None, hosts[None]))
    # each tier above in the order of what it connects below (pods and planes line up over
    # their leaves); ties by name
    spines = _over(report, [n for n, r in roles.items() if r == "spine"], middle)
    tops = _over(report, [n for n, r in roles.items() if r == "superspine"], spines)
    return tops, spines, columns


def _over(report: AuditReport, names: list[str], below: list[str]) -> list[str]:
    """`names` ordered by the mean position of the devices below they link to."""
    position = {name: index for index, name in enumerate(below)}
    linked: dict[str, list[int]] = defaultdict(list)
    for link in report.links:
        for a, b in ((link.a_device, link.b_device), (link.b_device, link.a_device)):
            if a in position and b in names:
                linked[b].append(position[a])
    return sorted(names, key=lambda n: (sum(linked[n]) / len(linked[n]) if linked[n]
                                        else len(below), n))


def _shown_hosts(hosts: list[str], statuses: dict[str, str]) -> tuple[list[str], list[str]]:
    """The hosts a column draws (its worst first, then by name) and the ones it folds."""
    ranked = sorted(hosts, key=lambda h: (STATUS_ORDER.index(statuses.get(h, "clean")), h))
    shown = ranked[:HOSTS_PER_LEAF]
    return sorted(shown), sorted(ranked[HOSTS_PER_LEAF:])


def _row(names: list[str], y: float, slot: float, width: float, h: float,
         margin: float) -> dict[str, Box]:
    return {name: Box(margin + (i + 0.5) * slot - width / 2, y, width, h)
            for i, name in enumerate(names)}


def _host_boxes(shown: list[str], leaf_cx: float, y: float, narrow: bool) -> dict[str, Box]:
    if narrow:  # a stack of small squares under a narrow leaf
        return {h: Box(leaf_cx - 8, y + i * 13, 16, 10) for i, h in enumerate(shown)}
    total = len(shown) * 26 + (len(shown) - 1) * 4
    return {h: Box(leaf_cx - total / 2 + i * 30, y, 26, 18) for i, h in enumerate(shown)}


def layout(report: AuditReport) -> Layout:
    """Super-spines (5 stages) on top, spines, leaves below, up to HOSTS_PER_LEAF hosts
    under each leaf."""
    tops, spines, columns = _columns(report)
    statuses = device_statuses(report)
    narrow = len(columns) > NARROW_ABOVE
    base = 30.0 if narrow else 136.0
    margin = 24.0
    inner = max(640.0, len(columns) * base, len(spines) * 136.0, len(tops) * 136.0)
    node_h = 70.0 if narrow else 30.0
    spine_y = 16 + (30 + 110 if tops else 0)
    leaf_y = spine_y + 30 + 110
    host_y = leaf_y + node_h + 36
    boxes = _row(tops, 16, inner / max(len(tops), 1), 112, 30, margin)
    boxes.update(_row(spines, spine_y, inner / max(len(spines), 1), 112, 30, margin))
    slot = inner / max(len(columns), 1)
    boxes.update(_row([c.leaf or "" for c in columns], leaf_y, slot, min(112, base - 8),
                      node_h, margin))
    boxes.pop("", None)
    more: list[tuple[float, float, list[str]]] = []
    bottom = leaf_y + node_h
    for i, col in enumerate(columns):
        cx = margin + (i + 0.5) * slot
        shown, folded = _shown_hosts(col.hosts, statuses)
        hosts = _host_boxes(shown, cx, host_y, narrow)
        boxes.update(hosts)
        low = max((b.y + b.h for b in hosts.values()), default=host_y)
        if folded:
            more.append((cx, low + 12, folded))
        bottom = max(bottom, low + (16 if folded else 0))
    return Layout(inner + 2 * margin, bottom + 16, narrow, boxes, more)


# ---------------------------------------------------------------- SVG


def _n(value: float) -> str:
    return f"{value:.1f}".removesuffix(".0")


def _fit(name: str, chars: int) -> str:
    return name if len(name) <= chars else name[: max(chars - 1, 1)] + "…"


def _host_label(name: str, leaf: str | None) -> str:
    if leaf and name.startswith(leaf + "-"):
        name = name[len(leaf) + 1:]
    elif leaf and "-" in name and name.split("-", 1)[0] == leaf.split("-", 1)[0]:
        name = name.split("-", 1)[1]  # su1-s2 under su1-leaf1: s2
    return name if len(name) <= 4 else name[:4]


def _tooltip(device: DeviceSummary, status: str, findings: list[Finding],
             drift: DeviceDrift | None) -> str:
    lines = [f"{device.name} ({device.role}, {device.platform})", f"status: {status}"]
    if not device.managed:
        lines.append(UNMANAGED)
    elif not device.reachable:
        lines.append("unreachable")
    counts = Counter(f.severity.value for f in findings)
    if findings:
        lines.append("findings: " + ", ".join(f"{counts[s.value]} {s.value}"
                                              for s in Severity if counts[s.value]))
    if drift is not None:
        lines.append(f"config drift: {drift.lines} lines" if drift.error is None
                     else f"config unreadable: {drift.error}")
    return "\n".join(lines)


def _label(name: str, box: Box, status: str, narrow: bool) -> str:
    if box.w < 20:  # a narrow column's host square: the tooltip names it
        return ""
    colour = "#1b1b1b" if status in ("warning", "unmanaged") else "#ffffff"
    if narrow and box.w < 60:
        cx, cy = box.cx, box.y + box.h / 2
        return (f'<text x="{_n(cx)}" y="{_n(cy)}" fill="{colour}" font-size="9" '
                f'transform="rotate(-90 {_n(cx)} {_n(cy)})" text-anchor="middle" '
                f'dominant-baseline="central">{escape(_fit(name, 11))}</text>')
    size = 12 if box.h >= 30 else 9
    chars = int((box.w - 6) / (size * 0.6))
    return (f'<text x="{_n(box.cx)}" y="{_n(box.y + box.h / 2)}" fill="{colour}" '
            f'font-size="{size}" text-anchor="middle" dominant-baseline="central">'
            f"{escape(_fit(name, chars))}</text>")


def _node(device: DeviceSummary, box: Box, status: str, tooltip: str, label: str,
          narrow: bool) -> str:
    outlined = status in ("unreachable", "unmanaged")
    dashed = ' stroke-dasharray="4 3"' if outlined else ""
    stroke = "#333333" if outlined else "#ffffff"
    return (f'<g class="device" data-device="{escape(device.name)}" '
            f'data-status="{status}" tabindex="0"><title>{escape(tooltip)}</title>'
            f'<rect x="{_n(box.x)}" y="{_n(box.y)}" width="{_n(box.w)}" height="{_n(box.h)}" '
            f'rx="4" fill="{COLOURS[status]}" stroke="{stroke}" stroke-width="1.5"{dashed}/>'
            f"{_label(label, box, status, narrow)}</g>")


def _link(link: LinkSummary, a: Box, b: Box, status: str) -> str:
    top, low = (a, b) if a.y <= b.y else (b, a)
    colour = LINK_COLOURS.get(status, LINK_OK)
    width = "2.5" if status in LINK_COLOURS else "1.2"
    title = f"{link.a_device}:{link.a_port} - {link.b_device}:{link.b_port} ({status})"
    return (f'<line class="link" data-link="{escape(link.id)}" data-status="{status}" '
            f'x1="{_n(top.cx)}" y1="{_n(top.y + top.h)}" x2="{_n(low.cx)}" y2="{_n(low.y)}" '
            f'stroke="{colour}" stroke-width="{width}"><title>{escape(title)}</title></line>')


def _links_svg(report: AuditReport, boxes: dict[str, Box]) -> list[str]:
    """Every drawable link, quiet ones first so the coloured ones lie on top."""
    statuses = link_statuses(report)
    drawable = [lk for lk in report.links if lk.a_device in boxes and lk.b_device in boxes]
    drawable.sort(key=lambda lk: (LINK_LAYER.get(statuses[lk.id], 0), lk.id))
    return [_link(lk, boxes[lk.a_device], boxes[lk.b_device], statuses[lk.id])
            for lk in drawable]


def _more_svg(more: list[tuple[float, float, list[str]]], statuses: dict[str, str]) -> list[str]:
    out = []
    for x, y, hidden in more:
        worst = min((statuses.get(h, "clean") for h in hidden), key=STATUS_ORDER.index)
        colour = "#555555" if worst == "clean" else COLOURS[worst]
        title = "\n".join(f"{h}: {statuses.get(h, 'clean')}" for h in hidden)
        out.append(f'<text class="more" x="{_n(x)}" y="{_n(y)}" fill="{colour}" font-size="10" '
                   f'text-anchor="middle"><title>{escape(title)}</title>+{len(hidden)}</text>')
    return out


def diagram(report: AuditReport) -> str:
    """The fabric as inline SVG, every node and link carrying its status as data."""
    plan = layout(report)
    statuses = device_statuses(report)
    findings: dict[str, list[Finding]] = defaultdict(list)
    for f in report.findings:
        if f.device is not None:
            findings[f.device].append(f)
    drift = {d.device: d for d in report.drift}
    parts = [f'<svg class="fabric" width="{_n(plan.width)}" height="{_n(plan.height)}" '
             f'viewBox="0 0 {_n(plan.width)} {_n(plan.height)}" role="img" '
             f'aria-label="fabric diagram of {escape(report.fabric)}">']
    parts += _links_svg(report, plan.boxes)
    hosts = _host_leaves(report)
    for device in sorted(report.devices, key=lambda d: d.name):
        box = plan.boxes.get(device.name)
        if box is None:
            continue
        status = statuses[device.name]
        label = (_host_label(device.name, hosts.get(device.name)) if device.role == "host"
                 else device.name)
        parts.append(_node(device, box, status,
                           _tooltip(device, status, findings[device.name],
                                    drift.get(device.name)), label, plan.narrow))
    parts += _more_svg(plan.more, statuses)
    parts.append("</svg>")
    return "\n".join(parts)


def standalone_diagram(report: AuditReport) -> str:
    """The diagram as an SVG file of its own (a README picture, `plan --diagram`)."""
    svg = diagram(report).replace(
        '<svg class="fabric"', '<svg xmlns="http://www.w3.org/2000/svg" '
        'font-family="system-ui,sans-serif" class="fabric"', 1)
    return svg + "\n"


def _host_leaves(report: AuditReport) -> dict[str, str]:
    roles = {d.name: d.role for d in report.devices}
    grouped = _hosts_by_leaf(report, roles)
    return {h: leaf for leaf, hosts in grouped.items() if leaf is not None for h in hosts}


# ---------------------------------------------------------------- page

CSS = """
*{box-sizing:border-box}
[hidden]{display:none!important}
body{margin:0;padding:20px 28px;font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;
 color:#1b1b1b;background:#f6f7f9}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:26px 0 8px}
h3{font-size:15px;margin:16px 0 6px}h4{font-size:13px;margin:10px 0 4px;font-weight:600}
code{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12.5px}
h1 code{font-size:20px}
.meta{color:#555;margin:0}
.badge{display:inline-block;padding:2px 10px;border-radius:10px;color:#fff;font-size:14px;
 vertical-align:middle}
.status-clean{background:#2ca02c}.status-drift{background:#ff9f1c;color:#1b1b1b}
.status-error{background:#d62728}
.cards{display:flex;flex-wrap:wrap;gap:10px;margin-top:14px}
.card{background:#fff;border:1px solid #dde1e6;border-left:6px solid #b4bcc6;border-radius:6px;
 padding:6px 14px;min-width:110px}
.card b{display:block;font-size:20px}.card span{color:#555;font-size:12px}
.banner{background:#fdecea;border:1px solid #d62728;border-radius:6px;padding:10px 14px;
 margin-top:14px}
.diagram{background:#fff;border:1px solid #dde1e6;border-radius:6px;overflow-x:auto;padding:8px}
.diagram svg{display:block;margin:0 auto;max-width:none;font-family:system-ui,sans-serif}
.device rect{cursor:default}.js .device{cursor:pointer}.js .device rect{cursor:pointer}
.device.selected rect{stroke:#000;stroke-width:3}
.legend{display:flex;flex-wrap:wrap;gap:14px;margin:8px 0 0;padding:0;list-style:none;
 font-size:12.5px;color:#333}
.legend i{display:inline-block;width:14px;height:14px;border-radius:3px;margin-right:5px;
 vertical-align:-2px}
.legend i.dashed{border:2px dashed #333}
.filter{margin:0 0 8px;display:flex;gap:12px;align-items:center}
.filter input{font:inherit;padding:4px 8px;width:320px;border:1px solid #b4bcc6;
 border-radius:4px}
.chip{background:#e8eaf6;border-radius:10px;padding:2px 4px 2px 10px}
.chip button{border:0;background:none;cursor:pointer;font:inherit}
#shown{color:#555;font-size:12.5px}
table{border-collapse:collapse;width:100%;background:#fff;border:1px solid #dde1e6}
th,td{text-align:left;padding:5px 8px;border-bottom:1px solid #eceff2;vertical-align:top}
th{background:#eef1f4;font-size:12.5px}
td.sev{white-space:nowrap;font-weight:600}
.sev i{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:6px}
.sub{color:#666;font-size:12px}.tag{background:#eee;border-radius:3px;padding:0 4px;
 font-size:11px;color:#555}
pre.diff{background:#fff;border:1px solid #dde1e6;border-radius:6px;padding:8px 0;
 overflow-x:auto;font:12.5px/1.4 ui-monospace,Menlo,Consolas,monospace;margin:0 0 8px}
pre.diff span{display:block;padding:0 10px;white-space:pre}
.add{background:#e6ffec;color:#116329}.del{background:#ffebe9;color:#a40e26}
.hunk{color:#0550ae;background:#f1f6ff}.meta-line{color:#666;font-weight:600}
.clean{font-size:16px;color:#2ca02c;font-weight:600}
"""

SCRIPT = """
(function () {
  var box = document.getElementById("filter-box");
  var table = document.getElementById("findings");
  if (!box || !table) { return; }
  document.documentElement.className += " js";
  var input = document.getElementById("filter");
  var chip = document.getElementById("device-chip");
  var shown = document.getElementById("shown");
  var rows = Array.prototype.slice.call(table.tBodies[0].rows);
  var nodes = Array.prototype.slice.call(document.querySelectorAll("g.device"));
  var device = "";
  function matches(row, q) {
    if (!q) { return true; }
    return Array.prototype.some.call(row.cells, function (c) {
      return c.textContent.toLowerCase().indexOf(q) >= 0;
    });
  }
  function apply() {
    var q = input.value.trim().toLowerCase();
    var count = 0;
    rows.forEach(function (row) {
      var ok = (!device || row.getAttribute("data-device") === device) && matches(row, q);
      row.hidden = !ok;
      if (ok) { count += 1; }
    });
    chip.hidden = !device;
    chip.firstChild.textContent = "device: " + device + " ";
    nodes.forEach(function (g) {
      g.classList.toggle("selected", !!device && g.getAttribute("data-device") === device);
    });
    shown.textContent = count + " of " + rows.length + " findings shown";
  }
  function pick(name) { device = device === name ? "" : name; apply(); }
  nodes.forEach(function (g) {
    var name = g.getAttribute("data-device");
    g.addEventListener("click", function () { pick(name); });
    g.addEventListener("keydown", function (e) {
      if (e.key === "Enter" || e.key === " ") { e.preventDefault(); pick(name); }
    });
  });
  input.addEventListener("input", apply);
  chip.querySelector("button").addEventListener("click", function () { pick(""); });
  var params = new URLSearchParams(window.location.hash.slice(1));
  device = params.get("device") || "";
  input.value = params.get("q") || "";
  box.hidden = false;
  apply();
})();
"""


def _e(text: str) -> str:
    return escape(text, quote=True)


def _header(report: AuditReport) -> str:
    status = report.status
    return (f'<header><h1>flatfab {report.kind} <code>{_e(report.fabric)}</code> '
            f'<span class="badge status-{status.value}">{report.status_word}</span></h1>'
            f'<p class="meta">run <code>{_e(report.run_id)}</code> · started '
            f"{_e(report.started)} · duration {report.duration_s:.1f} s · exit code "
            f"{status.exit_code}</p></header>")


def _card(value: int, label: str, colour: str) -> str:
    return (f'<div class="card" style="border-left-color:{colour}"><b>{value}</b>'
            f"<span>{_e(label)}</span></div>")


def _summary(report: AuditReport) -> str:
    counts = report.findings_by_severity()
    cards = [_card(counts[s.value], s.value, COLOURS[s.value]) for s in Severity]
    drifted = len(report.drift)
    unreachable = sum(1 for d in report.devices if not d.reachable)
    unmanaged = sum(1 for d in report.devices if not d.managed)
    if report.watch is None:
        cards += [_card(drifted, "drifted devices", PURPLE),
                  _card(unreachable, "unreachable devices", GREY)]
    else:
        cards += [_card(unreachable, "devices not heard", GREY),
                  _card(report.watch.ticks, f"intervals of {report.watch.interval_s:g} s",
                        LINK_OK)]
    if unmanaged:
        cards.append(_card(unmanaged, "unmanaged hosts (never read)", PALE))
    cards += [_card(len(report.devices), "devices", LINK_OK),
              _card(len(set(report.checks_run)), "checks run", LINK_OK)]
    out = f'<section class="cards">{"".join(cards)}</section>'
    if report.error is not None:
        out += (f'<div class="banner"><b>The {report.kind} could not run:</b> '
                f"{_e(report.error)}</div>")
    return out


def _legend() -> str:
    items = [f'<li><i style="background:{c}"{" class=dashed" if c in DASHED else ""}></i>'
             f"{_e(label)}</li>" for label, c in LEGEND]
    items.append(f'<li><i style="background:{LINK_OK};height:3px;vertical-align:3px"></i>'
                 "link without findings</li>")
    return f'<ul class="legend">{"".join(items)}</ul>'


def _fabric(report: AuditReport) -> str:
    if not report.devices:
        return ""
    return (f'<section><h2>Fabric</h2><div class="diagram">{diagram(report)}</div>'
            f"{_legend()}<p class=\"sub\">Up to {HOSTS_PER_LEAF} hosts per leaf are drawn "
            "(the worst first); hover a node for details.</p></section>")


def _finding_row(f: Finding) -> str:
    colour = COLOURS[f.severity.value]
    extra = []
    if f.link:
        extra.append(f'<div class="sub">link {_e(f.link)}</div>')
    if f.virtual:
        extra.append(' <span class="tag">virtual ASIC</span>')
    cells = [f.check, f.device or "", f.port or "", f.vrf or "", f.expected, f.actual]
    return (f'<tr data-device="{_e(f.device or "")}" data-severity="{f.severity.value}">'
            f'<td class="sev"><i style="background:{colour}"></i>{f.severity.value}</td>'
            + "".join(f"<td>{_e(c)}</td>" for c in cells)
            + f"<td>{_e(f.message)}{''.join(extra)}</td></tr>")


def _findings(report: AuditReport) -> str:
    title = "Findings" if report.watch is None else "Findings active at the end"
    verdicts = judged(report.findings)
    if not verdicts:
        return f"<section><h2>{title}</h2><p>No findings.</p></section>"
    ordered = sorted(verdicts,
                     key=lambda f: (*f.sort_key, f.link or "", f.expected, f.actual))
    head = "".join(f"<th>{h}</th>" for h in ("severity", "check", "device", "port", "VRF",
                                              "expected", "actual", "finding"))
    return (f'<section><h2>{title}</h2><div class="filter" id="filter-box" hidden>'
            '<input id="filter" type="search" placeholder="filter findings (any column)" '
            'aria-label="filter findings">'
            '<span class="chip" id="device-chip" hidden><span></span>'
            '<button type="button" aria-label="clear device filter">✕</button></span>'
            '<span id="shown"></span></div>'
            f'<table id="findings"><thead><tr>{head}</tr></thead><tbody>'
            + "\n".join(_finding_row(f) for f in ordered) + "</tbody></table></section>")


def _not_judged(report: AuditReport) -> str:
    """What was not judged: one row per device (and port) and reason, with its checks."""
    rows = unjudged(report.findings)
    if not rows:
        return ""
    head = "".join(f"<th>{h}</th>" for h in ("device", "port", "why", "checks"))
    body = "\n".join(
        f'<tr data-device="{_e(row.device)}" data-severity="not-judged">'
        + "".join(f"<td>{_e(c)}</td>" for c in (row.device, row.port, row.message,
                                                ", ".join(row.checks))) + "</tr>"
        for row in rows)
    return ('<section><h2>Not judged</h2><p class="sub">Neither passed nor failed: flatfab '
            f'could not judge these.</p><table id="not-judged"><thead><tr>{head}</tr>'
            f"</thead><tbody>{body}</tbody></table></section>")


def _events(info: WatchInfo) -> str:
    if not info.events and not info.events_left_out:
        return ""
    head = "".join(f"<th>{h}</th>" for h in ("tick", "at", "change", "severity", "check",
                                              "device", "port", "finding"))
    rows = []
    for event in sorted(info.events, key=event_key):
        f = event.finding
        cells = [str(event.tick), event.at, event.change]
        rest = [f.check, f.device or "", f.port or "", f.message]
        rows.append(f'<tr data-device="{_e(f.device or "")}" data-change="{event.change}">'
                    + "".join(f"<td>{_e(c)}</td>" for c in cells)
                    + f'<td class="sev"><i style="background:{COLOURS[f.severity.value]}">'
                    f"</i>{f.severity.value}</td>"
                    + "".join(f"<td>{_e(c)}</td>" for c in rest) + "</tr>")
    left = (f'<p class="sub">The {info.events_left_out} oldest changes are left out.</p>'
            if info.events_left_out else "")
    return (f"<section><h2>Raised and cleared</h2>{left}<table><thead><tr>{head}</tr>"
            "</thead><tbody>" + "\n".join(rows) + "</tbody></table></section>")


def _diff_line(line: str, in_header: bool) -> str:
    if in_header and (line.startswith(("--- ", "+++ "))):
        css = "meta-line"
    elif line.startswith("@@"):
        css = "hunk"
    elif line.startswith("+"):
        css = "add"
    elif line.startswith("-"):
        css = "del"
    else:
        css = "ctx"
    return f'<span class="{css}">{_e(line) or " "}</span>'


def diff_html(diff: str) -> str:
    """A unified diff as a <pre>, added lines green and removed ones red."""
    lines, in_header = [], True
    for line in diff.splitlines():
        if line.startswith("@@"):
            in_header = False
        lines.append(_diff_line(line, in_header))
    return f'<pre class="diff">{"".join(lines)}</pre>'


def _device_drift(entry: DeviceDrift) -> str:
    out = [f'<h3 id="drift-{_e(entry.device)}">{_e(entry.device)}</h3>']
    if entry.error is not None:
        out.append(f"<p><b>Running config could not be read:</b> {_e(entry.error)}</p>")
    for section in sorted(entry.sections, key=lambda s: s.section):
        out.append(f"<h4><code>{_e(section.section)}</code>: {len(section.missing)} missing, "
                   f"{len(section.unexpected)} unexpected</h4>{diff_html(section.diff)}")
    return "".join(out)


def _drift(report: AuditReport) -> str:
    if not report.drift:
        return ""
    body = "".join(_device_drift(d) for d in sorted(report.drift, key=lambda d: d.device))
    return ('<section><h2>Config drift</h2><p class="sub">Diffs run from the running config '
            "to the intended one: <span class=\"add\">+ intended, missing on the device</span> "
            '<span class="del">- running, not in the intent</span></p>' + body + "</section>")


def _timings(report: AuditReport) -> str:
    if not report.timings:
        return ""
    rows = "".join(f"<tr><td>{_e(k)}</td><td>{v:.3f} s</td></tr>"
                   for k, v in sorted(report.timings.items()))
    return f"<details><summary>Timings</summary><table>{rows}</table></details>"


def _body(report: AuditReport) -> str:
    clean = not judged(report.findings) and not report.drift and report.error is None
    parts = [_header(report), _summary(report), _fabric(report)]
    if clean:
        parts.append('<p class="clean">No findings, no drift.</p>' if report.watch is None
                     else '<p class="clean">No findings.</p>')
    else:
        parts += [_findings(report), _drift(report)]
    parts.append(_not_judged(report))
    if report.watch is not None:
        parts.append(_events(report.watch))
    parts.append(_timings(report))
    return "\n".join(p for p in parts if p)


def render(report: AuditReport) -> str:
    """The whole page: header, counts, diagram with legend, findings, drift."""
    title = f"flatfab {report.kind} {report.fabric}: {report.status_word}"
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f"<title>{_e(title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n"
            f"{_body(report)}\n<script>{SCRIPT}</script>\n</body>\n</html>\n")
