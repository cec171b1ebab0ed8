"""How far each kind of cable or optic carries each Ethernet speed: a link class's `media`.

Reaches are the operating ranges of the IEEE 802.3 physical layers (the PMD clauses of
802.3ae/ba/bj/bm/bs/by/cc/cd/ck/cm/cn/cu/df/dj), over OM4 for multimode and OS2 for single
mode; where several PMDs serve one media at one speed the longest counts (400G over copper:
eight 50G lanes reach 3 m as QSFP-DD/OSFP DACs on the 802.3cd channel, four 100G lanes of
400GBASE-CR4 only 2 m). Active optical cables are no IEEE PMD; their reach is that of the
MSA products (up to 100 m). A speed without an entry for a media has no such optic: there is
no 10G DR, no 25G FR, no 800G over passive copper beyond 2 m.

Without a media, a cable is refused only beyond the longest reach any optic has at its speed;
with one, beyond that media's reach. Longer spans (ZR, amplified DWDM) are transport, not a
fabric link, and their headroom would not fit a switch buffer anyway.
"""

from __future__ import annotations

from flatfab.model.physical import REACH_M, Media, reach_m

__all__ = [
    "MAX_REACH_M",
    "REACH_M",
    "Media",
    "cable_problem",
    "longest",
    "media_problem",
    "offered",
    "reach_m",
]


# the longest cable any link class may declare, whatever its speed
MAX_REACH_M = max(reach for table in REACH_M.values() for reach in table.values())


def longest(speed: str) -> tuple[Media, float] | None:
    """The media that reaches furthest at `speed`, and how far."""
    offered = [(reach, media) for media, table in REACH_M.items()
               if (reach := table.get(speed)) is not None]
    if not offered:
        return None
    reach, media = max(offered)
    return media, reach


def offered(speed: str) -> list[Media]:
    return [media for media, table in REACH_M.items() if speed in table]


def media_problem(media: Media, speed: str) -> str | None:
    """Why no optic of `media` exists at `speed` (None: one does)."""
    if reach_m(media, speed) is not None:
        return None
    return (f"no {speed} {media} optic ({speed} media: "
            f"{', '.join(str(m) for m in offered(speed))})")


def cable_problem(cable_m: float, speed: str | None, media: Media | None) -> str | None:
    """Why a cable of `cable_m` metres cannot carry `speed` over `media` (None: it can).

    An unknown speed (refused elsewhere) is held to the longest reach of any optic."""
    if media is not None and speed is not None:
        reach = reach_m(media, speed)
        if reach is None:
            return None  # the media itself is refused, once
        if cable_m > reach:
            return f"{cable_m:g} m is beyond {speed} {media} reach ({reach:g} m)"
        return None
    best = longest(speed) if speed is not None else None
    if best is None:
        if cable_m > MAX_REACH_M:
            return f"{cable_m:g} m is beyond the reach of any optic ({MAX_REACH_M:g} m)"
        return None
    media_, reach = best
    if cable_m > reach:
        return (f"{cable_m:g} m is beyond the reach of any {speed} optic (longest: "
                f"{media_}, {reach:g} m)")
    return None
