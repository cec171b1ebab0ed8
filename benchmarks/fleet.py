"""flatfab's controller against a simulated fleet of N devices; one JSON line per size and
operation.

    python benchmarks/fleet.py [--sizes 100 1000 5000 10000]
        [--ops verify verify-physical audit dry-run rollout]
        [--shape classic|rail] [--hosts-per-leaf 4] [--workers 20]

The fleet (tests/doubles/fleet: every device of the plan answering its driver over real SSH
from one process on 127.0.0.1) runs in a process of its own; the controller is the `flatfab`
command, run as a child so its CPU time and peak RSS are its own. Each line:

- shape, devices, switches, hosts; op: `verify` (`verify --lossless`, probes included),
  `verify-physical` (the same with `--physical`: every port's module, FEC and counters read
  and judged; the fleet's devices state the modules the embedded lab would, phy.json),
  `audit` (config drift and every live check), `dry-run` (`rollout --dry-run`), `rollout` (a
  full phased rollout of a factory-fresh fleet with `runbooks/fleet-bring-up.yaml`: diff,
  then per batch commit with a revert timer, gate, confirm);
- wall_s; controller_cpu_s (user + system of the flatfab process; controller_sys_s the
  system part: socket reads and threads waiting on the GIL) and cpu_ms_per_device
  (that, plus the workers' of a distributed run, per device);
  peak_rss_mb (the flatfab process); connections_peak (SSH connections open at once, as the
  fleet counted them); fleet_cpu_s (the simulator's own CPU for the operation: it shares the
  machine's cores with the controller); exit code, findings, devices changed;
- fleet_setup_s: the fleet's start (plan, keys) for that size; fleet_errors: commands the
  simulator itself failed to answer (its bugs, each traceback in the fleet's log): 0.

With `--distributed W`, verify, audit and dry-run also run as `--distributed` over W
`flatfab worker` processes (one shard at a time each) on a private redis-server, shards of
`--shard-by` (default leaves:32); the line's op gets `+distributed`, workers_cpu_s is the
workers' CPU (their pool processes included) and controller_cpu_s the coordinator's.

`classic`: a two-tenant leaf-spine (benchmarks/scale.py fabric_documents), N devices =
spines + leaves x (1 + hosts per leaf), 8 spines up to 2,000 devices, 16 beyond. `rail`: the
rail-optimized 5-stage back-end of scale.py's `rail-32k` cut to N devices (SUs of 8 rail
leaves and 32 servers of 8 NICs; pods of 8 SUs). Figures are measurements of this machine
(2 cores shared by controller and fleet), not assertions.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from scale import AI_FABRICS, RAILS, SERVERS_PER_SU, ai_documents, fabric_documents  # noqa: E402

from tests.support.distributed import RedisServer, env_for, ready, start_worker  # noqa: E402

FLATFAB = [str(Path(sys.executable).parent / "flatfab")]
RUNBOOK = ROOT / "runbooks" / "fleet-bring-up.yaml"


def classic(devices: int, hosts_per_leaf: int) -> tuple[str, dict[str, dict[str, Any]]]:
    spines = 8 if devices <= 2000 else 16
    leaves = max(2, (devices - spines) // (1 + hosts_per_leaf))
    docs = fabric_documents(spines, leaves, hosts_per_leaf)
    name = f"fleet{spines}x{leaves}x{hosts_per_leaf}"
    docs["fabric"]["name"] = name
    # every spine has a port per leaf: a chassis, whose buffer grows with its ports (one
    # 400G port's lossless headroom is ~0.26 MB), so the static buffer.budget holds
    lossless = max(48_000_000, leaves * 300_000)
    docs["qos"] = {"buffers": {"ingress_lossless_pool": lossless,
                               "egress_lossless_pool": lossless},
                   "asics": {"frr": {"family": "generic",
                                     "buffer_bytes": 2 * lossless + 64_000_000}}}
    return name, docs


def rail(devices: int) -> tuple[str, dict[str, dict[str, Any]]]:
    size = dict(AI_FABRICS["rail-32k"])
    per_su = RAILS + SERVERS_PER_SU
    size["sus"] = max(1, devices // per_su)
    size["pod_sus"] = min(size["pod_sus"], size["sus"])
    # keep pod spines and super-spines in proportion to a cut-down fabric
    size["pod_spines"] = max(2, min(32, size["sus"] * 2))
    size["superspines"] = max(2, min(64, size["sus"]))
    name = f"fleetrail{size['sus']}"
    docs = ai_documents(name, size)
    docs["fabric"]["name"] = name
    return name, docs


def write_intent(root: Path, name: str, docs: dict[str, dict[str, Any]]) -> Path:
    folder = root / "intents" / name
    folder.mkdir(parents=True, exist_ok=True)
    for key, document in docs.items():
        (folder / f"{key}.yaml").write_text(yaml.safe_dump(document, sort_keys=False))
    return folder


class Fleet:
    """The simulator in a process of its own."""

    def __init__(self, intent: Path, folder: Path, factory: bool) -> None:
        self.folder = folder
        args = [sys.executable, "-m", "tests.doubles.fleet", "--intent", str(intent),
                "--dir", str(folder)] + (["--factory"] if factory else [])
        started = time.perf_counter()
        self.log = (folder.parent / f"{folder.name}.log").open("w")
        self.process = subprocess.Popen(args, cwd=ROOT, stdout=self.log, stderr=subprocess.STDOUT)
        ready = folder / "ready.json"
        while not ready.exists():
            if self.process.poll() is not None:
                raise SystemExit(f"the fleet stopped: see {self.log.name}")
            time.sleep(0.1)
        self.setup_s = time.perf_counter() - started

    def reset(self) -> None:
        os.kill(self.process.pid, signal.SIGUSR1)
        time.sleep(0.2)

    def stats(self) -> dict[str, Any]:
        time.sleep(1.2)  # the fleet writes its counts every second
        return json.loads((self.folder / "stats.json").read_text())

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)
        self.log.close()


def controller(root: Path, name: str, fleet: Fleet, args: list[str],
               env: dict[str, str] | None = None) -> dict[str, Any]:
    """Run one flatfab command as a child; its wall time, CPU, peak RSS and JSON output."""
    command = [*FLATFAB, "--root", str(root), "--fabric", name, "--inventory",
               str(fleet.folder / "inventory"), "--state-dir", str(fleet.folder / "state"),
               *args]
    started = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        child = subprocess.Popen(command, cwd=ROOT, stdout=out, stderr=err, env=env)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - started
        out.seek(0)
        err.seek(0)
        text, errors = out.read().decode(), err.read().decode()
    code = os.waitstatus_to_exitcode(status)
    try:
        data = json.loads(text) if text.strip() else {}
    except ValueError:
        data = {}
    if code not in (0, 1) or not data:
        sys.stderr.write(f"{' '.join(args)}: exit {code}: {errors[-2000:]}\n")
    return {"wall_s": round(wall, 2), "controller_cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
            "controller_sys_s": round(usage.ru_stime, 2),
            "peak_rss_mb": round(usage.ru_maxrss / 1024), "exit": code, "output": data}


class Workers:
    """A private redis-server and W `flatfab worker`s for one fabric (tests/support's)."""

    def __init__(self, root: Path, inventory: Path, count: int, folder: Path) -> None:
        self.broker = RedisServer(folder / "redis").start()
        self.env = env_for(self.broker, visibility=3600)
        self.workers = [ready(start_worker(root, f"w{i}", self.env, folder, inventory))
                        for i in range(1, count + 1)]

    def stop(self) -> float:
        """Stop the workers; their CPU seconds (with the pool processes they reaped)."""
        total = 0.0
        for worker in self.workers:
            os.killpg(worker.proc.pid, signal.SIGTERM)
            _, _, usage = os.wait4(worker.proc.pid, 0)
            worker.proc.returncode = 0
            total += usage.ru_utime + usage.ru_stime
        self.broker.stop()
        return total


OPS = {
    "verify": ["verify", "--lossless", "-f", "json"],
    "verify-physical": ["verify", "--lossless", "--physical", "-f", "json"],
    "audit": ["audit", "-f", "json"],
    "dry-run": ["rollout", "--dry-run", "-f", "json"],
    "rollout": ["rollout", "--yes", "--runbook", str(RUNBOOK), "-f", "json"],
}


def outcome(op: str, data: dict[str, Any]) -> dict[str, Any]:
    if op in ("verify", "verify-physical", "audit"):
        return {"findings": len(data.get("findings", []))}
    return {"status": data.get("status"), "changed": len(data.get("changed") or [])}


def run_size(shape: str, devices: int, hosts_per_leaf: int, ops: list[str], workers: int,
             work: Path, distributed: int = 0, shard_by: str = "leaves:32") -> None:
    name, docs = classic(devices, hosts_per_leaf) if shape == "classic" else rail(devices)
    root = work / name
    intent = write_intent(root, name, docs)
    for factory, wanted in ((False, [o for o in ops if o != "rollout"]),
                            (True, [o for o in ops if o == "rollout"])):
        if not wanted:
            continue
        fleet = Fleet(intent, root / ("factory" if factory else "fleet"), factory)
        try:
            inventory = yaml.safe_load((fleet.folder / "inventory" / "hosts.yaml").read_text())
            hosts = sum(1 for h in inventory.values() if h["platform"] == "linux_host")
            runs = [(op, False) for op in wanted]
            if distributed:
                runs += [(op, True) for op in wanted if op != "rollout"]
            for op, spread in runs:
                pool = (Workers(root, fleet.folder / "inventory", distributed,
                                root / f"workers-{op}") if spread else None)
                fleet.reset()
                args = [*OPS[op], "--workers", str(workers)]
                if pool is not None:
                    args += ["--distributed", "--shard-by", shard_by, "--timeout", "7200"]
                result = controller(root, name, fleet, args, pool.env if pool else None)
                workers_cpu = pool.stop() if pool is not None else None
                seen = fleet.stats()
                line = {"shape": shape, "devices": len(inventory),
                        "switches": len(inventory) - hosts, "hosts": hosts,
                        "op": op + ("+distributed" if spread else ""),
                        "workers": workers, "wall_s": result["wall_s"],
                        "controller_cpu_s": result["controller_cpu_s"],
                        "controller_sys_s": result["controller_sys_s"],
                        "cpu_ms_per_device": round(1000 * (result["controller_cpu_s"]
                                                           + (workers_cpu or 0))
                                                   / len(inventory), 2),
                        "peak_rss_mb": result["peak_rss_mb"],
                        "connections_peak": seen["connections_peak"],
                        "fleet_cpu_s": seen["cpu_s"], "fleet_setup_s": round(fleet.setup_s, 1),
                        "fleet_errors": seen.get("handler_errors", 0),
                        "exit": result["exit"], **outcome(op, result["output"])}
                if pool is not None:
                    line |= {"distributed": distributed, "shard_by": shard_by,
                             "workers_cpu_s": round(workers_cpu or 0, 2)}
                print(json.dumps(line), flush=True)
        finally:
            fleet.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000])
    parser.add_argument("--ops", nargs="+", choices=sorted(OPS),
                        default=["verify", "verify-physical", "audit", "dry-run", "rollout"])
    parser.add_argument("--shape", choices=["classic", "rail"], default="classic")
    parser.add_argument("--hosts-per-leaf", type=int, default=4)
    parser.add_argument("--workers", type=int, default=20)
    parser.add_argument("--distributed", type=int, default=0, metavar="W",
                        help="also run verify, audit and dry-run over W flatfab workers")
    parser.add_argument("--shard-by", default="leaves:32")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="flatfab-fleet-") as tmp:
        for size in args.sizes:
            run_size(args.shape, size, args.hosts_per_leaf, args.ops, args.workers, Path(tmp),
                     args.distributed, args.shard_by)


if __name__ == "__main__":
    main()
