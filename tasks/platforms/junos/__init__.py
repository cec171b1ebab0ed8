"""Platform `junos`: Juniper QFX5220/5230/5240 (Junos OS Evolved) through NAPALM's junos
driver (NETCONF): curly-brace config loaded with `load replace`, `commit confirmed`."""

from __future__ import annotations

from pathlib import Path

from tasks.model.state import DeviceState, Probe
from tasks.platforms.base import DeviceDriver, Platform
from tasks.platforms.junos.render import render
from tasks.platforms.junos.text import split_sections


class JunosPlatform(Platform):
    def render(self, device: DeviceState) -> str:
        return render(device, self.names)

    def sections(self, config: str) -> dict[str, list[str]]:
        return split_sections(config)

    def collect(self, driver: DeviceDriver, planned: DeviceState,
                probes: list[Probe]) -> DeviceState:
        raise NotImplementedError


PLATFORM = JunosPlatform(Path(__file__).with_name("platform.yaml"))
