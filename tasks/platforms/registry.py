"""Every platform flatfab can render and collect; adding one is one line here."""

from __future__ import annotations

import importlib
from collections.abc import Iterator, MutableMapping

from flatfab.errors import InputError
from flatfab.platforms.base import Platform

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
    platform = importlib.import_module(f"flatfab.platforms.{name}").PLATFORM
    if not isinstance(platform, Platform) or platform.name != name:
        raise TypeError(f"tasks/platforms/{name}/: PLATFORM must be the {name!r} Platform")
    return platform


class _Platforms(MutableMapping[str, Platform]):
    """Every platform by name, each imported when first asked for: a run imports the
    platforms its fabric uses (a platform package pulls in its renderer, collector and
    vendor libraries), not all eight. Concurrent first lookups are safe: Python's import
    lock builds one PLATFORM, and both threads store that one. A platform set here (a
    test's) is known beside NAMES until deleted."""

    def __init__(self) -> None:
        self._known: dict[str, Platform] = {}

    def __getitem__(self, name: str) -> Platform:
        platform = self._known.get(name)
        if platform is None:
            if name not in NAMES:
                raise KeyError(name)
            platform = self._known[name] = _load(name)
        return platform

    def __setitem__(self, name: str, platform: Platform) -> None:
        self._known[name] = platform

    def __delitem__(self, name: str) -> None:
        del self._known[name]  # one of NAMES is imported again when next asked for

    def __contains__(self, name: object) -> bool:
        return name in NAMES or name in self._known

    def __iter__(self) -> Iterator[str]:
        return iter((*NAMES, *(n for n in self._known if n not in NAMES)))

    def __len__(self) -> int:
        return sum(1 for _ in self)


PLATFORMS: MutableMapping[str, Platform] = _Platforms()


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
