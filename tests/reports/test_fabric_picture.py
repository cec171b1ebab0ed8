"""The fabric picture (`plan --diagram`, the HTML report's diagram): what an operator reads
off it, asserted on the geometry (flatfab.reports.fabric_layout) and on the SVG drawn from it,
for every example fabric, the rail lab with two SUs per pod, and generated big fabrics.

tests/reports/test_report_html_browser.py measures the same labels as Chromium draws them.
"""

from __future__ import annotations

import dataclasses
import itertools
import random
import re
import shutil
import xml.etree.ElementTree as ET
from functools import cache

import pytest

from flatfab.checks import Finding, Severity
from flatfab.intent.loader import load_intent
from flatfab.plan.planner import plan
from flatfab.reports.fabric_layout import LEAVES_MAX, Box, Layout, layout
from flatfab.reports.fabric_servers import HOSTS_PER_GROUP
from flatfab.reports.fabric_svg import RAIL_COLOURS, diagram, rail_style, standalone_diagram
from flatfab.reports.model import AuditReport
from flatfab.reports.statuses import COLOURS, LINK_OK
from flatfab.workflows.commands.audit import planned_report
from tests.support.paths import ROOT
from tests.support.reports import ai_report, classic_report

EXAMPLES = ("rail", "lab", "lab4x16", "numbered", "mixed", "multivendor")
SWITCHES = ("superspine", "spine", "leaf")
SVG = "{http://www.w3.org/2000/svg}"


@cache
def planned(name: str) -> AuditReport:
    return planned_report(plan(load_intent(ROOT / "intents" / name)))


@pytest.fixture(scope="module")
def rail_four_sus(tmp_path_factory: pytest.TempPathFactory) -> AuditReport:
    """The rail lab with four SUs, two per pod: SU boxes inside each pod's plane boxes."""
    folder = tmp_path_factory.mktemp("intents") / "rail4"
    shutil.copytree(ROOT / "intents" / "rail", folder)
    fabric = folder / "fabric.yaml"
    text = fabric.read_text(encoding="utf-8")
    for old, new in (("name: rail\n", "name: rail4\n"),
                     ("non_blocking: true", "non_blocking: false"),
                     ("scalable_units:\n  count: 2", "scalable_units:\n  count: 4"),
                     ("pods:\n  sus: 1", "pods:\n  sus: 2")):
        assert old in text
        text = text.replace(old, new)
    fabric.write_text(text, encoding="utf-8")
    return planned_report(plan(load_intent(folder)))


def _reports(rail_four_sus: AuditReport) -> dict[str, AuditReport]:
    return {**{name: planned(name) for name in EXAMPLES}, "rail4": rail_four_sus}


def _host_leaves(report: AuditReport) -> dict[str, set[str]]:
    roles = {d.name: d.role for d in report.devices}
    out: dict[str, set[str]] = {}
    for link in report.links:
        for host, leaf in ((link.a_device, link.b_device), (link.b_device, link.a_device)):
            if roles[host] == "host" and roles[leaf] != "host":
                out.setdefault(host, set()).add(leaf)
    return out


def _overlap(a: Box, b: Box) -> bool:
    return a.x < b.right and b.x < a.right and a.y < b.bottom and b.y < a.bottom


# ---------------------------------------------------------------- servers


def test_servers_stand_under_all_their_leaves(rail_four_sus: AuditReport) -> None:
    for name, report in _reports(rail_four_sus).items():
        drawn = layout(report)
        wires = {w.link.id: w for w in drawn.wires}
        for host, leaves in _host_leaves(report).items():
            box = drawn.nodes[host].box
            spans = [drawn.nodes[leaf].box for leaf in leaves]
            assert min(s.x for s in spans) <= box.x and box.right <= max(s.right for s in spans), \
                f"{name}: {host} is not under the span of {sorted(leaves)}"
            assert box.y > max(s.bottom for s in spans)
            ends = [lk for lk in report.links if host in (lk.a_device, lk.b_device)]
            for link in ends:  # a link to each leaf, from the server's top to the leaf's foot
                wire = wires[link.id]
                leaf = drawn.nodes[link.b_device if link.a_device == host else link.a_device].box
                assert box.x <= wire.x2 <= box.right and wire.y2 == box.y
                assert leaf.x <= wire.x1 <= leaf.right and wire.y1 == leaf.bottom


