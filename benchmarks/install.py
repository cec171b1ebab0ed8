"""What installing flatfab costs, and how fast the installed command starts: one JSON line
per install (the core alone, then each extra), then one per timed command.

    python benchmarks/install.py [--extras telemetry distributed ...] [--repeat 5]

Each install is a fresh venv of Debian's Python with the wheel built from this checkout and
its dependencies pinned by constraints.txt, as `pip install flatfab[extra]` gives an
operator. `packages` counts the distributions pip installed (pip and setuptools not
counted), `size_mb` is what they take on disk (site-packages and the venv's scripts).
The timed commands run from the core install in a project `flatfab init` made outside the
checkout: `flatfab --help` and `flatfab plan` (the lab example); the median and the fastest
of `--repeat` runs, wall-clock seconds on this machine.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PYTHON = "/usr/bin/python3"
EXTRAS = ["telemetry", "distributed", "nautobot", "nxos", "srlinux", "all"]
NOT_COUNTED = {"pip", "setuptools"}


def _run(argv: list[str], **kwargs: object) -> str:
    return subprocess.run(argv, check=True, capture_output=True, text=True,
                          **kwargs).stdout  # type: ignore[call-overload]


def _size_mb(venv: Path) -> float:
    total = sum(p.stat().st_size for p in venv.rglob("*") if p.is_file() and not p.is_symlink()
                and "/pip/" not in str(p) and "/setuptools/" not in str(p))
    return round(total / 1e6, 1)


def install(wheel: Path, extra: str | None, where: Path) -> dict[str, object]:
    venv = where / (extra or "core")
    _run([PYTHON, "-m", "venv", str(venv)])
    target = f"{wheel}[{extra}]" if extra else str(wheel)
    _run([str(venv / "bin" / "pip"), "install", "-q", "--disable-pip-version-check",
          "--constraint", str(ROOT / "constraints.txt"), target])
    listed = json.loads(_run([str(venv / "bin" / "pip"), "list", "--format", "json",
                              "--disable-pip-version-check"]))
    names = sorted(p["name"] for p in listed if p["name"].lower() not in NOT_COUNTED)
    return {"install": extra or "core", "packages": len(names), "size_mb": _size_mb(venv),
            "venv": str(venv)}


def timed(argv: list[str], cwd: Path, repeat: int) -> dict[str, object]:
    seconds = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(argv, cwd=cwd, check=True, capture_output=True)
        seconds.append(time.perf_counter() - start)
    return {"command": " ".join(Path(argv[0]).name if i == 0 else a
                                for i, a in enumerate(argv)),
            "median_s": round(statistics.median(seconds), 3),
            "fastest_s": round(min(seconds), 3), "runs": repeat}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--extras", nargs="*", default=EXTRAS)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="flatfab-install-") as tmp:
        where = Path(tmp)
        _run([sys.executable, "-m", "build", "--wheel", "--outdir", str(where / "dist"),
              str(ROOT)])
        wheel = next((where / "dist").glob("flatfab-*.whl"))
        core = install(wheel, None, where)
        print(json.dumps({k: v for k, v in core.items() if k != "venv"}), flush=True)
        for extra in args.extras:
            row = install(wheel, extra, where)
            print(json.dumps({k: v for k, v in row.items() if k != "venv"}), flush=True)
        flatfab = str(Path(str(core["venv"])) / "bin" / "flatfab")
        _run([flatfab, "init", str(where / "project")])
        for argv in ([flatfab, "--help"], [flatfab, "plan"]):
            print(json.dumps(timed(argv, where / "project", args.repeat)), flush=True)


if __name__ == "__main__":
    main()
