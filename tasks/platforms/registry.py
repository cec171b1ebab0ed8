"""Every platform flatfab can render and collect; adding one is one line here."""

from __future__ import annotations

import importlib

from tasks.errors import InputError
from tasks.platforms.base import Platform

# each names its package tasks/platforms/<name>/, whose PLATFORM is built (and its facts and
# capabilities checked) on import
NAMES = (
    "frr",
    "linux_host",
    "eos",
    "sonic",
    "nxos",
    "srlinux",
    "junos",
    "nvue",
)


def _load(name: str) -> Platform:
    platform = importlib.import_module(f"tasks.platforms.{name}").PLATFORM
    if not isinstance(platform, Platform) or platform.name != name:
        raise TypeError(f"tasks/platforms/{name}/: PLATFORM must be the {name!r} Platform")
    return platform


PLATFORMS: dict[str, Platform] = {name: _load(name) for name in NAMES}


def get(name: str) -> Platform:
    try:
        return PLATFORMS[name]
    except KeyError:
        raise InputError.single("platform", name, f"unknown platform {name!r} "
                                f"({', '.join(sorted(PLATFORMS))})") from None


def network_drivers() -> dict[str, str]:
    """Source-of-truth network driver -> flatfab platform (each platform's data file)."""
    return {p.facts.source_of_truth.network_driver: p.name for p in PLATFORMS.values()}


def loopback_names() -> tuple[str, ...]:
    """Every switch platform's name of its loopback interface (the one holding the
    router id), sorted: how a source of truth's interfaces are told apart."""
    return tuple(sorted({p.facts.naming.loopback for p in PLATFORMS.values()
                         if p.facts.naming is not None}))
