"""Platform `frr`: Linux + FRR switches (the lab's switch, white boxes, Linux switchdev)."""

from __future__ import annotations

from pathlib import Path

from flatfab.model.physical import PortPhysical
from flatfab.model.state import DeviceState, Probe
from flatfab.platforms.base import DeviceDriver, InventoryOption, LabNodeSpec, Platform
from flatfab.platforms.frr.collect import collect, physical, reader
from flatfab.platforms.frr.lab import lab_node, netns_daemons
from flatfab.platforms.frr.render import render
from flatfab.platforms.sections import by_header
from flatfab.platforms.shell_options import ARGS, ssh_driver_options


class FrrPlatform(Platform):
    def render(self, device: DeviceState) -> str:
        return render(device)

    def sections(self, config: str) -> dict[str, list[str]]:
        return by_header(config)

    def drift_texts(self, driver: DeviceDriver, intended: str) -> tuple[str, str]:
        from flatfab.platforms.shell_driver import normalized_texts  # noqa: PLC0415 - napalm

        return normalized_texts(driver, intended)

    def collect(self, driver: DeviceDriver, planned: DeviceState,
                probes: list[Probe]) -> DeviceState:
        return collect(reader(driver), planned, probes)

    def collect_physical(self, driver: DeviceDriver,
                         planned: DeviceState) -> dict[str, PortPhysical]:
        return physical(reader(driver), planned)

    def inventory_options(self) -> tuple[InventoryOption, ...]:
        return (*ssh_driver_options(),
                InventoryOption(f"{ARGS}.qos_backend", "dcb",
                                "the lossless plane's backend: lab (default: tc queues and a "
                                "virtual ASIC, the embedded lab's), dcb (dcb, tc and devlink on "
                                "DCB-capable switchdev ports: real switches)"),
                InventoryOption(f"{ARGS}.devlink", "pci/0000:03:00.0",
                                "with dcb: the ASIC's devlink handle (`devlink dev show`)"))

    def lab_node(self, device: DeviceState) -> LabNodeSpec:
        lab = self.facts.lab
        assert lab.runtime is not None and lab.runtime.config_dir is not None
        return lab_node(device, lab.kind, lab.image, lab.runtime.config_dir)

    def embedded_config(self, name: str, text: str) -> str:
        return netns_daemons(text) if name == "daemons" else text

    def class_counters(self, driver: DeviceDriver) -> dict[str, dict[int, dict[str, int]]]:
        counters = reader(driver).get_lossless()["counters"]
        return {port: {int(tc): counts for tc, counts in per.items()}
                for port, per in counters.items()}


PLATFORM = FrrPlatform(Path(__file__).with_name("platform.yaml"))
