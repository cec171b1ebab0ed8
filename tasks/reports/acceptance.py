"""An acceptance run's own part of every report format: the pairs as a matrix (HTML: rows
sources, columns destinations, each cell the figure and its verdict, failing cells marked),
the references and their bases, what was not run and why, and the counters before and
after of the links failing pairs crossed. Pure functions of AcceptanceInfo."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Mapping
from html import escape
from typing import Any

from flatfab.acceptance.matrix import Cell, pair_matrix
from flatfab.acceptance.results import PairResult
from flatfab.acceptance.run import AcceptanceInfo, LinkCounters
from flatfab.acceptance.verdict import Outcome

CSS = """
table.matrix td.cell{text-align:center;white-space:nowrap;font-variant-numeric:tabular-nums}
table.matrix td.pass{background:#e8f5e9}
table.matrix td.fail{background:#fdecea;outline:2px solid #c62828;font-weight:600}
table.matrix td.none{color:#aaa}
table.matrix th.row{text-align:left}
tr.suspect td{background:#fdecea}
"""


def _e(text: object) -> str:
    return escape(str(text), quote=True)


def _cell_text(cell: Cell) -> str:
    return f"{cell.figure_gbps:.2f} Gb/s {cell.outcome.value}"


# ---------------------------------------------------------------- JSON


def _links_json(link: LinkCounters) -> dict[str, Any]:
    return {"link": link.link.id, "a": link.link.a, "b": link.link.b,
            "failed_pairs": link.failed, "passed_pairs": link.passed,
            "suspect": link.suspect,
            "ends": [{"end": end.end, "read": end.read,
                      "counters": [{"name": name, "before": before, "after": after}
                                   for name, before, after in end.counters]}
                     for end in link.ends]}


def as_json(info: AcceptanceInfo) -> dict[str, Any]:
    return {
        "engine": info.engine, "kinds": [str(k) for k in info.kinds],
        "pairs_per_kind": info.per_kind, "waves": info.waves,
        "passed": info.results.passed and info.complete,
        "pairs": [{"source": str(p.source), "destination": str(p.destination),
                   "kind": str(p.kind), "engine": p.engine, "rail": p.rail,
                   "gbps": round(p.figure_gbps, 3), "reference_gbps": round(p.reference_gbps, 3),
                   "margin": round(p.verdict.margin, 4), "verdict": p.verdict.outcome.value,
                   "reasons": list(p.verdict.reasons)} for p in info.results.pairs],
        "collectives": [{"collective": c.collective, "servers": list(c.servers),
                         "engine": c.engine, "busbw_gbps": round(c.figure_gbps, 3),
                         "reference_gbps": round(c.reference_gbps, 3),
                         "verdict": c.verdict.outcome.value, "reasons": list(c.verdict.reasons)}
                        for c in info.results.collectives],
        "references": [{"judges": what, "basis": basis} for what, basis in info.bases],
        "not_run": [{"what": u.what, "kind": u.kind, "why": u.why, "device": u.device}
                    for u in info.unrun],
        "skipped": [{"kind": kind, "why": why} for kind, why in info.skipped],
        "unmanaged": list(info.unmanaged),
        "failed_paths": [{"source": str(p.source), "destination": str(p.destination),
                          "certain": [str(link) for link in p.certain],
                          "maybe": [str(link) for link in p.maybe]} for p in info.paths],
        "links": [_links_json(link) for link in info.links],
        "timings": dict(sorted(info.timings.items())),
    }


# ---------------------------------------------------------------- Markdown


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown_lines(info: AcceptanceInfo) -> list[str]:
    passed = sum(p.verdict.passed for p in info.results.pairs)
    lines = ["## Acceptance", "",
             f"Engine {info.engine}: {passed} of {len(info.results.pairs)} pairs passed, "
             f"{len(info.unrun)} not run, in {info.waves} waves.", ""]
    if info.bases:
        lines += ["| reference of | basis |", "|---|---|"]
        lines += [f"| {_md(what)} | {_md(basis)} |" for what, basis in info.bases]
        lines.append("")
    if info.results.pairs:
        lines += _matrix_markdown(info)
    if info.results.collectives:
        lines += ["| collective | servers | busbw | reference | verdict |",
                  "|---|---|---|---|---|"]
        lines += [f"| {c.collective} | {_md(', '.join(c.servers))} | {c.figure_gbps:.2f} Gb/s "
                  f"| {c.reference_gbps:.2f} Gb/s | {c.verdict.outcome.value} |"
                  for c in info.results.collectives]
        lines.append("")
    if info.unrun:
        lines += ["### Not run", "", "| what | kind | why |", "|---|---|---|"]
        lines += [f"| {_md(u.what)} | {u.kind} | {_md(u.why)} |" for u in info.unrun]
        lines.append("")
    if info.skipped:
        lines += [f"- {kind} pairs not run: {_md(why)}" for kind, why in info.skipped] + [""]
    if info.links:
        lines += _links_markdown(info)
    return lines


def _matrix_markdown(info: AcceptanceInfo) -> list[str]:
    matrix = pair_matrix(info.results.pairs)
    head = "| source \\ destination | " + " | ".join(str(c) for c in matrix.columns) + " |"
    lines = ["### Pairs", "", head, "|---" * (len(matrix.columns) + 1) + "|"]
    for row, cells in zip(matrix.rows, matrix.cells, strict=True):
        shown = ["" if c is None else (f"**{_cell_text(c)}**" if c.outcome is Outcome.FAIL
                                       else _cell_text(c)) for c in cells]
        lines.append(f"| {row} | " + " | ".join(shown) + " |")
    return [*lines, ""]


def _counter_words(link: LinkCounters) -> str:
    return "; ".join(
        f"{end.end}: " + (", ".join(f"{name} {before if before is not None else '?'} -> "
                                    f"{after if after is not None else '?'}"
                                    for name, before, after in end.counters) or "not read")
        for end in link.ends)


def _links_markdown(info: AcceptanceInfo) -> list[str]:
    lines = ["### Links failing pairs crossed", "",
             "| link | failed pairs | passed pairs | suspect | counters before -> after |",
             "|---|---|---|---|---|"]
    lines += [f"| {_md(str(link.link))} | {link.failed} | {link.passed} | "
              f"{'yes' if link.suspect else ''} | {_md(_counter_words(link))} |"
              for link in info.links]
    return [*lines, ""]


# ---------------------------------------------------------------- HTML


def html_section(info: AcceptanceInfo) -> str:
    passed = sum(p.verdict.passed for p in info.results.pairs)
    parts = [f"<style>{CSS}</style><section><h2>Acceptance</h2>"
             f'<p class="sub">Engine {_e(info.engine)}: {passed} of '
             f"{len(info.results.pairs)} pairs passed, {len(info.unrun)} not run, in "
             f"{info.waves} waves.</p>"]
    if info.bases:
        rows = "".join(f"<tr><td>{_e(what)}</td><td>{_e(basis)}</td></tr>"
                       for what, basis in info.bases)
        parts.append(f"<h3>References</h3><table><thead><tr><th>reference of</th>"
                     f"<th>basis</th></tr></thead><tbody>{rows}</tbody></table>")
    if info.results.pairs:
        parts.append(_matrix_html(info))
    if info.results.collectives:
        rows = "".join(
            f'<tr><td>{_e(c.collective)}</td><td>{_e(", ".join(c.servers))}</td>'
            f"<td>{c.figure_gbps:.2f} Gb/s</td><td>{c.reference_gbps:.2f} Gb/s</td>"
            f"<td>{_e(c.verdict.outcome.value)}</td></tr>" for c in info.results.collectives)
        parts.append("<h3>Collectives</h3><table><thead><tr><th>collective</th><th>servers"
                     "</th><th>busbw</th><th>reference</th><th>verdict</th></tr></thead>"
                     f"<tbody>{rows}</tbody></table>")
    if info.unrun:
        rows = "".join(f"<tr><td>{_e(u.what)}</td><td>{_e(u.kind)}</td><td>{_e(u.why)}</td>"
                       "</tr>" for u in info.unrun)
        parts.append("<h3>Not run</h3><table><thead><tr><th>what</th><th>kind</th>"
                     f"<th>why</th></tr></thead><tbody>{rows}</tbody></table>")
    if info.skipped:
        items = "".join(f"<li>{_e(kind)} pairs not run: {_e(why)}</li>"
                        for kind, why in info.skipped)
        parts.append(f"<ul>{items}</ul>")
    if info.links:
        parts.append(_links_html(info))
    return "".join(parts) + "</section>"


def _matrix_html(info: AcceptanceInfo) -> str:
    matrix = pair_matrix(info.results.pairs)
    head = "".join(f"<th>{_e(c)}</th>" for c in matrix.columns)
    rows = []
    for row, cells in zip(matrix.rows, matrix.cells, strict=True):
        shown = []
        for column, cell in zip(matrix.columns, cells, strict=True):
            if cell is None:
                shown.append('<td class="cell none">-</td>')
                continue
            title = (f"{row} -> {column}: {cell.kind}, reference {cell.reference_gbps:.2f} "
                     f"Gb/s, margin {cell.margin:+.0%}")
            shown.append(f'<td class="cell {cell.outcome.value}" title="{_e(title)}">'
                         f"{cell.figure_gbps:.2f} Gb/s<br>{_e(cell.outcome.value)}</td>")
        rows.append(f'<tr><th class="row">{_e(row)}</th>{"".join(shown)}</tr>')
    return ("<h3>Pairs</h3><p class=\"sub\">Rows are sources (clients), columns destinations "
            "(servers); failing cells are marked.</p><table class=\"matrix\"><thead><tr>"
            f"<th>source \\ destination</th>{head}</tr></thead><tbody>{''.join(rows)}"
            "</tbody></table>")


def _links_html(info: AcceptanceInfo) -> str:
    rows = []
    for link in info.links:
        for index, end in enumerate(link.ends):
            counters = "".join(
                f"<tr><td>{_e(name)}</td><td>{'' if before is None else before}</td>"
                f"<td>{'' if after is None else after}</td></tr>"
                for name, before, after in end.counters) or "<tr><td>not read</td></tr>"
            lead = (f'<td rowspan="{len(link.ends)}">{_e(link.link)}</td>'
                    f'<td rowspan="{len(link.ends)}">{link.failed}</td>'
                    f'<td rowspan="{len(link.ends)}">{link.passed}</td>'
                    f'<td rowspan="{len(link.ends)}">{"yes" if link.suspect else ""}</td>'
                    if index == 0 else "")
            rows.append(f'<tr class="{"suspect" if link.suspect else ""}">{lead}'
                        f"<td>{_e(end.end)}</td><td><table><thead><tr><th>counter</th>"
                        f"<th>before</th><th>after</th></tr></thead><tbody>{counters}"
                        "</tbody></table></td></tr>")
    return ("<h3>Links failing pairs crossed</h3><table id=\"acceptance-links\"><thead><tr>"
            "<th>link</th><th>failed pairs</th><th>passed pairs</th><th>suspect</th>"
            f"<th>end</th><th>counters</th></tr></thead><tbody>{''.join(rows)}</tbody>"
            "</table>")


# ---------------------------------------------------------------- JUnit


def junit_suite(root: ET.Element, info: AcceptanceInfo) -> ET.Element:
    """One case per pair (and collective): failed under its reference, skipped not run."""
    suite = ET.SubElement(root, "testsuite", {"name": "acceptance"})
    for pair in info.results.pairs:
        case = ET.SubElement(suite, "testcase", {
            "classname": f"flatfab.acceptance.{pair.kind}",
            "name": f"{pair.source} -> {pair.destination} ({pair.engine})"})
        if not pair.verdict.passed:
            why = "; ".join(pair.verdict.reasons)
            ET.SubElement(case, "failure", {"message": why, "type": "under reference"}
                          ).text = why + "\n"
    for collective in info.results.collectives:
        case = ET.SubElement(suite, "testcase", {
            "classname": "flatfab.acceptance.collective",
            "name": f"{collective.collective} over {', '.join(collective.servers)}"})
        if not collective.verdict.passed:
            why = "; ".join(collective.verdict.reasons)
            ET.SubElement(case, "failure", {"message": why, "type": "under reference"}
                          ).text = why + "\n"
    for unrun in info.unrun:
        case = ET.SubElement(suite, "testcase", {
            "classname": f"flatfab.acceptance.{unrun.kind}", "name": unrun.what})
        ET.SubElement(case, "skipped", {"message": f"not run: {unrun.why}"})
    return suite


# ---------------------------------------------------------------- Prometheus


def prometheus_samples(info: AcceptanceInfo, fabric: str
                       ) -> dict[str, list[tuple[Mapping[str, str], float]]]:
    """pair_gbps and pair_passed per pair; pairs_not_run."""
    labels: list[tuple[Mapping[str, str], PairResult]] = [
        ({"fabric": fabric, "source": str(p.source), "destination": str(p.destination),
          "kind": str(p.kind), "engine": p.engine}, p) for p in info.results.pairs]
    return {
        "pair_gbps": [(label, round(p.figure_gbps, 3)) for label, p in labels],
        "pair_passed": [(label, float(p.verdict.passed)) for label, p in labels],
        "pairs_not_run": [({"fabric": fabric}, float(len(info.unrun)))],
    }
