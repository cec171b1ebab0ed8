"""`--ask-pass` through the CLI: every command that logs in to devices asks once per
credential set (naming the user, the set and how many devices), before any connection, and
the typed password reaches exactly the devices of its set, over FLATFAB_PASSWORD; nothing
typed is written anywhere. Connections are stopped at Nornir's door (Host.open_connection):
what matters here is what they would have been opened with."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from nornir.core.inventory import Host
from typer.testing import CliRunner

from flatfab.cli.app import app
from flatfab.workflows.project.layout import Project
from tests.support.inventory import lab_like
from tests.support.paths import ROOT

LAB = Project(root=ROOT, fabric="lab").plan
PROMPTS = [
    "password for user flatfab-test (the defaults, 8 devices): ",
    "password for user leafops (group leafs, 3 devices): ",
    "password for user spineops (group spines, 2 devices): ",
    "password for user breakglass (host leaf3, 1 device): ",
]
TYPED = ["typed-hosts", "typed-leafs", "typed-spines", "typed-leaf3"]
# the set each device is in, by the answer it gets
EXPECTED = {**{n: "typed-hosts" for n, d in LAB.devices.items() if d.platform == "linux_host"},
            "leaf1": "typed-leafs", "leaf2": "typed-leafs", "leaf4": "typed-leafs",
            "spine1": "typed-spines", "spine2": "typed-spines", "leaf3": "typed-leaf3"}


def _inventory(where: Path) -> Path:
    """The lab's inventory with three credential sets beside the defaults'."""
    directory = lab_like(where / "inv", LAB)
    groups = yaml.safe_load((directory / "groups.yaml").read_text())
    groups["spines"]["username"] = "spineops"
    groups["leafs"]["username"] = "leafops"
    (directory / "groups.yaml").write_text(yaml.safe_dump(groups))
    hosts = yaml.safe_load((directory / "hosts.yaml").read_text())
    hosts["leaf3"]["username"] = "breakglass"
    (directory / "hosts.yaml").write_text(yaml.safe_dump(hosts))
    return directory


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, Any]]:
    """(device, password) of every connection a command opens; none gets through."""
    found: list[tuple[str, Any]] = []

    def open_connection(self: Host, connection: str, configuration: Any,
                        **kwargs: Any) -> None:
        found.append((self.name, kwargs.get("password")))
        raise ConnectionRefusedError("stopped by the test before any network")

    monkeypatch.setattr(Host, "open_connection", open_connection)
    return found


@pytest.mark.parametrize("command", [
    ["verify", "--no-probes"],
    ["rollout", "--dry-run"],
    ["audit", "--no-probes"],
    ["watch", "--count", "1", "--interval", "0.2"],
], ids=lambda c: c[0])
def test_every_command_that_logs_in_asks_once_per_set_before_connecting(
        tmp_path: Path, command: list[str], opened: list[tuple[str, Any]]) -> None:
    inventory = _inventory(tmp_path)
    state = tmp_path / "state"
    result = CliRunner().invoke(
        app, ["--root", str(ROOT), "--inventory", str(inventory), "--state-dir", str(state),
              "--ask-pass", *command],
        input="".join(f"{answer}\n" for answer in TYPED),
        env={"FLATFAB_PASSWORD": "from-the-environment", "HOME": str(tmp_path)})
    assert result.stderr.count("password for ") == len(PROMPTS), result.stderr
    assert [p for p in PROMPTS if p in result.stderr] == PROMPTS
    assert opened, result.output  # connections were attempted, every one after the prompts
    for device, password in opened:
        assert password == EXPECTED[device], device  # its own set's, over the environment
    written = "".join(p.read_text(errors="replace") for p in state.rglob("*") if p.is_file())
    for answer in TYPED:
        assert answer not in result.stdout and answer not in result.stderr
        assert answer not in written


def test_without_ask_pass_nothing_is_asked_and_the_environment_answers(
        tmp_path: Path, opened: list[tuple[str, Any]]) -> None:
    result = CliRunner().invoke(
        app, ["--root", str(ROOT), "--inventory", str(_inventory(tmp_path)), "verify",
              "--no-probes"],
        input="", env={"FLATFAB_PASSWORD": "env-all", "FLATFAB_PASSWORD_SPINES": "env-spines",
                       "HOME": str(tmp_path)})
    assert "password for" not in result.stderr
    assert dict(opened) == {
        **dict.fromkeys(LAB.devices, "env-all"), "spine1": "env-spines", "spine2": "env-spines"}


def _flatfab(tmp_path: Path, *args: str, stdin: str) -> subprocess.CompletedProcess[str]:
    """The console entry point in a process of its own (main(): one-line errors)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLATFAB_")}
    return subprocess.run(
        [sys.executable, "-c", "from flatfab.cli.app import main; main()", "--root", str(ROOT),
         "--inventory", str(_inventory(tmp_path)), "--state-dir", str(tmp_path / "state"),
         "--ask-pass", *args], input=stdin, capture_output=True, text=True, cwd=ROOT,
        env={**env, "HOME": str(tmp_path)}, timeout=300, check=False)


