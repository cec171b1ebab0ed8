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

from enum import StrEnum


class Media(StrEnum):
    DAC = "dac"  # passive copper (direct attach)
    AOC = "aoc"  # active optical cable
    SR = "sr"  # short reach, multimode fibre (OM4)
    DR = "dr"  # 500 m single mode (parallel)
    FR = "fr"  # 2 km single mode
    LR = "lr"  # 10 km single mode
    ER = "er"  # 40 km single mode


# media -> speed -> reach in metres
REACH_M: dict[Media, dict[str, float]] = {
    Media.DAC: {
        "10G": 7,  # SFP+ direct attach (SFF-8431)
        "25G": 5,  # 25GBASE-CR, CA-25G-L (802.3by)
        "40G": 7,  # 40GBASE-CR4 (802.3ba)
        "50G": 3,  # 50GBASE-CR (802.3cd)
        "100G": 5,  # 100GBASE-CR4 (802.3bj)
        "200G": 3,  # 200GBASE-CR4 (802.3cd)
        "400G": 3,  # 8 x 50G lanes on the 802.3cd channel; 400GBASE-CR4 (802.3ck): 2 m
        "800G": 2,  # 800GBASE-CR8 (802.3df)
    },
    Media.AOC: dict.fromkeys(("10G", "25G", "40G", "50G", "100G", "200G", "400G", "800G"),
                             100),
    Media.SR: {
        "10G": 400,  # 10GBASE-SR (802.3ae)
        "25G": 100,  # 25GBASE-SR (802.3by)
        "40G": 150,  # 40GBASE-SR4 (802.3ba)
        "50G": 100,  # 50GBASE-SR (802.3cd)
        "100G": 100,  # 100GBASE-SR4 (802.3bm)
        "200G": 100,  # 200GBASE-SR4 (802.3cd)
        "400G": 100,  # 400GBASE-SR8, -SR4.2 (802.3cm)
        "800G": 100,  # 800GBASE-SR8 (802.3df)
    },
    Media.DR: {
        "100G": 500,  # 100GBASE-DR (802.3cd)
        "200G": 500,  # 200GBASE-DR4 (802.3bs)
        "400G": 500,  # 400GBASE-DR4 (802.3bs)
        "800G": 500,  # 800GBASE-DR8 (802.3df)
    },
    Media.FR: {
        "40G": 2_000,  # 40GBASE-FR (802.3bg)
        "50G": 2_000,  # 50GBASE-FR (802.3cd)
        "100G": 2_000,  # 100GBASE-FR1 (802.3cu)
        "200G": 2_000,  # 200GBASE-FR4 (802.3bs)
        "400G": 2_000,  # 400GBASE-FR4 (802.3cu), -FR8 (802.3bs)
        "800G": 2_000,  # 800GBASE-DR8-2 (802.3df), -FR4 (802.3dj)
    },
    Media.LR: {
        "10G": 10_000,  # 10GBASE-LR (802.3ae)
        "25G": 10_000,  # 25GBASE-LR (802.3cc)
        "40G": 10_000,  # 40GBASE-LR4 (802.3ba)
        "50G": 10_000,  # 50GBASE-LR (802.3cd)
        "100G": 10_000,  # 100GBASE-LR4 (802.3ba), -LR1 (802.3cu)
        "200G": 10_000,  # 200GBASE-LR4 (802.3bs)
        "400G": 10_000,  # 400GBASE-LR8 (802.3bs)
        "800G": 10_000,  # 800GBASE-LR4 (802.3dj)
    },
    Media.ER: {
        "10G": 40_000,  # 10GBASE-ER (802.3ae)
        "25G": 40_000,  # 25GBASE-ER (802.3cc)
        "40G": 40_000,  # 40GBASE-ER4 (802.3bm)
        "50G": 40_000,  # 50GBASE-ER (802.3cn)
        "100G": 40_000,  # 100GBASE-ER4 (802.3ba)
        "200G": 40_000,  # 200GBASE-ER4 (802.3cn)
        "400G": 40_000,  # 400GBASE-ER8 (802.3cn)
        "800G": 40_000,  # 800GBASE-ER1 (802.3dj)
    },
}

# the longest cable any link class may declare, whatever its speed
MAX_REACH_M = max(reach for table in REACH_M.values() for reach in table.values())


def reach_m(media: Media, speed: str) -> float | None:
    """How far `media` carries `speed` (None: no such optic)."""
    return REACH_M[media].get(speed)


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
