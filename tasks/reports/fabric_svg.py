"""The fabric picture as SVG: the audit report's (inline in its HTML page) and
`plan --diagram`'s (a file of its own), drawn from flatfab.reports.fabric_layout.

Every device is a `g.device` carrying its name and status (data-device, data-status; the
page's script filters findings by it); every link a `line.link` carrying its id, status and,
for a rail's links, its rail (class `rail-k`, data-rail). A rail has a colour and a dash
pattern of its own, named in the legend, so rails stay apart for a colour-blind reader and
on a grey print; a link's findings colour it red or amber over its rail's colour, the dash
pattern kept.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from html import escape

from flatfab.checks import Finding, Severity
from flatfab.model.state import UNMANAGED
from flatfab.reports.fabric_layout import (
    Fold,
    Group,
    Layout,
    Node,
    Wire,
    layout,
    legend_item_width,
    legend_lines,
)
from flatfab.reports.fabric_text import GROUP_FONT, HOST_FONT, NARROW_FONT, SWITCH_FONT, TAG_FONT
from flatfab.reports.model import AuditReport, DeviceDrift, DeviceSummary
from flatfab.reports.statuses import (
    COLOURS,
    DARK_TEXT,
    LINK_COLOURS,
    LINK_LAYER,
    LINK_OK,
    OUTLINED,
    device_statuses,
    link_statuses,
    rank,
)

# Rails: colours apart from the status colours (no red, amber or status green), each with a
# dash pattern of its own; past eight the pairs shift, so 64 rails have 64 distinct styles.
RAIL_COLOURS = ("#0072b2", "#009e73", "#cc79a7", "#6a3d9a", "#56b4e9", "#8c564b", "#17becf",
                "#4d4d4d")
RAIL_DASHES = ("", "8 3", "2 3", "9 3 2 3", "14 4", "4 2 1 2 1 2", "1 5", "6 2 6 6")
PLANE_TINTS = (("#eaf2fb", "#9dbbdc"), ("#f3ecfa", "#b9a2d6"), ("#e8f6f1", "#8fc7b1"),
               ("#fbf3e8", "#d9b98f"))
_GROUP_ORDER = ("pod", "plane", "su", "tier")


def rail_style(rail: int) -> tuple[str, str]:
    """(colour, dash array) of rail `rail` (1-based); "" is a solid line."""
    index = rail - 1
    count = len(RAIL_COLOURS)
    return (RAIL_COLOURS[index % count],
            RAIL_DASHES[(index + index // count) % len(RAIL_DASHES)])


def _n(value: float) -> str:
    return f"{value:.1f}".removesuffix(".0")


def _text_colour(status: str) -> str:
    return "#1b1b1b" if status in DARK_TEXT else "#ffffff"


# ---------------------------------------------------------------- nodes


def _tooltip(device: DeviceSummary, status: str, findings: list[Finding],
             drift: DeviceDrift | None, unread: str | None) -> str:
    where = ", ".join(f"{'SU' if k == 'su' else k} {v}" for k, v in device.placement.items())
    lines = [f"{device.name} ({device.role}, {device.platform}{', ' + where if where else ''})",
             f"status: {status}"]
    if not device.managed:
        lines.append(UNMANAGED)
    elif unread is not None:
        lines.append(f"not read: {unread}")
    elif not device.reachable:
        lines.append("not read")
    counts = Counter(f.severity.value for f in findings)
    if findings:
        lines.append("findings: " + ", ".join(f"{counts[s.value]} {s.value}"
                                              for s in Severity if counts[s.value]))
    if drift is not None:
        lines.append(f"config drift: {drift.lines} lines")
    return "\n".join(lines)


def _label(node: Node, status: str) -> str:
    box, colour = node.box, _text_colour(status)
    name = escape(node.name)
    if node.style == "marker":
        return ""
    if node.style == "upright":
        cx, cy = box.cx, box.y + box.h / 2
        return (f'<text x="{_n(cx)}" y="{_n(cy)}" fill="{colour}" font-size="{_n(NARROW_FONT)}" '
                f'transform="rotate(-90 {_n(cx)} {_n(cy)})" text-anchor="middle" '
                f'dominant-baseline="central">{name}</text>')
    size = HOST_FONT if node.style == "host" else SWITCH_FONT
    if not node.tag:
        return (f'<text x="{_n(box.cx)}" y="{_n(box.y + box.h / 2)}" fill="{colour}" '
                f'font-size="{_n(size)}" text-anchor="middle" dominant-baseline="central">'
                f"{name}</text>")
    return (f'<text x="{_n(box.cx)}" y="{_n(box.y + 14)}" fill="{colour}" font-size="{_n(size)}" '
            f'text-anchor="middle" dominant-baseline="central">{name}</text>'
            f'<text class="tag" x="{_n(box.cx)}" y="{_n(box.y + 29)}" fill="{colour}" '
            f'font-size="{_n(TAG_FONT)}" text-anchor="middle" dominant-baseline="central">'
            f"{escape(node.tag)}</text>")


def _node(device: DeviceSummary, node: Node, status: str, tooltip: str) -> str:
    box = node.box
    outlined = status in OUTLINED  # unread or unmanaged: nothing of it was read
    dashed = ' stroke-dasharray="4 3"' if outlined else ""
    stroke = "#333333" if outlined else "#ffffff"
    return (f'<g class="device" data-device="{escape(device.name)}" '
            f'data-status="{status}" tabindex="0"><title>{escape(tooltip)}</title>'
            f'<rect x="{_n(box.x)}" y="{_n(box.y)}" width="{_n(box.w)}" height="{_n(box.h)}" '
            f'rx="4" fill="{COLOURS[status]}" stroke="{stroke}" stroke-width="1.5"{dashed}/>'
            f"{_label(node, status)}</g>")


# ---------------------------------------------------------------- groups, folds


def _group(group: Group) -> str:
    """A group's box (its label goes on top of the links: _group_label)."""
    box = group.box
    if group.kind == "su":
        style = 'fill="none" stroke="#8f99a3" stroke-dasharray="5 3"'
    elif group.kind == "pod":
        style = 'fill="#f6f7f9" stroke="#aab3bd"'
    else:
        fill, stroke = PLANE_TINTS[((group.plane or 1) - 1) % len(PLANE_TINTS)]
        style = f'fill="{fill}" stroke="{stroke}"'
    return (f'<rect class="group" data-kind="{group.kind}" data-label="{escape(group.label)}" '
            f'x="{_n(box.x)}" y="{_n(box.y)}" width="{_n(box.w)}" height="{_n(box.h)}" '
            f'rx="6" {style}/>')


