"""Doubles for a rollout without a lab: a config driver's commit cycle
(tests/workflows/test_telemetry_gate.py; a healthy switch's counters are
tests/doubles/gnmi.HealthyCounters)."""

from __future__ import annotations

from collections.abc import Callable


class FakeDevice:
    """A config driver's commit cycle: candidate, commit with a revert timer, confirm or
    roll back. `on_commit` runs when the change lands (a test starts a storm there)."""

    def __init__(self, running: str, on_commit: Callable[[], None]) -> None:
        self.running, self.candidate = running, ""
        self.before: str | None = None  # the running config a pending commit replaced
        self.on_commit = on_commit
        self.history: list[str] = []

    def load_replace_candidate(self, config: str) -> None:
        self.candidate = config

    def compare_config(self) -> str:
        return "" if self.candidate == self.running else "-old\n+new\n"

    def discard_config(self) -> None:
        self.candidate = ""

    def get_config(self, retrieve: str = "all") -> dict[str, str]:
        return {"running": self.running}

    def commit_config(self, revert_in: int | None = None) -> None:
        self.before = self.running if revert_in else None
        self.running, self.candidate = self.candidate, ""
        self.history.append("commit")
        self.on_commit()

    def has_pending_commit(self) -> bool:
        return self.before is not None

    def confirm_commit(self) -> None:
        self.before = None
        self.history.append("confirm")

    def rollback(self) -> None:
        assert self.before is not None
        self.running, self.before = self.before, None
        self.history.append("revert")
