"""Faults of a whole shard in a `flatfab worker`: a double around
flatfab.workflows.sharding.shard_run.run_shard (its devices are still read for real, from the
fleet).

A shard named in `fail` raises on its first N deliveries; one named in `die` kills the
process reading it (a pool process lost mid-shard) on its first N. Deliveries are counted
in files under `state_dir`, so every worker process agrees; the faults file
(FLATFAB_TEST_SHARD_FAULTS names it) is read again at every shard, so tests change faults
between runs without restarting workers. `launcher()` is the Python code a worker process
runs: install this double, then the real flatfab CLI.
"""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

from nornir.core import Nornir

from flatfab.model.state import FabricState, Probe
from flatfab.workflows.sharding import shard_run
from flatfab.workflows.sharding.shard_run import RunSpec, ShardOutput

ENV = "FLATFAB_TEST_SHARD_FAULTS"


def _delivery(state_dir: Path, shard: str) -> int:
    """This delivery's number for the shard (appended to a file: across processes)."""
    path = state_dir / f"{shard}.deliveries"
    with path.open("a", encoding="utf-8") as handle:
        handle.write(f"{os.getpid()}\n")
    return len(path.read_text(encoding="utf-8").splitlines())


def wrap(real: Callable[..., ShardOutput], faults_file: Path) -> Callable[..., ShardOutput]:
    def run_shard(nornir: Nornir, plan: FabricState, spec: RunSpec, shard: str,
                  devices: tuple[str, ...],
                  probes: dict[str, list[Probe]] | None = None) -> ShardOutput:
        faults: dict[str, Any] = json.loads(faults_file.read_text(encoding="utf-8"))
        fail, die = faults.get("fail", {}), faults.get("die", {})
        if shard in fail or shard in die:
            n = _delivery(Path(faults["state_dir"]), shard)
            if n <= die.get(shard, 0):
                os.kill(os.getpid(), signal.SIGKILL)
            if n <= fail.get(shard, 0):
                raise RuntimeError(f"injected failure of shard {shard} (delivery {n})")
        return real(nornir, plan, spec, shard, devices, probes)
    return run_shard


def install_from_env() -> None:
    path = os.environ.get(ENV)
    if path:
        shard_run.run_shard = wrap(shard_run.run_shard, Path(path))


def launcher() -> str:
    """`python -c` code: install the double, then run the real flatfab CLI (argv as given)."""
    return ("import sys; sys.argv[0] = 'flatfab'; "
            "import tests.doubles.shard_faults as f; f.install_from_env(); "
            "from flatfab.cli.app import main; main()")


def write_faults(path: Path, state_dir: Path, *, fail: dict[str, int] | None = None,
                 die: dict[str, int] | None = None) -> None:
    """The faults the workers apply from their next shard on (deliveries counted afresh)."""
    state_dir.mkdir(parents=True, exist_ok=True)
    for old in state_dir.glob("*.deliveries"):
        old.unlink()
    path.write_text(json.dumps({"state_dir": str(state_dir), "fail": fail or {},
                                "die": die or {}}), encoding="utf-8")
