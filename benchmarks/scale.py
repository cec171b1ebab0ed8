"""Plan, render and statically check generated fabrics; print one JSON line per size.

    python benchmarks/scale.py [--spines 64 --leaves 1024 --hosts-per-leaf 16] [--workers N]

Render writes every device's config to a temporary directory, as `flatfab render --out`
does (on all cores for large fabrics); the directory is RAM-backed (/dev/shm) where there is
one, so disk writeback does not blur the figure.

Figures are wall-clock seconds on this machine and the process's peak RSS after each stage
(tracemalloc would slow the stages it measures); they are measurements to quote, not
assertions.
"""

from __future__ import annotations

import argparse
import json
import resource
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tasks.checks import CheckContext, Stage, run_checks
from tasks.intent.models import FabricIntent, HostsIntent, Intent, TenantsIntent
from tasks.plan.planner import plan
from tasks.workflows.render_files import write_configs

RAM_DIR = "/dev/shm"


def fabric_intent(spines: int, leaves: int, hosts_per_leaf: int) -> Intent:
    """A two-tenant unnumbered fabric of the given size, built in memory."""
    fabric = FabricIntent.model_validate({
        "name": f"bench{spines}x{leaves}x{hosts_per_leaf}",
        "underlay": {"spine_asn": 65000,
                     "leaf_asns": {"first": 4_200_000_001, "last": 4_200_000_000 + leaves},
                     "loopback_pool": "10.0.0.0/16", "max_spines": max(spines, 1)},
        "link_classes": {"fabric": {"speed": "400G", "cable_m": 10, "mtu": 9216},
                         "host": {"speed": "400G", "cable_m": 3, "mtu": 9000}},
        "ports": {"leaf_uplink_base": 100},
        "spines": [{"name": f"spine{i}"} for i in range(1, spines + 1)],
        "leaves": [{"name": f"leaf{j}"} for j in range(1, leaves + 1)],
    })
    hosts = HostsIntent.model_validate({"defaults": {"count": hosts_per_leaf, "mtu": 9000}})
    tenants = TenantsIntent.model_validate({"tenants": [
        {"name": "blue", "vrf_id": 100, "prefixes": ["10.64.0.0/10"], "members": ["*-h1"]},
        {"name": "red", "vrf_id": 200, "prefixes": ["10.128.0.0/10"],
         "members": [f"*-h{k}" for k in range(2, hosts_per_leaf + 1)] or ["*-h1"]},
    ] if hosts_per_leaf > 1 else []})
    return Intent(fabric=fabric, hosts=hosts, tenants=tenants)


def measure(func: Callable[[], Any]) -> tuple[Any, float, float]:
    """(result, seconds, peak RSS of the process or a worker, MiB, so far)."""
    started = time.perf_counter()
    result = func()
    seconds = time.perf_counter() - started
    peak = max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
               resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)  # render workers
    return result, seconds, peak / 1024


def run(spines: int, leaves: int, hosts: int, workers: int | None) -> dict[str, Any]:
    intent = fabric_intent(spines, leaves, hosts)
    state, plan_s, plan_mb = measure(lambda: plan(intent))
    with tempfile.TemporaryDirectory(dir=RAM_DIR if Path(RAM_DIR).is_dir() else None) as out:
        config_bytes, render_s, render_mb = measure(
            lambda: write_configs(state, Path(out), workers=workers))
    findings, check_s, check_mb = measure(lambda: run_checks(
        CheckContext(state=state, plan=state, stage=Stage.STATIC)))
    switches = spines + leaves
    return {
        "fabric": f"{spines}x{leaves}x{hosts}", "devices": len(state.devices),
        "links": len(state.links), "config_bytes": config_bytes,
        "plan_s": round(plan_s, 3), "render_s": round(render_s, 3), "check_s": round(check_s, 3),
        "total_s": round(plan_s + render_s + check_s, 3),
        "ms_per_switch": round(1000 * (plan_s + render_s + check_s) / switches, 3),
        "peak_rss_mb": {"plan": round(plan_mb), "render": round(render_mb),
                        "check": round(check_mb)},
        "findings": len(findings),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spines", type=int)
    parser.add_argument("--leaves", type=int)
    parser.add_argument("--hosts-per-leaf", type=int)
    parser.add_argument("--workers", type=int, help="render processes (default: all cores)")
    args = parser.parse_args()
    sizes = ([(args.spines, args.leaves, args.hosts_per_leaf)] if args.spines
             else [(2, 4, 2), (4, 16, 2), (8, 64, 8), (16, 256, 16)])
    for size in sizes:
        print(json.dumps(run(*size, args.workers)), flush=True)


if __name__ == "__main__":
    main()