def _group_label(group: Group) -> str:
    """The label in the box's top left corner, haloed so links under it leave it legible."""
    return (f'<text class="group-label" x="{_n(group.box.x + 6)}" y="{_n(group.box.y + 14)}" '
            f'font-size="{_n(GROUP_FONT)}" font-weight="600" fill="#3d4650" stroke="#ffffff" '
            f'stroke-width="3" stroke-linejoin="round" paint-order="stroke">'
            f"{escape(group.label)}</text>")


def _worst(names: tuple[str, ...], statuses: dict[str, str]) -> str:
    return min((statuses.get(n, "clean") for n in names), key=rank)


def _fold_title(fold: Fold, statuses: dict[str, str]) -> str:
    """What a fold holds: counts by status, then the devices that are not clean."""
    counts = Counter(statuses.get(n, "clean") for n in fold.names)
    lines = [f"{len(fold.names)} not drawn: " + ", ".join(
        f"{counts[s]} {s}" for s in sorted(counts, key=rank))]
    bad = [n for n in fold.names if statuses.get(n, "clean") != "clean"]
    lines += [f"{n}: {statuses[n]}" for n in bad[:20]]
    if len(bad) > 20:
        lines.append(f"and {len(bad) - 20} more")
    return "\n".join(lines)


def _fold(fold: Fold, statuses: dict[str, str]) -> str:
    worst = _worst(fold.names, statuses)
    colour = "#555555" if worst == "clean" else COLOURS[worst]
    title = f"<title>{escape(_fold_title(fold, statuses))}</title>"
    box = fold.box
    if not fold.boxed:
        return (f'<text class="more" data-status="{worst}" x="{_n(box.cx)}" '
                f'y="{_n(box.y + 10)}" fill="{colour}" font-size="{_n(HOST_FONT)}" '
                f'text-anchor="middle">{title}{escape(fold.label)}</text>')
    return (f'<g class="fold" data-status="{worst}">{title}'
            f'<rect x="{_n(box.x)}" y="{_n(box.y)}" width="{_n(box.w)}" height="{_n(box.h)}" '
            f'rx="4" fill="#ffffff" stroke="{colour}" stroke-width="1.5" '
            f'stroke-dasharray="4 3"/><text x="{_n(box.cx)}" y="{_n(box.y + box.h / 2)}" '
            f'fill="{colour}" font-size="{_n(SWITCH_FONT)}" text-anchor="middle" '
            f'dominant-baseline="central">{escape(fold.label)}</text></g>')


