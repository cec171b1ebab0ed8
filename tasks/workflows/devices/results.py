"""What a Nornir run per device came to, and the device subsets the workflows run on."""

from __future__ import annotations

from typing import Any

from nornir.core import Nornir
from nornir.core.task import AggregatedResult
from nornir.plugins.runners import ThreadedRunner

from flatfab.workflows.devices.progress import RichProgress


def first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def host_values(results: AggregatedResult, names: list[str]) -> dict[str, tuple[bool, Any]]:
    """name -> (ok, the task's result or the first line of its error), for every name
    asked for (one the run never reached is "not in the inventory")."""
    out: dict[str, tuple[bool, Any]] = {}
    for name in names:
        multi = results.get(name)
        if multi is None:
            out[name] = (False, "not in the inventory")
        elif multi.failed:
            exc = multi[0].exception
            out[name] = (False, first_line(exc) if exc else str(multi[0].result))
        else:
            out[name] = (True, multi[0].result)
    return out


def subset(nornir: Nornir, names: list[str], workers: int,
           progress: RichProgress | None = None) -> Nornir:
    """The named devices, worked on `workers` at a time, with progress if given."""
    wanted = set(names)
    sub = nornir.filter(filter_func=lambda h: h.name in wanted).with_runner(
        ThreadedRunner(num_workers=max(1, min(workers, len(names)))))
    return sub.with_processors([progress]) if progress else sub
