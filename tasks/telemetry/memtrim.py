"""Give freed heap back to the operating system after a burst (glibc's malloc_trim(3)).

A watch takes the whole fabric's notifications at the same instant every interval (every
switch samples on the interval boundary); what a burst freed stays in glibc's arenas, part
of the process's resident set, until something trims them: a tenth of a 1,000-switch
watch's memory. Elsewhere (another C library) this does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
from collections.abc import Callable


@functools.cache
def _trim() -> Callable[[int], int] | None:
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        trim: Callable[[int], int] = ctypes.CDLL(name).malloc_trim
    except (OSError, AttributeError):  # not glibc
        return None
    return trim


def trim() -> bool:
    """Release what malloc holds free; False where the C library cannot."""
    fn = _trim()
    if fn is None:
        return False
    fn(0)
    return True
