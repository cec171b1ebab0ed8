"""Plan, render and statically check generated fabrics; print one JSON line per size.

    python benchmarks/scale.py [--spines 64 --leaves 1024 --hosts-per-leaf 16] [--workers N]
    python benchmarks/scale.py --ai rail-32k|planes-131k

Render writes every device's config to a temporary directory, as `flatfab render --out`
does (on all cores for large fabrics); the directory is RAM-backed (/dev/shm) where there is
one, so disk writeback does not blur the figure.

`--ai` takes an AI back-end written as intent documents (fabric, hosts, tenants; see
AI_FABRICS): they are validated by the intent models and judged by every rule the loader
runs (semantics, platform capabilities, override ports, warnings) before they are planned;
that is the `load` stage.

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

from flatfab.checks import CheckContext, Stage, run_checks
from flatfab.intent import capabilities, ports, semantics
from flatfab.intent.models import FabricIntent, HostsIntent, Intent, TenantsIntent
from flatfab.plan.planner import plan
from flatfab.platforms.registry import PLATFORMS
from flatfab.workflows.commands.render_files import write_configs

RAM_DIR = "/dev/shm"

def fabric_documents(spines: int, leaves: int, hosts_per_leaf: int) -> dict[str, dict[str, Any]]:
    """fabric.yaml, hosts.yaml and tenants.yaml of a two-tenant unnumbered leaf-spine."""
    fabric = {
        "name": f"bench{spines}x{leaves}x{hosts_per_leaf}",
        "underlay": {"spine_asn": 65000,
                     "leaf_asns": {"first": 4_200_000_001, "last": 4_200_000_000 + leaves},
                     "loopback_pool": "10.0.0.0/16", "max_spines": max(spines, 1)},
        "link_classes": {"fabric": {"speed": "400G", "cable_m": 10, "mtu": 9216},
                         "host": {"speed": "400G", "cable_m": 3, "mtu": 9000}},
        "ports": {"leaf_uplink_base": 100},
        "spines": [{"name": f"spine{i}"} for i in range(1, spines + 1)],
        "leaves": [{"name": f"leaf{j}"} for j in range(1, leaves + 1)],
    }
    hosts = {"defaults": {"count": hosts_per_leaf, "mtu": 9000}}
    tenants = {"tenants": [
        {"name": "blue", "vrf_id": 100, "prefixes": ["10.64.0.0/10"], "members": ["*-h1"]},
        {"name": "red", "vrf_id": 200, "prefixes": ["10.128.0.0/10"],
         "members": [f"*-h{k}" for k in range(2, hosts_per_leaf + 1)] or ["*-h1"]},
    ] if hosts_per_leaf > 1 else []}
    return {"fabric": fabric, "hosts": hosts, "tenants": tenants}


def fabric_intent(spines: int, leaves: int, hosts_per_leaf: int) -> Intent:
    """A two-tenant unnumbered fabric of the given size, built in memory."""
    documents = fabric_documents(spines, leaves, hosts_per_leaf)
    return Intent(fabric=FabricIntent.model_validate(documents["fabric"]),
                  hosts=HostsIntent.model_validate(documents["hosts"]),
                  tenants=TenantsIntent.model_validate(documents["tenants"]))


# AI back-ends: GPU servers of 8 x 400G RoCE NICs (one per GPU) in scalable units (SUs) of
# 32 servers (256 GPUs) on 8 rail leaves, NIC k on rail leaf k at the server's port (NVIDIA
# DGX SuperPOD / Spectrum-X reference architectures). Every tier is 1:1: a rail leaf has 32
# x 400G down and 32 x 400G up, one to each of its pod's 32 spines. A pod spine has 64 x
# 400G down and 64 up (one per super-spine of its plane): 128 x 400G, one 51.2 Tb/s switch
# with 2 x 400G breakouts. flatfab cables every pod spine to every super-spine of its plane
# (there are no super-spine groups), so a super-spine terminates every pod spine of its plane
# (512 resp. 256 x 400G: a modular chassis). One training tenant holds every server. Cables:
# 30 m SR optics to the pod spines, 100 m DR optics to the super-spines, 3 m to the hosts.
# The static checks find one thing: a super-spine's lossless headroom for that many 400G
# ports exceeds one ASIC's buffer (buffer.budget, 2 findings per super-spine), which is
# right for one ASIC; a chassis spreads its ports over line cards.
#
# rail-32k: 32,768 GPUs = 4,096 servers = 128 SUs; pods of 8 SUs (64 leaves, so 64 up per
#   pod spine), 16 pods x 32 pod spines, 64 super-spines; 1,024 leaves, 512 pod spines.
#   Links per tier: 32,768 host, 32,768 leaf-spine, 32,768 spine-super-spine.
# planes-131k: 131,072 GPUs = 16,384 servers = 512 SUs in 8 planes, plane k carrying rail k
#   (each plane its own pod spines and super-spines). Per plane 512 leaves (one per SU), pods
#   of 64 SUs (64 leaves of the plane, 64 up per pod spine), 8 pods x 32 pod spines and 64
#   super-spines; in all 4,096 leaves, 2,048 pod spines, 512 super-spines. Links per tier:
#   131,072 each.
#
# Both reserve many spine ids (planes.max x superspines.max + pods.max x planes.max x
# pods.max_spines: 576 and 2,560), which underlay.max_spines covers and the /16 loopback
# pool holds.
AI_FABRICS: dict[str, dict[str, Any]] = {
    "rail-32k": {"planes": 1, "sus": 128, "pod_sus": 8, "pod_spines": 32, "superspines": 64,
                 "fabric_speed": "400G", "non_blocking": True},
    "planes-131k": {"planes": 8, "sus": 512, "pod_sus": 64, "pod_spines": 32,
                    "superspines": 64, "fabric_speed": "400G", "non_blocking": True},
}
SERVERS_PER_SU, RAILS = 32, 8


def ai_documents(name: str, size: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """fabric.yaml, hosts.yaml and tenants.yaml of an AI back-end, as the loader reads them."""
    planes, sus, pod_sus = size["planes"], size["sus"], size["pod_sus"]
    pods = -(-sus // pod_sus)
    reserved = planes * size["superspines"] + pods * planes * size["pod_spines"]
    leaves = sus * RAILS
    fabric: dict[str, Any] = {
        "name": name.replace("-", ""),
        "non_blocking": size["non_blocking"],
        "underlay": {"spine_asn": 65000,
                     "leaf_asns": {"first": 4_200_000_001, "last": 4_200_000_000 + leaves},
                     "loopback_pool": "10.0.0.0/16", "max_spines": reserved},
        "link_classes": {
            "fabric": {"speed": size["fabric_speed"], "media": "sr", "cable_m": 30,
                       "mtu": 9216},
            "superspine": {"speed": size["fabric_speed"], "media": "dr", "cable_m": 100,
                           "mtu": 9216},
            "host": {"speed": "400G", "cable_m": 3, "mtu": 9000}},
        # pod spine ports: one per leaf id of the pod's SUs, then the uplinks
        "ports": {"leaf_uplink_base": 64, "spine_uplink_base": pod_sus * RAILS},
        "scalable_units": {"count": sus, "servers": SERVERS_PER_SU, "profile": "gpu",
                           "attach": "rail", "rails": RAILS, "leaf_ids": RAILS},
        "pods": {"sus": pod_sus, "spines": size["pod_spines"], "max": pods,
                 "max_spines": size["pod_spines"],
                 "asns": {"first": 65001, "last": 65000 + pods}},
        "superspines": {"count": size["superspines"], "max": size["superspines"]},
    }
    if planes > 1:
        fabric["planes"] = {"count": planes, "max": planes,
                            "rails": {k: [k] for k in range(1, planes + 1)}}
        fabric["superspines"]["name"] = "p{plane}-ss{spine}"
        fabric["pods"]["spine_name"] = "p{plane}-pod{pod}-spine{spine}"
    hosts = {"defaults": {"mtu": 9000},
             "profiles": {"gpu": {"role": "gpu", "nics": {"count": RAILS, "name": "eth{n}"}}}}
    tenants = {"tenants": [{"name": "train", "vrf_id": 100, "prefixes": ["10.64.0.0/12"],
                            "subnet_length": 26, "members": ["su*"]}]}
    return {"fabric": fabric, "hosts": hosts, "tenants": tenants}


def load(documents: dict[str, dict[str, Any]]) -> Intent:
    """What flatfab.intent.loader.load_intent does after reading the files: validate each
    document, then every rule; refuse on any problem."""
    fabric = FabricIntent.model_validate(documents["fabric"])
    intent = Intent(fabric=fabric, hosts=HostsIntent.model_validate(documents["hosts"]),
                    tenants=TenantsIntent.model_validate(documents["tenants"]))
    found = semantics.check(intent)
    found += capabilities.problems(intent, PLATFORMS)
    if not found:
        found += ports.override_problems(intent, PLATFORMS)
    if found:
        raise SystemExit("\n".join(f"{p.file}: {p.path}: {p.reason}" for p in found))
    semantics.warnings(intent)
    capabilities.warnings(intent, PLATFORMS)
    return intent


def _cpu() -> float:
    """CPU seconds of this process and its reaped children (the render workers)."""
    return sum(r.ru_utime + r.ru_stime for r in (resource.getrusage(resource.RUSAGE_SELF),
                                                 resource.getrusage(resource.RUSAGE_CHILDREN)))


CPU: dict[str, float] = {}  # stage -> CPU seconds of the last measure() of it


def measure(func: Callable[[], Any], stage: str = "") -> tuple[Any, float, float]:
    """(result, seconds, peak RSS of the process or a worker, MiB, so far); the stage's CPU
    seconds go to CPU: on a shared machine they move less than wall-clock time does."""
    started, cpu = time.perf_counter(), _cpu()
    result = func()
    seconds = time.perf_counter() - started
    CPU[stage] = _cpu() - cpu
    peak = max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
               resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)  # render workers
    return result, seconds, peak / 1024


def stages(label: str, intent: Intent, workers: int | None,
           switches: int | None = None) -> dict[str, Any]:
    state, plan_s, plan_mb = measure(lambda: plan(intent), "plan")
    with tempfile.TemporaryDirectory(dir=RAM_DIR if Path(RAM_DIR).is_dir() else None) as out:
        config_bytes, render_s, render_mb = measure(
            lambda: write_configs(state, Path(out), workers=workers), "render")
    findings, check_s, check_mb = measure(lambda: run_checks(
        CheckContext(state=state, plan=state, stage=Stage.STATIC)), "check")
    if switches is None:
        switches = sum(1 for d in state.devices.values() if d.asn is not None)
    return {
        "fabric": label, "devices": len(state.devices), "switches": switches,
        "links": len(state.links), "config_bytes": config_bytes,
        "plan_s": round(plan_s, 3), "render_s": round(render_s, 3), "check_s": round(check_s, 3),
        "total_s": round(plan_s + render_s + check_s, 3),
        "ms_per_switch": round(1000 * (plan_s + render_s + check_s) / switches, 3),
        "peak_rss_mb": {"plan": round(plan_mb), "render": round(render_mb),
                        "check": round(check_mb)},
        "cpu_s": {stage: round(CPU[stage], 3) for stage in ("plan", "render", "check")},
        "findings": len(findings),
    }


def run(spines: int, leaves: int, hosts: int, workers: int | None) -> dict[str, Any]:
    return stages(f"{spines}x{leaves}x{hosts}", fabric_intent(spines, leaves, hosts), workers,
                  spines + leaves)


def run_ai(name: str, workers: int | None) -> dict[str, Any]:
    documents = ai_documents(name, AI_FABRICS[name])
    intent, load_s, load_mb = measure(lambda: load(documents), "load")
    result = stages(name, intent, workers)
    return {**result, "load_s": round(load_s, 3),
            "total_with_load_s": round(result["total_s"] + load_s, 3),
            "peak_rss_mb": {"load": round(load_mb), **result["peak_rss_mb"]},
            "cpu_s": {"load": round(CPU["load"], 3), **result["cpu_s"]}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spines", type=int)
    parser.add_argument("--leaves", type=int)
    parser.add_argument("--hosts-per-leaf", type=int)
    parser.add_argument("--ai", choices=sorted(AI_FABRICS), help="an AI back-end (AI_FABRICS)")
    parser.add_argument("--workers", type=int, help="render processes (default: all cores)")
    args = parser.parse_args()
    if args.ai:
        print(json.dumps(run_ai(args.ai, args.workers)), flush=True)
        return
    sizes = ([(args.spines, args.leaves, args.hosts_per_leaf)] if args.spines
             else [(2, 4, 2), (4, 16, 2), (8, 64, 8), (16, 256, 16)])
    for size in sizes:
        print(json.dumps(run(*size, args.workers)), flush=True)


if __name__ == "__main__":
    main()
