"""The servers' rows of the fabric picture: the servers on one set of leaves form a group
that stands below the span of those leaves (from the left edge of the leftmost to the right
edge of the rightmost), as near the leaves' centre as the other groups let it; groups that
find no room go to a lane below.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from flatfab.reports.fabric_text import HOST_FONT, natural, text_width

HOSTS_PER_GROUP = 4  # servers drawn per leaf set
HOST_H, HOST_GAP, HOST_PAD = 18.0, 4.0, 8.0  # a named server's box: height, gap, padding
MARKER_W, MARKER_H = 14.0, 10.0  # a server too crowded for its name (the tooltip names it)
SET_GAP, LANE_GAP = 8.0, 14.0  # between two groups side by side, between two lanes
HOST_DROP = 36.0  # the least room between the leaves and the servers


@dataclass
class ServerGroup:
    """Servers on the same drawn leaves: a row of boxes (or markers) below their span,
    "+N more" under it for the ones not drawn."""

    leaves: tuple[str, ...]
    lo: float  # the span: from the left edge of the leftmost leaf ...
    hi: float  # ... to the right edge of the rightmost
    shown: list[str]
    folded: list[str]
    centre: float | None = None  # where to stand: the mean of the leaves' centres
    box_w: float = 0.0
    box_h: float = 0.0
    labelled: bool = True
    per_row: int = 1  # named servers stand in one row; markers may stack
    more: str = ""
    x: float = 0.0  # left edge of the group's extent, once placed
    y: float = 0.0

    @property
    def grid_w(self) -> float:
        """The boxes' width: one row of them (none: the servers of folded leaves)."""
        return max(0.0, min(len(self.shown), self.per_row) * (self.box_w + HOST_GAP)
                   - HOST_GAP)

    @property
    def grid_h(self) -> float:
        rows = math.ceil(len(self.shown) / self.per_row)
        return max(0.0, rows * (self.box_h + HOST_GAP) - HOST_GAP)

    @property
    def width(self) -> float:
        return max(self.grid_w, text_width(self.more, HOST_FONT))

    @property
    def height(self) -> float:
        return self.grid_h + (16.0 if self.more else 0.0)

    @property
    def target(self) -> float:
        centre = (self.lo + self.hi) / 2 if self.centre is None else self.centre
        return centre - self.width / 2

    def slots(self) -> list[tuple[str, float, float]]:
        """Each drawn server and the top left corner of its box."""
        grid_x = self.x + (self.width - self.grid_w) / 2
        out = []
        for i, name in enumerate(self.shown):
            row, col = divmod(i, self.per_row)
            out.append((name, grid_x + col * (self.box_w + HOST_GAP),
                        self.y + row * (self.box_h + HOST_GAP)))
        return out

    def more_at(self) -> tuple[float, float, float]:
        """Where "+N more" goes (left, top, width): centred under the boxes."""
        width = text_width(self.more, HOST_FONT)
        grid_x = self.x + (self.width - self.grid_w) / 2
        return grid_x + self.grid_w / 2 - width / 2, self.y + self.grid_h + 2, width

    @property
    def bounds(self) -> tuple[float, float]:
        """Where the extent's left edge may go so the grid stays inside the span."""
        side = (self.width - self.grid_w) / 2
        return self.lo - side, self.hi - side - self.grid_w


def row_width(names: list[str]) -> float:
    """The width of `names` side by side, each in a box as wide as the widest needs."""
    return len(names) * (host_box(names) + HOST_GAP) - HOST_GAP


def host_box(names: list[str]) -> float:
    return max(26.0, float(math.ceil(max(text_width(n, HOST_FONT) for n in names)
                                     + HOST_PAD)))


def size_group(group: ServerGroup, ranked: list[str]) -> None:
    """Draw as many of `ranked` (worst first) as fit side by side in the span, up to
    HOSTS_PER_GROUP, each named. Where not even one name fits, HOSTS_PER_GROUP unnamed
    markers, stacked when the span is narrow (a link to a lower one passes behind the
    ones above: markers have no name to hide)."""
    span = group.hi - group.lo
    for count in range(min(len(ranked), HOSTS_PER_GROUP), 0, -1):
        width = host_box(ranked[:count])
        if count * width + (count - 1) * HOST_GAP <= span:
            group.box_w, group.box_h, group.per_row = width, HOST_H, count
            break
    else:
        group.labelled, group.box_w, group.box_h = False, MARKER_W, MARKER_H
        count = min(len(ranked), HOSTS_PER_GROUP)
        group.per_row = max(1, min(count, int((span + HOST_GAP) // (MARKER_W + HOST_GAP))))
    group.shown = sorted(ranked[:count], key=natural)
    group.folded = sorted(ranked[count:], key=natural)
    if group.folded:
        long = f"+{len(group.folded)} more"
        group.more = long if text_width(long, HOST_FONT) <= span else f"+{len(group.folded)}"


def place_lane(groups: list[ServerGroup]) -> list[ServerGroup]:
    """Place `groups` side by side, each as near its span's centre as the others let it
    and never out of its span; returns the ones that do not fit (for the next lane).

    Groups sorted by target; a group that overlaps the previous cluster joins it, and the
    cluster sits at the mean of its members' targets, clamped to what all allow."""
    clusters: list[list[ServerGroup]] = []
    deferred: list[ServerGroup] = []
    for group in sorted(groups, key=lambda g: (g.target, g.leaves)):
        saved = [list(c) for c in clusters], [[g.x for g in c] for c in clusters]
        clusters.append([group])
        if not _settle(clusters):
            clusters = saved[0]
            for cluster, xs in zip(clusters, saved[1], strict=True):
                for member, x in zip(cluster, xs, strict=True):
                    member.x = x
            deferred.append(group)
    return deferred


def _settle(clusters: list[list[ServerGroup]]) -> bool:
    """Place the last cluster, merging backwards while clusters overlap; False when a
    merged cluster cannot keep every member in its span."""
    while True:
        last = clusters[-1]
        offsets, at = [], 0.0
        for member in last:
            offsets.append(at)
            at += member.width + SET_GAP
        low = max(m.bounds[0] - o for m, o in zip(last, offsets, strict=True))
        high = min(m.bounds[1] - o for m, o in zip(last, offsets, strict=True))
        if low > high + 1e-6:
            return False
        ideal = sum(m.target - o for m, o in zip(last, offsets, strict=True)) / len(last)
        start = min(max(ideal, low), high)
        for member, offset in zip(last, offsets, strict=True):
            member.x = start + offset
        if len(clusters) < 2:
            return True
        before = clusters[-2][-1]
        if before.x + before.width + SET_GAP <= start + 1e-6:
            return True
        clusters[-2:] = [clusters[-2] + last]
