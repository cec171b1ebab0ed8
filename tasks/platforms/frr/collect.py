"""Read an frr switch into observed DeviceState through its NAPALM driver (read-only)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from contextlib import nullcontext
from typing import Any, Protocol, TypeVar, runtime_checkable

from flatfab.model.physical import PortPhysical
from flatfab.model.state import (
    DEFAULT_VRF,
    DeviceState,
    Endpoint,
    IfKind,
    Interface,
    PortQos,
    Probe,
    QosMaps,
    Route,
)
from flatfab.platforms import configdb, lab_phy, readback
from flatfab.platforms.base import DeviceDriver
from flatfab.platforms.frr import dcb, ecmp, kernel_qos
from flatfab.platforms.readback import (
    FrrTable,
    FrrTableError,
    Routes,
    frr_bgp_instance,
    frr_ipv4_unicast,
    frr_table_routes,
    identity_from_bgp,
    lldp_device,
    lldp_far_port,
    lldp_seconds,
)

# FRR's BGP summary of every VRF: the driver's get_bgp_neighbors reads it for NAPALM's model,
# collect through cli() for what that model lacks (the peer state: Active, Connect, ...)
BGP_SUMMARY = "show bgp vrf all summary json"
def lldp_neighbors(data: object, *, ttl: bool = False) -> dict[str, list[dict[str, str]]]:
    """NAPALM's LLDP neighbours per local port from lldpcli JSON ("" for what is not sent).

    lldpd 1.0.x `-f json` prints `interface` as an object for one neighbour and a list of
    one-key objects for several; `-f json0` prints everything as lists (`name` inside).
    The chassis is keyed by its system name, or is the bare `id` when the neighbour sends
    no name; the port is its id when that is an interface name, else its description
    (lldpd's default port id on Linux is the MAC address, the description the name).
    """
    lldp = data.get("lldp") if isinstance(data, dict) else None
    if isinstance(lldp, list):  # json0, or an empty reply
        lldp = lldp[0] if lldp and isinstance(lldp[0], dict) else {}
    interfaces = lldp.get("interface", []) if isinstance(lldp, dict) else []
    entries: list[tuple[str, Any]] = []
    if isinstance(interfaces, dict):
        entries = list(interfaces.items())
    elif isinstance(interfaces, list):
        for item in interfaces:
            if isinstance(item, dict) and isinstance(item.get("name"), str):
                entries.append((item["name"], item))  # json0
            elif isinstance(item, dict):
                entries += list(item.items())
    aged: dict[str, list[tuple[float, int, dict[str, str]]]] = {}
    for index, (local, entry) in enumerate(entries):
        info = entry if isinstance(entry, dict) else {}
        found = {"hostname": _lldp_chassis_name(info.get("chassis")),
                 "port": _lldp_port(info.get("port"))}
        if ttl:  # the hold time the neighbour sent (seconds), beyond NAPALM's model
            port = _first(info.get("port"))
            found["ttl"] = _text(port.get("ttl")) if isinstance(port, dict) else ""
        aged.setdefault(str(local), []).append((_age_s(info.get("age")), index, found))
    # newest first: after a re-cable the old neighbour is still listed until its TTL ends
    return {local: [n for _, _, n in sorted(found, key=lambda t: t[:2])]
            for local, found in aged.items()}


_AGE = re.compile(r"^\s*(\d+)\s+days?,\s*(\d+):(\d+):(\d+)\s*$")


def _age_s(value: Any) -> float:
    """lldpd's `age` ("0 day, 00:00:19") in seconds; unknown ages sort last."""
    match = _AGE.match(_text(value) if not isinstance(value, str) else value)
    if match is None:
        return float("inf")
    days, hours, minutes, seconds = (int(g) for g in match.groups())
    return ((days * 24 + hours) * 60 + minutes) * 60 + seconds


def _first(value: Any) -> Any:
    """json0 wraps every value in a list."""
    return value[0] if isinstance(value, list) and value else value


def _text(value: Any) -> str:
    value = _first(value)
    if isinstance(value, dict):
        value = value.get("value", "")
    return value if isinstance(value, str) else ""


def _lldp_chassis_name(chassis: Any) -> str:
    chassis = _first(chassis)
    if not isinstance(chassis, dict):
        return ""
    if "name" in chassis:  # json0
        return _text(chassis["name"])
    ident = chassis.get("id")
    if isinstance(ident, dict) and "type" in ident:
        return ""  # the bare chassis: no system name
    return next((key for key, value in chassis.items() if isinstance(value, dict)), "")


def _lldp_port(port: Any) -> str:
    """The far port of lldpd's `port` (its id by `type`, ifname, mac, local; readback's rule)."""
    port = _first(port)
    if not isinstance(port, dict):
        return ""
    ident = _first(port.get("id"))
    kind = ident.get("type") if isinstance(ident, dict) else None
    name, _ = lldp_far_port(_text(ident), kind, _text(port.get("descr")))
    return name or ""


@runtime_checkable
class FrrReader(Protocol):
    """The read side of the frr NAPALM driver: NAPALM getters, vtysh shows through cli(),
    and three reads of its own (not NAPALM getters)."""

    def get_interfaces(self) -> dict[str, dict[str, Any]]: ...
    def get_interfaces_ip(self) -> dict[str, dict[str, Any]]: ...
    def get_lldp_neighbors(self) -> dict[str, list[dict[str, str]]]: ...
    def lldp_entries(self) -> dict[str, list[dict[str, str]]]: ...
    def cli(self, commands: list[str], encoding: str = "text") -> dict[str, Any]: ...
    def get_interface_links(self) -> dict[str, dict[str, str]]: ...
    def get_route_table(self) -> dict[str, dict[str, Any]]: ...
    def route_tables(self) -> Iterator[tuple[str, FrrTable]]: ...
    def get_lossless(self) -> dict[str, Any]: ...
    def get_physical(self) -> dict[str, Any]: ...


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
    """The switch as its getters read it; each show command runs once (the driver's
    cached_reads), the per-namespace reads in one round trip (read_ahead)."""
    cached = getattr(driver, "cached_reads", None)
    with cached() if cached is not None else nullcontext():
        ahead = getattr(driver, "read_ahead", None)
        if ahead is not None:
            ahead()
        return _collect(driver, planned)


def _collect(driver: FrrReader, planned: DeviceState) -> DeviceState:
    device = DeviceState(name=planned.name, role=planned.role, platform=planned.platform,
                         routes={})
    interfaces: dict[str, Any] = driver.get_interfaces()
    links: dict[str, dict[str, str]] = driver.get_interface_links()
    addresses: dict[str, Any] = driver.get_interfaces_ip()
    lldp: dict[str, Any] = _read(device, "lldp", driver.lldp_entries, {})
    bgp: dict[str, Any] = _read(device, "bgp", lambda: _bgp_summary(driver), {})
    rib_errors = len(device.errors)
    routes = _read(device, "routes", lambda: _routes(device, driver.route_tables()), None)
    names = set(interfaces) | {"lo"}
    for name in sorted(names):
        info = interfaces.get(name, {"mtu": None, "is_up": True, "speed": -1.0})
        link = links.get(name, {})
        master = link.get("master", "")
        unread = [f for f in link.get("unread", "").split(",") if f]
        for what in unread:
            device.errors.append(f"interface {name}: the kernel does not report its {what}")
        ipv4 = addresses.get(name, {}).get("ipv4", {})
        # freshest first: a re-cabled port keeps the old neighbour until its hold time ends
        neighbours = [Endpoint(device=lldp_device(n["hostname"]), port=n["port"],
                               hold_s=lldp_seconds(n.get("ttl")))
                      for n in lldp.get(name, []) if n["hostname"] and n["port"]]
        peer = neighbours[0] if neighbours else None
        speed = info.get("speed", -1.0)
        device.interfaces[name] = Interface(
            name=name, kind=_kind(name, planned, master),
            vrf=link.get("vrf") or DEFAULT_VRF,
            mtu=None if "mtu" in unread else info.get("mtu"),
            up=None if "flags" in unread else info.get("is_up"),
            addresses=sorted(f"{a}/{v['prefix_length']}" for a, v in ipv4.items()
                             if not a.startswith("127.")),
            bridge=master or None,
            parent=name.split(".")[0] if "." in name else None,
            speed_mbps=int(speed) if speed and speed > 0 else None, peer=peer,
            lldp_neighbours=neighbours if len(neighbours) > 1 else [])
        if name == "lo" and device.interfaces[name].addresses:
            device.loopback = device.interfaces[name].addresses[0]
    for local, neighbours in sorted(lldp.items()):  # an LLDP neighbour flatfab cannot name
        for neighbour in neighbours:
            if not neighbour.get("hostname"):
                device.errors.append(f"lldp: {local}: the neighbour sends no system name")
            elif not neighbour.get("port"):
                device.errors.append(f"lldp: {local}: the neighbour's port id is not an "
                                     "interface name and it sends no port description")
    _add_bgp(device, planned, bgp, set(interfaces))
    identity_from_bgp(device)
    device.routes = routes  # None: unread, not empty: no check judges a RIB it did not see
    if routes is None and len(device.errors) == rib_errors:
        device.errors.append("routes: not read")
    lossless: dict[str, Any] = {}
    if planned.qos is not None:
        lossless = _read(device, "lossless", driver.get_lossless, {})
        if lossless:
            _add_lossless(device, lossless)
    _add_hashing(device, planned, driver)
    if device.lb is not None and "config_db" in lossless and "dcb" not in lossless:
        try:  # how it balances beyond the hash: the virtual ASIC's
            device.lb = ecmp.with_mode(device.lb, lossless["config_db"].get(ecmp.MODE_TABLE))
        except ecmp.EcmpError as exc:
            device.errors.append(f"hashing: {exc}")
            device.lb = None
    return device


def _add_hashing(device: DeviceState, planned: DeviceState, driver: FrrReader) -> None:
    """The kernel's multipath hashing (a driver that reads none leaves it unknown); a kernel
    without seeds, where the plan sets one, is a limitation of the platform."""
    getter = getattr(driver, "get_hashing", None)
    if getter is None:
        return
    hashing: dict[str, ecmp.Hashing] | None = _read(device, "hashing", getter, None)
    if not hashing or DEFAULT_VRF not in hashing:
        return
    device.lb = ecmp.to_model(hashing)
    if hashing[DEFAULT_VRF].seed is None and planned.lb is not None and planned.lb.seed:
        device.limitations["lb.seed"] = (f"this kernel has no {ecmp.SEED_FILE} (Linux 6.11 "
                                         "and later): each namespace hashes with its own "
                                         "random seed")


def physical(driver: FrrReader, planned: DeviceState) -> dict[str, PortPhysical]:
    """Each cabled port's physical layer: the lab's phy.json, or ethtool on switchdev."""
    return lab_phy.read_cabled(driver.get_physical, planned, readback.read_errors())


def _add_bgp(device: DeviceState, planned: DeviceState, bgp: dict[str, Any],
             interfaces: set[str]) -> None:
    for vrf_name, vrf in bgp.items():  # FRR names the default VRF `default`, as flatfab does
        if not isinstance(vrf, dict):
            device.errors.append(f"bgp: VRF {vrf_name}: summary is not an object")
            continue
        unicast, _ = frr_ipv4_unicast(vrf)
        device.bgp[vrf_name] = frr_bgp_instance(
            device, vrf_name, unicast, f"bgp {vrf_name}",
            lambda key, _info: key in interfaces)
        if vrf_name != DEFAULT_VRF:
            device.vrfs[vrf_name] = planned.vrfs.get(vrf_name, 0)


def _routes(device: DeviceState, rib: Iterable[tuple[str, FrrTable]]
            ) -> dict[str, dict[str, Route]]:
    """FRR's selected routes per VRF, a VRF's table read at a time."""
    made = Routes()
    result: dict[str, dict[str, Route]] = {}
    for vrf_name, table in rib:
        try:
            result[vrf_name] = frr_table_routes(table, made)
        except FrrTableError as exc:
            raise ValueError(f"VRF {vrf_name}: a route's next hops are not FRR's: {exc}"
                             ) from None
    return result


def _subinterfaces(device: DeviceState) -> dict[str, list[Interface]]:
    """Each physical port's VRF sub-interfaces, found once (a spine has a thousand ports)."""
    subs: dict[str, list[Interface]] = {}
    for sub in device.interfaces.values():
        if sub.parent is not None and sub.name != sub.parent:
            subs.setdefault(sub.parent, []).append(sub)
    return subs


def _add_dcb(device: DeviceState, lossless: dict[str, Any]) -> None:
    """What each DCB port's hardware holds, over the stored tables for what it cannot say."""
    try:
        stored, ports = configdb.from_config_db(lossless["config_db"], virtual=False)
    except configdb.ConfigDbError as exc:
        device.errors.append(f"lossless: {exc}")
        return
    if stored is None:
        return
    out: dict[str, str] = lossless.get("dcb", {})
    qos = dcb.read_device(stored, out, lossless.get("devlink"))
    profiles = dict(qos.profiles)
    subs = _subinterfaces(device)
    for name, port in sorted(ports.items()):
        iface = device.interfaces.get(name)
        if iface is None:
            continue
        seen, added, errors = dcb.read_port(name, port, qos, out)
        device.errors += errors
        profiles.update(added)
        if seen is None:
            continue  # unread: no check judges it, the error says why
        iface.qos = seen
        for sub in subs.get(name, ()):
            sub.qos = seen  # DCB is per physical port: its VRF sub-interfaces share it
    device.qos = qos.model_copy(update={"profiles": profiles})


def _add_lossless(device: DeviceState, lossless: dict[str, Any]) -> None:
    """Virtual ASIC tables for what only an ASIC enforces; the kernel's own DSCP map."""
    if "dcb" in lossless:
        _add_dcb(device, lossless)
        return
    try:
        device.qos, ports = configdb.from_config_db(lossless["config_db"], virtual=True)
    except configdb.ConfigDbError as exc:
        device.errors.append(f"lossless: {exc}")
        return
    kernel: dict[str, dict[str, str]] = lossless.get("kernel", {})
    subs = _subinterfaces(device)
    # ports share a few map bindings and kernel tables: each combination copied once
    made: dict[tuple[int, tuple[int, ...]], QosMaps] = {}

    def classified(port: PortQos, row: dict[str, str] | None) -> PortQos:
        # what classifies traffic in the lab is tc, so the DSCP map comes from the kernel;
        # a port without flatfab queues classifies nothing: everything lands in TC 0
        table = kernel_qos.dscp_to_tc(row) if row else [0] * 64
        key = (id(port.maps), tuple(table))
        maps = made.get(key)
        if maps is None:
            maps = made[key] = port.maps.model_copy(update={"dscp_to_tc": table})
        return port.model_copy(update={"maps": maps})

    for name, port in ports.items():
        iface = device.interfaces.get(name)
        if iface is None:
            continue
        iface.qos = classified(port, kernel.get(name))
        for sub in subs.get(name, ()):
            sub.qos = classified(port, kernel.get(sub.name))
