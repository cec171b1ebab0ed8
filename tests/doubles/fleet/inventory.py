"""The plain Nornir inventory (SimpleInventory) that reaches a served fleet: every device at
127.0.0.1 on the fleet's port, its username its own name (which device the server answers
as), the fleet's key and known_hosts in the NAPALM options, as any Nornir script reads them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tasks.model.state import FabricState, Role
from tasks.workflows.inventory import write
from tasks.yamlio import dump_yaml
from tests.doubles.fleet.server import Keys

HEADER = "# Written for a simulated fleet (tests/doubles/fleet); regenerated when it starts.\n"


def fleet_inventory(plan: FabricState, keys: Keys, port: int, *,
                    timeout: float = 30.0) -> dict[str, str]:
    """File name -> content (deterministic for one port and key folder)."""
    options = {"key_file": str(keys.client_key), "known_hosts": str(keys.known_hosts),
               "port": port, "timeout": timeout}
    hosts: dict[str, Any] = {
        name: {"hostname": "127.0.0.1", "username": name, "platform": device.platform,
               "groups": [f"{device.role.value}s"], "data": {"role": device.role.value}}
        for name, device in plan.devices.items()}
    roles = [*(["superspine"] if plan.of_role(Role.SUPERSPINE) else []), "spine", "leaf", "host"]
    groups = {f"{role}s": {"data": {"role": role}} for role in roles}
    defaults = {"connection_options": {"napalm": {"extras": {"optional_args": options}}}}
    return {"hosts.yaml": HEADER + dump_yaml(hosts), "groups.yaml": HEADER + dump_yaml(groups),
            "defaults.yaml": HEADER + dump_yaml(defaults)}


def write_inventory(directory: Path, plan: FabricState, keys: Keys, port: int) -> None:
    write(directory, fleet_inventory(plan, keys, port))
