"""Platform `acme`: Acme NOS, a fictional switch OS; flatfab finds it through this package's
entry point (`acme = acme_platform:PLATFORM` in the group `flatfab.platforms`)."""

from __future__ import annotations

from operator import attrgetter
from pathlib import Path

from acme_platform.collect import collect
from flatfab.model.state import DeviceState, Probe
from flatfab.platforms.base import DeviceDriver, Platform
from flatfab.platforms.names import sort_interfaces
from flatfab.platforms.sections import by_header
from flatfab.platforms.templating import environment


class AcmePlatform(Platform):
    def render(self, device: DeviceState) -> str:
        """The whole config: deterministic, in the sections the data file names."""
        names = sort_interfaces(list(device.interfaces))
        template = environment(__name__).get_template("acme.conf.j2")
        return template.render(device=device,
                               interfaces=[device.interfaces[n] for n in names],
                               bgp=sorted(device.bgp.values(), key=attrgetter("vrf")))

    def sections(self, config: str) -> dict[str, list[str]]:
        return by_header(config)

    def collect(self, driver: DeviceDriver, planned: DeviceState,
                probes: list[Probe]) -> DeviceState:
        return collect(driver, planned, self.names)


PLATFORM = AcmePlatform(Path(__file__).with_name("platform.yaml"))
