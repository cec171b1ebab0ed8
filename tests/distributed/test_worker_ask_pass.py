"""`flatfab --ask-pass worker`: the worker asks for its fabric's credential sets once, at
start (its pool processes have no terminal), and its shards log in with what was typed; the
coordinator needs no password. Against the simulated fleet of intents/mixed, whose EOS
spines take a password only (eAPI)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from flatfab.cli.app import app
from tests.fleet.served import PASSWORD, intent_copy, served
from tests.support.distributed import REDIS, RedisServer, Worker, command, env_for, ready, stop
from tests.support.paths import ROOT

pytestmark = pytest.mark.skipif(not Path(REDIS).exists(),
                                reason="redis-server missing (make nautobot-deps installs it)")
DEVICES = 14  # intents/mixed: every device its own user on the fleet, its own set


def test_a_worker_asks_at_start_and_its_shards_log_in_with_it(tmp_path: Path) -> None:
    root = tmp_path / "project"
    intent = intent_copy("mixed", root, {})
    redis = RedisServer(tmp_path / "redis").start()
    try:
        env = env_for(redis)  # no FLATFAB_PASSWORD anywhere: only what is typed
        with served(intent, tmp_path / "fleet") as fleet:
            log = tmp_path / "worker.log"
            with log.open("wb") as out:
                proc = subprocess.Popen(
                    command(root, "--fabric", "mixed", "--inventory", str(fleet.inventory),
                            "--ask-pass", "worker", "--concurrency", "1", "--name", "ask@%h"),
                    cwd=ROOT, env=env, stdin=subprocess.PIPE, stdout=out,
                    stderr=subprocess.STDOUT, start_new_session=True)
            assert proc.stdin is not None
            proc.stdin.write(f"{PASSWORD}\n".encode() * DEVICES)
            proc.stdin.close()
            worker = ready(Worker("ask", proc, log))
            try:
                result = CliRunner().invoke(
                    app, ["--root", str(root), "--fabric", "mixed", "verify",
                          "--distributed", "-f", "json"],
                    env={**{k: v for k, v in env.items() if k.startswith("FLATFAB_")},
                         "FLATFAB_PASSWORD": None})
                assert result.exit_code == 0, result.stderr + worker.output()
                assert '"devices": 14' in result.stdout
                output = worker.output()
                assert output.count("password for user ") == DEVICES
                assert "password for user spine1 (host spine1, 1 device): " in output
                assert PASSWORD not in output + result.stdout + result.stderr
            finally:
                stop(proc)
    finally:
        redis.stop()
