"""NAPALM's real EOSDriver against the config-session double: commit timers, rollback, and
the read-only guard of verify and audit."""

from __future__ import annotations

import pytest
from napalm.eos.eos import EOSDriver

from flatfab.platforms.base import ReadOnlyError
from flatfab.platforms.eos import PLATFORM
from tests.doubles.eos import EosDouble

OLD = ["hostname leaf1", "interface Ethernet1", "mtu 9000"]
NEW_TEXT = "hostname leaf1\ninterface Ethernet1\n   mtu 9216\n!\n"
NEW = ["hostname leaf1", "interface Ethernet1", "mtu 9216"]


@pytest.fixture
def device() -> EosDouble:
    return EosDouble(running=list(OLD))


@pytest.fixture
def driver(device: EosDouble) -> EOSDriver:
    eos = EOSDriver("leaf1", "admin", "admin", optional_args={"transport": "https"})
    eos.device = device  # the pyeapi node: every eAPI request lands in the double
    eos.open()
    return eos


def test_replace_candidate_diffs_against_running(driver: EOSDriver, device: EosDouble) -> None:
    driver.load_replace_candidate(config=NEW_TEXT)
    diff = driver.compare_config()
    assert "-mtu 9000" in diff and "+mtu 9216" in diff
    assert device.running == OLD  # nothing applied before commit
    driver.discard_config()
    assert device.sessions == {}


def test_confirmed_commit_keeps_the_new_config(driver: EOSDriver, device: EosDouble) -> None:
    driver.load_replace_candidate(config=NEW_TEXT)
    driver.commit_config(revert_in=60)
    assert device.running == NEW
    assert driver.has_pending_commit()
    device.advance(30)
    driver.confirm_commit()
    assert not driver.has_pending_commit()
    device.advance(120)
    assert device.running == NEW and device.startup == NEW
    assert "configure session" in " ".join(device.log) and "write memory" in device.log


def test_unconfirmed_commit_reverts_when_the_timer_runs_out(driver: EOSDriver,
                                                           device: EosDouble) -> None:
    driver.load_replace_candidate(config=NEW_TEXT)
    driver.commit_config(revert_in=60)
    assert any(c.endswith("commit timer 00:01:00") for c in device.log)
    device.advance(59)
    assert device.running == NEW
    device.advance(2)
    assert device.running == OLD
    assert not driver.has_pending_commit()


def test_rollback_restores_the_previous_config(driver: EOSDriver, device: EosDouble) -> None:
    driver.load_replace_candidate(config=NEW_TEXT)
    driver.commit_config()
    assert device.running == NEW == device.startup
    driver.rollback()
    assert device.running == OLD == device.startup
    assert "configure replace flash:rollback-0" in device.log


def test_rollback_during_a_pending_commit_aborts_it(driver: EOSDriver,
                                                    device: EosDouble) -> None:
    driver.load_replace_candidate(config=NEW_TEXT)
    driver.commit_config(revert_in=300)
    driver.rollback()
    assert device.running == OLD
    assert not driver.has_pending_commit()


MUTATING = ("configure", "copy", "write", "rollback")


def test_read_only_driver_sends_no_change(driver: EOSDriver, device: EosDouble) -> None:
    guarded = PLATFORM.read_only(driver)
    device.log.clear()
    running = guarded.get_config(retrieve="running")["running"]
    assert running.splitlines() == OLD
    assert guarded.cli(["show version"], encoding="json")["show version"]["version"]
    assert not guarded.has_pending_commit()
    refused = [("load_replace_candidate", {"config": NEW_TEXT}),
               ("commit_config", {"revert_in": 60}), ("rollback", {}), ("confirm_commit", {})]
    for method, kwargs in refused:
        with pytest.raises(ReadOnlyError):
            getattr(guarded, method)(**kwargs)
    for command in ("configure session x", "write memory", "copy running-config flash:x"):
        with pytest.raises(ReadOnlyError):
            guarded.cli([command])
    assert device.log and not [c for c in device.log if c.startswith(MUTATING)]
    assert device.running == OLD


def test_dry_run_diff_opens_no_config_session(driver: EOSDriver, device: EosDouble) -> None:
    """`rollout --dry-run` diffs EOS from the running config: no session, no change."""
    from types import SimpleNamespace  # noqa: PLC0415

    from flatfab.workflows.commands.rollout import DeviceOutcome, _diff  # noqa: PLC0415

    host = SimpleNamespace(name="leaf1", platform="eos",
                           connections={"napalm": SimpleNamespace(connection=driver)},
                           close_connections=lambda: None)  # the pass closes it after
    device.running = ["hostname leaf1", "interface Ethernet1", "   mtu 9000"]  # as EOS shows
    device.log.clear()
    result = _diff(SimpleNamespace(host=host), {"leaf1": NEW_TEXT},  # type: ignore[arg-type]
                   read_only=True)
    outcome = result.result
    assert isinstance(outcome, DeviceOutcome)
    assert "-   mtu 9000\n" in outcome.diff and "+   mtu 9216\n" in outcome.diff
    assert device.log == ["show running-config"] * len(device.log) and device.log
    assert device.running[-1] == "   mtu 9000" and not device.sessions
