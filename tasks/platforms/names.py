"""Interface name ordering shared by the renderers.

The natural order netutils' sort_interface_list gives (swp2 before swp10, a port before its
subinterfaces), computed with one cached key per name: renderers of 1,000-port spines sort
the same names many times.
"""

from __future__ import annotations

import re
from functools import lru_cache

_DIGITS = re.compile(r"(\d+)")


@lru_cache(maxsize=1 << 16)
def natural_key(name: str) -> tuple[tuple[int, str | int], ...]:
    return tuple((1, int(part)) if part.isdigit() else (0, part)
                 for part in _DIGITS.split(name) if part)


def sort_interfaces(names: list[str]) -> list[str]:
    return sorted(names, key=natural_key)
