"""The fabric as observed against the source of truth: cabling (LLDP) and devices.

Two checks an audit adds when it is given a snapshot, each finding naming the device, the
port and the source object an operator has to look at:
- sot.cabling: every cable the source records on a switch port is what LLDP sees there, and
  every neighbour LLDP sees has a cable in the source; a multi-NIC server is compared cable by
  cable, so a NIC on another rail's leaf is named by server, NIC, leaf, port and rails;
- sot.devices: every fabric device in the source is reachable, and every reachable device
  is in the source. An unmanaged host of the plan is never read: not judged.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from flatfab.checks.base import Finding, FindingKind, Scope, Severity, unmanaged_finding
from flatfab.model.state import FabricState, Role
from flatfab.sot.importer import SotMapping
from flatfab.sot.snapshot import Snapshot, SotCable

CABLING, DEVICES = "sot.cabling", "sot.devices"
SOT_CHECKS = (CABLING, DEVICES)
# what each finding judges and what an operator does about it (the documentation's catalog)
KINDS = (
    FindingKind(CABLING, "LLDP sees the cables the source of truth records", Severity.ERROR,
                Scope.LINK, """
        Reads: every cable the source of truth records on the fabric's switch ports (through
        patch panels), and the LLDP neighbour each switch sees there.
        Expects: LLDP sees the cable's far end on every port, and every neighbour LLDP sees
        has a cable; a multi-NIC server's cables compared NIC by NIC.
        Fails when: LLDP sees another device or port, or a neighbour on a port without a
        cable (errors), or no neighbour where a cable is recorded (a warning). A NIC on
        another rail's leaf is named with server, NIC, leaf, port and rails.
        Fix: Decide which is true: recable the port to what the source records, or correct
        the cable in Nautobot (the finding names its object). Then `flatfab audit --sot`
        again."""),
    FindingKind(DEVICES, "The source of truth's devices are the fabric's", Severity.ERROR,
                Scope.DEVICE, """
        Reads: the source of truth's devices with a fabric role, and which devices of the
        fabric answered.
        Expects: every such device is managed by the intent and reachable, and every
        reachable device is in the source.
        Fails when: a device in the source is unreachable (an error) or unknown to the
        intent, or a reachable device has no entry with a fabric role (warnings). An
        unmanaged host of the intent (hosts.yaml `managed: false`) is never read: it is not
        judged, and a host's cable LLDP does not see is never a finding.
        Fix: Bring the unreachable device back (`device.reachable` names why), or mark it so
        in Nautobot; add a missing device to Nautobot (`flatfab sot sync --create`) or to
        the intent (`flatfab sot import`), whichever is behind."""),
)


def sot_findings(snapshot: Snapshot, observed: FabricState, mapping: SotMapping,
                 plan: FabricState | None = None) -> list[Finding]:
    """`plan`: where the fabric has unmanaged hosts, which are never read (absent from
    `observed`, not unknown to the intent)."""
    unmanaged = set(plan.unmanaged()) if plan is not None else set()
    found = [*_devices(snapshot, observed, mapping, unmanaged),
             *_cabling(snapshot, observed, mapping, unmanaged)]
    return sorted(found, key=lambda f: f.sort_key)


def _devices(snapshot: Snapshot, observed: FabricState, mapping: SotMapping,
             unmanaged: set[str]) -> Iterator[Finding]:
    in_sot = {d.name: d for d in snapshot.devices if mapping.roles.get(d.role or "")}
    for name, device in sorted(in_sot.items()):
        state = observed.devices.get(name)
        if name in unmanaged:
            yield unmanaged_finding(DEVICES, name)
        elif state is None:
            yield Finding(DEVICES, Severity.WARNING, name, f"{device.ref} is in the source of "
                          "truth, but not in the fabric flatfab manages", expected="managed",
                          actual="unknown to the intent")
        elif not state.reachable:
            where = f" at {device.primary_ip4}" if device.primary_ip4 else ""
            yield Finding(DEVICES, Severity.ERROR, name, f"{device.ref} is unreachable{where}",
                          expected="reachable", actual="unreachable")
    for name, state in sorted(observed.devices.items()):
        if name not in in_sot and state.reachable:
            yield Finding(DEVICES, Severity.WARNING, name, f"{name} answers, but the source of "
                          "truth has no such device (with a fabric role)",
                          expected="in the source of truth", actual="missing")


@dataclass(frozen=True)
class _Nics:
    """The source's server NICs: where each is cabled, and the rail of each leaf."""

    cabled: Mapping[tuple[str, str], tuple[str, str]]  # (server, NIC) -> (leaf, port)
    servers: frozenset[str]  # hosts with several NICs, or on rail leaves
    rails: Mapping[str, int]  # leaf -> its rail

    def rail(self, leaf: str) -> str:
        return f" (rail {self.rails[leaf]})" if leaf in self.rails else ""

    def names(self, end: tuple[str, str]) -> bool:
        return end[0] in self.servers

    def said(self, end: tuple[str, str]) -> str:
        """`server X NIC Y`, and where the source cables that NIC."""
        text = f"server {end[0]} NIC {end[1]}"
        where = self.cabled.get(end)
        if where is not None:
            text += f", which the source of truth cables to {where[0]}:{where[1]}" \
                    f"{self.rail(where[0])}"
        return text


