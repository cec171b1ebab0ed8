"""Time the embedded lab end to end for one fabric; print one JSON line. Needs root.

    python benchmarks/lab_timings.py --fabric lab4x16 --prefix ffb --mgmt-subnet 172.31.240.0/24 \
        --runbook runbooks/first-bring-up.yaml

Stages: lab up; first rollout (commit, wait until every BGP session is Established, confirm;
with --runbook, phase by phase with every gate); "established_s" is the two together, from no
namespace to a converged, confirmed fabric; verify (with pings); an audit writing every report
format; a second rollout (no changes); lab down. Also the lab's FRR memory.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FLATFAB = str(Path(sys.executable).parent / "flatfab")


def timed(*args: str) -> tuple[float, subprocess.CompletedProcess[str]]:
    started = time.perf_counter()
    proc = subprocess.run([FLATFAB, *args], cwd=ROOT, capture_output=True, text=True,
                          check=False)
    if proc.returncode != 0:
        sys.exit(f"flatfab {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout}\n"
                 f"{proc.stderr}")
    return time.perf_counter() - started, proc


def frr_pss_mb(prefix: str) -> float:
    """Proportional set size of every FRR daemon of the lab, in MB."""
    total = 0
    for pidfile in Path(f"/run/flatfab/{prefix}/nodes").glob("*/run-frr/*.pid"):
        try:
            rollup = Path(f"/proc/{pidfile.read_text().split()[0]}/smaps_rollup").read_text()
        except (OSError, IndexError):
            continue
        total += next(int(line.split()[1]) for line in rollup.splitlines()
                      if line.startswith("Pss:"))
    return round(total / 1024, 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fabric", default="lab")
    parser.add_argument("--prefix", default="ffb")
    parser.add_argument("--mgmt-subnet", default="172.31.240.0/24")
    parser.add_argument("--runbook", help="roll out phase by phase with this plan")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        base = ("--fabric", args.fabric, "--inventory", f"{work}/inventory",
                "--state-dir", f"{work}/state")
        subprocess.run([FLATFAB, *base, "lab", "down", "--sweep", "--prefix", args.prefix],
                       cwd=ROOT, capture_output=True, check=False)
        up_s, _ = timed(*base, "lab", "up", "--prefix", args.prefix,
                        "--mgmt-subnet", args.mgmt_subnet)
        phased = ("--runbook", args.runbook, "--yes") if args.runbook else ()
        rollout_s, first = timed(*base, "rollout", *phased, "--format", "json")
        verify_s, report = timed(*base, "verify", "--format", "json")
        audit_s, _ = timed(*base, "audit", "--report-dir", f"{work}/reports")
        memory = frr_pss_mb(args.prefix)
        again_s, second = timed(*base, "rollout", "--format", "json")
        down_s, _ = timed(*base, "lab", "down", "--prefix", args.prefix)
    findings = json.loads(report.stdout)["findings"]
    print(json.dumps({
        "fabric": args.fabric, "runbook": args.runbook, "lab_up_s": round(up_s, 2),
        "first_rollout_s": round(rollout_s, 2), "established_s": round(up_s + rollout_s, 2),
        "gate_s": json.loads(first.stdout)["timings"].get("gate_s"),
        "verify_s": round(verify_s, 2), "verify_findings": len(findings),
        "audit_s": round(audit_s, 2),
        "second_rollout_s": round(again_s, 2),
        "second_rollout_changed": len(json.loads(second.stdout)["changed"]),
        "lab_down_s": round(down_s, 2), "frr_pss_mb": memory,
    }))


if __name__ == "__main__":
    main()