def test_rail_servers_are_centred_under_their_su_not_under_their_first_leaf() -> None:
    drawn = layout(planned("rail"))
    node = drawn.nodes
    su1 = [node[f"su1-leaf{k}"].box for k in range(1, 5)]
    for server in ("su1-s1", "su1-s2"):
        box = node[server].box
        assert not (su1[0].x <= box.x and box.right <= su1[0].right), "under its first leaf"
        assert su1[1].x <= box.cx <= su1[2].right  # the middle of the SU's four leaves
    store = node["store1"].box  # cabled to su1-leaf1 and su1-leaf3
    assert node["su1-leaf1"].box.x <= store.x and store.right <= node["su1-leaf3"].box.right
    wires = [w for w in drawn.wires if "store1" in w.link.id]
    assert sorted(w.rail for w in wires if w.rail) == [1, 3]
    assert len([w for w in drawn.wires if "su1-s1:" in w.link.id]) == 4


def _no_overlaps(name: str, drawn: Layout) -> None:
    boxes = [n.box for n in drawn.nodes.values()] + [f.box for f in drawn.folds]
    for a, b in itertools.combinations(boxes, 2):
        assert not _overlap(a, b), f"{name}: {a} overlaps {b}"


def test_nothing_overlaps_and_servers_of_one_leaf_set_stand_together(
        rail_four_sus: AuditReport) -> None:
    for name, report in _reports(rail_four_sus).items():
        drawn = layout(report)
        _no_overlaps(name, drawn)
        sets: dict[frozenset[str], list[str]] = {}
        for host, leaves in _host_leaves(report).items():
            sets.setdefault(frozenset(leaves), []).append(host)
        hosts = sorted((n.box.x, n.box.y, h) for h, n in drawn.nodes.items()
                       if n.style == "host")
        for members in sets.values():
            rows = {drawn.nodes[h].box.y for h in members}
            assert len(rows) == 1, f"{name}: {members} are not one row"
            xs = [x for x, y, h in hosts if y in rows]
            at = sorted(xs.index(drawn.nodes[h].box.x) for h in members)
            assert at == list(range(at[0], at[0] + len(at))), f"{name}: {members} are apart"


# ---------------------------------------------------------------- labels


def estimate(text: str, size: float) -> float:
    """A conservative width (px) of `text`: lower-case letters, digits and marks at 0.64 em
    (the widest of them in DejaVu Sans and Verdana), anything else at 1 em."""
    return size * sum(0.64 if c.isascii() and not c.isupper() and c not in "mwMW@%" else 1.0
                      for c in text)


def _rect(element: ET.Element) -> Box:
    return Box(*(float(element.get(k) or 0) for k in ("x", "y", "width", "height")))


def _labels_fit(name: str, svg: str) -> set[str]:
    """Every device's and fold's label fits its box, every group's label its group's box,
    nothing is shortened; returns the devices named."""
    assert "…" not in svg and "..." not in svg
    root = ET.fromstring(svg)
    named = set()
    for g in root.iter(f"{SVG}g"):
        kind = g.get("class")
        if kind not in ("device", "fold"):
            continue
        rect = _rect(g.find(f"{SVG}rect"))  # type: ignore[arg-type]
        texts = g.findall(f"{SVG}text")
        if kind == "device" and texts:
            assert texts[0].text == g.get("data-device"), "a label is not the whole name"
            named.add(texts[0].text)
        for text in texts:
            room = rect.h if text.get("transform") else rect.w
            width = estimate(text.text or "", float(text.get("font-size") or 0))
            assert width <= room - 4, f"{name}: {text.text!r} ({width:.0f}) > {room}"
    groups = {(r.get("x"), r.get("y")): _rect(r) for r in root.iter(f"{SVG}rect")
              if r.get("class") == "group"}
    for label in (t for t in root.iter(f"{SVG}text") if t.get("class") == "group-label"):
        box = groups[(f"{float(label.get('x') or 0) - 6:g}",
                      f"{float(label.get('y') or 0) - 14:g}")]
        bold = 1.1 * estimate(label.text or "", 11)  # a bold face: up to a tenth wider
        assert bold <= box.w - 8, f"{name}: {label.text!r}"
    return named


