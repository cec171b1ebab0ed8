"""The collector paused for a fleet's read, and its young-generation sweeps."""

from __future__ import annotations

import gc
import weakref

from flatfab.gcpause import YoungSweep, gc_paused


class _Node:
    def __init__(self) -> None:
        self.me = self  # a reference cycle: only the cyclic collector frees it


def test_a_sweep_frees_the_cycles_left_while_the_collector_is_paused() -> None:
    sweep = YoungSweep(every=3)
    with gc_paused(long_lived=True):
        left = weakref.ref(_Node())
        sweep()
        sweep()
        assert left() is not None  # paused: nothing frees a cycle yet
        sweep()  # the third call sweeps
        assert left() is None
        assert not gc.isenabled()  # a sweep does not resume the collector
    assert gc.isenabled()


def test_a_sweep_leaves_what_is_still_referenced() -> None:
    sweep = YoungSweep(every=1)
    with gc_paused():
        kept = _Node()
        sweep()
        assert kept.me is kept
