"""Platform `eos`: Arista EOS switches, rendered through an AVD-shaped structured config."""

from __future__ import annotations

from pathlib import Path

from tasks.model.state import DeviceState, Probe
from tasks.platforms.base import DeviceDriver, NotSupportedError, Platform
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
        # reading EOS back (getters + JSON shows into DeviceState) is not written yet:
        # verify and audit refuse EOS devices rather than report an empty observed state
        raise NotSupportedError(f"platform {self.name}: {planned.name} cannot be collected "
                                "yet (no EOS collector)")


PLATFORM = EosPlatform(Path(__file__).with_name("platform.yaml"))
