"""Audit and run-state pieces that need no lab: drift sections, schedules, interrupted runs."""

from __future__ import annotations

import json
import os
import random
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from flatfab.cli.ops import pause_answer
from flatfab.errors import InputError
from flatfab.intent.loader import load_intent
from flatfab.model.state import FabricState
from flatfab.plan.planner import plan as plan_fabric
from flatfab.platforms.sections import by_first_word, by_header
from flatfab.runbook.model import RolloutPlan
from flatfab.workflows.commands.audit import parse_duration, scheduled
from flatfab.workflows.devices.drift import device_drift
from flatfab.workflows.runs.journal import Journal
from flatfab.workflows.runs.lock import LockedError, fabric_lock
from flatfab.workflows.runs.runstate import (
    InterruptedRunError,
    RunState,
    mark_lock_broken,
    refuse_if_interrupted,
    runs,
)
from tests.support.paths import ROOT

SWITCH = """!! links
link swp51 mtu 9216 up
!! qos
{"PFC_WD": {}}
!! frr
router bgp 65101
 neighbor swp51 interface remote-as external
"""


def test_switch_config_splits_by_section_and_host_config_by_keyword() -> None:
    assert list(by_header(SWITCH)) == ["links", "qos", "frr"]
    host = "nic eth1 mtu 9000 up\naddress eth1 10.0.0.2/24\nroute 0.0.0.0/0 via 10.0.0.1\n"
    assert list(by_first_word(host)) == ["nic", "address", "route"]


def test_drift_names_the_section_and_the_lines() -> None:
    running = SWITCH.replace("router bgp 65101\n", "router bgp 65101\nip prefix-list oob\n")
    found = device_drift("leaf1", running, SWITCH, by_header)
    assert found is not None and found.device == "leaf1"
    assert [s.section for s in found.sections] == ["frr"]
    assert found.sections[0].unexpected == ("ip prefix-list oob",)
    assert found.sections[0].missing == ()
    assert "-ip prefix-list oob" in found.sections[0].diff
    assert found.lines == 1
    assert device_drift("leaf1", SWITCH, SWITCH, by_header) is None


def test_a_missing_section_is_drift_too() -> None:
    found = device_drift("leaf1", SWITCH.split("!! frr", maxsplit=1)[0], SWITCH,
                         by_header)
    assert found is not None
    assert found.sections[0].section == "frr"
    assert found.sections[0].missing == ("router bgp 65101",
                                         " neighbor swp51 interface remote-as external")


@pytest.mark.parametrize(("text", "seconds"), [("90", 90), ("30s", 30), ("15m", 900),
                                               ("1h", 3600), ("0.5m", 30)])
def test_durations(text: str, seconds: float) -> None:
    assert parse_duration(text, "--every") == seconds


@pytest.mark.parametrize("text", ["", "0", "15x", "-5m", "m"])
def test_bad_durations_name_the_option(text: str) -> None:
    with pytest.raises(InputError, match="--every"):
        parse_duration(text, "--every")


def test_scheduled_audits_repeat_with_bounded_jitter() -> None:
    codes = iter([1, 0, 0])
    slept: list[float] = []
    last = scheduled(lambda: next(codes), every_s=60, jitter_s=6, count=3,
                     sleep=slept.append, rng=random.Random(7))
    assert last == 0
    assert len(slept) == 2 and all(54 <= s <= 66.0 for s in slept)
    assert len(set(slept)) == 2  # jittered, not a fixed beat


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_a_killed_run_is_found_and_blocks_the_next_one(tmp_path: Path) -> None:
    journal = Journal.start(tmp_path, "rollout", "lab")
    state = RunState(run_id=journal.run_id, kind="rollout", fabric="lab", runbook="p",
                     phase="spines", changed=["leaf1", "spine1"], confirmed=["leaf1"])
    state.pid = _dead_pid()
    state.save(journal)
    [(found_journal, found)] = runs(tmp_path, "lab")
    assert found_journal.run_id == journal.run_id
    assert found.interrupted and found.shown_status == "interrupted"
    assert found.pending == ["spine1"]
    with pytest.raises(InterruptedRunError) as caught:
        refuse_if_interrupted(tmp_path, "lab")
    message = str(caught.value)
    assert f"run {journal.run_id}" in message and "phase 'spines'" in message
    assert f"--resume {journal.run_id}" in message and f"--run {journal.run_id}" in message
    refuse_if_interrupted(tmp_path, "other")  # another fabric is not held up


