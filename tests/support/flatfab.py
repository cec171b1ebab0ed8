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


def in_process(*argv: str, env: dict[str, str] | None = None,
               unset: tuple[str, ...] = ()) -> Run:
    """One flatfab command in this process, as the console script runs it (its exit code,
    stdout and stderr): much cheaper than a subprocess where a test runs many. `env` set and
    `unset` taken out for the run, the environment as it was after."""
    import contextlib  # noqa: PLC0415 - only the in-process runs need these
    import io  # noqa: PLC0415

    from flatfab.cli.app import main  # noqa: PLC0415

    saved, old_argv = dict(os.environ), sys.argv
    os.environ.update(env or {})
    for name in unset:
        os.environ.pop(name, None)
    sys.argv = ["flatfab", *argv]
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            main()
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 2
    finally:
        sys.argv = old_argv
        os.environ.clear()
        os.environ.update(saved)
    return Run(code, out.getvalue(), err.getvalue())
