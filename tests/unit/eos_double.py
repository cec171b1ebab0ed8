"""A stateful stand-in for an EOS switch behind eAPI: config sessions, commit timers, flash.

NAPALM's EOSDriver talks to `self.device.run_commands(...)` (a pyeapi Node); the tests put
this object there, so the real driver code runs. It keeps running/startup configs as line
lists (the driver strips indentation before sending, so no parser is needed), answers show
commands from a fixture folder (NAPALM mocked-data naming), and a clock the test advances
reverts a commit whose timer runs out unconfirmed. Every command is logged.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pyeapi.eapilib import CommandError

EOS_VERSION = "4.33.0F"


def sanitized(command: str) -> str:
    """NAPALM mocked-data file name of a command: non-alphanumerics become '_'."""
    return re.sub(r"[^a-zA-Z0-9]", "_", command)[:150]


@dataclass
class Session:
    lines: list[str]
    state: str = "pending"  # EOS: pending (open), pendingCommitTimer, completed


@dataclass
class EosDouble:
    running: list[str]
    fixtures: Path | None = None
    startup: list[str] = field(default_factory=list)
    clock: float = 1000.0  # seconds since boot (EOS reports commit timers against uptime)
    flash: dict[str, list[str]] = field(default_factory=dict)
    sessions: dict[str, Session] = field(default_factory=dict)
    log: list[str] = field(default_factory=list)
    connection: None = None  # the driver's close() looks for a connection to close
    _timer: tuple[str, float, list[str]] | None = None  # session, expiry, config to revert to
    _open: str | None = None  # session the current command batch configures

    def __post_init__(self) -> None:
        if not self.startup:
            self.startup = list(self.running)

    # ---- the clock ------------------------------------------------------------------------

    def advance(self, seconds: float) -> None:
        self.clock += seconds
        if self._timer is not None and self.clock >= self._timer[1]:
            name, _, before = self._timer
            self.running = before  # the timer ran out unconfirmed: EOS rolls back
            self.sessions.pop(name, None)
            self._timer = None

    # ---- eAPI -------------------------------------------------------------------------------

    def run_commands(self, commands: list[Any], encoding: str = "json",
                     **_: Any) -> list[dict[str, Any]]:
        out = []
        for entry in commands:
            command = entry["cmd"] if isinstance(entry, dict) else str(entry)
            self.log.append(command)
            out.append(self._one(command, encoding))
        self._open = None  # each eAPI request is its own CLI session
        return out

    def _one(self, command: str, encoding: str) -> dict[str, Any]:
        if self._open is not None and command != "end":
            return self._in_session(command)
        if command == "end":
            self._open = None
            return {}
        if m := re.fullmatch(r"configure session (\S+)", command):
            self.sessions.setdefault(m[1], Session(list(self.running)))
            self._open = m[1]
            return {}
        if m := re.fullmatch(r"configure session (\S+) commit timer (\d+):(\d+):(\d+)", command):
            seconds = int(m[2]) * 3600 + int(m[3]) * 60 + int(m[4])
            return self._commit(m[1], timer=seconds)
        if m := re.fullmatch(r"configure session (\S+) commit", command):
            return self._commit(m[1], timer=None)
        if m := re.fullmatch(r"configure session (\S+) abort", command):
            return self._abort(m[1])
        if m := re.fullmatch(r"copy (running|startup)-config flash:(\S+)", command):
            self.flash[m[2]] = list(self.running if m[1] == "running" else self.startup)
            return self._text("")
        if m := re.fullmatch(r"configure replace flash:(\S+)", command):
            if m[1] not in self.flash:
                raise CommandError(1002, f"flash:{m[1]} does not exist")
            self.running = list(self.flash[m[1]])
            return self._text("")
        if command in {"write memory", "copy running-config startup-config"}:
            self.startup = list(self.running)
            return self._text("")
        if command.startswith("show "):
            return self._show(command, encoding)
        raise CommandError(1002, f"invalid command: {command}")

    def _in_session(self, command: str) -> dict[str, Any]:
        assert self._open is not None
        session = self.sessions[self._open]
        if command == "rollback clean-config":
            session.lines = []
        elif command:
            session.lines.append(command)
        return {}

    def _commit(self, name: str, timer: int | None) -> dict[str, Any]:
        session = self.sessions.get(name)
        if session is None:
            raise CommandError(1002, f"no configuration session {name}")
        if self._timer is not None and self._timer[0] == name:
            self._timer = None  # confirming the pending commit keeps what is running
        else:
            before = list(self.running)
            self.running = list(session.lines)
            if timer is not None:
                self._timer = (name, self.clock + timer, before)
                session.state = "pendingCommitTimer"
                return self._text("")
        session.state = "completed"
        self.sessions.pop(name)
        return self._text("")

    def _abort(self, name: str) -> dict[str, Any]:
        if self._timer is not None and self._timer[0] == name:
            self.running = self._timer[2]
            self._timer = None
        self.sessions.pop(name, None)
        return self._text("")

    @staticmethod
    def _text(text: str) -> dict[str, Any]:
        return {"output": text}

    def _show(self, command: str, encoding: str) -> dict[str, Any]:
        if command in {"show running-config", "show startup-config"}:
            lines = self.running if "running" in command else self.startup
            return self._text("\n".join(lines) + "\n")
        if m := re.fullmatch(r"show session-config named (\S+) diffs", command):
            session = self.sessions.get(m[1])
            new = session.lines if session is not None else self.running
            diff = difflib.unified_diff(self.running, new, "system:/running-config",
                                        f"session:/{m[1]}-session-config", lineterm="")
            return self._text("\n".join(diff))
        if command == "show version":
            return {"version": EOS_VERSION, "uptime": self.clock, "modelName": "cEOSLab",
                    "serialNumber": "", "internalVersion": EOS_VERSION,
                    "bootupTimestamp": 0.0}
        if command.startswith("show configuration sessions"):
            return self._sessions(detail=command.endswith("detail"))
        return self._fixture(command, encoding)

    def _sessions(self, detail: bool) -> dict[str, Any]:
        out: dict[str, Any] = {"sessions": {n: {"state": s.state, "instances": {}}
                                            for n, s in sorted(self.sessions.items())}}
        if detail and self._timer is not None:
            # EOS 4.32+ reports the one pending commit timer at the top level
            out["commitTimerSessionName"] = self._timer[0]
            out["commitTimerExpireTime"] = self._timer[1]
        return out

    def _fixture(self, command: str, encoding: str) -> dict[str, Any]:
        if self.fixtures is not None:
            for suffix in (".json", ".text"):
                path = self.fixtures / f"{sanitized(command)}{suffix}"
                if path.exists():
                    text = path.read_text(encoding="utf-8")
                    if suffix == ".text" or encoding == "text":
                        return self._text(text)
                    data: dict[str, Any] = json.loads(text)
                    data.pop("_provenance", None)
                    return data
        raise CommandError(1002, f"invalid command: {command}")
