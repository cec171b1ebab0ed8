"""Where every part of the fabric picture goes: switches in tiers, grouped in labelled boxes
by pod, plane and scalable unit (SU), servers below all the leaves they attach to, and the
links between them. Pure geometry, drawn by flatfab.reports.fabric_svg.

Tiers from the top: super-spines (grouped by plane), spines, leaves, servers. An AI
back-end's leaves are ordered pod, plane, SU, rail, so one pod's and one plane's switches
sit together and its pod spines stand over them; a classic leaf-spine's leaves go in name
order (leaf2 before leaf10) with the spines over the leaves they reach. A server stands
below the span of its leaves, with one link to each: a GPU server with four NICs under its
SU's four rail leaves, a storage server between the two leaves it is cabled to; servers on
the same leaves share one group (up to HOSTS_PER_GROUP drawn, the worst first, "+N more").

Every box is sized to its text by a conservative width estimate (fabric_text.text_width),
so no name is ever shortened; fabric_servers places the servers' groups. A big fabric stays
a picture of bounded size: up to LEAVES_MAX leaves (whole SUs, the worst first),
SPINES_PER_GROUP spines per pod and plane and TOPS_PER_GROUP super-spines per plane; what is
left out is a "+N" box of its own, coloured by the worst status it holds.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from flatfab.reports.fabric_servers import (
    HOST_DROP,
    HOSTS_PER_GROUP,
    LANE_GAP,
    ServerGroup,
    place_lane,
    row_width,
    size_group,
)
from flatfab.reports.fabric_text import (
    GROUP_FONT,
    NARROW_FONT,
    SWITCH_FONT,
    TAG_FONT,
    natural,
    text_width,
)
from flatfab.reports.model import AuditReport, DeviceSummary, LinkSummary
from flatfab.reports.statuses import device_statuses, rank

SWITCH_W, SWITCH_H, TAGGED_H = 112.0, 30.0, 40.0  # a switch box: least width, heights
NARROW_W, NARROW_SLOT = 22.0, 30.0  # a crowded row's upright boxes
SLOT_GAP = 24.0  # between two switch boxes of a row
GROUP_GAP = 16.0  # between two group boxes
PAD, HEADER = 8.0, 20.0  # a group box's padding and its label strip
MARGIN, TOP, TIER_GAP, TOP_GAP = 24.0, 16.0, 110.0, 80.0
MIN_INNER = 640.0

NARROW_ABOVE = 64  # leaves; more are drawn as narrow upright boxes
LEAVES_MAX = 128  # leaves drawn; whole SUs, the worst first
SPINES_PER_GROUP = 8  # spines drawn per pod (and plane)
SPINES_MAX = 32  # spines drawn in a fabric without pods
TOPS_PER_GROUP = 16  # super-spines drawn per plane

# ---------------------------------------------------------------- what the layout gives


@dataclass(frozen=True)
class Box:
    x: float
    y: float
    w: float
    h: float

    @property
    def cx(self) -> float:
        return self.x + self.w / 2

    @property
    def right(self) -> float:
        return self.x + self.w

    @property
    def bottom(self) -> float:
        return self.y + self.h

    def holds(self, other: Box) -> bool:
        return (self.x <= other.x and other.right <= self.right and self.y <= other.y
                and other.bottom <= self.bottom)


@dataclass(frozen=True)
class Node:
    """A drawn device. `style`: switch (name across), upright (a crowded row: name read
    bottom to top), host (name across) or marker (no name: the tooltip has it)."""

    name: str
    box: Box
    style: str
    tag: str = ""  # a second line under the name: a rail leaf's rail


@dataclass(frozen=True)
class Group:
    """A labelled box around the switches of one pod, plane or SU (`kind`), or the
    super-spines of one plane (kind "tier"). `scope`: where all of them sit, as the
    devices say it (("pod", 1), ("plane", 2)): a plane box inside a pod box holds that
    pod's switches of that plane."""

    kind: str
    label: str
    box: Box
    members: tuple[str, ...]  # the drawn switches inside it
    scope: tuple[tuple[str, int], ...]
    plane: int | None = None


@dataclass(frozen=True)
class Fold:
    """Devices left out of a crowded picture: a "+N ..." box in a switch row, or the
    "+N more" text under a server group (`boxed` False)."""

    label: str
    box: Box
    names: tuple[str, ...]
    boxed: bool = True


@dataclass(frozen=True)
class Wire:
    """A drawn link; a host link's `rail` is its leaf's."""

    link: LinkSummary
    x1: float
    y1: float
    x2: float
    y2: float
    rail: int | None = None


