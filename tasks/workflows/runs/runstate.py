"""A change run's progress (state.json in its journal), so a killed run can be found again.

The state is rewritten atomically after every step. A run whose state says "running" but
whose process is gone was interrupted: the next change run refuses to start until the
operator resumes it or rolls it back.
"""

from __future__ import annotations

import json
import os
import socket
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from flatfab.errors import FlatfabError
from flatfab.workflows.runs.journal import Journal
from flatfab.workflows.runs.lock import LockOwner, alive

STATE_FILE = "state.json"


@dataclass
class RunState:
    run_id: str
    kind: str  # rollout | rollback
    fabric: str
    runbook: str
    status: str = "running"  # running | done | halted | stopped | rolled-back | abandoned
    pid: int = field(default_factory=os.getpid)
    host: str = field(default_factory=socket.gethostname)
    started: float = field(default_factory=time.time)
    updated: float = 0.0
    phase: str | None = None
    phase_index: int = 0
    batch_index: int = 0
    changed: list[str] = field(default_factory=list)  # committed by this run
    confirmed: list[str] = field(default_factory=list)
    rolled_back: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    reason: str = ""  # why the run halted or stopped
    rolled_back_by: str | None = None  # the rollback run that undid this one
    lock_broken: bool = False  # its owner's lock was broken from another host

    @property
    def interrupted(self) -> bool:
        """Still marked running, but its process is gone (on this host) or the operator
        broke its lock from another host."""
        return self.status == "running" and (self.lock_broken or (
            self.host == socket.gethostname() and not alive(self.pid)))

    @property
    def shown_status(self) -> str:
        return "interrupted" if self.interrupted else self.status

    @property
    def pending(self) -> list[str]:
        """Committed but neither confirmed nor rolled back: revert timers may be running."""
        return [d for d in self.changed if d not in self.confirmed and d not in self.rolled_back]

    def save(self, journal: Journal) -> None:
        self.updated = time.time()
        journal.write(STATE_FILE, json.dumps(asdict(self), indent=1, sort_keys=True) + "\n")

    @classmethod
    def load(cls, journal: Journal) -> RunState | None:
        text = journal.read(STATE_FILE)
        if text is None:
            return None
        try:
            data: dict[str, Any] = json.loads(text)
            state = cls(**data)
        except (ValueError, TypeError) as exc:
            raise FlatfabError(f"{journal.directory / STATE_FILE}: unreadable run state "
                               f"({exc})") from None
        if state.status == "running":
            state.changed += _committing(journal, state)
        return state


def _committing(journal: Journal, state: RunState) -> list[str]:
    """Devices the journal says a commit was sent to that the state does not count yet: a run
    saves its state once a batch's commits are all back, so one killed in between left them
    out, and their revert timers may be running (a resume or rollback must see them)."""
    counted = set(state.changed) | set(state.rolled_back)
    sent: list[str] = []
    for event in journal.events():
        if event.get("event") == "resume":
            sent = []  # a resume settled the commits before it and saved the state
        elif event.get("event") == "commit" and "device" in event:
            sent.append(str(event["device"]))
    return [d for d in dict.fromkeys(sent) if d not in counted]


def runs(state_dir: Path, fabric: str | None = None) -> list[tuple[Journal, RunState]]:
    """Every run with a state file, newest first (run ids start with their UTC time)."""
    root = state_dir / "runs"
    found: list[tuple[Journal, RunState]] = []
    if not root.is_dir():
        return found
    for directory in sorted(root.iterdir(), reverse=True):
        if not directory.is_dir():
            continue
        journal = Journal(directory)
        state = RunState.load(journal)
        if state is not None and (fabric is None or state.fabric == fabric):
            found.append((journal, state))
    return found


class InterruptedRunError(FlatfabError):
    """An earlier change run of the fabric was killed; the operator must decide first."""


def refuse_if_interrupted(state_dir: Path, fabric: str, allow: str | None = None) -> None:
    """Raise for the newest interrupted run of the fabric (other than `allow`)."""
    for journal, state in runs(state_dir, fabric):
        if state.interrupted and journal.run_id != allow:
            where = f"phase {state.phase!r}" if state.phase else "its start"
            pending = (f"; unconfirmed on {', '.join(state.pending)} (their commits revert "
                       "by themselves when the timer runs out)" if state.pending else "")
            raise InterruptedRunError(
                f"run {journal.run_id} of fabric {fabric} was interrupted in {where} "
                f"({_gone(state)}); changed: {', '.join(state.changed) or 'nothing'}"
                f"{pending}. Resume it with `flatfab rollout --resume {journal.run_id}` or "
                f"undo it with `flatfab rollback --run {journal.run_id}`")


def mark_lock_broken(state_dir: Path, fabric: str, owner: LockOwner) -> list[str]:
    """The runs of a broken lock's owner that still say running: interrupted from now on."""
    marked = []
    for journal, state in runs(state_dir, fabric):
        if (state.status == "running" and state.host == owner.host
                and state.pid == owner.pid and not state.lock_broken):
            state.lock_broken = True
            journal.event("lock-broken", by_pid=os.getpid(), by_host=socket.gethostname())
            state.save(journal)
            marked.append(journal.run_id)
    return marked


def _gone(state: RunState) -> str:
    if state.lock_broken:
        return f"its lock, held by pid {state.pid} on {state.host}, was broken"
    return f"pid {state.pid} is gone"


def abandon_interrupted(state_dir: Path, fabric: str, reason: str) -> list[str]:
    """Mark interrupted runs abandoned when the devices they changed no longer exist (a lab
    brought up anew); their journals stay."""
    abandoned = []
    for journal, state in runs(state_dir, fabric):
        if state.interrupted:
            state.status, state.reason = "abandoned", reason
            state.save(journal)
            abandoned.append(journal.run_id)
    return abandoned