def test_input_that_ends_before_every_set_is_asked_is_one_line(tmp_path: Path) -> None:
    run = _flatfab(tmp_path, "verify", stdin="only-one\n")
    errors = [line for line in run.stderr.splitlines() if line.startswith("error:")]
    assert run.returncode == 2 and errors == [
        "error: --ask-pass: no answer to 'password for user leafops (group leafs, 3 "
        "devices):' (standard input ended)"], run.stderr
    assert "Traceback" not in run.stderr and not (tmp_path / "state").exists()


def test_ask_pass_with_a_distributed_run_says_where_to_type_instead(tmp_path: Path) -> None:
    run = _flatfab(tmp_path, "verify", "--distributed", stdin="")
    assert run.returncode == 2 and run.stderr.strip().splitlines() == [
        "error: --ask-pass: a distributed run's workers log in to the devices, with their own "
        "credentials: start them with `flatfab --ask-pass worker` (or give them "
        "FLATFAB_PASSWORD_* variables)"]


def test_at_a_terminal_the_password_is_not_echoed(tmp_path: Path) -> None:
    """On a pseudo-terminal, as an operator types it: getpass turns echo off."""
    inventory = lab_like(tmp_path / "inv", LAB, dict.fromkeys(LAB.devices, "127.0.0.1"))
    defaults = yaml.safe_load((inventory / "defaults.yaml").read_text())
    # nothing listens on port 1 here: every login is refused at once
    defaults["connection_options"]["napalm"]["extras"]["optional_args"]["port"] = 1
    (inventory / "defaults.yaml").write_text(yaml.safe_dump(defaults))
    (inventory / "known_hosts").write_text(
        (inventory / "known_hosts").read_text().replace("127.0.0.1 ", "[127.0.0.1]:1 "))
    secret = "not-to-be-seen-7"
    pid, fd = pty.fork()
    if pid == 0:  # the child becomes flatfab, on the terminal
        os.chdir(ROOT)
        os.execve(sys.executable, [sys.executable, "-c",
                                   "from flatfab.cli.app import main; main()",
                                   "--inventory", str(inventory), "--state-dir",
                                   str(tmp_path / "state"), "--ask-pass", "rollout",
                                   "--dry-run"],
                  {**{k: v for k, v in os.environ.items() if not k.startswith("FLATFAB_")},
                   "HOME": str(tmp_path)})
    seen, answered = b"", False
    deadline = time.monotonic() + 300
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([fd], [], [], 1)
            if not ready:
                continue
            try:
                chunk = os.read(fd, 4096)
            except OSError:  # the child is gone, its terminal closed
                break
            if not chunk:
                break
            seen += chunk
            if not answered and b"password for user flatfab-test (the defaults, 14 " \
                    b"devices): " in seen:
                os.write(fd, secret.encode() + b"\n")
                answered = True
    finally:
        os.close(fd)
    os.waitpid(pid, 0)
    shown = seen.decode(errors="replace")
    assert answered, shown
    assert shown.count("password for user ") == 1 and secret not in shown
