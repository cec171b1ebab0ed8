"""Platform `srlinux`: Nokia SR Linux on 7220 IXR (JSON config over napalm-srlinux)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from tasks.model.state import DeviceState, Probe
from tasks.platforms.base import DeviceDriver, Platform
from tasks.platforms.srlinux.collect import collect
from tasks.platforms.srlinux.render import render
from tasks.platforms.srlinux.sections import normalized_running, split

# reads only: `info` (from state/running) and `show`, no pipes but `| as json`; never
# `/tools`, `enter`, `commit`, `set`, `delete` (SR Linux CLI guide)
_READ = re.compile(r"^\s*(show|info)(\s+from\s+(state|running))?\s[^;|]*(\|\s*as\s+json\s*)?$")


class SrlinuxPlatform(Platform):
    def render(self, device: DeviceState) -> str:
        return render(device, self.names)

    def sections(self, config: str) -> dict[str, list[str]]:
        return split(config)

    def drift_texts(self, driver: DeviceDriver, intended: str) -> tuple[str, str]:
        """Running (JSON of `/`) as the intended replaces, projected onto what they set."""
        running = str(driver.get_config(retrieve="running")["running"])
        return normalized_running(running, intended), intended

    def show_command(self, command: str) -> bool:
        return bool(_READ.match(command))

    def adapt(self, connection: Any, *, read_only: bool) -> DeviceDriver:
        """The NAPALM connection must be napalm-srlinux's driver (JSON-RPC): the rendered
        replaces are its input format, and revert_in is its commit confirmed."""
        from napalm_srlinux import (  # type: ignore[import-untyped]  # noqa: PLC0415
            NokiaSRLinuxDriver,  # napalm is heavy: imported when a connection opens
        )

        if not isinstance(connection, NokiaSRLinuxDriver):
            raise TypeError(f"platform srlinux needs NAPALM driver "
                            f"{self.facts.connection.driver!r} (napalm-srlinux), not "
                            f"{type(connection).__name__}")
        return super().adapt(connection, read_only=read_only)

    def collect(self, driver: DeviceDriver, planned: DeviceState,
                probes: list[Probe]) -> DeviceState:
        return collect(driver, planned, self.names)


PLATFORM = SrlinuxPlatform(Path(__file__).with_name("platform.yaml"))