def _nics(snapshot: Snapshot, mapping: SotMapping) -> _Nics:
    hosts = {d.name for d in snapshot.devices
             if mapping.roles.get(d.role or "") in ("host", "storage")}
    rails = {d.name: d.rail for d in snapshot.devices if d.rail is not None}
    cabled: dict[tuple[str, str], tuple[str, str]] = {}
    count: dict[str, int] = {}
    on_rails: set[str] = set()
    for cable in snapshot.cables:
        for near, far in (((cable.a_device, cable.a_port), (cable.b_device, cable.b_port)),
                          ((cable.b_device, cable.b_port), (cable.a_device, cable.a_port))):
            if near[0] in hosts:
                cabled[near] = far
                count[near[0]] = count.get(near[0], 0) + 1
                if far[0] in rails:
                    on_rails.add(near[0])
    servers = frozenset(h for h in hosts if count.get(h, 0) > 1 or h in on_rails)
    return _Nics(cabled, servers, rails)


def _cabling(snapshot: Snapshot, observed: FabricState, mapping: SotMapping,
             unmanaged: set[str]) -> Iterator[Finding]:
    nics = _nics(snapshot, mapping)
    cable_at: dict[tuple[str, str], tuple[SotCable, tuple[str, str]]] = {}
    for cable in snapshot.cables:
        a, b = (cable.a_device, cable.a_port), (cable.b_device, cable.b_port)
        cable_at[a], cable_at[b] = (cable, b), (cable, a)
    for name, device in sorted(observed.devices.items()):
        if not device.reachable or device.role is Role.HOST:
            continue  # LLDP is read on switches
        for port, iface in sorted(device.interfaces.items()):
            if iface.parent is not None:
                continue
            seen = (iface.peer.device, iface.peer.port) if iface.peer is not None else None
            recorded = cable_at.get((name, port))
            here = f"{name}:{port}{nics.rail(name)}"
            if recorded is None:
                if seen is not None:
                    what = nics.said(seen) if nics.names(seen) else f"{seen[0]}:{seen[1]}"
                    yield Finding(CABLING, Severity.ERROR, name, f"{here}: LLDP sees {what}, "
                                  "the source of truth has no cable on this port", port=port,
                                  expected="no cable", actual=f"{seen[0]}:{seen[1]}")
                continue
            cable, far = recorded
            if seen is None:
                # a host need not send LLDP (an unmanaged one is never read: a host too)
                if far[0] not in unmanaged and \
                        observed.devices.get(far[0], device).role is not Role.HOST:
                    yield Finding(CABLING, Severity.WARNING, name, f"{name}:{port}: LLDP sees "
                                  f"no neighbour; {cable.ref} goes to {far[0]}:{far[1]}",
                                  port=port, expected=f"{far[0]}:{far[1]}", actual="none")
            elif seen != far and (nics.names(seen) or nics.names(far)):
                what = nics.said(seen) if nics.names(seen) else f"{seen[0]}:{seen[1]}"
                recorded_as = (f"server {far[0]} NIC {far[1]}" if nics.names(far)
                               else f"{far[0]}:{far[1]}")
                yield Finding(CABLING, Severity.ERROR, name, f"{here}: LLDP sees {what}; "
                              f"{cable.ref} cables {recorded_as} here", port=port,
                              expected=f"{far[0]}:{far[1]}", actual=f"{seen[0]}:{seen[1]}")
            elif seen != far:
                yield Finding(CABLING, Severity.ERROR, name, f"{name}:{port}: LLDP sees "
                              f"{seen[0]}:{seen[1]}; {cable.ref} goes to {far[0]}:{far[1]}",
                              port=port, expected=f"{far[0]}:{far[1]}",
                              actual=f"{seen[0]}:{seen[1]}")
