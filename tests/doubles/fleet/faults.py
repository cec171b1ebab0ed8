"""Faults a fleet device can be given, each something verify or a rollout must name:

- `mtu:<port>=<mtu>`: the port's MTU changed out of band (config drift, interface.mtu);
- `port-down:<port>`: the port administratively down (interface state, sessions over it); on
  sonic and eos only as the switch reports it (FRR's interface JSON, `show interfaces`);
- `session-down:<peer>`: the BGP session to `<peer>` (its key: an interface or address) in
  Active, no prefixes from it (bgp.sessions); on sonic in FRR's summary, on eos in `show ip
  bgp summary vrf all` (an unnumbered peer also by its interface, `Ethernet1`);
- `slow:<seconds>`: every command answered that much later (a worker killed mid-shard);
- `refuse`: the device refuses every login (unreachable).
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from flatfab.platforms.frr.driver import FrrState
from flatfab.platforms.linux_host import config as cfg
from tests.doubles.fleet import Device
from tests.doubles.fleet.eapi import EosDevice
from tests.doubles.fleet.shell import ShellDevice
from tests.doubles.fleet.sonic import SonicDevice

BGP_SUMMARY = "vtysh -c 'show bgp vrf all summary json'"
SONIC_BGP, SONIC_INTERFACES = BGP_SUMMARY, "vtysh -c 'show interface vrf all json'"
EOS_BGP, EOS_INTERFACES = "show ip bgp summary vrf all", "show interfaces"


class FaultError(ValueError):
    """A fault the fleet does not know, or one that does not fit the device."""


def inject(device: Device, fault: str) -> None:
    kind, _, arg = fault.partition(":")
    if kind == "slow":
        device.faults.delay_s = float(arg)
    elif kind == "refuse":
        device.faults.refuse = True
    elif isinstance(device, SonicDevice | EosDevice):
        _inject_double(device, kind, arg, fault)
    elif kind in ("mtu", "port-down"):
        port, _, value = arg.partition("=")
        _set_port(device, port, mtu=int(value) if kind == "mtu" else None,
                  up=False if kind == "port-down" else None)
    elif kind == "session-down":
        device.faults.rewrites[BGP_SUMMARY] = lambda text: _session_down(text, arg)
        device.invalidate()
    else:
        raise FaultError(f"unknown fault {fault!r}")


def _inject_double(device: SonicDevice | EosDevice, kind: str, arg: str, fault: str) -> None:
    """A fault in what the platform's double reports (its show outputs)."""
    if isinstance(device, SonicDevice):
        double = device.double
        if kind == "session-down":
            double.broken[SONIC_BGP] = _session_down(double.outputs[SONIC_BGP], arg)
        elif kind == "port-down":
            ports = json.loads(double.outputs[SONIC_INTERFACES])
            if arg not in ports:
                raise FaultError(f"{device.name} has no port {arg}")
            ports[arg].update({"administrativeStatus": "down", "operationalStatus": "down"})
            double.broken[SONIC_INTERFACES] = json.dumps(ports, indent=1)
        else:
            raise FaultError(f"fault {fault!r} is not modelled on sonic")
        return
    shows = device.double.shows
    if kind == "session-down":
        _eos_session_down(shows[EOS_BGP], arg)
    elif kind == "port-down":
        found = shows[EOS_INTERFACES]["interfaces"].get(arg)
        if found is None:
            raise FaultError(f"{device.name} has no port {arg}")
        found.update({"lineProtocolStatus": "down", "interfaceStatus": "disabled"})
    else:
        raise FaultError(f"fault {fault!r} is not modelled on eos")


def _eos_session_down(summary: dict[str, Any], peer: str) -> None:
    # an unnumbered peer is keyed fe80::...%Et1: its interface names it too
    scoped = "%" + peer.replace("Ethernet", "Et", 1)
    found = False
    for vrf in summary["vrfs"].values():
        for key, state in vrf["peers"].items():
            if key == peer or key.endswith(scoped):
                state.update({"peerState": "Active", "prefixReceived": 0,
                              "prefixAccepted": 0})
                found = True
    if not found:
        raise FaultError(f"no BGP peer {peer!r}")


def _set_port(device: ShellDevice[Any], port: str, *, mtu: int | None, up: bool | None) -> None:
    state = device.state
    if isinstance(state, FrrState):
        if port not in state.links:
            raise FaultError(f"{device.name} has no configured port {port}")
        spec = state.links[port]
        spec = replace(spec, mtu=mtu if mtu is not None else spec.mtu,
                       up=up if up is not None else spec.up)
        device.set_state(replace(state, links={**state.links, port: spec}))
    elif isinstance(state, cfg.HostConfig):
        if port not in state.nics:
            raise FaultError(f"{device.name} has no NIC {port}")
        nic = state.nics[port]
        nic = replace(nic, mtu=mtu if mtu is not None else nic.mtu,
                      up=up if up is not None else nic.up)
        device.set_state(replace(state, nics={**state.nics, port: nic}))
    else:
        raise FaultError(f"{device.name}: no ports to change")


def _session_down(text: str, peer: str) -> str:
    summary = json.loads(text)
    found = False
    for vrf in summary.values():
        peers = vrf.get("ipv4Unicast", {}).get("peers", {})
        if peer in peers:
            peers[peer].update({"state": "Active", "peerState": "OK", "pfxRcd": 0,
                                "peerUptime": "never"})
            found = True
    if not found:
        raise FaultError(f"no BGP peer {peer!r}")
    return json.dumps(summary, separators=(",", ":")) + "\n"
