"""The plain Nornir inventory (SimpleInventory) that reaches a served fleet: every device at
127.0.0.1, its username its own name (which device the server answers as).

Each platform gets its connection options as its platform.yaml plugin and `lab_connection`
spell them: frr and linux_host the NAPALM options in the defaults (the fleet's SSH port, key
and known_hosts); sonic netmiko's (key, `ssh_strict` with the fleet's known_hosts) with the
SSH port; eos NAPALM's eos driver with `transport: http` and the eAPI port (its password
comes from the environment or a prompt, each device being its own credential set: never
written here). With gNMI, each switch has its
`connection_options.gnmi` (port, the fleet's CA and credentials file)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from flatfab.model.state import FabricState, Role
from flatfab.platforms.registry import get as get_platform
from flatfab.workflows.devices.inventory import write
from flatfab.yamlio import dump_yaml
from tests.doubles.fleet.server import Keys

HEADER = "# Written for a simulated fleet (tests/doubles/fleet); regenerated when it starts.\n"


def fleet_inventory(plan: FabricState, keys: Keys, port: int, *, timeout: float = 30.0,
                    eapi_port: int | None = None,
                    gnmi: dict[str, dict[str, Any]] | None = None) -> dict[str, str]:
    """File name -> content (deterministic for the same ports and key folder)."""
    options = {"key_file": str(keys.client_key), "known_hosts": str(keys.known_hosts),
               "port": port, "timeout": timeout}
    hosts: dict[str, Any] = {}
    for name, device in plan.devices.items():
        entry: dict[str, Any] = {"hostname": "127.0.0.1", "username": name,
                                 "platform": device.platform,
                                 "groups": [f"{device.role.value}s"],
                                 "data": {"role": device.role.value}}
        connection = _connection(device.platform, keys, port, eapi_port)
        if gnmi and name in gnmi:
            connection["gnmi"] = gnmi[name]
        if connection:
            entry["connection_options"] = connection
        hosts[name] = entry
    roles = [*(["superspine"] if plan.of_role(Role.SUPERSPINE) else []), "spine", "leaf", "host"]
    groups = {f"{role}s": {"data": {"role": role}} for role in roles}
    defaults = {"connection_options": {"napalm": {"extras": {"optional_args": options}}}}
    return {"hosts.yaml": HEADER + dump_yaml(hosts), "groups.yaml": HEADER + dump_yaml(groups),
            "defaults.yaml": HEADER + dump_yaml(defaults)}


def _connection(platform: str, keys: Keys, port: int, eapi_port: int | None) -> dict[str, Any]:
    """A host's own connection options (none: the NAPALM defaults reach it)."""
    if platform not in ("sonic", "eos"):
        return {}
    spelt = get_platform(platform).lab_connection(key_file=keys.client_key,
                                                  known_hosts=keys.known_hosts)
    if platform == "sonic":
        spelt["netmiko"]["port"] = port
        return spelt
    if eapi_port is None:
        raise ValueError("an eos device needs the fleet's eAPI port")
    spelt["napalm"]["extras"]["optional_args"].update({"transport": "http", "port": eapi_port})
    return spelt


def write_inventory(directory: Path, plan: FabricState, keys: Keys, port: int, *,
                    eapi_port: int | None = None,
                    gnmi: dict[str, dict[str, Any]] | None = None) -> None:
    write(directory, fleet_inventory(plan, keys, port, eapi_port=eapi_port, gnmi=gnmi))