def test_a_run_killed_before_its_batch_was_saved_counts_the_commits_it_sent(
        tmp_path: Path) -> None:
    """The state is saved once a batch's commits are back; the journal's commit events are
    written before each one is sent, so a kill in between still leaves them pending."""
    journal = Journal.start(tmp_path, "rollout", "lab")
    state = RunState(run_id=journal.run_id, kind="rollout", fabric="lab", runbook="p",
                     changed=["leaf1"], confirmed=["leaf1"])
    state.pid = _dead_pid()
    state.save(journal)
    journal.event("commit", device="leaf1", revert_in=120)  # saved already
    journal.event("commit", device="spine1", revert_in=120)
    journal.event("committed", device="spine1")
    journal.event("commit", device="spine2", revert_in=120)  # killed while it was sent
    with (journal.directory / "events.jsonl").open("a", encoding="utf-8") as handle:
        handle.write('{"ts": 1, "event": "comm')  # the kill cut the last line short
    [(_, found)] = runs(tmp_path, "lab")
    assert found.changed == ["leaf1", "spine1", "spine2"]
    assert found.pending == ["spine1", "spine2"]
    with pytest.raises(InterruptedRunError, match="unconfirmed on spine1, spine2"):
        refuse_if_interrupted(tmp_path, "lab")
    # a resume settles what came before it: only commits after it are counted again
    journal.event("resume", pending=["spine1", "spine2"], phase=None)
    found.changed, found.rolled_back = ["leaf1"], []
    found.save(journal)
    journal.event("commit", device="leaf2", revert_in=120)
    [(_, again)] = runs(tmp_path, "lab")
    assert again.changed == ["leaf1", "leaf2"]
    # a finished run's state is what it saved
    again.status = "done"
    again.save(journal)
    [(_, done)] = runs(tmp_path, "lab")
    assert done.changed == ["leaf1", "leaf2"]


def test_a_running_or_finished_run_is_not_interrupted(tmp_path: Path) -> None:
    journal = Journal.start(tmp_path, "rollout", "lab")
    RunState(run_id=journal.run_id, kind="rollout", fabric="lab", runbook="p").save(journal)
    refuse_if_interrupted(tmp_path, "lab")  # this very process is alive
    done = RunState(run_id=journal.run_id, kind="rollout", fabric="lab", runbook="p",
                    status="done")
    done.pid = _dead_pid()
    done.save(journal)
    refuse_if_interrupted(tmp_path, "lab")


def test_journal_refuses_run_ids_outside_its_directory(tmp_path: Path) -> None:
    (tmp_path / "runs").mkdir()
    for bad in ("../x", "", ".", "nope"):
        with pytest.raises(InputError, match="--run"):
            Journal.open(tmp_path, bad)


def test_recreating_the_lab_abandons_runs_against_the_old_one(tmp_path: Path) -> None:
    from flatfab.workflows.runs.runstate import abandon_interrupted  # noqa: PLC0415

    journal = Journal.start(tmp_path, "rollout", "lab")
    state = RunState(run_id=journal.run_id, kind="rollout", fabric="lab", runbook="p")
    state.pid = _dead_pid()
    state.save(journal)
    assert abandon_interrupted(tmp_path, "lab", "lab recreated") == [journal.run_id]
    [(_, after)] = runs(tmp_path, "lab")
    assert after.shown_status == "abandoned" and after.reason == "lab recreated"
    refuse_if_interrupted(tmp_path, "lab")


def _lock_file(state_dir: Path, **owner: object) -> Path:
    path = state_dir / "locks" / "lab.lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"user": "ops", "purpose": "rollout",
                                "since": time.time() - 600, **owner}), encoding="utf-8")
    return path


def _take(state_dir: Path, fabric: str = "lab", break_lock: bool = False) -> None:
    with fabric_lock(state_dir, fabric, "rollout", break_lock=break_lock):
        pass


def test_the_lock_admits_one_run_and_is_released(tmp_path: Path) -> None:
    with fabric_lock(tmp_path, "lab", "rollout") as held:
        owner = json.loads(held.path.read_text(encoding="utf-8"))
        assert owner["pid"] == os.getpid() and owner["purpose"] == "rollout"
        with pytest.raises(LockedError, match=rf"locked by rollout \(pid {os.getpid()} on "):
            _take(tmp_path, break_lock=True)  # a live owner on this host is never broken
        _take(tmp_path, fabric="other")  # another fabric has its own lock
    assert not held.path.exists()


