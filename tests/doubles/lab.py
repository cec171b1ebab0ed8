"""The lab host as tasks/lab sees it: a process table that answers signals."""

from __future__ import annotations

import signal


class FakeKernel:
    """A process table that reacts to signals as the lab's daemons do, on a fake clock."""

    def __init__(self) -> None:
        self.now = 0.0
        self.table = {1: "zebra", 2: "stubborn", 3: "watchfrr", 4: "stuck"}
        self.sent: list[tuple[int, int]] = []
        self.respawned = False

    def find(self) -> dict[int, str]:
        return dict(self.table)

    def send(self, pid: int, sig: int) -> None:
        self.sent.append((pid, sig))
        comm = self.table.get(pid)
        if comm in ("zebra", "watchfrr") or (comm == "stubborn" and sig == signal.SIGKILL):
            del self.table[pid]
        if comm == "zebra" and not self.respawned and "watchfrr" in self.table.values():
            self.table[5] = "zebra"  # watchfrr restarts what died before it saw its TERM
            self.respawned = True
        # "stuck" is in uninterruptible sleep: not even SIGKILL ends it

    def sleep(self, seconds: float) -> None:
        self.now += seconds