@dataclass
class Layout:
    width: float
    height: float
    narrow: bool
    nodes: dict[str, Node]
    groups: list[Group]
    folds: list[Fold]
    wires: list[Wire]
    rails: list[int]  # rails with links drawn, for the legend
    legend_y: float  # where the legend's first line goes

    @property
    def boxes(self) -> dict[str, Box]:
        return {name: node.box for name, node in self.nodes.items()}


# ---------------------------------------------------------------- the switches' groups


@dataclass
class _Tree:
    """A group of the leaf row and the spines over it, before and after layout."""

    kind: str  # root | pod | plane | su
    number: int
    scope: tuple[tuple[str, int], ...] = ()
    label: str = ""
    plane: int | None = None
    spines: list[str] = field(default_factory=list)
    leaves: list[str] = field(default_factory=list)
    children: list[_Tree] = field(default_factory=list)
    leaf_fold: list[str] = field(default_factory=list)
    spine_fold: list[str] = field(default_factory=list)
    inner: float = 0.0
    x: float = 0.0

    @property
    def boxed(self) -> bool:
        return self.kind != "root"

    @property
    def width(self) -> float:
        return self.inner + (2 * PAD if self.boxed else 0.0)

    def child(self, kind: str, number: int) -> _Tree:
        for existing in self.children:
            if existing.kind == kind and existing.number == number:
                return existing
        made = _Tree(kind, number, (*self.scope, (kind, number)),
                     plane=number if kind == "plane" else self.plane)
        self.children.append(made)
        return made

    def walk(self) -> Iterable[_Tree]:
        yield self
        for child in self.children:
            yield from child.walk()

    def all_leaves(self) -> list[str]:
        return [leaf for tree in self.walk() for leaf in tree.leaves + tree.leaf_fold]

    def all_spines(self) -> list[str]:
        return [spine for tree in self.walk() for spine in tree.spines + tree.spine_fold]


def _leaf_key(device: DeviceSummary) -> tuple[object, ...]:
    return (device.pod or 0, device.plane or 0, device.su or 0, device.rail or 0,
            natural(device.name))


def _tree(leaves: list[DeviceSummary], spines: list[DeviceSummary]) -> _Tree:
    """Pods hold planes, planes (or pods, or the fabric) hold SUs, SUs hold leaves. An SU
    box only where its pod holds several (else the pod's label names it) and it would hold
    more than one leaf (a plane that carries one rail has one leaf of each SU)."""
    sus: dict[int | None, set[int]] = defaultdict(set)
    together: dict[tuple[int | None, int | None, int], int] = defaultdict(int)
    for leaf in leaves:
        if leaf.su is not None:
            sus[leaf.pod].add(leaf.su)
            together[(leaf.pod, leaf.plane, leaf.su)] += 1
    root = _Tree("root", 0)
    for leaf in sorted(leaves, key=_leaf_key):
        group = root
        if leaf.pod is not None:
            group = group.child("pod", leaf.pod)
            if leaf.plane is not None:
                group = group.child("plane", leaf.plane)
        if leaf.su is not None and (leaf.pod is None or len(sus[leaf.pod]) > 1) \
                and together[(leaf.pod, leaf.plane, leaf.su)] > 1:
            group = group.child("su", leaf.su)
        group.leaves.append(leaf.name)
    for spine in sorted(spines, key=lambda d: natural(d.name)):
        group = root
        if spine.pod is not None:
            group = group.child("pod", spine.pod)
            if spine.plane is not None:
                group = group.child("plane", spine.plane)
        group.spines.append(spine.name)
    for tree in root.walk():
        tree.children.sort(key=lambda t: t.number)
        if tree.kind == "pod":
            only = sus.get(tree.number, set())
            tree.label = f"pod {tree.number}" + (f" · SU {min(only)}" if len(only) == 1
                                                 else "")
        elif tree.kind != "root":
            tree.label = f"{'plane' if tree.kind == 'plane' else 'SU'} {tree.number}"
    return root


def _prune(tree: _Tree, kept: set[str]) -> bool:
    """Fold what is not kept into the nearest group still drawn; False: fold all of it."""
    had_leaves = bool(tree.leaves)
    tree.leaf_fold = [leaf for leaf in tree.leaves if leaf not in kept]
    tree.leaves = [leaf for leaf in tree.leaves if leaf in kept]
    alive = []
    for child in tree.children:
        had_leaves = had_leaves or bool(child.all_leaves())
        if _prune(child, kept):
            alive.append(child)
        else:
            tree.leaf_fold += child.all_leaves()
            tree.spine_fold += child.all_spines()
    tree.children = alive
    return bool(tree.leaves or tree.children) or not had_leaves


