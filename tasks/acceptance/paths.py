"""The links a pair's traffic crosses, as the workflow finds them on the plan's path
(flatfab.plan.traffic `hops`): both servers' own links to their leaves for certain; between
the leaves, ECMP picks one of several equal paths per flow, which the plan cannot know: those
links are the pair's `maybe` links. A link is named as its two ends, physical (a VRF sub-link
is its parent's), the switch's end first. Data only.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, order=True)
class LinkRef:
    """A physical link by its plan id and its two ends (`device:port`)."""

    id: str
    a: str
    b: str

    def __str__(self) -> str:
        return f"{self.a} <-> {self.b}"


@dataclass(frozen=True)
class Crossing:
    certain: tuple[LinkRef, ...]  # the servers' own links, source first
    maybe: tuple[LinkRef, ...]  # the fabric links ECMP chose among, in plan order
