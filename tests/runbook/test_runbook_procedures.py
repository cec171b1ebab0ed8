"""Every flatfab command written in the procedures (runbooks/*.md) parses with the real CLI,
and every rollout plan or check id they name exists."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from flatfab.checks import CATALOG
from flatfab.cli.app import app
from tests.support.paths import ROOT

PROCEDURES = sorted((ROOT / "runbooks").glob("*.md"))
COMMAND = re.compile(r"^\s*\.venv/bin/flatfab\s(.*)$")
WANTED = ["first-bring-up", "add-leaf", "add-tenant", "ecn-change", "emergency-rollback",
          "drift-remediation", "scheduled-audits", "rail-bring-up", "distributed",
          "profile-change"]


def _commands(path: Path) -> list[str]:
    """Command lines (continuations joined, redirections and comments dropped)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    found: list[str] = []
    i = 0
    while i < len(lines):
        match = COMMAND.match(lines[i])
        if match:
            text = match.group(1)
            while text.rstrip().endswith("\\") and i + 1 < len(lines):
                i += 1
                text = text.rstrip()[:-1] + " " + lines[i].strip()
            text = re.split(r"\s[|>#]|\s2>", text)[0]
            found.append(re.sub(r"<[^>]+>", "20261123T090000Z-rollout-lab-1a2b", text))
        i += 1
    return found


def _parse(args: list[str]) -> str | None:
    """Parse like the console script would, without running anything: with --help the
    options and subcommands are checked and help is printed instead of acting."""
    result = CliRunner().invoke(app, [*args, "--help"])
    return None if result.exit_code == 0 else (result.output or str(result.exception))


def test_every_procedure_is_shipped() -> None:
    assert sorted(p.stem for p in PROCEDURES if p.stem not in {"README", "lab-bring-up"}) \
        == sorted(WANTED)


@pytest.mark.parametrize("path", PROCEDURES, ids=lambda p: p.stem)
def test_commands_in_procedures_parse(path: Path) -> None:
    commands = _commands(path)
    if path.stem in WANTED:
        assert commands, f"{path.name} names no flatfab command"
    for line in commands:
        problem = _parse(shlex.split(line))
        assert problem is None, f"{path.name}: `flatfab {line}`: {problem}"


@pytest.mark.parametrize("path", PROCEDURES, ids=lambda p: p.stem)
def test_named_plans_and_checks_exist(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    for plan in re.findall(r"runbooks/([\w-]+\.yaml)", text):
        assert (ROOT / "runbooks" / plan).is_file(), f"{path.name} names {plan}"
    for check_id in re.findall(r"--check ([\w.]+)", text):
        assert check_id in CATALOG, f"{path.name} names check {check_id}"