def _tall(tree: _Tree) -> bool:
    """Whether pod or plane boxes (which reach up past the spines) stand in `tree`."""
    return any(child.kind in ("pod", "plane") for child in tree.children)


def _worst_first(names: list[str], statuses: dict[str, str], count: int,
                 ) -> tuple[list[str], list[str]]:
    """The `count` worst of `names` (ties in name order), and the rest; both in name order."""
    ranked = sorted(names, key=lambda n: (rank(statuses.get(n, "clean")), natural(n)))
    return (sorted(ranked[:count], key=natural), sorted(ranked[count:], key=natural))


def _kept_leaves(leaves: list[DeviceSummary], hosts_of: dict[str, list[str]],
                 statuses: dict[str, str]) -> set[str]:
    """Up to LEAVES_MAX leaves in whole blocks (an SU, or one leaf where there are no
    SUs), the blocks holding the worst status first, then in fabric order."""
    if len(leaves) <= LEAVES_MAX:
        return {leaf.name for leaf in leaves}
    blocks: dict[tuple[object, ...], list[str]] = {}
    for leaf in sorted(leaves, key=_leaf_key):
        key: tuple[object, ...] = ((0, leaf.pod or 0, leaf.su) if leaf.su is not None
                                   else (1, natural(leaf.name)))
        blocks.setdefault(key, []).append(leaf.name)

    def worst(names: list[str]) -> int:
        return min(rank(statuses.get(n, "clean")) for leaf in names
                   for n in (leaf, *hosts_of.get(leaf, ())))

    order = sorted(blocks, key=lambda key: (worst(blocks[key]), key))
    kept: set[str] = set()
    for key in order:
        if not kept or len(kept) + len(blocks[key]) <= LEAVES_MAX:
            kept.update(blocks[key])
    return kept


# ---------------------------------------------------------------- rows


@dataclass(frozen=True)
class _Style:
    """How one switch row draws its boxes."""

    upright: bool
    box_w: float
    box_h: float

    @property
    def slot(self) -> float:
        return NARROW_SLOT if self.upright else self.box_w + SLOT_GAP


@dataclass(frozen=True)
class _Rows:
    """Where the spine and leaf rows go, how they draw, and the levels of group boxes that
    reach up past the spines (pod, plane)."""

    spine_y: float
    leaf_y: float
    spine: _Style
    leaf: _Style
    levels: tuple[str, ...]


def _row_style(names: Sequence[str], upright: bool, tags: Sequence[str] = (),
               least: float = SWITCH_W) -> _Style:
    """Boxes as wide as the row's longest name (or tag) needs, and at least `least`; an
    upright row's as tall."""
    if upright:
        tallest = max((text_width(n, NARROW_FONT) for n in names), default=0.0)
        return _Style(True, NARROW_W, max(40.0, float(math.ceil(tallest + 12))))
    widest = max([text_width(n, SWITCH_FONT) for n in names]
                 + [text_width(t, TAG_FONT) for t in tags], default=0.0)
    return _Style(False, max(least, float(math.ceil(widest + 16))),
                  TAGGED_H if any(tags) else SWITCH_H)


def _fold_label(count: int, what: str) -> str:
    return f"+{count} {what}"


def _fold_width(label: str, style: _Style) -> float:
    """A fold's box: its label across, whatever the row's style."""
    return max(style.box_w * 0.6, float(math.ceil(text_width(label, SWITCH_FONT) + 16)))


def _spread(x: float, inner: float, widths: list[float]) -> list[float]:
    """Left edges of items of `widths` laid side by side over [x, x + inner], the room
    left over shared out evenly."""
    extra = max(0.0, inner - sum(widths)) / max(len(widths), 1)
    out, at = [], x
    for width in widths:
        out.append(at + extra / 2)
        at += width + extra
    return out


@dataclass(frozen=True)
class _TopGroup:
    """The super-spines of one plane: drawn, folded, and the plane box's label."""

    plane: int | None
    shown: list[str]
    folded: list[str]
    label: str

    def widths(self, style: _Style) -> list[float]:
        widths = [style.slot] * len(self.shown)
        if self.folded:
            widths.append(_fold_width(_fold_label(len(self.folded), "super-spines"), style)
                          + SLOT_GAP)
        return widths

    def width(self, style: _Style) -> float:
        """The plane box's width (the row's, unboxed, for no plane)."""
        inner = sum(self.widths(style))
        if self.plane is None:
            return inner
        return max(inner, text_width(self.label, GROUP_FONT, bold=True) + 12) + 2 * PAD


