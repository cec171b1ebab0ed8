"""What an Acme switch shows, read back into flatfab's observed state (show commands only:
the read-only guard lets nothing else through). What Acme's outputs do not state is marked
unknown, never taken for granted."""

from __future__ import annotations

import json
from typing import Any

from flatfab.model.state import DEFAULT_VRF, BgpInstance, BgpPeer, DeviceState, Interface
from flatfab.platforms import readback
from flatfab.platforms.base import DeviceDriver, InterfaceNames

INTERFACES = "show interfaces | json"
QOS = "show qos interfaces | json"
BGP = "show bgp neighbors | json"
COMMANDS = (INTERFACES, QOS, BGP)
NOT_SHOWN = "Acme's `show qos interfaces` does not show it"


def _interfaces(device: DeviceState, planned: DeviceState, text: str,
                names: InterfaceNames) -> None:
    for entry in json.loads(text)["interfaces"]:
        name = str(entry["name"])
        kind = readback.kind_by_name(planned, name, loopback=names.loopback, lag="ae",
                                     bridge="irb")
        device.interfaces[name] = Interface(
            name=name, kind=kind, vrf=readback.tenant(names, entry.get("vrf")),
            mtu=int(entry["mtu"]), up=entry["admin"] == "up",
            addresses=[str(a) for a in entry.get("ipv4", [])], parent=entry.get("parent"),
            speed_mbps=entry.get("speed_mbps"))


def _qos(device: DeviceState, planned: DeviceState, text: str) -> None:
    """Trust, PFC, MTU and speed per port as shown; the rest of the planned port's lossless
    settings is unknown (Acme does not show it)."""
    by_port = {str(p["port"]): p for p in json.loads(text)["ports"]}
    for name, iface, plan in readback.planned_qos_ports(device, planned):
        seen = by_port.get(name)
        if seen is None:
            continue
        unknown = dict.fromkeys(("maps", "watchdog", "pgs", "queues", "cable_m"), NOT_SHOWN)
        iface.qos = plan.model_copy(update={
            "trust": str(seen["trust"]), "pfc": [int(p) for p in seen["pfc"]],
            "mtu": int(seen["mtu"]), "speed_mbps": int(seen["speed_mbps"]),
            "unknown": unknown})


def _bgp(device: DeviceState, text: str, names: InterfaceNames) -> None:
    for entry in json.loads(text)["instances"]:
        vrf = readback.tenant(names, entry["vrf"])
        peers = {}
        for peer in entry["neighbors"]:
            key = str(peer["neighbor"])
            peers[key] = BgpPeer(
                key=key, interface=peer.get("interface"), address=peer.get("address"),
                remote_asn=readback.asn_of(device, peer.get("remote_as"), f"BGP {key}"),
                state=str(peer["state"]))
        device.bgp[vrf] = BgpInstance(vrf=vrf, router_id=str(entry["router_id"]),
                                      asn=readback.asn_of(device, entry["as"], f"BGP {vrf}"),
                                      peers=peers)


def collect(driver: DeviceDriver, planned: DeviceState, names: InterfaceNames) -> DeviceState:
    device = DeviceState(name=planned.name, role=planned.role, platform=planned.platform)
    shown: dict[str, Any] = driver.cli(list(COMMANDS))
    readback.guarded(device, "interfaces",
                     lambda: _interfaces(device, planned, shown[INTERFACES], names))
    readback.guarded(device, "qos", lambda: _qos(device, planned, shown[QOS]))
    readback.guarded(device, "bgp", lambda: _bgp(device, shown[BGP], names))
    readback.identity_from_bgp(device)
    device.loopback = readback.loopback_address(device, names.loopback)
    device.vrfs = {vrf: planned.vrfs.get(vrf, 0) for vrf in sorted(
        {i.vrf for i in device.interfaces.values()} - {DEFAULT_VRF})}
    return device
