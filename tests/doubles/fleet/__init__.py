"""A simulated fleet: every device of a planned fabric answering flatfab's drivers, from one
process on 127.0.0.1 (test equipment for the fleet benchmark and the distributed tests).

Devices are made on first use from the plan: frr switches and Linux hosts answer their
drivers' shell commands (tests/doubles/fleet/frr.py, linux_host.py over the same FakeShell
batches as the platform doubles), SONiC through the stateful SonicDouble (sonic.py), EOS
through the EosDouble (eapi.py); `server.py` serves SSH (exec requests; SONiC's interactive
shell), `eapi.py` eAPI, `gnmi.py` every switch's gNMI target, and `inventory.py` writes the
plain Nornir inventory that reaches them. A clean fleet verifies clean; `faults.py` breaks
one device on purpose, and verify must name it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from flatfab.lab import hardware
from flatfab.model.state import FabricState
from tests.doubles.fleet.eapi import EosDevice
from tests.doubles.fleet.frr import FrrDevice
from tests.doubles.fleet.linux_host import Endpoint, HostDevice, endpoints
from tests.doubles.fleet.shell import Clock, ShellDevice
from tests.doubles.fleet.sonic import SonicDevice
from tests.doubles.frr_json import RouteText
from tests.doubles.rib import FabricRib

Device = ShellDevice[Any] | SonicDevice | EosDevice


@dataclass
class Fleet:
    """The devices of `plan`, made on first use; one converged RIB for all of them."""

    plan: FabricState
    clock: Clock = field(default_factory=Clock)
    factory: bool = False  # devices start factory-fresh (for a rollout), not at intent
    devices: dict[str, Device] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.rib = FabricRib(self.plan)
        self.route_text = RouteText()
        self._reach: dict[str, Endpoint] | None = None
        self.started = time.time()  # when every link of the fleet came up

    def device(self, name: str) -> Device:
        found = self.devices.get(name)
        if found is not None:
            return found
        planned = self.plan.devices[name]
        made: Device
        if planned.platform == "sonic":
            made = SonicDevice(planned, self.plan, self.rib, self.clock)
        elif planned.platform == "eos":
            made = EosDevice(planned, self.plan, self.rib, self.clock)
        elif planned.platform == "frr":
            made = FrrDevice(planned, self.rib, self.clock, self.route_text)
        elif planned.platform == "linux_host":
            if self._reach is None:
                self._reach = endpoints(self.plan)
            made = HostDevice(planned, self._reach, self.clock)
        else:
            raise KeyError(f"the fleet does not simulate platform {planned.platform!r} "
                           f"({name})")
        made.start_factory = self.factory
        if isinstance(made, ShellDevice):
            phy = hardware.node_file(self.plan, name)
            made.phy = hardware.stamped(phy, self.started) if phy is not None else ""
        self.devices[name] = made
        return made
