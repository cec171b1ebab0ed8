"""`flatfab watch` as an operator runs it: bad arguments and bad inventory entries are one
line and exit 2; a fabric with nothing reachable ends incomplete (exit 3), each device named
with why, never with a traceback; a switch with a gNMI target is streamed while the rest are
polled."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from flatfab.telemetry.gnmi_target import Credentials, GnmiTarget
from tests.doubles.gnmi import FakeCounters, LabPki
from tests.support.inventory import login_defaults
from tests.support.paths import ROOT
from tests.support.telemetry_streams import lab_plan

# the worktree's own code, as `python -m` would run it (the console script may be another's)
CLI = [sys.executable, "-c", "from flatfab.cli.app import main; main()"]


def _watch(*args: str, env: dict[str, str] | None = None,
           timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout, check=False, env={**os.environ, **(env or {})})


CLOSED_PORT = 1  # tcpmux: nothing on this machine listens there


def _inventory(where: Path, hosts: dict[str, dict[str, Any]] | None = None) -> Path:
    """Every planned device on a port of this machine nothing listens on (SSH fails fast:
    connection refused), complete as flatfab checks an inventory (user, key, host keys)."""
    entries: dict[str, Any] = {}
    for name, device in lab_plan().devices.items():
        entries[name] = {"hostname": "127.0.0.1", "platform": device.platform,
                         "groups": [f"{device.role.value}s"]}
        entries[name].update((hosts or {}).get(name, {}))
    (where / "hosts.yaml").write_text(yaml.safe_dump(entries))
    roles = {f"{d.role.value}s" for d in lab_plan().devices.values()}
    (where / "groups.yaml").write_text(yaml.safe_dump({g: {"data": {}} for g in roles}))
    (where / "defaults.yaml").write_text(yaml.safe_dump(login_defaults(
        where, [f"[127.0.0.1]:{CLOSED_PORT}"], extra={"port": CLOSED_PORT, "timeout": 2})))
    return where


def _one_line_error(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:"), proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    return lines[0]


@pytest.mark.parametrize(("args", "says"), [
    (["--interval", "0"], "--interval"),
    (["--interval", "soon"], "--interval"),
    (["--count", "0"], "--count"),
    (["--count", "many"], "--count"),
    (["--duration", "5", "--count", "2"], "not both"),
    (["--prometheus", "9464"], "HOST:PORT"),
    (["--prometheus", "localhost:99999"], "HOST:PORT"),
])
def test_argument_errors_exit_2_in_one_line(args: list[str], says: str) -> None:
    assert says in _one_line_error(_watch("watch", *args))


def test_a_bad_target_entry_exits_2_naming_file_and_key(tmp_path: Path) -> None:
    where = _inventory(tmp_path, {"leaf1": {"connection_options": {"gnmi": {
        "port": 57400, "extras": {"tls_server_name": "leaf1"}}}}})
    line = _one_line_error(_watch("--inventory", str(where), "watch", "--count", "1"))
    assert "hosts.yaml" in line and "leaf1.connection_options.gnmi.extras.ca_file" in line


def test_nothing_reachable_and_no_targets_ends_incomplete(tmp_path: Path) -> None:
    proc = _watch("--inventory", str(_inventory(tmp_path)), "watch", "--count", "1",
                  "--interval", "0.3")
    assert proc.returncode == 3, (proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stdout + proc.stderr
    assert "0 gNMI targets, 14 devices polled" in proc.stderr  # switches and hosts
    # each switch or host that could not be polled: one line as it fails, one at the end
    lines = proc.stderr.splitlines()
    refused = f"connection refused by 127.0.0.1:{CLOSED_PORT}"
    for name in ("leaf1", "leaf1-h1"):
        assert lines.count(f"{name}: poll failed: {refused}") == 1, proc.stderr
        assert lines.count(f"{name}: not read: no sample in the whole run (poll failed: "
                           f"{refused})") == 1, proc.stderr
    assert "INCOMPLETE" in proc.stdout and "14 not read" in proc.stdout
    assert "FINDINGS" not in proc.stdout and "0 findings" in proc.stdout


def test_ctrl_c_ends_the_watch_with_its_report(tmp_path: Path) -> None:
    # a shell may start us with SIGINT ignored; an operator's Ctrl-C never is
    code = ("import signal; signal.signal(signal.SIGINT, signal.default_int_handler); "
            "from flatfab.cli.app import main; main()")
    proc = subprocess.Popen(
        [sys.executable, "-c", code, "--inventory", str(_inventory(tmp_path)), "watch",
         "--interval", "0.3"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # Ctrl-C once the watch runs (its first line), not at a fixed time: on a loaded machine
    # the imports alone may take longer, and a Ctrl-C there is Python's, not the watch's
    assert proc.stderr is not None
    first = proc.stderr.readline()
    time.sleep(1.0)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=60)
    stderr = first + stderr
    assert first.startswith("watching"), stderr
    assert "Traceback" not in stdout + stderr
    assert proc.returncode == 3, stderr  # nothing was heard: incomplete, reported as usual
    assert "stopped by Ctrl-C" in stdout and "not read: no sample in the whole run" in stderr


@pytest.fixture
def target(tmp_path: Path) -> Iterator[tuple[GnmiTarget, LabPki]]:
    pki = LabPki(tmp_path)
    served = GnmiTarget("127.0.0.1", 0, FakeCounters(("swp1", "swp2"), step=0),
                        Credentials("flatfab", "s3cret"), pki.cert, pki.key, name="leaf1",
                        poll_s=0.05)
    served.start()
    yield served, pki
    served.stop()


@pytest.mark.parametrize("shards", ["1", "2"])  # 2: subscribers in two worker processes
def test_a_gnmi_target_is_streamed_as_json(tmp_path: Path, target: tuple[GnmiTarget, LabPki],
                                           shards: str) -> None:
    served, pki = target
    where = _inventory(tmp_path, {"leaf1": {"connection_options": {"gnmi": {
        "hostname": "127.0.0.1", "port": served.port,
        "extras": {"ca_file": str(pki.ca_file), "username_env": "W_USER",
                   "password_env": "W_PASS"}}}}})
    proc = _watch("--inventory", str(where), "watch", "--count", "4", "--interval", "0.3",
                  "--format", "json", "--prometheus", "127.0.0.1:0", "--shards", shards,
                  env={"W_USER": "flatfab", "W_PASS": "s3cret"})
    assert "Traceback" not in proc.stdout + proc.stderr
    assert proc.returncode == 3, proc.stderr  # the other switches were never heard
    report = yaml.safe_load(proc.stdout)  # JSON alone on stdout
    assert report["streamed"] == ["leaf1"] and report["ticks"] == 4
    assert report["exit_code"] == 3 and "leaf1" not in report["unread"]
    assert report["unread"]["leaf2"].startswith("no sample in the whole run")
    assert "leaf1" not in {f["device"] for f in report["findings"]}
    assert "1 gNMI targets" in proc.stderr and "s3cret" not in proc.stderr
    assert "serving metrics for Prometheus on http://127.0.0.1:" in proc.stderr


def test_a_metrics_port_in_use_is_one_line(tmp_path: Path,
                                           target: tuple[GnmiTarget, LabPki]) -> None:
    served, pki = target
    where = _inventory(tmp_path, {"leaf1": {"connection_options": {"gnmi": {
        "hostname": "127.0.0.1", "port": served.port,
        "extras": {"ca_file": str(pki.ca_file), "username_env": "W_USER",
                   "password_env": "W_PASS"}}}}})
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = _watch("--inventory", str(where), "watch", "--count", "1", "--interval", "0.3",
                      "--prometheus", f"127.0.0.1:{port}",
                      env={"W_USER": "flatfab", "W_PASS": "s3cret"})
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert f"cannot serve metrics on 127.0.0.1:{port}" in proc.stderr


def test_report_dir_writes_every_report_format(tmp_path: Path,
                                               target: tuple[GnmiTarget, LabPki]) -> None:
    served, pki = target
    where = _inventory(tmp_path, {"leaf1": {"connection_options": {"gnmi": {
        "hostname": "127.0.0.1", "port": served.port,
        "extras": {"ca_file": str(pki.ca_file), "username_env": "W_USER",
                   "password_env": "W_PASS"}}}}})
    out = tmp_path / "reports"
    # three 1 s ticks: room for leaf1's TLS subscription on a busy machine (at 0.3 s, three
    # ticks could end before it streamed)
    proc = _watch("--inventory", str(where), "watch", "--count", "3", "--interval", "1",
                  "--report-dir", str(out), env={"W_USER": "flatfab", "W_PASS": "s3cret"})
    assert proc.returncode == 3 and "Traceback" not in proc.stdout + proc.stderr, proc.stderr
    assert sorted(p.name for p in out.iterdir()) == [
        "flatfab-watch-lab.html", "flatfab-watch-lab.json", "flatfab-watch-lab.junit.xml",
        "flatfab-watch-lab.md", "flatfab-watch-lab.prom"]
    assert f"reports: {out}" in proc.stdout
    report = yaml.safe_load((out / "flatfab-watch-lab.json").read_text())
    assert report["kind"] == "watch" and report["status"] == "incomplete"
    assert report["exit_code"] == 3 and report["watch"]["ticks"] == 3
    assert "leaf2" in {u["device"] for u in report["unread"]}
    assert report["watch"]["streamed"] == ["leaf1"]
    # the switches that could not be polled are named silent; leaf1 streamed
    silent = {f["device"] for f in report["findings"] if f["check"] == "telemetry.silent"}
    assert "leaf2" in silent and "leaf1" not in silent
    prom = (out / "flatfab-watch-lab.prom").read_text()
    assert 'flatfab_watch_up{fabric="lab"} 1' in prom and "flatfab_audit_" not in prom
    assert "<testsuites" in (out / "flatfab-watch-lab.junit.xml").read_text()


def test_an_unwritable_report_dir_is_refused_before_watching(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    line = _one_line_error(_watch("--inventory", str(_inventory(tmp_path)), "watch",
                                  "--count", "1", "--report-dir",
                                  str(tmp_path / "file" / "reports")))
    assert "--report-dir" in line and "cannot write to" in line
