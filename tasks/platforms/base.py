"""What a platform provides: how to render a device's config and how to read it back."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tasks.model.state import DeviceState, Probe

# collect(driver, planned device, pings to send from it) -> observed device
Collector = Callable[[Any, DeviceState, list[Probe]], DeviceState]


@dataclass(frozen=True)
class Platform:
    name: str
    napalm_driver: str  # name for napalm.get_network_driver
    render: Callable[[DeviceState], str]
    collect: Collector
    commit_confirm: bool  # the driver honours commit_config(revert_in=...)
