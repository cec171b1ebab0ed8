"""Audit and run-state pieces that need no lab: drift sections, schedules, interrupted runs."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import pytest

from tasks.errors import InputError
from tasks.workflows.audit import parse_duration, scheduled
from tasks.workflows.drift import device_drift, sections
from tasks.workflows.journal import Journal
from tasks.workflows.runstate import InterruptedRunError, RunState, refuse_if_interrupted, runs

SWITCH = """!! links
link swp51 mtu 9216 up
!! qos
{"PFC_WD": {}}
!! frr
router bgp 65101
 neighbor swp51 interface remote-as external
"""


def test_switch_config_splits_by_section_and_host_config_by_keyword() -> None:
    assert list(sections(SWITCH)) == ["links", "qos", "frr"]
    host = "nic eth1 mtu 9000 up\naddress eth1 10.0.0.2/24\nroute 0.0.0.0/0 via 10.0.0.1\n"
    assert list(sections(host)) == ["nic", "address", "route"]


def test_drift_names_the_section_and_the_lines() -> None:
    running = SWITCH.replace("router bgp 65101\n", "router bgp 65101\nip prefix-list oob\n")
    found = device_drift("leaf1", running, SWITCH)
    assert found is not None and found.device == "leaf1"
    assert [s.section for s in found.sections] == ["frr"]
    assert found.sections[0].unexpected == ("ip prefix-list oob",)
    assert found.sections[0].missing == ()
    assert "-ip prefix-list oob" in found.sections[0].diff
    assert found.lines == 1
    assert device_drift("leaf1", SWITCH, SWITCH) is None


def test_a_missing_section_is_drift_too() -> None:
    found = device_drift("leaf1", SWITCH.split("!! frr", maxsplit=1)[0], SWITCH)
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
    from tasks.workflows.runstate import abandon_interrupted  # noqa: PLC0415

    journal = Journal.start(tmp_path, "rollout", "lab")
    state = RunState(run_id=journal.run_id, kind="rollout", fabric="lab", runbook="p")
    state.pid = _dead_pid()
    state.save(journal)
    assert abandon_interrupted(tmp_path, "lab", "lab recreated") == [journal.run_id]
    [(_, after)] = runs(tmp_path, "lab")
    assert after.shown_status == "abandoned" and after.reason == "lab recreated"
    refuse_if_interrupted(tmp_path, "lab")
