"""Every platform flatfab can render and collect; adding one is one line here."""

from __future__ import annotations

from tasks.errors import InputError
from tasks.platforms.base import Platform
from tasks.platforms.eos import PLATFORM as EOS
from tasks.platforms.frr import PLATFORM as FRR
from tasks.platforms.linux_host import PLATFORM as LINUX_HOST
from tasks.platforms.sonic import PLATFORM as SONIC

PLATFORMS: dict[str, Platform] = {p.name: p for p in (FRR, LINUX_HOST, EOS, SONIC)}


def get(name: str) -> Platform:
    try:
        return PLATFORMS[name]
    except KeyError:
        raise InputError.single("platform", name, f"unknown platform {name!r} "
                                f"({', '.join(sorted(PLATFORMS))})") from None
