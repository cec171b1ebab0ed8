"""How the seed spells a plan in Nautobot's vocabulary, the reverse of what the reader expects.

Role names are the inverse of source.py's DEFAULT_ROLES, and platforms are spelt by each
platform's own data file (`source_of_truth`: network driver, manufacturer, device type, NAPALM
driver), so `flatfab sot import/check` read a seeded Nautobot without a mapping of their own.
What the reader does not look at is decided here: role colours and interface types.
"""

from __future__ import annotations

from flatfab.model.state import DeviceState
from flatfab.sot.importer import role_key
from flatfab.sot.source import DEFAULT_ROLES

# flatfab role (source.yaml's right-hand side) -> Nautobot role name
ROLE_NAMES: dict[str, str] = {flatfab: name for name, flatfab in DEFAULT_ROLES.items()}
ROLE_COLORS: dict[str, str] = {"super-spine": "673ab7", "spine": "3f51b5", "leaf": "009688",
                               "gpu-host": "9e9e9e", "storage-host": "795548"}

# Nautobot interface types of a physical port, by planned speed (Mb/s)
PORT_TYPES: dict[int, str] = {
    1_000: "1000base-t",
    10_000: "10gbase-x-sfpp",
    25_000: "25gbase-x-sfp28",
    40_000: "40gbase-x-qsfpp",
    50_000: "50gbase-x-sfp56",
    100_000: "100gbase-x-qsfp28",
    200_000: "200gbase-x-qsfp56",
    400_000: "400gbase-x-qsfpdd",
    800_000: "800gbase-x-qsfpdd",
}
LOOPBACK_TYPE = "virtual"
MGMT_TYPE = "1000base-t"
MGMT_INTERFACE = "eth0"  # where the lab's nodes have their management address


def role_name(device: DeviceState) -> str:
    """The Nautobot role the seed and `sot sync --create` give a planned device."""
    return ROLE_NAMES[role_key(device)]


def port_type(speed_mbps: int | None) -> str:
    return PORT_TYPES.get(speed_mbps or 0, "other")
