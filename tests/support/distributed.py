"""What the distributed-run tests share: a real redis-server on a free loopback port with a
password, `flatfab worker` processes (with tests/doubles/shard_faults.py installed), the CLI
run as an operator runs it or in this process, an in-process Gather, and reports with their
timings masked.

Every process is started in a session of its own and stopped by its process group (TERM,
then KILL after a grace period) and reaped, so no test leaves a daemon behind.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import redis
from nornir.core import Nornir
from typer.testing import CliRunner

from flatfab.cli.app import app
from flatfab.model.state import FabricState
from flatfab.reports.model import AuditReport
from flatfab.workflows.project.layout import Project
from flatfab.workflows.sharding.shard_codec import as_data, from_data, pack, unpack
from flatfab.workflows.sharding.shard_run import RunSpec, run_shard
from flatfab.workflows.sharding.sharded import Gathered
from flatfab.workflows.sharding.shards import Shard
from tests.doubles.shard_faults import ENV, launcher
from tests.support.flatfab import Run
from tests.support.inventory import login_defaults
from tests.support.paths import ROOT
from tests.support.waiting import wait_for

REDIS = shutil.which("redis-server") or "/usr/bin/redis-server"
# what differs between two runs that find the same things
TIMING_KEYS = ("run_id", "started", "started_epoch", "duration_s", "timings")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def stop(proc: subprocess.Popen[Any], grace: float = 10.0) -> None:
    """TERM the process's group, KILL it after `grace` seconds; reap it."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
    with contextlib.suppress(ProcessLookupError):  # what the group left (pool processes)
        os.killpg(proc.pid, signal.SIGKILL)


