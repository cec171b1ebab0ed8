"""Every platform flatfab can render and collect; adding one is one line here."""

from __future__ import annotations

from tasks.errors import InputError
from tasks.platforms.base import Platform
from tasks.platforms.eos import PLATFORM as EOS
from tasks.platforms.frr import PLATFORM as FRR
from tasks.platforms.linux_host import PLATFORM as LINUX_HOST
from tasks.platforms.nvue import PLATFORM as NVUE
from tasks.platforms.sonic import PLATFORM as SONIC

PLATFORMS: dict[str, Platform] = {p.name: p for p in (FRR, LINUX_HOST, EOS, SONIC, NVUE)}


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