def test_a_dead_local_owner_is_taken_over(tmp_path: Path) -> None:
    _lock_file(tmp_path, pid=_dead_pid(), host=socket.gethostname())
    with fabric_lock(tmp_path, "lab", "rollout") as held:
        assert held.broken is None
        assert json.loads(held.path.read_text(encoding="utf-8"))["pid"] == os.getpid()


def test_a_lock_from_another_host_needs_break_lock(tmp_path: Path) -> None:
    path = _lock_file(tmp_path, pid=4242, host="jump2")
    journal = Journal.start(tmp_path, "rollout", "lab")
    theirs = RunState(run_id=journal.run_id, kind="rollout", fabric="lab", runbook="p",
                      changed=["leaf1"])
    theirs.pid, theirs.host = 4242, "jump2"
    theirs.save(journal)
    with pytest.raises(LockedError) as caught:
        _take(tmp_path)
    message = str(caught.value)
    assert "pid 4242 on jump2, user ops, 60" in message and "--break-lock" in message
    assert path.exists()  # refused: left as it was
    refuse_if_interrupted(tmp_path, "lab")  # its run cannot be judged from here
    with fabric_lock(tmp_path, "lab", "rollout", break_lock=True) as held:
        assert held.broken is not None and held.broken.host == "jump2"
        assert mark_lock_broken(tmp_path, "lab", held.broken) == [journal.run_id]
        with pytest.raises(InterruptedRunError, match="held by pid 4242 on jump2, was broken"):
            refuse_if_interrupted(tmp_path, "lab")
    [(_, after)] = runs(tmp_path, "lab")
    assert after.shown_status == "interrupted" and after.lock_broken


def test_an_unreadable_lock_file_is_reported_not_a_traceback(tmp_path: Path) -> None:
    path = tmp_path / "locks" / "lab.lock"
    path.parent.mkdir(parents=True)
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(LockedError, match="an unreadable lock file"):
        _take(tmp_path)


def _paused_plan(pause_at_last: bool = False) -> RolloutPlan:
    return RolloutPlan.model_validate({"name": "p", "phases": [
        {"name": "canary", "select": {"names": ["leaf1"]}, "pause": True},
        {"name": "rest", "select": {"role": "leaf"}, "pause": pause_at_last}]})


def test_pauses_are_answered_by_yes_or_the_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    plan = _paused_plan()
    yes = pause_answer(plan, yes=True, dry_run=False)
    assert yes is not None and yes("continue?") is True
    assert pause_answer(plan, yes=False, dry_run=True) is None  # a dry run never pauses
    asked: list[str] = []
    monkeypatch.setattr(sys.stdin, "isatty", lambda: True)
    monkeypatch.setattr("typer.confirm", lambda text, default: asked.append(text) or default)
    at_terminal = pause_answer(plan, yes=False, dry_run=False)
    assert at_terminal is not None and at_terminal("continue with phase rest?") is False
    assert asked == ["continue with phase rest?"]  # the default answer is no


def test_a_pausing_plan_without_a_terminal_is_refused_up_front(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys.stdin, "isatty", lambda: False)
    with pytest.raises(InputError) as caught:
        pause_answer(_paused_plan(), yes=False, dry_run=False)
    [problem] = caught.value.problems
    assert "--yes" in str(problem) and "after phase canary" in str(problem)
    # a pause on the last phase has nothing to wait for
    single = RolloutPlan.model_validate({"name": "p", "phases": [
        {"name": "all", "select": {"role": "leaf"}, "pause": True}]})
    assert pause_answer(single, yes=False, dry_run=False) is None
    # a resumed run past the pausing phase has nothing left to ask
    assert pause_answer(_paused_plan(), yes=False, dry_run=False, from_phase=1) is None


def test_a_journal_keeps_the_plan_as_the_state_model(tmp_path: Path) -> None:
    planned = plan_fabric(load_intent(ROOT / "intents" / "lab"))
    journal = Journal.start(tmp_path, "rollout", "lab")
    path = journal.write_model("plan.json", planned)
    text = path.read_text(encoding="utf-8")
    assert text.endswith("}\n") and text.count("\n") == 1  # one line: pydantic-core's own
    assert FabricState.model_validate_json(text) == planned
