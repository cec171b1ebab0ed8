"""Small pieces every switch collector needs when turning device output into DeviceState."""

from __future__ import annotations

from tasks.model.state import DEFAULT_VRF, DeviceState
from tasks.platforms.base import InterfaceNames


def tenant(names: InterfaceNames, vrf: str | None) -> str:
    """The tenant a device VRF name stands for (the default VRF stays itself)."""
    if not vrf or vrf == DEFAULT_VRF:
        return DEFAULT_VRF
    return names.tenant_of(vrf) or vrf


def identity_from_bgp(device: DeviceState) -> None:
    """The device's AS number and router id are those of its default BGP instance."""
    default = device.bgp.get(DEFAULT_VRF)
    device.asn = default.asn if default else None
    device.router_id = default.router_id if default else None
