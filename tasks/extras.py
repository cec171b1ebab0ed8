"""The optional parts of flatfab (pyproject.toml's extras) and the one line a command says
when the part it needs is not installed.

A command that needs an extra calls `require` before it imports anything of it, so a core
install names the missing extra instead of failing on an import.
"""

from __future__ import annotations

import importlib.util
from typing import Final

from flatfab.errors import FlatfabError

# extra -> the modules it installs that flatfab imports (all must be importable)
EXTRAS: Final[dict[str, tuple[str, ...]]] = {
    "telemetry": ("grpc", "pygnmi", "google.protobuf", "prometheus_client"),
    "distributed": ("celery", "redis"),
    "nautobot": ("nornir_nautobot", "pynautobot"),
    "nxos": ("nornir_scrapli", "scrapli", "scrapli_community"),
    "srlinux": ("napalm_srlinux",),
    "kubernetes": ("kubernetes",),
}


class MissingExtraError(FlatfabError):
    """A command needs an extra that is not installed."""

    def __init__(self, what: str, extra: str) -> None:
        super().__init__(f"{what} needs flatfab's {extra} extra, which is not installed: "
                         f"pip install 'flatfab[{extra}]'")
        self.extra = extra


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # a dotted name whose parent is missing
        return False


def installed(extra: str) -> bool:
    return all(_importable(m) for m in EXTRAS[extra])


def require(extra: str, what: str) -> None:
    """Raise MissingExtraError naming `what` (a command, a platform) unless `extra` is here."""
    if not installed(extra):
        raise MissingExtraError(what, extra)
