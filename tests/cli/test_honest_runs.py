"""A device flatfab could not read is never "no change", never "drift", never a pass.

Issue 32 as reported: with every device unreachable (or the known_hosts file missing),
`rollout --dry-run` printed a traceback per device and `dry run: 0 of 14 devices would
change; nothing was pushed`, exit 0; `audit` said "config drift on 14 devices" where it read
nothing; `verify` printed tracebacks before its findings. Here the lab fabric's inventory
points at addresses on this machine nothing answers (a refused port, a port that accepts and
never speaks SSH), and every command that reads devices names each one in one line with
why, exits 3 (findings on what was read would be 1) and prints no traceback; `--debug`
prints them, `--log-file` keeps them, neither ever a password. The connect timeout comes
from --connect-timeout, else the project file, else 10 s.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest
import yaml

from tests.support.flatfab import Run, flatfab, in_process
from tests.support.inventory import login_defaults
from tests.support.paths import ROOT
from tests.support.sockets import closed_port, silent_listener
from tests.support.telemetry_streams import lab_plan

PLAN = lab_plan()
DEVICES = list(PLAN.devices)
PASSWORD = "never-in-a-log-7f3a"  # FLATFAB_PASSWORD of the runs that log


def write_inventory(folder: Path, port: int, *, spread: bool = True,
                    known_hosts: Path | None = None) -> Path:
    """Every device of the lab fabric at `port` (on its own loopback address when
    `spread`), complete as flatfab checks it before any connection: a user, a key of the
    test's own and a known_hosts file holding a key for every address (`known_hosts`: that
    file instead, written by nobody)."""
    folder.mkdir(parents=True, exist_ok=True)
    addresses = {name: f"127.0.0.{11 + i}" if spread else "127.0.0.1"
                 for i, name in enumerate(PLAN.devices)}
    hosts = {name: {"hostname": addresses[name], "port": port, "platform": device.platform,
                    "groups": [f"{device.role.value}s"]}
             for name, device in PLAN.devices.items()}
    groups = {f"{d.role.value}s": {"data": {"role": d.role.value}}
              for d in PLAN.devices.values()}
    defaults = login_defaults(folder, sorted({f"[{a}]:{port}" for a in addresses.values()}))
    if known_hosts is not None:
        defaults["connection_options"]["napalm"]["extras"]["optional_args"]["known_hosts"] = \
            str(known_hosts)
    for name, doc in (("hosts", hosts), ("groups", groups), ("defaults", defaults)):
        (folder / f"{name}.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    return folder


def _refused_lines(run: Run, port: int, rounds: int = 1, prefix: str = "") -> None:
    lines = run.stderr.splitlines()
    for i, name in enumerate(DEVICES):
        line = f"{name}: not read: {prefix}connection refused by 127.0.0.{11 + i}:{port}"
        assert lines.count(line) == rounds, (line, run.stderr[-3000:])


@pytest.fixture(scope="module")
def refused(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    """An inventory whose every device refuses the connection."""
    port = closed_port()
    return write_inventory(tmp_path_factory.mktemp("refused"), port), port


def _cli(inventory: Path, state: Path, *argv: str, **env: str) -> Run:
    return in_process("--root", str(ROOT), "--inventory", str(inventory), "--state-dir",
                      str(state), *argv, env=env)


# ---- every command that reads devices ----------------------------------------------------

COMMANDS = {
    "rollout --dry-run": ["rollout", "--dry-run"],
    "verify": ["verify"],
    "audit": ["audit"],
    "watch": ["watch", "--count", "1", "--interval", "0.3"],
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_each_unread_device_is_named_and_the_run_exits_3(
        command: str, refused: tuple[Path, int], tmp_path: Path) -> None:
    inventory, port = refused
    run = _cli(inventory, tmp_path, *COMMANDS[command])
    assert run.code == 3, run.stdout[-3000:] + run.stderr[-3000:]
    assert "Traceback" not in run.stdout + run.stderr
    prefix = "no sample in the whole run (poll failed: " if command == "watch" else ""
    if prefix:
        for i, name in enumerate(DEVICES):
            assert (f"{name}: not read: {prefix}connection refused by 127.0.0.{11 + i}:{port})"
                    in run.stderr.splitlines()), run.stderr[-3000:]
    else:
        _refused_lines(run, port)
    assert "INCOMPLETE" in run.stdout and "14 not read" in run.stdout
    # never "no change", never drift, never a pass
    assert "dry run: " not in run.stdout and "no changes" not in run.stdout
    assert "DRIFT" not in run.stdout and "passed" not in run.stdout
    assert "config drift on 14" not in run.stdout


def test_a_dry_run_says_which_devices_it_could_not_diff(refused: tuple[Path, int],
                                                        tmp_path: Path) -> None:
    inventory, port = refused
    run = _cli(inventory, tmp_path, "rollout", "--dry-run")
    assert ("dry run INCOMPLETE: 0 of 0 devices read would change, 14 not read (spine1, "
            "spine2, leaf1") in run.stdout
    summary = _cli(inventory, tmp_path, "rollout", "--dry-run", "-f", "json")
    data = summary.json()
    assert summary.code == 3 and data["exit_code"] == 3 and data["diffs"] == {}
    assert data["unread"] == {name: f"connection refused by 127.0.0.{11 + i}:{port}"
                              for i, name in enumerate(DEVICES)}


def test_verify_json_names_the_unread_and_never_passes(refused: tuple[Path, int],
                                                       tmp_path: Path) -> None:
    inventory, _port = refused
    run = _cli(inventory, tmp_path, "verify", "-f", "json")
    data = run.json()
    assert run.code == data["exit_code"] == 3 and data["passed"] is False
    assert sorted(data["unread"]) == sorted(DEVICES)
    assert {f["check"] for f in data["findings"]} == {"device.reachable"}


def test_an_audit_on_a_schedule_exits_3_each_round(refused: tuple[Path, int],
                                                   tmp_path: Path) -> None:
    inventory, port = refused
    run = _cli(inventory, tmp_path, "audit", "--every", "1s", "--count", "2")
    assert run.code == 3 and "Traceback" not in run.stderr
    _refused_lines(run, port, rounds=2)
    assert run.stdout.count("INCOMPLETE") == 2


def test_every_report_format_shows_the_unread_as_unread(refused: tuple[Path, int],
                                                        tmp_path: Path) -> None:
    inventory, port = refused
    out = tmp_path / "reports"
    run = _cli(inventory, tmp_path / "state", "audit", "--report-dir", str(out))
    assert run.code == 3
    data = json.loads((out / "flatfab-audit-lab.json").read_text())
    assert (data["status"], data["exit_code"], data["drift"]) == ("incomplete", 3, [])
    assert [u["device"] for u in data["unread"]] == sorted(DEVICES)
    junit = (out / "flatfab-audit-lab.junit.xml").read_text()
    assert junit.count('type="unread"') == 14 + 1 and "<failure" not in junit
    md = (out / "flatfab-audit-lab.md").read_text()
    assert md.startswith("# flatfab audit `lab`: incomplete") and "## Not read" in md
    assert f"| leaf1 | connection refused by 127.0.0.13:{port} |" in md
    prom = (out / "flatfab-audit-lab.prom").read_text()
    assert 'flatfab_audit_devices_unread{fabric="lab"} 14' in prom
    assert 'flatfab_audit_devices_drifted{fabric="lab"} 0' in prom
    page = (out / "flatfab-audit-lab.html").read_text()
    assert "<b>14</b><span>devices not read</span>" in page
    assert page.count('data-status="unread"') == 14


def test_a_missing_known_hosts_file_is_one_line_before_any_connection(tmp_path: Path) -> None:
    """As reported, a missing known_hosts file gave a traceback per device and "no change";
    it is now found before any connection: one line naming the file and how to fill it."""
    missing = tmp_path / "no" / "known_hosts"
    inventory = write_inventory(tmp_path / "inv", closed_port(), known_hosts=missing)
    run = _cli(inventory, tmp_path / "state", "rollout", "--dry-run")
    assert run.code == 2 and "Traceback" not in run.stderr and not run.stdout
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {missing}: known_hosts file not "
                                                   "found"), run.stderr
    assert "ssh-keyscan -H" in lines[0] and "compare the fingerprints" in lines[0]
    assert not (tmp_path / "state").exists()  # no journal, no lock: nothing was run


# ---- as an operator runs it: the console script, its console and its logs ------------------

def test_the_console_shows_no_traceback_debug_does_and_the_log_file_keeps_them(
        refused: tuple[Path, int], tmp_path: Path) -> None:
    inventory, port = refused
    common = ("--inventory", str(inventory), "--state-dir", str(tmp_path / "state"))
    env = {"FLATFAB_PASSWORD": PASSWORD}
    plain = flatfab(*common, "rollout", "--dry-run", env=env)
    assert plain.code == 3 and "Traceback" not in plain.stdout + plain.stderr
    _refused_lines(plain, port)

    debug = flatfab("--debug", *common, "rollout", "--dry-run", env=env)
    assert debug.code == 3 and debug.stderr.count("Traceback (most recent call last)") >= 14
    assert "connection refused by 127.0.0.11" in debug.stderr and PASSWORD not in debug.stderr

    log = tmp_path / "flatfab.log"
    logged = flatfab("--log-file", str(log), *common, "verify", env=env)
    assert logged.code == 3 and "Traceback" not in logged.stdout + logged.stderr
    text = log.read_text()
    assert text.count("Traceback (most recent call last)") >= 14
    assert "leaf1: not read: connection refused by 127.0.0.13" in text
    assert PASSWORD not in text


def test_a_log_file_that_cannot_be_written_is_one_line(tmp_path: Path) -> None:
    run = in_process("--log-file", str(tmp_path / "no" / "such" / "dir" / "x.log"), "plan")
    assert run.code == 2 and run.stderr.startswith("error: --log-file ")
    assert len(run.stderr.strip().splitlines()) == 1


# ---- timeouts -------------------------------------------------------------------------------

def _timed_out(run: Run, port: int, seconds: str) -> None:
    for name in DEVICES:
        assert (f"{name}: not read: timed out after {seconds} s waiting for SSH from "
                f"127.0.0.1:{port}") in run.stderr.splitlines(), run.stderr[-2000:]


def test_the_connect_timeout_option_bounds_a_port_that_never_answers(tmp_path: Path) -> None:
    with silent_listener() as port:
        inventory = write_inventory(tmp_path / "inv", port, spread=False)
        started = time.monotonic()
        run = _cli(inventory, tmp_path / "state", "--connect-timeout", "1", "verify")
        took = time.monotonic() - started
    assert run.code == 3, run.stderr[-2000:]
    _timed_out(run, port, "1")
    assert took < 20  # 14 devices, 20 at once, 1 s each (10 s each without the option)


def _project(root: Path, settings: str) -> Path:
    shutil.copytree(ROOT / "intents" / "lab", root / "intents" / "lab")
    (root / "flatfab.yaml").write_text(settings)
    return root


def test_the_project_file_s_timeout_applies_and_the_option_wins(tmp_path: Path) -> None:
    root = _project(tmp_path / "project", "fabric: lab\nconnect_timeout: 1.5\n")
    with silent_listener() as port:
        inventory = write_inventory(tmp_path / "inv", port, spread=False)
        common = ("--root", str(root), "--inventory", str(inventory),
                  "--state-dir", str(tmp_path / "state"))
        from_file = in_process(*common, "rollout", "--dry-run")
        from_option = in_process(*common, "--connect-timeout", "0.5", "rollout", "--dry-run")
    assert from_file.code == from_option.code == 3
    _timed_out(from_file, port, "1.5")
    _timed_out(from_option, port, "0.5")


@pytest.mark.parametrize(("option", "value"), [("--connect-timeout", "0"),
                                               ("--command-timeout", "-1"),
                                               ("--connect-timeout", "soon")])
def test_a_bad_timeout_is_refused(option: str, value: str) -> None:
    run = in_process(option, value, "plan")
    assert run.code == 2 and option in run.stderr and "Traceback" not in run.stderr
