"""Write every device's config to a directory, on all cores for large fabrics.

Rendering is pure CPU work per device. Worker processes are forked after planning, so they
share the plan copy-on-write, render an interleaved share of the devices (spines are the
heavy ones) and write the files themselves; only byte counts come back.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import stat
from pathlib import Path

from flatfab.errors import InputError
from flatfab.gcpause import gc_paused
from flatfab.model.state import FabricState
from flatfab.platforms.registry import get as get_platform
from flatfab.reports.html import standalone_diagram
from flatfab.workflows.commands.audit import planned_report

PARALLEL_FROM = 2000  # devices; below this a single process is faster than forking
_SHARED: FabricState | None = None  # the plan, inherited by forked workers


def _write(names: list[str], out: Path, plan: FabricState) -> int:
    written = 0
    with gc_paused():
        for name in names:
            device = plan.devices[name]
            data = get_platform(device.platform).render(device).encode()
            target = out / f"{name}.conf"
            if target.parent != out or name in {"", ".", ".."}:
                # device names are validated at load; a name that still reaches here is a bug
                raise ValueError(f"device name {name!r} would leave {out}")
            target.write_bytes(data)
            written += len(data)
    return written


def _worker(job: tuple[list[str], str]) -> int:
    assert _SHARED is not None
    return _write(job[0], Path(job[1]), _SHARED)


def refuse_taken(out: Path, names: list[str], option: str = "--out") -> None:
    """Refuse, before anything is written, when a device's file name is taken by something
    other than a regular file (a directory, a link, a FIFO): no half-written folder."""
    for name in names:
        target = out / f"{name}.conf"
        try:
            mode = os.lstat(target).st_mode
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise InputError.single(option, "", f"cannot write {target}: "
                                    f"{exc.strerror or exc}") from None
        if not stat.S_ISREG(mode):
            kind = ("a directory" if stat.S_ISDIR(mode) else "a symbolic link"
                    if stat.S_ISLNK(mode) else "not a regular file")
            raise InputError.single(option, "", f"{target} is {kind}; it is where {name}'s "
                                    "config goes (nothing was written)")


def write_configs(plan: FabricState, out: Path, names: list[str] | None = None,
                  workers: int | None = None) -> int:
    """Render `names` (default: every device) into out/<device>.conf; returns bytes written."""
    global _SHARED  # noqa: PLW0603 - handed to forked workers without pickling the plan
    chosen = list(plan.devices) if names is None else names
    out.mkdir(parents=True, exist_ok=True)
    refuse_taken(out, chosen)
    count = workers if workers is not None else (os.cpu_count() or 1)
    if count <= 1 or len(chosen) < PARALLEL_FROM or "fork" not in \
            multiprocessing.get_all_start_methods():
        return _write(chosen, out, plan)
    _SHARED = plan
    # frozen objects are never scanned by a collector, so the workers do not copy the pages
    # of a plan they only read
    gc.freeze()
    try:
        context = multiprocessing.get_context("fork")
        with context.Pool(count) as pool:
            return sum(pool.map(_worker, [(chosen[i::count], str(out)) for i in range(count)]))
    finally:
        gc.unfreeze()
        _SHARED = None


def write_diagram(plan: FabricState, target: Path, option: str = "--diagram") -> None:
    """The planned fabric's diagram (the audit report's, every device clean) as SVG."""
    folder = target.parent if str(target.parent) else Path()
    if target.is_dir() or (target.exists() and not target.is_file()):
        raise InputError.single(option, "", f"{target} exists and is not a regular file")
    if not folder.is_dir():
        raise InputError.single(option, "", f"{folder} is not a directory")
    try:
        target.write_text(standalone_diagram(planned_report(plan)), encoding="utf-8")
    except OSError as exc:
        raise InputError.single(option, "", f"cannot write {target}: "
                                f"{exc.strerror or exc}") from None