@dataclass
class RedisServer:
    """A private redis-server: loopback, a password, nothing written to disk."""

    directory: Path
    port: int = field(default_factory=free_port)
    password: str = field(default_factory=lambda: secrets.token_hex(16))
    db: int = 2
    proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://:{self.password}@127.0.0.1:{self.port}/{self.db}"

    def client(self) -> redis.Redis:
        return redis.Redis(host="127.0.0.1", port=self.port, db=self.db, password=self.password)

    def start(self) -> RedisServer:
        self.directory.mkdir(parents=True, exist_ok=True)
        conf = self.directory / "redis.conf"
        fd = os.open(conf, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write("\n".join([
                "bind 127.0.0.1", f"port {self.port}", "protected-mode yes", 'save ""',
                "appendonly no", "daemonize no", f"dir {self.directory}",
                f"logfile {self.directory / 'redis.log'}", f"requirepass {self.password}", ""]))
        self.proc = subprocess.Popen([REDIS, str(conf)], start_new_session=True,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

        def up() -> bool:
            assert self.proc is not None and self.proc.poll() is None, "redis-server exited"
            try:
                return bool(self.client().ping())
            except redis.exceptions.ConnectionError:
                return False
        wait_for(up, f"redis-server on port {self.port}")
        return self

    def stop(self) -> None:
        if self.proc is not None:
            stop(self.proc)

    def kill(self) -> None:
        """Gone at once, as a crashed broker is."""
        if self.proc is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)


def plain_env(**extra: str) -> dict[str, str]:
    """This environment without any FLATFAB_ setting, running this checkout's code."""
    return {**{k: v for k, v in os.environ.items() if not k.startswith("FLATFAB_")},
            "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1", **extra}


def env_for(broker: RedisServer, *, queue: str = "flatfab", visibility: float = 6,
            faults: Path | None = None, password: str = "") -> dict[str, str]:
    """The environment of a worker or coordinator on `broker` (`faults`: the shard faults
    file workers apply; `password`: FLATFAB_PASSWORD, the devices' password)."""
    env = plain_env(FLATFAB_BROKER_URL=broker.url, FLATFAB_QUEUE=queue,
                    FLATFAB_VISIBILITY_TIMEOUT=str(visibility), FLATFAB_RESULT_TTL="600")
    if faults is not None:
        env[ENV] = str(faults)
    if password:
        env["FLATFAB_PASSWORD"] = password
    return env


def command(root: Path, *args: str) -> list[str]:
    """The real CLI (shard faults installed when FLATFAB_TEST_SHARD_FAULTS is set), on
    project `root`."""
    return [sys.executable, "-c", launcher(), "--root", str(root), *args]


@dataclass
class Worker:
    name: str
    proc: subprocess.Popen[bytes]
    log: Path

    def output(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")

    def kill(self) -> None:
        """The whole worker gone at once (main and pool processes), as a dead machine."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=10)


def start_worker(root: Path, name: str, env: dict[str, str], log_dir: Path,
                 inventory: Path | None = None, concurrency: int = 1) -> Worker:
    """A `flatfab worker` process (not waited for: see ready())."""
    log = log_dir / f"{name}.log"
    where = ["--inventory", str(inventory)] if inventory else []
    with log.open("wb") as out:
        proc = subprocess.Popen(command(root, *where, "worker", "--concurrency",
                                        str(concurrency),
                                        "--name", f"{name}@%h", "--loglevel", "INFO"),
                                cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
    return Worker(name, proc, log)


def ready(worker: Worker) -> Worker:
    wait_for(lambda: "ready." in worker.output() or worker.proc.poll() is not None,
             f"worker {worker.name} ready", timeout=90)
    assert worker.proc.poll() is None, worker.output()
    return worker


@contextlib.contextmanager
def workers(root: Path, env: dict[str, str], log_dir: Path, inventory: Path | None = None,
            names: tuple[str, ...] = ("w1", "w2")) -> Iterator[list[Worker]]:
    """Workers started together (they load at once), ready when this yields."""
    started: list[Worker] = []
    try:
        started = [start_worker(root, name, env, log_dir, inventory) for name in names]
        yield [ready(w) for w in started]
    finally:
        for worker in started:
            stop(worker.proc)


def flatfab(root: Path, *args: str, env: dict[str, str], timeout: float = 120) -> Run:
    """The CLI in a process of its own, as an operator runs it (main(): one-line errors)."""
    proc = subprocess.run(command(root, *args), cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=timeout, check=False)
    return Run(proc.returncode, proc.stdout, proc.stderr)


def cli(root: Path, *args: str, env: dict[str, str]) -> Run:
    """The CLI in this process (no interpreter start-up: seconds each on a busy machine)."""
    result = CliRunner().invoke(app, ["--root", str(root), *args], env=env)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return Run(result.exit_code, result.stdout, result.stderr)


def masked(data: Any) -> Any:
    """A report's JSON with what differs between runs (ids, clocks, timings) blanked."""
    if isinstance(data, dict):
        return {k: ("<masked>" if k in TIMING_KEYS else masked(v)) for k, v in data.items()}
    if isinstance(data, list):
        return [masked(v) for v in data]
    return data


def masked_report(report: AuditReport) -> AuditReport:
    return replace(report, run_id="run", started="2026-01-01T00:00:00Z", started_epoch=0.0,
                   duration_s=0.0, timings={})


def in_process(nornir: Nornir, plan: FabricState,
               failed: dict[str, str] | None = None) -> Callable[[RunSpec, list[Shard]], Gathered]:
    """A Gather that reads every shard here, each output through the wire format (packed,
    unpacked, decoded) as a worker's result travels; `failed`: shards to report failed."""
    def gather(spec: RunSpec, found: list[Shard]) -> Gathered:
        gathered = Gathered()
        for shard in found:
            if failed and shard.id in failed:
                gathered.failed[shard.id] = failed[shard.id]
                continue
            output = run_shard(nornir, plan, spec, shard.id, shard.devices)
            gathered.outputs[shard.id] = from_data(unpack(pack(as_data(output))))
        return gathered
    return gather


def report_files(directory: Path) -> dict[str, str]:
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(directory.iterdir())}


def project(directory: Path, fabric: str = "lab") -> Path:
    """A project root holding a copy of one example fabric's intent and an inventory."""
    shutil.copytree(ROOT / "intents" / fabric, directory / "intents" / fabric)
    lab_inventory(directory / "inventory" / fabric, Project(root=directory, fabric=fabric).plan)
    return directory


def lab_inventory(directory: Path, plan: FabricState) -> Path:
    """A SimpleInventory naming every planned device, complete as flatfab checks it (never
    connected to: the device double answers for them)."""
    directory.mkdir(parents=True, exist_ok=True)
    hosts = {name: {"hostname": "127.0.0.1", "platform": d.platform,
                    "groups": [f"{d.role.value}s"]} for name, d in plan.devices.items()}
    groups = {f"{role}s": {"data": {"role": role}}
              for role in ("superspine", "spine", "leaf", "host")}
    (directory / "hosts.yaml").write_text(json.dumps(hosts, indent=1), encoding="utf-8")
    (directory / "groups.yaml").write_text(json.dumps(groups, indent=1), encoding="utf-8")
    (directory / "defaults.yaml").write_text(json.dumps(
        {"data": {}, **login_defaults(directory, ["127.0.0.1"])}, indent=1), encoding="utf-8")
    return directory
