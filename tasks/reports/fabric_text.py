"""Text in the fabric picture: its font sizes, how wide a label may be drawn, and the order
names go in."""

from __future__ import annotations

import re
from functools import lru_cache

SWITCH_FONT, HOST_FONT, TAG_FONT, GROUP_FONT, NARROW_FONT = 12.0, 10.0, 9.0, 11.0, 10.0

_WIDE = frozenset("mwMW@%")
_THIN = frozenset("ijlI.,:;|!' ")
_DIGITS = re.compile(r"(\d+)")


def text_width(text: str, size: float, bold: bool = False) -> float:
    """A conservative width of `text` at font `size` in px: no character narrower than the
    widest common sans faces (DejaVu Sans, Verdana) draw it; bold (the group labels') is up
    to a tenth wider."""
    em = 0.0
    for char in text:
        if char in _WIDE or not char.isascii():
            em += 1.0
        elif char.isupper():
            em += 0.8
        elif char in _THIN:
            em += 0.4
        else:
            em += 0.66
    return em * size * (1.1 if bold else 1.0)


@lru_cache(maxsize=65536)
def natural(name: str) -> tuple[str | int, ...]:
    """Sort key: leaf2 before leaf10."""
    return tuple(int(part) if i % 2 else part for i, part in enumerate(_DIGITS.split(name)))
