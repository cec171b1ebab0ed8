"""The doubles' converged routes (tests/doubles/rib.py, one pass per class of origins) equal
those of plain synchronous BGP rounds, one per origin (RFC 4271 loop prevention, ECMP over
the shortest AS paths), on every example fabric, healthy and with fabric links gone."""

from __future__ import annotations

import pytest

from flatfab.intent.loader import load_intent
from flatfab.model.state import DeviceState, FabricState, IfKind
from flatfab.plan.planner import plan
from tests.doubles.rib import FabricRib, Learned, session_port
from tests.support.paths import ROOT


def _converge(switches: dict[str, DeviceState], vrf: str, origin: str) -> dict[str, Learned]:
    paths: dict[str, set[tuple[int, ...]]] = {origin: {()}}
    routes: dict[str, Learned] = {}
    for _ in range(2 * len(switches) + 2):
        new_paths: dict[str, set[tuple[int, ...]]] = {origin: {()}}
        new_routes: dict[str, Learned] = {}
        for name, device in switches.items():
            instance = device.bgp.get(vrf)
            if name == origin or instance is None or device.asn is None:
                continue
            offers: dict[tuple[int, ...], set[str]] = {}
            for peer in instance.peers.values():
                sender = switches.get(peer.peer_device or "")
                port = session_port(device, peer)
                if sender is None or sender.asn is None or port is None:
                    continue
                for path in paths.get(sender.name, set()):
                    advertised = (sender.asn, *path)
                    if device.asn not in advertised:
                        offers.setdefault(advertised, set()).add(port)
            if offers:
                best = min(len(p) for p in offers)
                new_paths[name] = {p for p in offers if len(p) == best}
                ports = {port for p in new_paths[name] for port in offers[p]}
                new_routes[name] = Learned(ports=tuple(sorted(ports)), length=best)
        if new_paths == paths:
            return new_routes
        paths, routes = new_paths, new_routes
    return routes


def _reference(fabric: FabricState, name: str) -> dict[str, dict[str, Learned]]:
    switches = {n: d for n, d in fabric.devices.items() if d.bgp}
    me = switches[name]
    rib: dict[str, dict[str, Learned]] = {}
    for vrf in me.bgp:
        for origin, device in sorted(switches.items()):
            if origin == name or vrf not in device.bgp or not device.bgp[vrf].networks:
                continue
            learned = _converge(switches, vrf, origin).get(name)
            if learned is not None:
                rib.setdefault(vrf, {}).update(dict.fromkeys(device.bgp[vrf].networks, learned))
    return rib


def _without_sessions(fabric: FabricState, device: str, ports: set[str]) -> FabricState:
    """`fabric` with the sessions over `ports` of `device` (and their far ends) gone."""
    state = fabric.model_copy(deep=True)
    me = state.devices[device]
    far = {(i.peer.device, i.peer.port) for n, i in me.interfaces.items()
           if n in ports and i.peer is not None}
    for instance in me.bgp.values():
        instance.peers = {k: p for k, p in instance.peers.items()
                          if session_port(me, p) not in ports}
    for other, port in far:
        them = state.devices[other]
        for instance in them.bgp.values():
            instance.peers = {k: p for k, p in instance.peers.items()
                              if session_port(them, p) != port}
    return state


@pytest.mark.parametrize("name", ["lab", "numbered", "rail", "mixed", "multivendor"])
def test_every_switch_learns_what_plain_bgp_rounds_give(name: str) -> None:
    fabric = plan(load_intent(ROOT / "intents" / name))
    rib = FabricRib(fabric)
    for device in (d for d in fabric.devices.values() if d.bgp):
        assert rib.of(device.name) == _reference(fabric, device.name), device.name


@pytest.mark.parametrize("name", ["lab", "rail"])
def test_with_a_leaf_uplink_and_a_spine_downlink_gone(name: str) -> None:
    fabric = plan(load_intent(ROOT / "intents" / name))
    leaf = next(d for d in fabric.devices.values() if d.role.value == "leaf")
    uplink = next(n for n, i in sorted(leaf.interfaces.items())
                  if i.kind is IfKind.FABRIC and i.parent is None)
    spine = fabric.devices[leaf.interfaces[uplink].peer.device]  # type: ignore[union-attr]
    down = next(n for n, i in sorted(spine.interfaces.items(), reverse=True)
                if i.kind is IfKind.FABRIC and i.parent is None)
    broken = _without_sessions(fabric, leaf.name, {n for n, i in leaf.interfaces.items()
                                                   if uplink in (n, i.parent)})
    broken = _without_sessions(broken, spine.name, {n for n, i in spine.interfaces.items()
                                                    if down in (n, i.parent)})
    rib = FabricRib(broken)
    for device in (d for d in broken.devices.values() if d.bgp):
        assert rib.of(device.name) == _reference(broken, device.name), device.name
