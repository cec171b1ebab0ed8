"""Pause the cyclic garbage collector around bulk, cycle-free allocation.

Planning and rendering a large fabric allocate millions of small objects that form no
reference cycles; the collector would rescan the growing heap again and again (more than
half of the planning time at 1,000 switches). Reference counting still frees everything.
"""

from __future__ import annotations

import gc
import itertools
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused(*, long_lived: bool = False) -> Iterator[None]:
    """`long_lived`: what the block leaves alive (a plan) lives on; it moves straight to the
    oldest generation. Otherwise the first collection after the block would scan all of it
    (a second per million objects) only to promote it there."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        # freeze + unfreeze moves every tracked object into the oldest generation without a
        # scan; cycles among them are still found by the next full collection. Skipped when
        # something is frozen already (forked render workers), which unfreeze would thaw.
        if long_lived and gc.get_freeze_count() == 0:
            gc.freeze()
            gc.unfreeze()
        if was_enabled:
            gc.enable()


class YoungSweep:
    """While the collector is paused for a fleet's read, the cyclic garbage each finished
    device leaves (its closed SSH session's transport, threads and events) would stay until
    the end: a third of the peak memory of a 10,000-device verify. Called once per device;
    every `every` calls, the young generations only are collected (what arrived since the
    last sweep, so a run's sweeps together scan each object about once), never the heap."""

    def __init__(self, every: int = 100) -> None:
        self.every = every
        self._calls = itertools.count(1)  # next() is atomic under the GIL: safe from threads

    def __call__(self) -> None:
        if next(self._calls) % self.every == 0:
            gc.collect(1)
