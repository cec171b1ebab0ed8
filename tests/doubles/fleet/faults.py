"""Faults a fleet device can be given, each something verify or a rollout must name:

- `mtu:<port>=<mtu>`: the port's MTU changed out of band (config drift, interface.mtu);
- `port-down:<port>`: the port administratively down (interface state, sessions over it);
- `session-down:<peer>`: the BGP session to `<peer>` (its key: an interface or address) in
  Active, no prefixes from it (bgp.sessions);
- `slow:<seconds>`: every command answered that much later (a worker killed mid-shard);
- `refuse`: the device refuses every login (unreachable).
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from tasks.platforms.frr.driver import FrrState
from tasks.platforms.linux_host import config as cfg
from tests.doubles.fleet.shell import ShellDevice

BGP_SUMMARY = "vtysh -c 'show bgp vrf all summary json'"


class FaultError(ValueError):
    """A fault the fleet does not know, or one that does not fit the device."""


def inject(device: ShellDevice[Any], fault: str) -> None:
    kind, _, arg = fault.partition(":")
    if kind == "slow":
        device.faults.delay_s = float(arg)
    elif kind == "refuse":
        device.faults.refuse = True
    elif kind in ("mtu", "port-down"):
        port, _, value = arg.partition("=")
        _set_port(device, port, mtu=int(value) if kind == "mtu" else None,
                  up=False if kind == "port-down" else None)
    elif kind == "session-down":
        device.faults.rewrites[BGP_SUMMARY] = lambda text: _session_down(text, arg)
        device.invalidate()
    else:
        raise FaultError(f"unknown fault {fault!r}")


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
