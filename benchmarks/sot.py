"""Time flatfab against a real local Nautobot; print one JSON line per fabric. Needs root.

    python benchmarks/sot.py --fabric lab --fabric lab4x16 [--cold]

For each fabric, on a service of its own (fabrics share address pools, so each starts from
an empty Nautobot): start the service from the cached dump, seed the fabric's plan, then the
CLI as an operator runs it: `sot import` (dry run), `sot check`, `sot sync` (dry run),
`sot sync --write`, and `sot sync --write` again (no changes). With --cold, the first start
migrates an empty database into a throw-away cache (about 5 minutes) instead.

The service runs under the name `bench` on its own ports and is always brought down.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FLATFAB = str(Path(sys.executable).parent / "flatfab")
SERVICE = {"FLATFAB_NAUTOBOT_NAME": "bench", "FLATFAB_NAUTOBOT_POSTGRES_PORT": "55452",
           "FLATFAB_NAUTOBOT_REDIS_PORT": "56402", "FLATFAB_NAUTOBOT_HTTP_PORT": "58102"}
URL = f"http://127.0.0.1:{SERVICE['FLATFAB_NAUTOBOT_HTTP_PORT']}"


def run(args: list[str], env: dict[str, str], cwd: Path = ROOT) -> tuple[float, str]:
    """Seconds taken and stdout; a failure ends the benchmark with what it printed."""
    started = time.perf_counter()
    proc = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    took = time.perf_counter() - started
    if proc.returncode not in (0, 1):  # `sot check` exits 1 when it finds disagreements
        sys.exit(f"{' '.join(args)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return round(took, 2), proc.stdout


def sot_module(module: str, *args: str, env: dict[str, str]) -> tuple[float, str]:
    return run([sys.executable, "-m", f"flatfab.sot.{module}", *args], env)


def project(work: Path, fabric: str) -> Path:
    """A project root with the fabric's intent and a source.yaml pointing at the service."""
    root = work / fabric
    shutil.copytree(ROOT / "intents" / fabric, root / "intents" / fabric)
    inventory = root / "inventory" / fabric
    inventory.mkdir(parents=True)
    (inventory / "source.yaml").write_text(
        f"nautobot:\n  url: {URL}\n  token_env: FLATFAB_BENCH_TOKEN\n"
        f"  filters: {{location: {fabric}}}\n", encoding="utf-8")
    return root


def bench(fabric: str, env: dict[str, str], work: Path) -> dict[str, object]:
    sot_module("server", "down", env=env)
    up_s, _ = sot_module("server", "up", env=env)
    try:
        _, token = sot_module("server", "token", env=env)
        seed_s, seeded = sot_module("seed", "--fabric", fabric, env=env)
        root = project(work, fabric)
        cli = {**env, "FLATFAB_BENCH_TOKEN": token.strip()}

        def flatfab(*args: str) -> tuple[float, str]:
            return run([FLATFAB, "--root", str(root), "--fabric", fabric, "sot", *args], cli)

        import_s, _ = flatfab("import")
        check_s, _ = flatfab("check")
        dry_s, dry = flatfab("sync", "--format", "json")
        write_s, _ = flatfab("sync", "--write", "--format", "json")
        again_s, again = flatfab("sync", "--write", "--format", "json")
        return {"fabric": fabric, "up_s": up_s, "seed_s": seed_s, "seeded": seeded.strip(),
                "import_s": import_s, "check_s": check_s, "sync_dry_s": dry_s,
                "sync_write_s": write_s, "changes": len(json.loads(dry)["changes"]),
                "sync_again_s": again_s,
                "changes_again": len(json.loads(again)["changes"])}
    finally:
        sot_module("server", "down", env=env)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fabric", action="append", help="intents/<fabric> (repeatable; "
                        "default lab and lab4x16)")
    parser.add_argument("--cold", action="store_true", help="time a first start (migrate)")
    args = parser.parse_args()
    env = {**os.environ, **SERVICE}
    env.pop("FLATFAB_NAUTOBOT_TOKEN", None)
    with tempfile.TemporaryDirectory() as work:
        if args.cold:
            cold = {**env, "FLATFAB_NAUTOBOT_CACHE": f"{work}/cache"}
            try:
                took, out = sot_module("server", "up", env=cold)
                print(json.dumps({"cold_up_s": took, "said": out.strip().splitlines()[-1:]}))
            finally:
                sot_module("server", "down", env=cold)
        for fabric in args.fabric or ["lab", "lab4x16"]:
            print(json.dumps(bench(fabric, env, Path(work))), flush=True)


if __name__ == "__main__":
    main()
