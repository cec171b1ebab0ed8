"""Device passwords for real, against the simulated fleet of intents/mixed (EOS spines over
eAPI, which takes a password only; SONiC, FRR and hosts over SSH, which take the fleet's key
or its password): typed at `--ask-pass` prompts, or from FLATFAB_PASSWORD_<SET> and
FLATFAB_PASSWORD, they log in (flatfab's own SSH transport with a password too), and none of
them is ever written: not to stdout or stderr, the state dir (journals, locks), nor a
report."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.fleet.served import PASSWORD, Served, served
from tests.support.paths import ROOT

DEVICES = 14  # intents/mixed: 2 spines, 4 leaves, 8 hosts; each its own user (the fleet's)
EOS = ("spine1", "spine2")


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with served(ROOT / "intents" / "mixed", tmp_path_factory.mktemp("fleet")) as fleet:
        yield fleet


def _run(fleet: Served, work: Path, *args: str, inventory: Path | None = None,
         stdin: str = "", **env: str) -> subprocess.CompletedProcess[str]:
    """flatfab in a process of its own, with no FLATFAB_ variable but `env`'s and an
    empty home (no keys, no known_hosts, no agent of the operator's)."""
    plain = {k: v for k, v in os.environ.items()
             if not k.startswith("FLATFAB_") and k != "SSH_AUTH_SOCK"}
    home = work / "home"
    home.mkdir(exist_ok=True)
    return subprocess.run(
        [sys.executable, "-c", "from flatfab.cli.app import main; main()", "--root",
         str(fleet.root), "--fabric", fleet.fabric, "--inventory",
         str(inventory or fleet.inventory), "--state-dir", str(work / "state"), *args],
        input=stdin, capture_output=True, text=True, cwd=ROOT, timeout=600, check=False,
        env={**plain, "HOME": str(home), **env})


def _nothing_written(work: Path, run: subprocess.CompletedProcess[str], *secrets: str) -> None:
    files = [p for p in work.rglob("*") if p.is_file()]
    assert files  # the run wrote its journal (and reports): they are what is searched
    for secret in secrets:
        assert secret not in run.stdout and secret not in run.stderr
        for path in files:
            assert secret.encode() not in path.read_bytes(), path


def test_without_a_password_eapi_devices_are_refused_before_any_connection(
        mixed: Served, tmp_path: Path) -> None:
    run = _run(mixed, tmp_path, "rollout", "--dry-run")
    lines = run.stderr.strip().splitlines()
    assert run.returncode == 2 and len(lines) == 2, run.stderr
    for line, name in zip(lines, EOS, strict=True):
        assert f"{name}.username: eos logs in as {name} over HTTPS, with a password only: " \
            f"export FLATFAB_PASSWORD_{name.upper()} or FLATFAB_PASSWORD, or pass " \
            "--ask-pass" in line
    assert not (tmp_path / "state").exists()  # no journal was started


def test_passwords_typed_at_ask_pass_log_in_and_are_written_nowhere(mixed: Served,
                                                                   tmp_path: Path) -> None:
    run = _run(mixed, tmp_path, "--ask-pass", "rollout", "--dry-run", "-f", "json",
               stdin=f"{PASSWORD}\n" * DEVICES)
    assert run.returncode == 0, run.stderr
    # each device of the fleet is its own user, so its own set: one prompt each
    assert run.stderr.count("password for user ") == DEVICES
    assert "password for user spine1 (host spine1, 1 device): " in run.stderr
    summary = json.loads(run.stdout)
    assert summary["errors"] == {} and summary["diffs"] == {}  # every device read, eos too
    _nothing_written(tmp_path, run, PASSWORD)


def test_per_set_variables_reach_eapi_and_flatfab_s_ssh_takes_a_password(
        mixed: Served, tmp_path: Path) -> None:
    """Without the fleet's key, FRR leaves and hosts log in over SSH with FLATFAB_PASSWORD;
    the spines with their own sets' variables."""
    inventory = tmp_path / "inventory"
    shutil.copytree(mixed.inventory, inventory)
    defaults = yaml.safe_load((inventory / "defaults.yaml").read_text())
    defaults["connection_options"]["napalm"]["extras"]["optional_args"].pop("key_file")
    (inventory / "defaults.yaml").write_text(yaml.safe_dump(defaults))
    env = {"FLATFAB_PASSWORD": PASSWORD, "FLATFAB_PASSWORD_SPINE1": PASSWORD,
           "FLATFAB_PASSWORD_SPINE2": PASSWORD}
    verify = _run(mixed, tmp_path, "verify", "-f", "json", inventory=inventory, **env)
    assert verify.returncode == 0, verify.stderr
    assert json.loads(verify.stdout)["devices"] == DEVICES
    reports = tmp_path / "reports"
    audit = _run(mixed, tmp_path, "audit", "--report-dir", str(reports), "-f", "json",
                 inventory=inventory, **env)
    assert audit.returncode == 0, audit.stderr
    assert sorted(p.suffix for p in reports.iterdir()) == [".html", ".json", ".md", ".prom",
                                                           ".xml"]
    _nothing_written(tmp_path, verify, PASSWORD)
    _nothing_written(tmp_path, audit, PASSWORD)
    # wrong passwords: FLATFAB_PASSWORD (the SSH devices') and spine2's set: those devices
    # are not read (the password was what logged them in), the others are
    wrong = _run(mixed, tmp_path, "rollout", "--dry-run", "-f", "json", inventory=inventory,
                 **{**env, "FLATFAB_PASSWORD": "not-it", "FLATFAB_PASSWORD_SPINE2": "not-it"})
    unread = set(json.loads(wrong.stdout)["errors"])
    assert unread == {"spine2", "leaf3", "leaf4", *(f"leaf{n}-h{h}" for n in range(1, 5)
                                                    for h in (1, 2))}, wrong.stderr
    assert "not-it" not in wrong.stdout + wrong.stderr
