"""Running host commands for the lab runtime: one place for errors, batching and root checks."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

from flatfab.errors import FlatfabError


class LabError(FlatfabError):
    """The lab could not be realized or torn down."""


def require_root(action: str) -> None:
    if os.geteuid() != 0:
        raise LabError(f"flatfab lab {action} needs root (network namespaces, mounts, users); "
                       "run it as root or with sudo")


def require_commands(commands: Sequence[str]) -> None:
    missing = [c for c in commands if shutil.which(c) is None and not Path(c).exists()]
    if missing:
        raise LabError(f"missing on this machine: {', '.join(missing)} "
                       "(run `make deps` to install the lab's OS packages)")


def run(args: Sequence[str], *, stdin: str | None = None, check: bool = True,
        timeout: float = 60) -> subprocess.CompletedProcess[str]:
    try:
        proc = subprocess.run(list(args), input=stdin, capture_output=True, text=True,
                              timeout=timeout, check=False)
    except FileNotFoundError:
        raise LabError(f"command not found: {args[0]}") from None
    except subprocess.TimeoutExpired:
        raise LabError(f"timed out after {timeout:.0f} s: {' '.join(args)}") from None
    if check and proc.returncode != 0:
        detail = (proc.stderr or proc.stdout).strip().splitlines()
        raise LabError(f"{' '.join(args[:6])}{' ...' if len(args) > 6 else ''} failed: "
                       f"{detail[-1] if detail else f'exit {proc.returncode}'}")
    return proc


def ip_batch(lines: Sequence[str], *, netns: str | None = None, force: bool = False) -> None:
    """Run many iproute2 commands in one process (and one error report)."""
    if not lines:
        return
    args = ["ip"]
    if netns:
        args += ["-n", netns]
    if force:
        args.append("-force")
    run([*args, "-batch", "-"], stdin="\n".join(lines) + "\n", check=not force)
