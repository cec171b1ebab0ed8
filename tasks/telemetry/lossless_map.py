"""What the plan says each counter means: which queues of a port are lossless, which queue a
PFC priority pauses, and which switch queue carries the CNPs a host NIC receives. Built once
per engine, so judging a sample is dictionary lookups."""

from __future__ import annotations

from dataclasses import dataclass

from flatfab.model.state import FabricState, IfKind, LinkKind, PortQos


@dataclass(frozen=True, slots=True)
class PortClasses:
    lossless: frozenset[int]  # lossless (PFC) priorities = their TCs (identity, as planned)
    lossless_queues: frozenset[int]  # the queues of those TCs
    pause_queue: dict[int, int]  # PFC priority -> the queue a received pause stops
    # the queues the plan has mark ECN: the lossless ones, a lossy fabric's RoCE queue
    marked_queues: frozenset[int]


@dataclass(frozen=True, slots=True)
class CnpFeed:
    """The leaf port a host NIC hangs off and the queue CNPs leave it by."""

    device: str
    port: str
    queue: int


def _at(values: list[int], index: int) -> int:
    return values[index] if 0 <= index < len(values) else index


def _classes(qos: PortQos) -> PortClasses:
    lossless = frozenset(qos.pfc)
    return PortClasses(lossless, frozenset(_at(qos.maps.tc_to_queue, tc) for tc in lossless),
                       {p: _at(qos.maps.pfc_to_queue, p) for p in lossless},
                       frozenset(q for q, state in qos.queues.items() if state.ecn is not None))


class LosslessMap:
    def __init__(self, plan: FabricState) -> None:
        self._ports: dict[tuple[str, str], PortClasses] = {}
        self._cnp: dict[tuple[str, str], CnpFeed] = {}
        profile = plan.lossless
        # a port the plan does not name (a LAG, a renamed port) gets the fabric-wide profile
        # with identity maps; without a lossless plane, queues are not classified at all
        self._fallback = None if profile is None else PortClasses(
            frozenset(profile.lossless), frozenset(profile.lossless),
            {p: p for p in profile.lossless}, frozenset(profile.marked))
        # (host, NIC) -> the DCQCN points its plan turns on ("np", "rp"; lossless-no-dcqcn:
        # none, and then a flat counter is what the intent asks for)
        self._points: dict[tuple[str, str], frozenset[str]] = {}
        for device in plan.devices.values():
            for iface in device.interfaces.values():
                nic = iface.nic
                if nic is not None:
                    self._points[(device.name, iface.name)] = frozenset(
                        side for side, on in (("np", nic.ecn_np), ("rp", nic.ecn_rp))
                        if on and nic.dcqcn)
                qos = iface.qos
                if qos is None and iface.parent is not None:  # a VRF sub-interface
                    parent = device.interfaces.get(iface.parent)
                    qos = parent.qos if parent is not None else None
                if qos is not None and iface.kind is not IfKind.NIC:
                    self._ports[(device.name, iface.name)] = _classes(qos)
        if profile is None or not profile.cnp_dscp:
            return
        for link in plan.links:
            if link.kind is not LinkKind.HOST or link.parent is not None:
                continue
            leaf = plan.devices.get(link.b.device)
            port = leaf.interfaces.get(link.b.port) if leaf is not None else None
            if port is None or port.qos is None:
                continue
            maps = port.qos.maps
            queue = _at(maps.tc_to_queue, _at(maps.dscp_to_tc, profile.cnp_dscp[0]))
            self._cnp[(link.a.device, link.a.port)] = CnpFeed(link.b.device, link.b.port, queue)

    def classes(self, device: str, port: str | None) -> PortClasses | None:
        """The port's lossless classes (None: cannot tell)."""
        if port is None:
            return None
        return self._ports.get((device, port), self._fallback)

    def dcqcn_point(self, device: str, port: str | None, side: str) -> bool:
        """Whether the plan turns this DCQCN point ("np", "rp") on for a host NIC (a NIC the
        plan does not name: yes, as the profile's default)."""
        points = self._points.get((device, port or ""))
        return points is None or side in points

    def cnp_feed(self, device: str, port: str | None) -> CnpFeed | None:
        """Where the CNPs a host NIC receives are counted on the switch side."""
        return None if port is None else self._cnp.get((device, port))
