"""Platform `linux_host`: GPU servers (ConnectX NICs) and the lab's hosts, over SSH."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from flatfab.model.physical import PortPhysical
from flatfab.model.state import DeviceState, Probe
from flatfab.platforms.base import DeviceDriver, EngineRun, InventoryOption, Platform
from flatfab.platforms.linux_host import acceptance
from flatfab.platforms.linux_host.collect import collect, physical, reader
from flatfab.platforms.linux_host.render import render
from flatfab.platforms.sections import by_first_word
from flatfab.platforms.shell_options import ARGS, ssh_driver_options


class LinuxHostPlatform(Platform):
    def render(self, device: DeviceState) -> str:
        return render(device)

    def sections(self, config: str) -> dict[str, list[str]]:
        return by_first_word(config)

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
                InventoryOption(f"{ARGS}.nic_backend", "connectx",
                                "the NICs' lossless settings: lab (default: nftables marking "
                                "and a virtual NIC, the embedded lab's), connectx (mlnx_qos, "
                                "sysfs ECN and RDMA-CM on NVIDIA ConnectX NICs)"),
                InventoryOption(f"{ARGS}.rdma_devices", {"eth1": "mlx5_0"},
                                "with connectx: each fabric NIC's RDMA device (`rdma link`); "
                                "nccl.conf's NCCL_IB_HCA lists them (left out without)"),
                InventoryOption(f"{ARGS}.nccl_conf", "/etc/nccl.conf",
                                "the nccl.conf flatfab writes with hosts.yaml `nccl.manage` "
                                "(default: /etc/nccl.conf with connectx, <state_dir>/nccl.conf "
                                "with the lab backend)"))

    def send_test_traffic(self, driver: DeviceDriver, address: str, sport_base: int,
                          flows: int, data_packets: int, source: str | None = None) -> int:
        """`source`: the address to send from (a multi-NIC server's NIC); None: the host's
        choice (the main table's route)."""
        return reader(driver).send_roce(address, sport_base, flows, data_packets,
                                        source=source)

    def nic_counters(self, driver: DeviceDriver) -> dict[str, dict[str, int]]:
        return reader(driver).read_nic_counters()

    def probe(self, driver: DeviceDriver,
              targets: list[tuple[str, int, bool]]) -> list[dict[str, Any]]:
        return reader(driver).probe(targets)

    def run_engine(self, driver: DeviceDriver, argv: list[str], timeout_s: float, *,
                   background: bool = False, listens_on: int | None = None) -> EngineRun:
        return acceptance.run_engine(driver, argv, timeout_s, background=background,
                                     listens_on=listens_on)

    def stop_engine(self, driver: DeviceDriver, handle: str, wait_s: float) -> EngineRun:
        return acceptance.stop_engine(driver, handle, wait_s)

    def rdma_side(self, driver: DeviceDriver, nic: str, address: str) -> tuple[str, int]:
        return acceptance.rdma_side(driver, nic, address)


PLATFORM = LinuxHostPlatform(Path(__file__).with_name("platform.yaml"))
