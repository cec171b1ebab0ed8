"""Give freed heap back to the operating system after a burst (glibc's malloc_trim(3)), and
keep large blocks out of the heap (mallopt(3), M_MMAP_THRESHOLD).

A watch takes the whole fabric's notifications at the same instant every interval (every
switch samples on the interval boundary); what a burst freed stays in glibc's arenas, part
of the process's resident set, until something trims them: a tenth of a 1,000-switch
watch's memory. Each notification passes through blocks of half a megabyte (its bytes as
received, its decoded message): glibc's default raises its mmap threshold past the size of
the first such block freed, so every later one comes from the heap, and the heap's resident
set grows to the most that were ever alive at once. A fixed threshold maps each one and
unmaps it when freed. Elsewhere (another C library) both do nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
from collections.abc import Callable
from typing import Any, Final

_M_MMAP_THRESHOLD: Final = -3  # glibc's malloc.h
# blocks from this size on are mapped on their own (glibc's initial threshold); setting it
# also stops glibc raising it
MMAP_THRESHOLD: Final = 128 * 1024


@functools.cache
def _glibc(name: str) -> Callable[..., Any] | None:
    """One of glibc's malloc functions; None under another C library."""
    found = ctypes.util.find_library("c")
    if found is None:
        return None
    try:
        fn: Callable[..., Any] = getattr(ctypes.CDLL(found), name)
    except (OSError, AttributeError):  # not glibc
        return None
    return fn


def _trim() -> Callable[..., Any] | None:
    return _glibc("malloc_trim")


def trim() -> bool:
    """Release what malloc holds free; False where the C library cannot."""
    fn = _trim()
    if fn is None:
        return False
    fn(0)
    return True


def map_large_blocks() -> bool:
    """From now on, every block of `MMAP_THRESHOLD` bytes or more is mapped apart and given
    back when freed; False where the C library cannot (or refused)."""
    fn = _glibc("mallopt")
    return fn is not None and fn(_M_MMAP_THRESHOLD, MMAP_THRESHOLD) == 1
