"""Read an frr switch into observed DeviceState through its NAPALM driver (read-only)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, TypeVar, runtime_checkable

from tasks.model.state import (
    DEFAULT_VRF,
    BgpInstance,
    BgpPeer,
    DeviceState,
    Endpoint,
    IfKind,
    Interface,
    NextHop,
    Probe,
    Route,
)
from tasks.platforms import configdb
from tasks.platforms.base import DeviceDriver
from tasks.platforms.frr import kernel_qos
from tasks.platforms.readback import identity_from_bgp


@runtime_checkable
class FrrReader(Protocol):
    """The read side of the frr NAPALM driver (NAPALM getters plus two of its own)."""

    def get_interfaces(self) -> dict[str, dict[str, Any]]: ...
    def get_interfaces_ip(self) -> dict[str, dict[str, Any]]: ...
    def get_lldp_neighbors(self) -> dict[str, list[dict[str, str]]]: ...
    def get_bgp_neighbors(self) -> dict[str, dict[str, Any]]: ...
    def get_route_table(self) -> dict[str, dict[str, Any]]: ...
    def get_lossless(self) -> dict[str, Any]: ...


def reader(driver: DeviceDriver) -> FrrReader:
    if not isinstance(driver, FrrReader):
        raise TypeError(f"the frr platform needs its own driver, not {type(driver).__name__}")
    return driver


def _kind(name: str, planned: DeviceState, master: str) -> IfKind:
    if name in planned.interfaces:
        return planned.interfaces[name].kind
    if name == "lo":
        return IfKind.LOOPBACK
    return IfKind.HOST_PORT if master else IfKind.OTHER


T = TypeVar("T")


def _read(device: DeviceState, what: str, getter: Callable[[], T], empty: T) -> T:
    """One getter; a failing daemon (bgpd down, lldpd gone) is recorded, not fatal.

    Losing the connection itself is fatal: the device is then unreachable.
    """
    # napalm is imported here, not at module level: plan/render/check never need it
    from napalm.base.exceptions import ConnectionException  # noqa: PLC0415

    try:
        return getter()
    except ConnectionException:
        raise
    except Exception as exc:  # noqa: BLE001 - becomes part of the observed state
        text = str(exc).strip().splitlines()
        device.errors.append(f"{what}: {text[-1] if text else type(exc).__name__}")
        return empty


def collect(driver: FrrReader, planned: DeviceState, probes: list[Probe]) -> DeviceState:
    device = DeviceState(name=planned.name, role=planned.role, platform=planned.platform,
                         routes={})
    interfaces: dict[str, Any] = driver.get_interfaces()
    addresses: dict[str, Any] = driver.get_interfaces_ip()
    lldp: dict[str, Any] = _read(device, "lldp", driver.get_lldp_neighbors, {})
    bgp: dict[str, Any] = _read(device, "bgp", driver.get_bgp_neighbors, {})
    rib: dict[str, Any] = _read(device, "routes", driver.get_route_table, {})
    names = set(interfaces) | {"lo"}
    for name in sorted(names):
        info = interfaces.get(name, {"mtu": None, "is_up": True, "vrf": "", "master": "",
                                     "speed": -1.0})
        ipv4 = addresses.get(name, {}).get("ipv4", {})
        neighbours = lldp.get(name, [])
        peer = (Endpoint(device=neighbours[0]["hostname"], port=neighbours[0]["port"])
                if neighbours and neighbours[0]["hostname"] else None)
        speed = info.get("speed", -1.0)
        device.interfaces[name] = Interface(
            name=name, kind=_kind(name, planned, info.get("master", "")),
            vrf=info.get("vrf") or DEFAULT_VRF, mtu=info.get("mtu"), up=info.get("is_up"),
            addresses=sorted(f"{a}/{v['prefix_length']}" for a, v in ipv4.items()
                             if not a.startswith("127.")),
            bridge=info.get("master") or None,
            parent=name.split(".")[0] if "." in name else None,
            speed_mbps=int(speed) if speed and speed > 0 else None, peer=peer)
        if name == "lo" and device.interfaces[name].addresses:
            device.loopback = device.interfaces[name].addresses[0]
    for vrf_key, vrf in bgp.items():
        vrf_name = DEFAULT_VRF if vrf_key == "global" else vrf_key
        peers = vrf.get("peers", {})
        local_as = next((int(p["local_as"]) for p in peers.values()), None)
        instance = BgpInstance(vrf=vrf_name, asn=local_as, router_id=vrf.get("router_id", ""))
        for key, info in peers.items():
            is_interface = key in interfaces
            instance.peers[key] = BgpPeer(
                key=key, interface=key if is_interface else None,
                address=None if is_interface else key, remote_asn=info.get("remote_as"),
                peer_device=info.get("remote_id") or None, state=info.get("state"),
                prefixes_received=info["address_family"]["ipv4"]["received_prefixes"])
        device.bgp[vrf_name] = instance
        if vrf_name != DEFAULT_VRF:
            device.vrfs[vrf_name] = planned.vrfs.get(vrf_name, 0)
    identity_from_bgp(device)
    assert device.routes is not None
    for vrf_name, table in rib.items():
        routes: dict[str, Route] = {}
        for prefix, entries in table.items():
            for entry in entries:
                if not entry.get("selected"):
                    continue
                hops = [NextHop(interface=h.get("interfaceName"), address=h.get("ip"))
                        for h in entry.get("nexthops", []) if h.get("fib")]
                routes[prefix] = Route(prefix=prefix, protocol=entry.get("protocol", ""),
                                       nexthops=hops)
        device.routes[vrf_name] = routes
    if planned.qos is not None:
        lossless: dict[str, Any] = _read(device, "lossless", driver.get_lossless, {})
        if lossless:
            _add_lossless(device, lossless)
    return device


def _add_lossless(device: DeviceState, lossless: dict[str, Any]) -> None:
    """Virtual ASIC tables for what only an ASIC enforces; the kernel's own DSCP map."""
    try:
        device.qos, ports = configdb.from_config_db(lossless["config_db"], virtual=True)
    except configdb.ConfigDbError as exc:
        device.errors.append(f"lossless: {exc}")
        return
    kernel: dict[str, dict[str, str]] = lossless.get("kernel", {})
    for name, port in ports.items():
        iface = device.interfaces.get(name)
        if iface is None:
            continue
        row = kernel.get(name)
        # what classifies traffic in the lab is tc, so the DSCP map comes from the kernel;
        # a port without flatfab queues classifies nothing: everything lands in TC 0
        table = kernel_qos.dscp_to_tc(row) if row else [0] * 64
        iface.qos = port.model_copy(update={"maps": port.maps.model_copy(
            update={"dscp_to_tc": table})})
        for sub in device.interfaces.values():
            if sub.parent == name and sub.name != name:
                sub_row = kernel.get(sub.name)
                sub.qos = port.model_copy(update={"maps": port.maps.model_copy(update={
                    "dscp_to_tc": kernel_qos.dscp_to_tc(sub_row) if sub_row else [0] * 64})})
