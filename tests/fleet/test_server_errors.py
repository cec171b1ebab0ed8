"""A fault of the simulator itself fails the one command, visibly, and never the session.

asyncssh ends the whole connection when a request handler raises, and logs it only at its
debug level: the client would see its session die mid-run, and nothing would name why.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from flatfab.intent.loader import load_intent
from flatfab.plan.planner import plan
from flatfab.platforms.registry import PLATFORMS
from tests.doubles.fleet import Fleet
from tests.doubles.fleet.server import FleetServer, Keys
from tests.support.paths import ROOT


class _Stream:
    def __init__(self, data: bytes = b"") -> None:
        self.data = data
        self.written = b""

    async def read(self) -> bytes:
        return self.data

    def write(self, data: bytes) -> None:
        self.written += data


class _Process:
    """The part of asyncssh's SSHServerProcess the fleet's handler uses."""

    def __init__(self, user: str, command: str) -> None:
        self.user, self.command = user, command
        self.stdin, self.stdout, self.stderr = _Stream(), _Stream(), _Stream()
        self.status: int | None = None

    def get_extra_info(self, name: str) -> str:
        assert name == "username"
        return self.user

    def exit(self, status: int) -> None:
        self.status = status


def test_a_command_the_fleet_fails_to_answer_fails_alone_and_is_named(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    fleet = Fleet(plan(load_intent(ROOT / "intents" / "lab", known_platforms=PLATFORMS)))
    server = FleetServer(fleet, Keys.make(tmp_path))

    def broken(command: str, stdin: str) -> None:
        raise KeyError("swp99")

    monkeypatch.setattr(fleet.device("leaf1"), "execute", broken)
    process = _Process("leaf1", "hostname")
    asyncio.run(server._handle(process))  # type: ignore[arg-type]
    assert process.status == 255
    assert process.stderr.written == b"fleet: internal error: KeyError: 'swp99'\n"
    assert server.stats.handler_errors == 1
    assert "KeyError: 'swp99'" in capsys.readouterr().err  # the traceback, in the fleet's log

    answered = _Process("leaf2", "hostname")
    asyncio.run(server._handle(answered))  # type: ignore[arg-type]
    assert answered.status == 0 and answered.stdout.written == b"leaf2\n"
    assert server.stats.handler_errors == 1
