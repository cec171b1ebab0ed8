"""Run a threaded pass over many devices (a read, a rollout's diff) on one CPU.

A read's threads (Nornir's workers and paramiko's reader thread per session) hold Python's
GIL in turns, so they never run Python on two CPUs at once; spread over two CPUs they hand the
GIL across cores instead, and every hand-off is a futex wake of a thread on the other core.
Measured here (2 cores, verify of 1,000 simulated switches, the simulator on the other
core): the read's threads on one CPU, 61 s wall and 53 CPU s; free to use both, 80 s and 77
CPU s, 17 of them in the kernel. Linux sets affinity per thread and a new thread inherits
its creator's, so pinning the thread that starts the run pins the run's threads only;
forked render workers and anything after the run keep every CPU. Only for passes whose
sessions close as each device is done: thousands of open sessions' reader threads on one
core starve the run (a rollout's commit and confirm passes are not pinned).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

MIN_DEVICES = 100  # below this a read lasts a second or two: nothing to win
ENV = "FLATFAB_PIN_READS"  # "0": leave a read's threads free to use every CPU


def _current_cpu() -> int | None:
    """The CPU this thread last ran on (field 39 of /proc/thread-self/stat)."""
    try:
        after_name = Path("/proc/thread-self/stat").read_text().rsplit(")", 1)[1].split()
        return int(after_name[36])  # the fields after the name start at field 3
    except (OSError, ValueError, IndexError):
        return None


@contextmanager
def threads_on_one_cpu(devices: int) -> Iterator[int | None]:
    """Threads started inside the block run on one CPU (the one this thread is on, where
    the scheduler put it); yields that CPU, or None where nothing was pinned (a small read,
    one CPU allowed, no sched_setaffinity, or FLATFAB_PIN_READS=0)."""
    allowed = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else set()
    if devices < MIN_DEVICES or len(allowed) < 2 or os.environ.get(ENV) == "0":
        yield None
        return
    cpu = _current_cpu()
    if cpu not in allowed:
        cpu = min(allowed)
    os.sched_setaffinity(0, {cpu})
    try:
        yield cpu
    finally:
        os.sched_setaffinity(0, allowed)
