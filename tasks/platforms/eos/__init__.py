"""Platform `eos`: Arista EOS switches, rendered through an AVD-shaped structured config."""

from __future__ import annotations

from pathlib import Path

from tasks.model.state import DeviceState, Probe
from tasks.platforms.base import DeviceDriver, Platform
from tasks.platforms.eos.collect import collect
from tasks.platforms.eos.render import render
from tasks.platforms.eos.sections import split_sections, without_comments


class EosPlatform(Platform):
    def render(self, device: DeviceState) -> str:
        return render(device, self.facts)

    def sections(self, config: str) -> dict[str, list[str]]:
        return split_sections(config)

    def drift_texts(self, driver: DeviceDriver, intended: str) -> tuple[str, str]:
        running = driver.get_config(retrieve="running")["running"]
        return without_comments(running), without_comments(intended)

    def collect(self, driver: DeviceDriver, planned: DeviceState,
                probes: list[Probe]) -> DeviceState:
        return collect(driver, planned, self.facts, self.names)


PLATFORM = EosPlatform(Path(__file__).with_name("platform.yaml"))
