"""Read an frr switch into observed DeviceState through its NAPALM driver (read-only)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, TypeVar, runtime_checkable

from tasks.asn import read_asn
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

# FRR's BGP summary of every VRF: the driver's get_bgp_neighbors reads it for NAPALM's model,
# collect through cli() for what that model lacks (the peer state: Active, Connect, ...)
BGP_SUMMARY = "show bgp vrf all summary json"


@runtime_checkable
class FrrReader(Protocol):
    """The read side of the frr NAPALM driver: NAPALM getters, vtysh shows through cli(),
    and three reads of its own (not NAPALM getters)."""

    def get_interfaces(self) -> dict[str, dict[str, Any]]: ...
    def get_interfaces_ip(self) -> dict[str, dict[str, Any]]: ...
    def get_lldp_neighbors(self) -> dict[str, list[dict[str, str]]]: ...
    def cli(self, commands: list[str], encoding: str = "text") -> dict[str, Any]: ...
    def get_interface_links(self) -> dict[str, dict[str, str]]: ...
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


def _bgp_summary(driver: FrrReader) -> dict[str, Any]:
    """FRR's own BGP summary of every VRF (peer state names, which NAPALM's PeerDict lacks)."""
    reply = driver.cli([BGP_SUMMARY], encoding="json")[BGP_SUMMARY]
    return reply if isinstance(reply, dict) else {}


def collect(driver: FrrReader, planned: DeviceState, probes: list[Probe]) -> DeviceState:
    device = DeviceState(name=planned.name, role=planned.role, platform=planned.platform,
                         routes={})
    interfaces: dict[str, Any] = driver.get_interfaces()
    links: dict[str, dict[str, str]] = driver.get_interface_links()
    addresses: dict[str, Any] = driver.get_interfaces_ip()
    lldp: dict[str, Any] = _read(device, "lldp", driver.get_lldp_neighbors, {})
    bgp: dict[str, Any] = _read(device, "bgp", lambda: _bgp_summary(driver), {})
    rib: dict[str, Any] = _read(device, "routes", driver.get_route_table, {})
    names = set(interfaces) | {"lo"}
    for name in sorted(names):
        info = interfaces.get(name, {"mtu": None, "is_up": True, "speed": -1.0})
        link = links.get(name, {})
        master = link.get("master", "")
        ipv4 = addresses.get(name, {}).get("ipv4", {})
        neighbours = lldp.get(name, [])
        peer = (Endpoint(device=neighbours[0]["hostname"], port=neighbours[0]["port"])
                if neighbours and neighbours[0]["hostname"] else None)
        speed = info.get("speed", -1.0)
        device.interfaces[name] = Interface(
            name=name, kind=_kind(name, planned, master),
            vrf=link.get("vrf") or DEFAULT_VRF, mtu=info.get("mtu"), up=info.get("is_up"),
            addresses=sorted(f"{a}/{v['prefix_length']}" for a, v in ipv4.items()
                             if not a.startswith("127.")),
            bridge=master or None,
            parent=name.split(".")[0] if "." in name else None,
            speed_mbps=int(speed) if speed and speed > 0 else None, peer=peer)
        if name == "lo" and device.interfaces[name].addresses:
            device.loopback = device.interfaces[name].addresses[0]
    for vrf_key, vrf in bgp.items():
        vrf_name = vrf_key  # FRR names the default VRF `default`, as flatfab does
        unicast = vrf.get("ipv4Unicast", vrf) if isinstance(vrf, dict) else {}
        peers: dict[str, Any] = unicast.get("peers") or {}
        instance = BgpInstance(vrf=vrf_name, asn=read_asn(unicast.get("as")),
                               router_id=str(unicast.get("routerId", "")))
        for key, info in peers.items():
            is_interface = key in interfaces
            instance.peers[key] = BgpPeer(
                key=key, interface=key if is_interface else None,
                address=None if is_interface else key, remote_asn=read_asn(info.get("remoteAs")),
                peer_device=info.get("hostname") or None, state=info.get("state"),
                prefixes_received=int(info.get("pfxRcd", 0)))
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