def _tops_width(groups: list[_TopGroup], style: _Style) -> float:
    return sum(g.width(style) for g in groups) + GROUP_GAP * max(len(groups) - 1, 0)


def _side_by_side(widths: list[float], centres: list[float], lo: float,
                  hi: float) -> list[float]:
    """Left edges of boxes laid side by side in their order, as a row as near the boxes'
    own centres as it can be (least squares) within [lo, hi]."""
    offsets, at = [], 0.0
    for width in widths:
        offsets.append(at)
        at += width + GROUP_GAP
    total = at - GROUP_GAP
    ideal = sum(c - w / 2 - o for c, w, o in zip(centres, widths, offsets, strict=True))
    start = min(max(ideal / len(widths), lo), max(lo, hi - total))
    return [start + o for o in offsets]


# ---------------------------------------------------------------- the layout


class _Builder:
    """One layout of one report (the steps share what they work out)."""

    def __init__(self, report: AuditReport) -> None:
        self.report = report
        self.statuses = device_statuses(report)
        self.devices = {d.name: d for d in report.devices}
        by_role: dict[str, list[DeviceSummary]] = defaultdict(list)
        for device in report.devices:
            by_role[device.role if device.role in ("superspine", "spine", "host")
                    else "leaf"].append(device)
        self.tops, self.spines = by_role["superspine"], by_role["spine"]
        self.leaves, self.hosts = by_role["leaf"], by_role["host"]
        self.host_links: dict[str, list[tuple[LinkSummary, str]]] = defaultdict(list)
        for link in sorted(report.links, key=lambda lk: lk.id):
            for host, other in ((link.a_device, link.b_device),
                                (link.b_device, link.a_device)):
                if self._role(host) == "host" and self._role(other) not in ("host", None):
                    self.host_links[host].append((link, other))
                    break
        self.nodes: dict[str, Node] = {}
        self.groups: list[Group] = []
        self.folds: list[Fold] = []

    def _role(self, name: str) -> str | None:
        device = self.devices.get(name)
        return None if device is None else device.role

    def _hosts_of(self) -> dict[str, list[str]]:
        """Leaf -> the hosts whose first leaf (in name order) it is."""
        out: dict[str, list[str]] = defaultdict(list)
        for host in self.hosts:
            leaves = sorted({other for _, other in self.host_links.get(host.name, [])},
                            key=natural)
            if leaves:
                out[leaves[0]].append(host.name)
        return out

    # -- switches

    def build(self) -> Layout:
        kept = _kept_leaves(self.leaves, self._hosts_of(), self.statuses)
        root = _tree(self.leaves, self.spines)
        _prune(root, kept)
        self._cap_spines(root)
        drawn = [self.devices[n] for t in root.walk() for n in t.leaves]
        narrow = len(drawn) > NARROW_ABOVE
        rails = {d.rail for d in drawn if d.rail is not None}
        tags = [f"rail {d.rail}" for d in drawn if d.rail is not None]
        leaf_style = _row_style([d.name for d in drawn], narrow, tags,
                                self._own_hosts_width(kept))
        spine_names = [n for t in root.walk() for n in t.spines]
        spine_style = _row_style(spine_names, False)
        top_groups = self._top_groups()
        top_names = [n for g in top_groups for n in g.shown]
        top_style = _row_style(top_names, False)
        orphans = sorted((h.name for h in self.hosts if not self.host_links.get(h.name)),
                         key=natural)
        orphan_group = self._orphans(orphans)
        extra = (orphan_group.width + SLOT_GAP) if orphan_group else 0.0
        self._measure(root, leaf_style, spine_style, extra)
        if narrow and any(self._spine_need(t, spine_style)
                          > self._content(t, leaf_style, spine_style)
                          for t in root.walk() if t.spines and not _tall(t)):
            # wide spines would widen a crowded fabric further: upright ones
            spine_style = _row_style(spine_names, True)
            self._measure(root, leaf_style, spine_style, extra)
        if narrow and _tops_width(top_groups, top_style) > root.width:
            top_style = _row_style(top_names, True)
        root.inner = max(root.inner, MIN_INNER, _tops_width(top_groups, top_style))
        levels = tuple(sorted({t.kind for t in root.walk() if t.kind in ("pod", "plane")},
                              key=("pod", "plane").index))
        y = top_y = TOP
        if top_groups:
            boxed = any(g.plane is not None for g in top_groups)
            top_y = y + (HEADER + 2 if boxed else 0.0)
            y = top_y + top_style.box_h + (PAD if boxed else 0.0) + TOP_GAP
        spine_y = y + len(levels) * HEADER + (4.0 if levels else 0.0)
        sus = any(t.kind == "su" for t in root.walk())
        leaf_y = spine_y + spine_style.box_h + TIER_GAP + (HEADER if sus and not levels
                                                          else 0.0)
        rows = _Rows(spine_y, leaf_y, spine_style, leaf_style, levels)
        self._place(root, MARGIN, rows, orphan_group)
        if top_groups:
            self._place_tops(top_groups, top_style, TOP, top_y, root)
        groups_bottom = leaf_y + leaf_style.box_h + max(len(levels) * PAD, 4.0 if sus else 0)
        bottom = self._place_hosts(groups_bottom, orphan_group)
        width = max([root.x + root.width + MARGIN]
                    + [n.box.right + MARGIN for n in self.nodes.values()]
                    + [g.box.right + MARGIN for g in self.groups])
        wires = self._wires()
        drawn_rails = sorted({w.rail for w in wires if w.rail is not None} | rails)
        legend_y = bottom + 16
        height = legend_y + (_legend_height(drawn_rails, width) if drawn_rails else 0.0)
        return Layout(width, height, narrow, self.nodes, self.groups, self.folds, wires,
                      drawn_rails, legend_y)

    def _cap_spines(self, root: _Tree) -> None:
        for tree in root.walk():
            cap = SPINES_MAX if tree.kind == "root" else SPINES_PER_GROUP
            shown, folded = _worst_first(tree.spines, self.statuses, cap)
            tree.spines, tree.spine_fold = shown, sorted(tree.spine_fold + folded,
                                                         key=natural)

    def _content(self, tree: _Tree, leaf: _Style, spine: _Style) -> float:
        """The leaf row's width inside `tree`, before its spines or label widen it."""
        width = len(tree.leaves) * leaf.slot
        width += sum(child.width + GROUP_GAP for child in tree.children)
        return width + self._end(tree, leaf, spine)

    def _end(self, tree: _Tree, leaf: _Style, spine: _Style) -> float:
        """The width of the column at the end of `tree`'s rows: its leaf fold and, where
        pod or plane boxes stand over its leaf row, its own spines (in a fabric of pods,
        the spines of the pods folded away)."""
        width = 0.0
        if tree.leaf_fold:
            width = _fold_width(_fold_label(len(tree.leaf_fold), "leaves"), leaf) + SLOT_GAP
        if _tall(tree):
            width = max(width, self._spine_need(tree, spine))
        return width

    def _spine_items(self, tree: _Tree, style: _Style) -> list[float]:
        widths = [style.slot] * len(tree.spines)
        if tree.spine_fold:
            widths.append(_fold_width(_fold_label(len(tree.spine_fold), "spines"), style)
                          + SLOT_GAP)
        return widths

    def _spine_need(self, tree: _Tree, style: _Style) -> float:
        return sum(self._spine_items(tree, style))

    def _measure(self, tree: _Tree, leaf: _Style, spine: _Style, extra: float) -> None:
        for child in tree.children:
            self._measure(child, leaf, spine, 0.0)
        label = text_width(tree.label, GROUP_FONT, bold=True) + 12 if tree.boxed else 0.0
        spines = 0.0 if _tall(tree) else self._spine_need(tree, spine)
        tree.inner = max(self._content(tree, leaf, spine) + extra, spines, label)

    def _place(self, tree: _Tree, x: float, rows: _Rows,
               orphan_group: ServerGroup | None = None) -> None:
        """`tree` from `x` on: its leaf row (leaves, child groups, the end column; the root
        also the hosts that reach no leaf), its spines spread over it (or, where pod or
        plane boxes stand in the way, over the end column), its box."""
        leaf, spine, spine_y, leaf_y = rows.leaf, rows.spine, rows.spine_y, rows.leaf_y
        tree.x = x
        inner_x = x + (PAD if tree.boxed else 0.0)
        items: list[tuple[str, float, _Tree | None]] = [("leaf", leaf.slot, None)
                                                        for _ in tree.leaves]
        items += [("group", child.width + GROUP_GAP, child) for child in tree.children]
        end = self._end(tree, leaf, spine)
        if end:
            items.append(("end", end, None))
        if orphan_group is not None:
            items.append(("orphans", orphan_group.width + SLOT_GAP, None))
        lefts = _spread(inner_x, tree.inner, [w for _, w, _ in items])
        spine_x, spine_w = inner_x, tree.inner
        names = iter(tree.leaves)
        for (kind, width, child), left in zip(items, lefts, strict=True):
            if kind == "leaf":
                self._switch(next(names), left + (width - leaf.box_w) / 2, leaf_y, leaf)
            elif kind == "group" and child is not None:
                self._place(child, left + GROUP_GAP / 2, rows)
            elif kind == "end":
                if tree.leaf_fold:
                    label = _fold_label(len(tree.leaf_fold), "leaves")
                    box_w = _fold_width(label, leaf)
                    self.folds.append(Fold(label, Box(left + (width - box_w) / 2, leaf_y,
                                                      box_w, leaf.box_h),
                                           tuple(tree.leaf_fold)))
                if _tall(tree):
                    spine_x, spine_w = left, width
            elif orphan_group is not None:
                orphan_group.lo = left + SLOT_GAP / 2
                orphan_group.hi = left + width - SLOT_GAP / 2
        widths = self._spine_items(tree, spine)
        for i, left in enumerate(_spread(spine_x, spine_w, widths)):
            if i < len(tree.spines):
                self._switch(tree.spines[i], left + (widths[i] - spine.box_w) / 2, spine_y,
                             spine)
            else:
                label = _fold_label(len(tree.spine_fold), "spines")
                self.folds.append(Fold(label, Box(left + SLOT_GAP / 2, spine_y,
                                                  widths[i] - SLOT_GAP, spine.box_h),
                                       tuple(tree.spine_fold)))
        if tree.kind == "root":
            self._order_root_spines(tree)
        if tree.boxed:
            self._group_box(tree, rows)

    def _group_box(self, tree: _Tree, rows: _Rows) -> None:
        """A pod's or plane's box reaches over its spines (nested ones inside, each with a
        label strip of its own); an SU's holds its leaves."""
        leaf_bottom = rows.leaf_y + rows.leaf.box_h
        if tree.kind == "su":
            top, bottom = rows.leaf_y - HEADER - 2, leaf_bottom + 4
        else:
            outer = len(rows.levels) - rows.levels.index(tree.kind)
            top = rows.spine_y - outer * HEADER - 4
            bottom = leaf_bottom + outer * PAD
        box = Box(tree.x, top, tree.width, bottom - top)
        members = tuple(sorted((n for n, node in self.nodes.items()
                                if box.holds(node.box)), key=natural))
        self.groups.append(Group(tree.kind, tree.label, box, members, tree.scope, tree.plane))

    def _order_root_spines(self, root: _Tree) -> None:
        """A fabric's own spines (not a pod's) over the leaves they reach, in that order."""
        if not root.spines:
            return
        slots = sorted(self.nodes[s].box.x for s in root.spines)
        ordered = _over(self.report, root.spines, self.nodes)
        for name, x in zip(ordered, slots, strict=True):
            old = self.nodes[name]
            self.nodes[name] = Node(name, Box(x, old.box.y, old.box.w, old.box.h), old.style)

    def _switch(self, name: str, x: float, y: float, style: _Style) -> None:
        device = self.devices[name]
        tag = f"rail {device.rail}" if device.rail is not None and not style.upright else ""
        self.nodes[name] = Node(name, Box(x, y, style.box_w, style.box_h),
                                "upright" if style.upright else "switch", tag)

    # -- super-spines

    def _top_groups(self) -> list[_TopGroup]:
        """The super-spines per plane (one unboxed group when there are no planes)."""
        planes: dict[int | None, list[str]] = defaultdict(list)
        for device in self.tops:
            planes[device.plane].append(device.name)
        out = []
        for plane in sorted(planes, key=lambda p: p or 0):
            shown, folded = _worst_first(planes[plane], self.statuses, TOPS_PER_GROUP)
            out.append(_TopGroup(plane, shown, folded,
                                 "" if plane is None else self._top_label(plane)))
        return out

    def _top_label(self, plane: int) -> str:
        rails = sorted({d.rail for d in self.leaves if d.plane == plane and d.rail})
        label = f"plane {plane}"
        if rails:
            label += f" · rail{'s' if len(rails) > 1 else ''} " + ", ".join(map(str, rails))
        return label

    def _place_tops(self, groups: list[_TopGroup], style: _Style, box_y: float, y: float,
                    root: _Tree) -> None:
        if len(groups) == 1 and groups[0].plane is None:  # no planes: spread them out
            group = groups[0]
            widths = group.widths(style)
            lefts = _spread(root.x, root.inner, widths)
            ordered = _over(self.report, group.shown, self.nodes)
            for name, left, width in zip(ordered, lefts, widths, strict=False):
                self._switch(name, left + (width - style.box_w) / 2, y, style)
            if group.folded:
                self._top_fold(group.folded, lefts[-1], widths[-1], y, style)
            return
        centres = []
        for group in groups:
            below = [self.nodes[s].box.cx for s in self._linked(group.shown)
                     if s in self.nodes]
            centres.append(math.fsum(below) / len(below) if below
                           else root.x + root.width / 2)
        widths = [group.width(style) for group in groups]
        for group, x, width in zip(groups, _side_by_side(widths, centres, root.x,
                                                         root.x + root.width),
                                   widths, strict=True):
            items = group.widths(style)
            lefts = _spread(x + PAD, width - 2 * PAD, items)
            for name, left in zip(group.shown, lefts, strict=False):
                self._switch(name, left + (style.slot - style.box_w) / 2, y, style)
            if group.folded:
                self._top_fold(group.folded, lefts[-1], items[-1], y, style)
            box = Box(x, box_y, width, y + style.box_h + PAD - box_y)
            self.groups.append(Group("tier", group.label, box,
                                     tuple(sorted(group.shown, key=natural)),
                                     (("plane", group.plane or 0),), group.plane))

    def _top_fold(self, folded: list[str], left: float, width: float, y: float,
                  style: _Style) -> None:
        self.folds.append(Fold(_fold_label(len(folded), "super-spines"),
                               Box(left + SLOT_GAP / 2, y, width - SLOT_GAP, style.box_h),
                               tuple(folded)))

    def _linked(self, names: list[str]) -> list[str]:
        wanted = set(names)
        out = set()
        for link in self.report.links:
            if link.a_device in wanted:
                out.add(link.b_device)
            elif link.b_device in wanted:
                out.add(link.a_device)
        return sorted(out)

    # -- servers

    def _orphans(self, orphans: list[str]) -> ServerGroup | None:
        """Hosts linked to no switch: a column of their own at the right."""
        if not orphans:
            return None
        group = ServerGroup((), 0.0, math.inf, [], [])
        size_group(group, self._ranked(orphans))
        group.hi = group.width
        return group

    def _own_hosts_width(self, kept: set[str]) -> float:
        """The widest row of drawn servers that one leaf holds alone (a leaf is made that
        wide, so its servers stand side by side under it)."""
        alone: dict[str, list[str]] = defaultdict(list)
        for host in self.hosts:
            leaves = {other for _, other in self.host_links.get(host.name, [])} & kept
            if len(leaves) == 1:
                alone[leaves.pop()].append(host.name)
        widest = SWITCH_W
        for hosts in alone.values():
            shown = self._ranked(hosts)[:HOSTS_PER_GROUP]
            widest = max(widest, row_width(shown))
        return widest

    def _ranked(self, names: list[str]) -> list[str]:
        """Worst status first, then in name order."""
        return sorted(names, key=lambda n: (rank(self.statuses.get(n, "clean")), natural(n)))

    def _place_hosts(self, above: float, orphan_group: ServerGroup | None) -> float:
        """Every server group below its leaves (`above`: the leaf groups' bottom), in as
        few lanes as the spans allow; returns the bottom of the last."""
        sets: dict[tuple[str, ...], list[str]] = defaultdict(list)
        gone: dict[int, list[str]] = defaultdict(list)  # hosts of folded leaves, by fold
        fold_of = {leaf: i for i, fold in enumerate(self.folds) for leaf in fold.names}
        for host in self.hosts:
            leaves = {other for _, other in self.host_links.get(host.name, [])}
            if not leaves:
                continue
            drawn = tuple(sorted((n for n in leaves if n in self.nodes),
                                 key=lambda n: (self.nodes[n].box.x, n)))
            if drawn:
                sets[drawn].append(host.name)
            else:
                first = min(leaves, key=natural)
                if first in fold_of:
                    gone[fold_of[first]].append(host.name)
        groups = []
        for drawn_set, hosts in sorted(sets.items()):
            boxes = [self.nodes[n].box for n in drawn_set]
            group = ServerGroup(drawn_set, min(b.x for b in boxes), max(b.right for b in boxes),
                               [], [], math.fsum(b.cx for b in boxes) / len(boxes))
            size_group(group, self._ranked(hosts))
            groups.append(group)
        for index, hidden in sorted(gone.items()):  # "+N servers" under a leaves' fold
            fold = self.folds[index].box
            group = ServerGroup((), fold.x, fold.right, [], sorted(hidden, key=natural))
            group.more = f"+{len(hidden)} servers"
            groups.append(group)
        if orphan_group is not None:
            orphan_group.x = orphan_group.lo
            groups.append(orphan_group)
        # links to far leaves get room to slope: the farther, the deeper the servers stand
        reach = max((abs(self.nodes[leaf].box.cx - (g.lo + g.hi) / 2) for g in groups
                     for leaf in g.leaves), default=0.0)
        y = above + min(max(HOST_DROP, 0.3 * reach), 110.0)
        lane_y, bottom = y, y
        pending = groups
        while pending:
            deferred = place_lane(pending)
            placed = [g for g in pending if g not in deferred]
            if not placed:  # cannot happen: a lone group always fits its span
                raise AssertionError("a server group fits no lane")
            for group in placed:
                group.y = lane_y
                self._host_nodes(group)
            lane_h = max(g.height for g in placed)
            bottom = lane_y + lane_h
            lane_y = bottom + LANE_GAP
            pending = deferred
        return bottom

    def _host_nodes(self, group: ServerGroup) -> None:
        for name, x, y in group.slots():
            self.nodes[name] = Node(name, Box(x, y, group.box_w, group.box_h),
                                    "host" if group.labelled else "marker")
        if group.folded:
            x, y, width = group.more_at()
            self.folds.append(Fold(group.more, Box(x, y, width, 12), tuple(group.folded),
                                   boxed=False))

    # -- links

    def _wires(self) -> list[Wire]:
        drawn = [lk for lk in self.report.links
                 if lk.a_device in self.nodes and lk.b_device in self.nodes]
        host_ends: dict[str, list[LinkSummary]] = defaultdict(list)
        leaf_ends: dict[str, list[LinkSummary]] = defaultdict(list)
        other = []
        for link in drawn:
            host, leaf = self._host_end(link)
            if host is None or leaf is None:
                other.append(link)
            else:
                host_ends[host].append(link)
                leaf_ends[leaf].append(link)
        at_host: dict[str, float] = {}
        for host, links in host_ends.items():
            box = self.nodes[host].box
            links.sort(key=lambda lk: (self.nodes[self._host_end(lk)[1] or ""].box.cx, lk.id))
            for i, link in enumerate(links):
                at_host[link.id] = box.x + (i + 0.5) * box.w / len(links)
        wires = []
        for leaf, links in leaf_ends.items():
            box = self.nodes[leaf].box
            links.sort(key=lambda lk: (at_host[lk.id], lk.id))
            rail = self.devices[leaf].rail
            for j, link in enumerate(links):
                host = self._host_end(link)[0] or ""
                wires.append(Wire(link, box.x + (j + 0.5) * box.w / len(links), box.bottom,
                                  at_host[link.id], self.nodes[host].box.y, rail))
        for link in other:
            a, b = self.nodes[link.a_device].box, self.nodes[link.b_device].box
            top, low = (a, b) if a.y <= b.y else (b, a)
            wires.append(Wire(link, top.cx, top.bottom, low.cx, low.y))
        return sorted(wires, key=lambda w: w.link.id)

    def _host_end(self, link: LinkSummary) -> tuple[str | None, str | None]:
        """(host, switch) of a host link, else (None, None)."""
        for host, other in ((link.a_device, link.b_device), (link.b_device, link.a_device)):
            if self._role(host) == "host" and self._role(other) not in ("host", None):
                return host, other
        return None, None


