"""The start of the CLI: -h everywhere, --version, shell completion, commands in the order
an operator uses them, the project found from any folder inside it (--root wins), and a
folder that is no project said as such, naming `flatfab init`."""

from __future__ import annotations

import re
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest
import typer

from flatfab.cli.app import COMMAND_ORDER, app
from tests.support.flatfab import flatfab
from tests.support.inprocess import run


def _paths(command: Any, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every command and group below `command` (typer's click: duck-typed, as some typer
    releases carry a click of their own)."""
    found = [path]
    if hasattr(command, "commands"):
        for name, sub in command.commands.items():
            found += _paths(sub, (*path, name))
    return found


COMMANDS = _paths(typer.main.get_command(app))


def test_every_command_and_group_answers_dash_h(capsys: pytest.CaptureFixture[str]) -> None:
    assert len(COMMANDS) > 20
    for path in COMMANDS:
        for flag in ("-h", "--help"):
            code, out, err = run([*path, flag], capsys)
            assert code == 0 and "Usage: " in out and not err, (path, flag, err)


def test_help_needs_no_project(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Help, --version and init never read the project file: a broken one stands in the way
    of the commands that need it only."""
    (tmp_path / "flatfab.yaml").write_text("fabric: [\n")
    monkeypatch.chdir(tmp_path)
    assert run(["plan", "-h"], capsys)[0] == 0
    assert run(["--version"], capsys)[0] == 0
    assert run(["init", "sub"], capsys)[0] == 0
    code, _, err = run(["plan"], capsys)
    assert code == 2 and err.startswith(f"error: {tmp_path / 'flatfab.yaml'}:2: malformed YAML")


def test_version_is_the_installed_one(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["--version"], capsys)
    assert code == 0 and out == f"flatfab {metadata.version('flatfab')}\n"


def test_shell_completion_is_offered(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["-h"], capsys)
    assert code == 0 and "--install-completion" in out and "--show-completion" in out
    code, out, err = run(["--show-completion", "bash"], capsys)
    assert code == 0, (out, err)
    assert "complete -o default -F" in out and "_COMPLETE=complete_bash" in out


def test_commands_are_listed_in_the_order_an_operator_uses_them(
        capsys: pytest.CaptureFixture[str]) -> None:
    top: Any = typer.main.get_command(app)
    assert sorted(top.commands) == sorted(COMMAND_ORDER)  # a new command gets its place
    code, out, _ = run(["-h"], capsys)
    assert code == 0
    panel = out[out.index("Commands"):]
    listed = re.findall(r"^│ (\w+) ", panel, flags=re.MULTILINE)
    assert tuple(listed) == COMMAND_ORDER


def _project(root: Path, capsys: pytest.CaptureFixture[str], fabric: str,
             example: str = "numbered") -> Path:
    code, _, err = run(["init", str(root), "--example", example, "--fabric", fabric], capsys)
    assert code == 0, err
    return root


def test_the_project_is_found_from_a_folder_inside_it(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    project = _project(tmp_path / "p", capsys, "site-a")
    inside = project / "intents" / "site-a"
    monkeypatch.chdir(inside)
    code, out, err = run(["plan", "--format", "json"], capsys)
    assert code == 0, err
    assert '"fabric": "site-a"' in out
    code, out, _ = run(["check"], capsys)
    assert code == 0 and "static checks of site-a: all passed" in out
    # the command line wins over the file
    code, _, err = run(["--fabric", "lab", "plan"], capsys)
    assert code == 2 and f"{project / 'intents' / 'lab'}: intent directory not found" in err
    assert "flatfab init" not in err  # a project: only its fabric is missing


def test_root_wins_over_the_project_around_the_working_folder(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    here = _project(tmp_path / "here", capsys, "here-fabric")
    there = _project(tmp_path / "there", capsys, "there-fabric", example="lab")
    monkeypatch.chdir(here)
    code, out, err = run(["--root", str(there), "plan", "--format", "json"], capsys)
    assert code == 0, err
    assert '"fabric": "there-fabric"' in out


def test_no_project_here_says_so_and_names_init(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, _, err = run(["plan"], capsys)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1, err
    assert lines[0] == (f"error: {tmp_path / 'intents' / 'lab'}: intent directory not found, "
                        f"and no flatfab.yaml in {tmp_path} or a folder above: not a flatfab "
                        "project; `flatfab init` starts one")


def test_the_console_script_answers_as_flatfab() -> None:
    helped = flatfab("-h")
    assert helped.code == 0 and "Usage: flatfab [OPTIONS] COMMAND" in helped.stdout
    version = flatfab("--version")
    assert version.code == 0 and version.stdout == f"flatfab {metadata.version('flatfab')}\n"
