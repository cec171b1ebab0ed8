"""The audit (or watch) as one self-contained HTML page: a fabric diagram, the devices not
read (with why), findings, config drift and, apart, what was not judged (an unmanaged host,
a setting a device does not state); a watch's: the findings active at the end and what was
raised and cleared.

Everything is inline (CSS, SVG, a little JS, no external URL), so the file can be mailed,
attached to a CI run or opened from a jump host without network access. The page is complete
without JS; the script only adds filtering of the findings table (by text, by clicking a
device in the diagram, or from the URL: `#device=leaf1`, `#q=mtu`). All text that comes from
devices (findings, diffs) is escaped, since it may contain `<` and `&`.
"""

from __future__ import annotations

from html import escape

from flatfab.checks import Finding, Severity
from flatfab.reports import acceptance
from flatfab.reports.fabric_layout import LEAVES_MAX, layout
from flatfab.reports.fabric_servers import HOSTS_PER_GROUP
from flatfab.reports.fabric_svg import diagram, standalone_diagram
from flatfab.reports.json_report import event_key
from flatfab.reports.model import (
    AuditReport,
    BurnInInfo,
    DeviceDrift,
    WatchInfo,
    judged,
    unjudged,
)
from flatfab.reports.statuses import (
    AMBER,
    BLUE,
    COLOURS,
    DASHED,
    GREEN,
    GREY,
    LEGEND,
    LINK_OK,
    PALE,
    PURPLE,
    RED,
    device_statuses,
    link_statuses,
)

# the page, and the picture and statuses it shows (their own modules draw and judge them)
__all__ = ["AMBER", "BLUE", "GREEN", "GREY", "PURPLE", "RED", "device_statuses", "diagram",
           "diff_html", "layout", "link_statuses", "render", "standalone_diagram"]

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
.status-error{background:#d62728}.status-incomplete{background:#7f7f7f}
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
    unread = len(set(report.unread) | {d.name for d in report.devices if not d.reachable})
    unmanaged = sum(1 for d in report.devices if not d.managed)
    if report.burn_in is not None:
        accepted = sum(v.verdict == "accepted" for v in report.burn_in.links)
        cards += [_card(unread, "devices not read", GREY),
                  _card(accepted, f"of {len(report.burn_in.links)} links accepted", LINK_OK)]
    elif report.acceptance is not None:
        pairs = report.acceptance.results.pairs
        cards += [_card(unread, "devices not read", GREY),
                  _card(sum(p.verdict.passed for p in pairs), f"of {len(pairs)} pairs passed",
                        LINK_OK)]
    elif report.watch is None:
        cards += [_card(drifted, "drifted devices", PURPLE),
                  _card(unread, "devices not read", GREY)]
    else:
        cards += [_card(unread, "devices not heard", GREY),
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
                 "link without findings (a rail's links: the picture's own legend)</li>")
    return f'<ul class="legend">{"".join(items)}</ul>'


def _fabric(report: AuditReport) -> str:
    if not report.devices:
        return ""
    return (f'<section><h2>Fabric</h2><div class="diagram">{diagram(report)}</div>'
            f"{_legend()}<p class=\"sub\">Up to {HOSTS_PER_GROUP} servers are drawn per "
            f"set of leaves, and up to {LEAVES_MAX} leaves (whole scalable units); the worst "
            "first, the rest counted in a \"+N\" of their status's colour. Hover a node for "
            "details.</p></section>")


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


def _unread(report: AuditReport) -> str:
    """The devices not read, each with why: never judged, never counted as drift."""
    if not report.unread:
        return ""
    what = "heard" if report.watch is not None else "read"
    rows = "".join(f'<tr data-device="{_e(name)}"><td>{_e(name)}</td><td>{_e(why)}</td></tr>'
                   for name, why in sorted(report.unread.items()))
    return (f'<section id="unread"><h2>Not {what}</h2><p class="sub">Nothing of these '
            f"devices was judged: neither a pass nor drift.</p><table><thead><tr><th>device"
            f"</th><th>why</th></tr></thead><tbody>{rows}</tbody></table></section>")


def _device_drift(entry: DeviceDrift) -> str:
    out = [f'<h3 id="drift-{_e(entry.device)}">{_e(entry.device)}</h3>']
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


_VERDICT_COLOURS = {"accepted": "#2e7d32", "rejected": "#c62828", "not judged": "#9e9e9e"}


def _links(info: BurnInInfo) -> str:
    """A burn-in's verdict on every physical link, in the plan's order."""
    head = "".join(f"<th>{h}</th>" for h in ("link", "verdict", "why"))
    rows = "\n".join(
        f'<tr data-verdict="{_e(v.verdict)}"><td>{_e(v.a)} -- {_e(v.b)}</td>'
        f'<td class="sev"><i style="background:{_VERDICT_COLOURS[v.verdict]}"></i>'
        f"{_e(v.verdict)}</td><td>{_e('; '.join(v.reasons))}</td></tr>" for v in info.links)
    return (f'<section><h2>Links</h2><p class="sub">{info.rounds} rounds of test flows '
            f"({info.packets} packets) in {info.duration_s:g} s.</p><table id=\"links\">"
            f"<thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table></section>")


def _body(report: AuditReport) -> str:
    clean = (not judged(report.findings) and not report.drift and not report.unread
             and report.error is None)
    parts = [_header(report), _summary(report), _fabric(report), _unread(report)]
    if report.burn_in is not None:
        parts.append(_links(report.burn_in))
    if report.acceptance is not None:
        parts.append(acceptance.html_section(report.acceptance))
    if clean:
        parts.append('<p class="clean">No findings, no drift.</p>' if report.kind == "audit"
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