def _over(report: AuditReport, names: list[str], nodes: dict[str, Node]) -> list[str]:
    """`names` ordered by the mean x of the drawn devices they link to; ties by name."""
    wanted = set(names)
    linked: dict[str, list[float]] = defaultdict(list)
    for link in report.links:
        for a, b in ((link.a_device, link.b_device), (link.b_device, link.a_device)):
            if b in wanted and a in nodes and a not in wanted:
                linked[b].append(nodes[a].box.cx)
    # fsum: the same mean whatever order the report lists its links in
    return sorted(names, key=lambda n: (math.fsum(linked[n]) / len(linked[n]) if linked[n]
                                        else math.inf, natural(n)))


def _legend_height(rails: list[int], width: float) -> float:
    lines = _legend_lines(rails, width)
    return len(lines) * 20.0 + 8.0


def legend_item_width(rail: int) -> float:
    return 34.0 + text_width(f"rail {rail}", GROUP_FONT) + 18.0


def _legend_lines(rails: list[int], width: float) -> list[list[int]]:
    lines: list[list[int]] = [[]]
    used = MARGIN
    for rail in rails:
        item = legend_item_width(rail)
        if lines[-1] and used + item > width - MARGIN:
            lines.append([])
            used = MARGIN
        lines[-1].append(rail)
        used += item
    return lines


def legend_lines(layout: Layout) -> list[list[int]]:
    """The rails of the legend, line by line, as wide as the picture allows."""
    return _legend_lines(layout.rails, layout.width)


def layout(report: AuditReport) -> Layout:
    """The fabric picture's geometry (see the module's docstring)."""
    return _Builder(report).build()