def test_every_label_is_whole_and_fits_its_box(rail_four_sus: AuditReport) -> None:
    for name, report in _reports(rail_four_sus).items():
        named = _labels_fit(name, standalone_diagram(report))
        assert named == {d.name for d in report.devices}, f"{name}: a device is unnamed"


# ---------------------------------------------------------------- rails


def test_each_rail_has_a_style_of_its_own_named_in_the_legend() -> None:
    root = ET.fromstring(standalone_diagram(planned("rail")))
    styles: dict[str, set[tuple[str | None, ...]]] = {}
    for line in root.iter(f"{SVG}line"):
        rail = line.get("data-rail")
        if rail is not None and (line.get("class") or "").startswith("link"):
            assert f"rail-{rail}" in (line.get("class") or "").split()
            styles.setdefault(rail, set()).add((line.get("stroke"), line.get("stroke-dasharray")))
    assert sorted(styles) == ["1", "2", "3", "4"]
    assert all(len(s) == 1 for s in styles.values())
    colours = [next(iter(s))[0] for s in styles.values()]
    dashes = [next(iter(s))[1] for s in styles.values()]
    assert len(set(colours)) == 4 and len(set(dashes)) == 4  # apart in grey print too
    legend = {g.get("data-rail"): g for g in root.iter(f"{SVG}g")
              if g.get("class") == "legend-rail"}
    assert sorted(legend) == sorted(styles)
    for rail, g in legend.items():
        sample = g.find(f"{SVG}line")
        assert sample is not None
        assert {(sample.get("stroke"), sample.get("stroke-dasharray"))} == styles[rail]
        assert [t.text for t in g.iter(f"{SVG}text")] == [f"rail {rail}"]
    fabric_links = [ln for ln in root.iter(f"{SVG}line") if ln.get("class") == "link"]
    assert fabric_links and all(ln.get("stroke") == LINK_OK for ln in fabric_links)


def test_rail_styles_are_distinct_and_never_a_status_colour() -> None:
    styles = [rail_style(rail) for rail in range(1, 65)]
    assert len(set(styles)) == 64
    assert not set(RAIL_COLOURS) & {*COLOURS.values(), LINK_OK}


def test_a_rail_link_with_a_finding_keeps_its_dashes() -> None:
    report = dataclasses.replace(planned("rail"), findings=[
        Finding("lossless.pfc", Severity.CRITICAL, "su1-leaf2", "PFC off", port="swp1")])
    root = ET.fromstring(f'<svg xmlns="http://www.w3.org/2000/svg">{diagram(report)}</svg>')
    line = next(ln for ln in root.iter(f"{SVG}line")
                if ln.get("data-link") == "su1-s1:eth2--su1-leaf2:swp1")
    assert line.get("data-status") == "critical" and line.get("stroke") == COLOURS["critical"]
    assert line.get("stroke-dasharray") == rail_style(2)[1] != ""


# ---------------------------------------------------------------- groups


def _expected(group_kind: str, scope: tuple[tuple[str, int], ...], drawn: Layout,
              report: AuditReport) -> set[str]:
    roles = ("superspine",) if group_kind == "tier" else ("spine", "leaf")
    return {d.name for d in report.devices if d.role in roles and d.name in drawn.nodes
            and all(d.placement.get(key) == value for key, value in scope)}


def test_plane_pod_and_su_boxes_hold_exactly_their_switches(
        rail_four_sus: AuditReport) -> None:
    for name, report in (("rail", planned("rail")), ("rail4", rail_four_sus)):
        drawn = layout(report)
        for group in drawn.groups:
            expected = _expected(group.kind, group.scope, drawn, report)
            inside = {n for n, node in drawn.nodes.items() if group.box.holds(node.box)}
            assert set(group.members) == expected == inside, f"{name}: {group.label}"
        labels = sorted(g.label for g in drawn.groups)
        if name == "rail":
            assert labels == ["plane 1", "plane 1", "plane 1 · rails 1, 2", "plane 2",
                              "plane 2", "plane 2 · rails 3, 4", "pod 1 · SU 1", "pod 2 · SU 2"]
        else:
            assert labels.count("pod 1") == 1 and labels.count("SU 3") == 2  # one per plane
    for classic in EXAMPLES[1:]:
        assert layout(planned(classic)).groups == []


