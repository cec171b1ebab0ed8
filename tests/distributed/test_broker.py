"""The broker's side of distributed runs: settings from the environment only, one-line errors
that never show the URL's password, and no report unless every shard ended (a broker gone
mid-run included), each against a real redis-server where one is needed."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from flatfab.distributed.config import ConfigError, describe, from_env
from tests.fleet.served import intent_copy
from tests.support.distributed import (
    REDIS,
    RedisServer,
    command,
    env_for,
    flatfab,
    free_port,
    plain_env,
)
from tests.support.paths import ROOT
from tests.support.waiting import wait_for

needs_redis = pytest.mark.skipif(not Path(REDIS).exists(),
                                 reason="redis-server missing (make nautobot-deps installs it)")
SECRET = "s3cret-pw"


def test_settings_come_from_the_environment() -> None:
    config = from_env({"FLATFAB_BROKER_URL": f"redis://:{SECRET}@10.1.2.3:6380/2",
                       "FLATFAB_VISIBILITY_TIMEOUT": "120", "FLATFAB_QUEUE": "fab-a"})
    assert config.broker == "redis://10.1.2.3:6380/2" and config.queue == "fab-a"
    assert config.result_backend == config.broker_url  # the broker's Redis by default
    assert config.visibility_timeout == 120 and config.restore_interval == 10
    assert from_env({"FLATFAB_BROKER_URL": "redis://h/3",
                     "FLATFAB_VISIBILITY_TIMEOUT": "8"}).restore_interval == 2
    assert describe(f"rediss://user:{SECRET}@h:1/0") == "rediss://h:1/0"


@pytest.mark.parametrize(("env", "says"), [
    ({}, "FLATFAB_BROKER_URL is not set"),
    ({"FLATFAB_BROKER_URL": f"amqp://u:{SECRET}@h//"}, "is not a redis:// or rediss:// URL"),
    ({"FLATFAB_BROKER_URL": f"redis://:{SECRET}@h/two"}, "database 'two'"),
    ({"FLATFAB_BROKER_URL": f"redis://:{SECRET}@h:port/2"}, "not a URL like"),
    ({"FLATFAB_BROKER_URL": "redis://h/2", "FLATFAB_VISIBILITY_TIMEOUT": "soon"},
     "FLATFAB_VISIBILITY_TIMEOUT: 'soon' is not a number"),
    ({"FLATFAB_BROKER_URL": "redis://h/2", "FLATFAB_VISIBILITY_TIMEOUT": "0.1"}, "below 1"),
    ({"FLATFAB_BROKER_URL": "redis://h/2", "FLATFAB_QUEUE": "a b"}, "not a plain name"),
    ({"FLATFAB_BROKER_URL": "redis://h/2", "FLATFAB_RESULT_BACKEND": "rpc://"},
     "FLATFAB_RESULT_BACKEND"),
])
def test_bad_settings_are_one_line_without_the_password(env: dict[str, str],
                                                        says: str) -> None:
    with pytest.raises(ConfigError) as caught:
        from_env(env)
    assert says in str(caught.value) and SECRET not in str(caught.value)
    assert "\n" not in str(caught.value)


def test_the_cli_imports_no_celery_until_a_distributed_run() -> None:
    code = ("import sys; import flatfab.cli.app; "
            "sys.exit(' '.join(m for m in ('celery', 'kombu', 'redis') if m in sys.modules) "
            "or 0)")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, check=False)
    assert done.returncode == 0, done.stderr


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    found = tmp_path_factory.mktemp("broker") / "project"
    intent_copy("lab", found, {})
    return found


def test_without_a_broker_a_distributed_run_is_one_line_and_exit_2(root: Path) -> None:
    missing = flatfab(root, "verify", "--distributed", env=plain_env())
    assert missing.code == 2
    assert missing.stderr.startswith("error: FLATFAB_BROKER_URL is not set")
    port = free_port()
    gone = flatfab(root, "audit", "--distributed", env=plain_env(
        FLATFAB_BROKER_URL=f"redis://:{SECRET}@127.0.0.1:{port}/2"))
    assert gone.code == 2 and gone.stdout == ""
    assert gone.stderr.strip().startswith(f"error: broker redis://127.0.0.1:{port}/2 is "
                                          "unreachable")
    assert SECRET not in gone.stderr and "Traceback" not in gone.stderr
    assert "\n" not in gone.stderr.strip()
    only = flatfab(root, "verify", "--timeout", "5", env=plain_env())
    assert only.code == 2 and "error: --timeout: only with --distributed" in only.stderr
    live = flatfab(root, "rollout", "--distributed", env=plain_env())
    assert live.code == 2 and "--distributed: only with --dry-run" in live.stderr
    traffic = flatfab(root, "verify", "--distributed", "--traffic", env=plain_env())
    assert traffic.code == 2 and "--traffic: flows are sent" in traffic.stderr
    shards = flatfab(root, "audit", "--distributed", "--shard-by", "pods", env=plain_env())
    assert shards.code == 2 and shards.stderr.startswith("error: --shard-by: 'pods' is not")


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path / "redis").start()
    try:
        yield server
    finally:
        server.stop()


@needs_redis
def test_a_wrong_password_is_named_not_shown(root: Path, broker: RedisServer) -> None:
    url = broker.url.replace(broker.password, SECRET)
    refused = flatfab(root, "verify", "--distributed", env={**env_for(broker),
                                                             "FLATFAB_BROKER_URL": url})
    assert refused.code == 2
    assert refused.stderr.strip() == (f"error: broker redis://127.0.0.1:{broker.port}/2 "
                                      "refused the password of FLATFAB_BROKER_URL")


@needs_redis
def test_a_broker_gone_mid_run_is_one_line_and_no_report(root: Path, broker: RedisServer,
                                                         tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    # no worker consumes this queue: the run waits for its shards until the broker dies
    run = subprocess.Popen(command(root, "audit", "--distributed", "--timeout", "120",
                                   "--report-dir", str(reports)),
                           cwd=ROOT, env=env_for(broker, queue="nobody"),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        store = broker.client()
        # the lab by leaves:8 is two shards (its four leaves with their hosts, the spines)
        wait_for(lambda: store.llen("nobody") == 2, "the run's tasks queued", timeout=60)
        broker.kill()
        stdout, stderr = run.communicate(timeout=60)
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
    assert run.returncode == 2, stderr
    line = stderr.strip()
    assert "\n" not in line and "Traceback" not in line
    assert line.startswith(f"error: broker redis://127.0.0.1:{broker.port}/2 went away "
                           "mid-run (run ") and line.endswith("no report written")
    assert broker.password not in stdout + stderr
    assert not reports.exists() or not any(reports.iterdir())
