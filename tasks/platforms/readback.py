"""Small pieces every switch collector needs when turning device output into DeviceState."""

from __future__ import annotations

from typing import Any

from tasks.asn import read_asn
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


def asn_of(device: DeviceState, value: Any, where: str) -> int | None:
    """An AS number a device reported, in any notation (asplain, asdot, asdot+).

    None when the device gave none, when it gave AS 0 (reserved, RFC 7607: FRR shows it for
    a peer whose AS it has not learned yet), and when the value is unreadable: that one
    is recorded in the device's errors with what it was, never silently dropped.
    """
    asn = read_asn(value)
    if asn is None and value is not None and value != "":
        device.errors.append(f"{where}: AS number {value!r} is not asplain or asdot")
    return asn or None
