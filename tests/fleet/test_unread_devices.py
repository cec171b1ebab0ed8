"""The simulated fleet with two devices that cannot be read: leaf4-h2 refuses every login,
leaf3 answers every command 5 s late. With a 1 s command timeout, verify, audit and
rollout --dry-run name both with why (the login refused; the command that did not answer
in time) and exit 3; every other device is read and judged as usual (nothing else is
found), and no run waits on leaf3 for longer than its timeout."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from tests.fleet.served import Run, Served, flatfab, served
from tests.support.paths import ROOT

FAULTS = ("leaf4-h2=refuse", "leaf3=slow:5")
COMMAND_TIMEOUT = "1"


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    args = [a for fault in FAULTS for a in ("--fault", fault)]
    with served(ROOT / "intents" / "lab", tmp_path_factory.mktemp("unread"), *args) as found:
        yield found


def _run(fleet: Served, *argv: str) -> tuple[Run, float]:
    started = time.monotonic()
    run = flatfab(fleet, "--command-timeout", COMMAND_TIMEOUT, *argv, "-f", "json")
    return run, time.monotonic() - started


def _assert_named(fleet: Served, unread: dict[str, str], run: Run) -> None:
    assert sorted(unread) == ["leaf3", "leaf4-h2"], run.stderr
    assert unread["leaf4-h2"] == f"authentication failed for leaf4-h2 on 127.0.0.1:" \
                                 f"{fleet.ready['port']}"
    assert unread["leaf3"].startswith(f"no answer within {COMMAND_TIMEOUT} s to `")
    for name, why in unread.items():
        assert f"{name}: not read: {why}" in run.stderr.splitlines()
    assert "Traceback" not in run.stderr


def test_verify_names_both_and_judges_the_rest(fleet: Served) -> None:
    run, took = _run(fleet, "verify")
    report = run.json()
    assert run.code == 3, run.stderr
    _assert_named(fleet, report["unread"], run)
    # the others were judged: nothing found but that these two were not read
    assert {(f["check"], f["device"]) for f in report["findings"]} == {
        ("device.reachable", "leaf3"), ("device.reachable", "leaf4-h2")}
    assert took < 30  # leaf3 held a worker for its timeout, not for its 5 s per command


def test_audit_says_incomplete_not_drift(fleet: Served) -> None:
    run, _ = _run(fleet, "audit")
    report = run.json()
    assert run.code == 3 and report["status"] == "incomplete" and report["drift"] == []
    _assert_named(fleet, {u["device"]: u["reason"] for u in report["unread"]}, run)


def test_a_dry_run_never_says_no_change_for_them(fleet: Served) -> None:
    run, _ = _run(fleet, "rollout", "--dry-run")
    summary = run.json()
    assert run.code == 3 and summary["exit_code"] == 3 and summary["diffs"] == {}
    _assert_named(fleet, summary["unread"], run)
