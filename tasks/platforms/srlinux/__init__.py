"""Platform `srlinux`: Nokia SR Linux on 7220 IXR (JSON config over napalm-srlinux)."""

from __future__ import annotations

from pathlib import Path

from tasks.model.state import DeviceState, Probe
from tasks.platforms.base import DeviceDriver, Platform
from tasks.platforms.srlinux.render import render


class SrlinuxPlatform(Platform):
    def render(self, device: DeviceState) -> str:
        return render(device, self.names)

    def sections(self, config: str) -> dict[str, list[str]]:
        raise NotImplementedError

    def collect(self, driver: DeviceDriver, planned: DeviceState,
                probes: list[Probe]) -> DeviceState:
        raise NotImplementedError


PLATFORM = SrlinuxPlatform(Path(__file__).with_name("platform.yaml"))