# ---------------------------------------------------------------- links, legend


def _wire(wire: Wire, status: str, crowded: bool) -> str:
    """A link in its rail's style (a crowded picture's thinner), red or amber over it when
    findings name it."""
    link = wire.link
    colour, dash = (LINK_OK, "") if wire.rail is None else rail_style(wire.rail)
    colour = LINK_COLOURS.get(status, colour)
    width = ("2.5" if status in LINK_COLOURS else "1.2" if wire.rail is None or crowded
             else "2")
    rail = "" if wire.rail is None else f" rail-{wire.rail}"
    data = "" if wire.rail is None else f' data-rail="{wire.rail}"'
    dashes = f' stroke-dasharray="{dash}"' if dash else ""
    on = f", rail {wire.rail}" if wire.rail is not None else ""
    title = f"{link.a_device}:{link.a_port} - {link.b_device}:{link.b_port} ({status}{on})"
    return (f'<line class="link{rail}" data-link="{escape(link.id)}" data-status="{status}"'
            f'{data} x1="{_n(wire.x1)}" y1="{_n(wire.y1)}" x2="{_n(wire.x2)}" '
            f'y2="{_n(wire.y2)}" stroke="{colour}" stroke-width="{width}"{dashes}>'
            f"<title>{escape(title)}</title></line>")


def _legend(plan: Layout) -> list[str]:
    out = []
    y = plan.legend_y
    for line in legend_lines(plan):
        x = 24.0
        for rail in line:
            colour, dash = rail_style(rail)
            dashes = f' stroke-dasharray="{dash}"' if dash else ""
            out.append(f'<g class="legend-rail" data-rail="{rail}">'
                       f'<line x1="{_n(x)}" y1="{_n(y + 8)}" x2="{_n(x + 28)}" y2="{_n(y + 8)}" '
                       f'stroke="{colour}" stroke-width="2.5"{dashes}/>'
                       f'<text x="{_n(x + 34)}" y="{_n(y + 8)}" font-size="{_n(GROUP_FONT)}" '
                       f'fill="#1b1b1b" dominant-baseline="central">rail {rail}</text></g>')
            x += legend_item_width(rail)
        y += 20
    return out


# ---------------------------------------------------------------- the picture


def diagram(report: AuditReport) -> str:
    """The fabric as inline SVG, every node and link carrying its status as data."""
    plan = layout(report)
    statuses = device_statuses(report)
    links = link_statuses(report)
    findings: dict[str, list[Finding]] = defaultdict(list)
    for f in report.findings:
        if f.device is not None:
            findings[f.device].append(f)
    drift = {d.device: d for d in report.drift}
    parts = [f'<svg class="fabric" width="{_n(plan.width)}" height="{_n(plan.height)}" '
             f'viewBox="0 0 {_n(plan.width)} {_n(plan.height)}" role="img" '
             f'aria-label="fabric diagram of {escape(report.fabric)}">']
    groups = sorted(plan.groups, key=lambda g: (_GROUP_ORDER.index(g.kind), g.box.x, g.box.y))
    parts += [_group(g) for g in groups]
    wires = sorted(plan.wires, key=lambda w: (LINK_LAYER.get(links[w.link.id], 0), w.link.id))
    parts += [_wire(w, links[w.link.id], plan.narrow) for w in wires]
    parts += [_group_label(g) for g in groups]
    for device in sorted(report.devices, key=lambda d: d.name):
        node = plan.nodes.get(device.name)
        if node is None:
            continue
        status = statuses[device.name]
        parts.append(_node(device, node, status, _tooltip(
            device, status, findings[device.name], drift.get(device.name),
            report.unread.get(device.name))))
    parts += [_fold(f, statuses) for f in plan.folds]
    parts += _legend(plan)
    parts.append("</svg>")
    return "\n".join(parts)


def standalone_diagram(report: AuditReport) -> str:
    """The diagram as an SVG file of its own (a README picture, `plan --diagram`)."""
    svg = diagram(report).replace(
        '<svg class="fabric"', '<svg xmlns="http://www.w3.org/2000/svg" '
        'font-family="system-ui,sans-serif" class="fabric"', 1)
    return svg + "\n"
