"""A fleet served in its own process (`python -m tests.doubles.fleet`), and flatfab's CLI run
in this process against it, as the fleet tests use them."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support.flatfab import Run, in_process
from tests.support.paths import ROOT

PASSWORD = "fleet-tests-only"  # FLATFAB_PASSWORD of the fleet and of flatfab: eos over eAPI
START_S = 90.0  # the fleet imports flatfab and plans before it listens: slow on a busy box


@dataclass
class Served:
    fabric: str
    root: Path  # the project root whose intents/<fabric> the fleet serves
    folder: Path
    ready: dict[str, Any]

    @property
    def inventory(self) -> Path:
        return self.folder / "inventory"


def intent_copy(name: str, root: Path, edits: dict[str, tuple[str, str]]) -> Path:
    """intents/<name> copied to `root`/intents/<name>, with `file: (old, new)` text
    replacements."""
    target = root / "intents" / name
    shutil.copytree(ROOT / "intents" / name, target)
    for file, (old, new) in edits.items():
        text = (target / file).read_text(encoding="utf-8")
        assert old in text, f"{file}: {old!r} not found"
        (target / file).write_text(text.replace(old, new), encoding="utf-8")
    return target


@contextlib.contextmanager
def served(intent: Path, folder: Path, *args: str) -> Iterator[Served]:
    """The fleet of `intent` in its own process until the block ends (SIGTERM, then wait)."""
    folder.mkdir(parents=True, exist_ok=True)
    log = (folder / "fleet.log").open("wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.doubles.fleet", "--intent", str(intent), "--dir",
         str(folder), *args], cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
        env={**os.environ, "FLATFAB_PASSWORD": PASSWORD})
    try:
        deadline = time.monotonic() + START_S
        while not (folder / "ready.json").exists():
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the fleet did not start: "
                                   f"{(folder / 'fleet.log').read_text(errors='replace')}")
            time.sleep(0.1)
        ready = json.loads((folder / "ready.json").read_text())
        yield Served(intent.name, intent.parent.parent, folder, ready)
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def flatfab(fleet: Served, *argv: str) -> Run:
    """One flatfab command in this process against `fleet` (as the console script runs it),
    with FLATFAB_PASSWORD set and the environment as it was afterwards (watch loads the
    fleet's gNMI credentials into it, from the fleet's env_file alone)."""
    return in_process("--root", str(fleet.root), "--fabric", fleet.fabric,
                      "--inventory", str(fleet.inventory),
                      "--state-dir", str(fleet.folder / "state"), *argv,
                      env={"FLATFAB_PASSWORD": PASSWORD},
                      unset=("FLATFAB_GNMI_USERNAME", "FLATFAB_GNMI_PASSWORD"))
