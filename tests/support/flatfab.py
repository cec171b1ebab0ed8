"""Running the real `flatfab` console script, as an operator would."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support.paths import ROOT

FLATFAB = str(Path(sys.executable).parent / "flatfab")


@dataclass
class Run:
    code: int
    stdout: str
    stderr: str

    def json(self) -> Any:
        return json.loads(self.stdout)


def flatfab(*args: str, cwd: Path = ROOT, timeout: float = 600,
            env: dict[str, str] | None = None) -> Run:
    """Run the installed console script, as an operator would (`env`: extra variables)."""
    proc = subprocess.run([FLATFAB, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, check=False,
                          env={**os.environ, **env} if env is not None else None)
    return Run(proc.returncode, proc.stdout, proc.stderr)