def test_classic_leaves_go_in_number_order() -> None:
    drawn = layout(planned("lab4x16"))
    xs = [drawn.nodes[f"leaf{i}"].box.x for i in range(1, 17)]
    assert xs == sorted(xs)


def test_the_picture_does_not_depend_on_the_order_of_the_report() -> None:
    report = planned("rail")
    shuffled = dataclasses.replace(report, devices=random.Random(1).sample(
        report.devices, len(report.devices)), links=report.links[::-1])
    assert diagram(shuffled) == diagram(report)


# ---------------------------------------------------------------- big fabrics


def _accounted(report: AuditReport, drawn: Layout) -> None:
    """Every device is drawn or counted in exactly one fold, which says how many it holds."""
    folded = [n for f in drawn.folds for n in f.names]
    assert len(folded) == len(set(folded))
    assert set(folded) | set(drawn.nodes) == {d.name for d in report.devices}
    assert not set(folded) & set(drawn.nodes)
    for fold in drawn.folds:
        assert re.match(rf"\+{len(fold.names)}\b", fold.label), fold.label


def test_a_big_classic_fabric_is_a_bounded_picture() -> None:
    report = classic_report(leaves=1024, spines=64, hosts=16)
    bad = Finding("lossless.pfc", Severity.ERROR, "leaf1000-h7", "bad")
    report = dataclasses.replace(report, findings=[bad])
    drawn = layout(report)
    assert drawn.narrow and drawn.width < 6000 and drawn.height < 800
    assert sum(1 for n in drawn.nodes.values() if n.style == "upright") <= LEAVES_MAX + 32
    assert len(drawn.wires) <= LEAVES_MAX * (32 + HOSTS_PER_GROUP)
    assert "leaf1000" in drawn.nodes and "leaf1000-h7" in drawn.nodes  # the worst first
    _accounted(report, drawn)
    _no_overlaps("classic", drawn)
    svg = standalone_diagram(report)
    assert len(svg) < 1_500_000
    named = _labels_fit("classic", svg)
    assert named == {n for n, node in drawn.nodes.items() if node.style != "marker"}


def test_a_big_ai_fabric_is_a_bounded_picture_in_whole_sus() -> None:
    report = ai_report(pods=16, sus=8, rails=8, servers=32)  # 1,024 leaves, 4,096 servers
    report = dataclasses.replace(report, findings=[
        Finding("lossless.pfc", Severity.ERROR, "su100-s30", "bad"),
        Finding("underlay.bgp", Severity.CRITICAL, "p2-pod16-spine3", "down")],
        devices=[dataclasses.replace(d, reachable=d.name != "p1-ss9") for d in report.devices])
    drawn = layout(report)
    assert drawn.width < 6000 and drawn.height < 800
    leaves = {n for n in drawn.nodes if "-leaf" in n}
    assert len(leaves) <= LEAVES_MAX and len(leaves) % 8 == 0  # whole SUs
    assert {f"su100-leaf{r}" for r in range(1, 9)} <= leaves and "su100-s30" in drawn.nodes
    assert "p1-ss9" in drawn.nodes  # unreachable beats clean for a place in the picture
    svg = standalone_diagram(report)
    assert len(svg) < 1_500_000
    fold = next(f for f in drawn.folds if "p2-pod16-spine3" in f.names)
    assert f'<g class="fold" data-status="critical"><title>{len(fold.names)} not drawn' in svg
    _accounted(report, drawn)
    _no_overlaps("ai", drawn)
    for host, leaves in _host_leaves(report).items():
        if host in drawn.nodes:
            spans = [drawn.nodes[leaf].box for leaf in leaves]
            box = drawn.nodes[host].box
            assert min(s.x for s in spans) <= box.x and box.right <= max(s.right for s in spans)
    placed = {d.name: d.placement for d in report.devices}
    for group in drawn.groups:  # boxes still hold exactly what they say
        inside = {n for n, node in drawn.nodes.items() if group.box.holds(node.box)}
        assert set(group.members) == _expected(group.kind, group.scope, drawn, report) == inside
        for fold in (f for f in drawn.folds if group.box.holds(f.box)):
            assert all(placed[n].get(k) == v for n in fold.names for k, v in group.scope), \
                f"{fold.label} stands in {group.label}, which does not hold it"
    named = _labels_fit("ai", svg)
    assert named == set(drawn.nodes)
