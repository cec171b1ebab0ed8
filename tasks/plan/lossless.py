"""Plan the lossless plane: the QoS state of every switch port and every host NIC.

Ports with the same inputs (speed, cable, MTUs, overrides) share one PortQos object, so the
plan of a 1,000-switch fabric holds a handful of them, not one per port.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable

from flatfab.intent.qos import AsicIntent, NicIntent, Override, QosIntent
from flatfab.model.state import (
    POOL_EGRESS_LOSSLESS,
    POOL_EGRESS_LOSSY,
    POOL_INGRESS_LOSSLESS,
    POOL_INGRESS_LOSSY,
    PROFILE_EGRESS_LOSSLESS,
    PROFILE_EGRESS_LOSSY,
    PROFILE_EGRESS_TRIM,
    PROFILE_INGRESS_LOSSY,
    TRIM,
    Asic,
    BufferPool,
    BufferProfile,
    DeviceQos,
    EcnProfile,
    FabricState,
    IfKind,
    LinkKind,
    LosslessProfile,
    NicQos,
    PortQos,
    QosMaps,
    QueueQos,
    Role,
    SourceQos,
    Transition,
    Trimming,
    Watchdog,
)
from flatfab.qos import headroom as hr
from flatfab.qos.headroom import ASICS, required_headroom

ECT0 = 0b10
POOLS = (POOL_INGRESS_LOSSLESS, POOL_INGRESS_LOSSY, POOL_EGRESS_LOSSLESS, POOL_EGRESS_LOSSY)


def asic_of(qos: QosIntent, platform: str) -> Asic:
    spec = qos.asics.get(platform, AsicIntent())
    base = ASICS[spec.family]
    return Asic(family=spec.family,
                cell_bytes=base.cell_bytes if spec.cell_bytes is None else spec.cell_bytes,
                mac_phy_bytes=(base.mac_phy_bytes if spec.mac_phy_bytes is None
                               else spec.mac_phy_bytes),
                pipeline_bytes=(base.pipeline_bytes if spec.pipeline_bytes is None
                                else spec.pipeline_bytes),
                buffer_bytes=base.buffer_bytes if spec.buffer_bytes is None
                else spec.buffer_bytes)


def lossless_profile_name(speed_mbps: int, cable_m: float, mtu: int, peer_mtu: int,
                          xoff: int | None = None) -> str:
    """Everything the headroom depends on is in the name, so two ports share a profile only
    when they need the same headroom."""
    cable = f"{cable_m:g}".replace(".", "_")
    peer = f"_peer{peer_mtu}" if peer_mtu != mtu else ""
    pinned = f"_xoff{xoff}" if xoff is not None else ""
    return f"lossless_{speed_mbps}_{cable}m_mtu{mtu}{peer}{pinned}"


def profile(qos: QosIntent, roce_mtu: int) -> LosslessProfile:
    nic = qos.hosts
    trim = qos.trimming
    return LosslessProfile(congestion=qos.profile, roce_dscp=sorted(qos.roce.dscp),
                           lossless=sorted(set(qos.pfc.priorities)),
                           roce_priority=qos.roce.priority, cnp_dscp=sorted(qos.cnp.dscp),
                           cnp_priority=qos.cnp.priority, roce_tos=roce_tos(qos, nic),
                           roce_mtu=roce_mtu,
                           trim_dscp=sorted({trim.dscp_to_hosts, trim.dscp_to_fabric})
                           if qos.trims else [],
                           trim_tc=trim.priority if qos.trims else None)


def roce_tos(qos: QosIntent, nic: NicIntent) -> int:
    return nic.roce_tos if nic.roce_tos is not None else (qos.roce.dscp[0] << 2) | ECT0


def _matches(override: Override, device: str, port: str | None) -> bool:
    if not any(fnmatch.fnmatchcase(device, p) for p in override.devices):
        return False
    return port is None or any(fnmatch.fnmatchcase(port, p) for p in override.ports)


PlannedPort = tuple[PortQos, tuple[str, BufferProfile] | None]


class _PortPlanner:
    """Builds (and shares) PortQos objects and the buffer profiles they reference."""

    def __init__(self, qos: QosIntent) -> None:
        self.qos = qos
        self.cache: dict[tuple[object, ...], PlannedPort] = {}
        self.maps_cache: dict[tuple[tuple[int, int], ...], QosMaps] = {}

    def maps(self, patch: dict[int, int]) -> QosMaps:
        key = tuple(sorted(patch.items()))
        maps = self.maps_cache.get(key)
        if maps is None:
            qos = self.qos
            lossless = set(qos.pfc.priorities)
            dscp_to_tc = [patch.get(d, qos.tc_of(d)) for d in range(64)]
            maps = QosMaps(dscp_to_tc=dscp_to_tc,
                           tc_to_pg=[tc if tc in lossless else 0 for tc in range(8)],
                           tc_to_queue=list(range(8)), pfc_to_pg=list(range(8)),
                           pfc_to_queue=list(range(8)))
            self.maps_cache[key] = maps
        return maps

    def port(self, asic: Asic, speed: int, cable: float, mtu: int, peer_mtu: int,
             overrides: list[Override], *, to_host: bool = False,
             llr: bool = False) -> PlannedPort:
        key = (asic.family, asic.cell_bytes, asic.mac_phy_bytes, asic.pipeline_bytes, speed,
               cable, mtu, peer_mtu, tuple(map(id, overrides)), to_host, llr)
        hit = self.cache.get(key)
        if hit is None:
            hit = self.cache[key] = self._build(asic, speed, cable, mtu, peer_mtu, overrides,
                                                to_host, llr)
        return hit

    def _build(self, asic: Asic, speed: int, cable: float, mtu: int, peer_mtu: int,
               overrides: list[Override], to_host: bool, llr: bool) -> PlannedPort:
        qos = self.qos
        trust = qos.trust
        pfc = sorted(set(qos.pfc.priorities))
        patch: dict[int, int] = {}
        ecn = qos.ecn.for_speed(speed)
        ecn_on = True
        watchdog = qos.pfc.watchdog
        strict = set(qos.ets.strict)
        xoff_pin: int | None = None
        for item in overrides:  # in file order: a later override wins
            trust = item.trust or trust
            pfc = sorted(set(item.pfc)) if item.pfc is not None else pfc
            patch.update(item.dscp_to_tc or {})
            ecn = item.ecn.at(speed) if item.ecn is not None else ecn
            ecn_on = item.ecn_enabled if item.ecn_enabled is not None else ecn_on
            watchdog = item.watchdog or watchdog
            strict = set(item.strict) if item.strict is not None else strict
            xoff_pin = item.xoff_bytes if item.xoff_bytes is not None else xoff_pin
        maps = self.maps(patch)
        buffers = qos.buffers
        pg_profile: tuple[str, BufferProfile] | None = None
        pgs = {0: PROFILE_INGRESS_LOSSY}
        if pfc:
            room = required_headroom(hr.model_asic(asic), speed, cable, mtu, peer_mtu)
            xoff = room.xoff if xoff_pin is None else xoff_pin
            name = lossless_profile_name(speed, cable, mtu, peer_mtu, xoff_pin)
            threshold = ({"dynamic_th": buffers.lossless_dynamic_th} if buffers.mode == "dynamic"
                         else {"static_th": buffers.lossless_static_th})
            pg_profile = (name, BufferProfile(pool=POOL_INGRESS_LOSSLESS, xon=room.xon,
                                              xoff=xoff, size=room.xon + xoff, **threshold))
            for priority in pfc:
                pgs[maps.pfc_to_pg[priority]] = name
        ecn_min, ecn_max = ecn.bytes
        queues = {}
        marked = qos.marked
        for tc in range(8):
            queue = maps.tc_to_queue[tc]
            lossless = tc in qos.pfc.priorities
            trims = qos.trims and tc == qos.roce.priority
            queues[queue] = QueueQos(
                strict=tc in strict, weight=None if tc in strict else qos.ets.weights.get(tc),
                ecn=(EcnProfile(min_bytes=ecn_min, max_bytes=ecn_max,
                                probability=ecn.probability) if tc in marked and ecn_on
                     else None),
                profile=PROFILE_EGRESS_LOSSLESS if lossless else
                PROFILE_EGRESS_TRIM if trims else PROFILE_EGRESS_LOSSY)
        wd = None
        if pfc and watchdog.enabled:
            wd = Watchdog(priorities=pfc, detect_ms=watchdog.detect_ms,
                          restore_ms=watchdog.restore_ms, action=watchdog.action,
                          poll_ms=watchdog.poll_ms)
        trim = qos.trimming
        port = PortQos(trust=trust, maps=maps, pfc=pfc, watchdog=wd,
                       pgs=dict(sorted(pgs.items())), queues=queues, speed_mbps=speed,
                       cable_m=cable, mtu=mtu,
                       trim_dscp=(trim.dscp_to_hosts if to_host else trim.dscp_to_fabric)
                       if qos.trims else None, llr=llr)
        return port, pg_profile


def _device_qos(qos: QosIntent, asic: Asic) -> DeviceQos:
    b = qos.buffers
    sizes = (b.ingress_lossless_pool, b.ingress_lossy_pool, b.egress_lossless_pool,
             b.egress_lossy_pool)
    pools = {name: BufferPool(direction=name.split("_")[0], mode=b.mode, size=size,
                              lossless="lossless" in name)
             for name, size in zip(POOLS, sizes, strict=True)}

    def lossy(pool: str) -> BufferProfile:
        if b.mode == "dynamic":
            return BufferProfile(pool=pool, dynamic_th=b.lossy_dynamic_th)
        return BufferProfile(pool=pool, static_th=b.lossy_static_th)

    egress_lossless = (BufferProfile(pool=POOL_EGRESS_LOSSLESS, dynamic_th=7)
                       if b.mode == "dynamic"
                       else BufferProfile(pool=POOL_EGRESS_LOSSLESS,
                                          static_th=b.egress_lossless_pool))
    profiles = {PROFILE_INGRESS_LOSSY: lossy(POOL_INGRESS_LOSSY),
                PROFILE_EGRESS_LOSSLESS: egress_lossless,
                PROFILE_EGRESS_LOSSY: lossy(POOL_EGRESS_LOSSY)}
    trimming = None
    if qos.trims:
        # the RoCE queue trims what it cannot admit; trimmed packets go on in their own TC
        profiles[PROFILE_EGRESS_TRIM] = lossy(POOL_EGRESS_LOSSY).model_copy(
            update={"discard": TRIM})
        trim = qos.trimming
        trimming = Trimming(size=trim.size, tc=trim.priority, queue=trim.priority)
    return DeviceQos(asic=asic, pools=pools, profiles=dict(sorted(profiles.items())),
                     trimming=trimming)


def _nic(qos: QosIntent, overrides: Iterable[Override]) -> NicQos:
    nic = qos.hosts
    trust, pfc = nic.trust, sorted(set(nic.pfc if nic.pfc is not None else qos.pfc.priorities))
    tos = roce_tos(qos, nic)
    cnp_dscp = nic.cnp_dscp if nic.cnp_dscp is not None else qos.cnp.dscp[0]
    cnp_prio = nic.cnp_priority if nic.cnp_priority is not None else qos.cnp.priority
    # the same classes as the switch port it faces (not the NIC's default DSCP/8 map, which
    # would put DSCP 24-31 into the lossless priority); NIC patches come on top
    table = [qos.tc_of(d) for d in range(64)]
    patch = dict(nic.dscp_to_priority)
    ecn_np, ecn_rp, reorders = nic.ecn_np, nic.ecn_rp, nic.out_of_order
    queue_pairs = nic.queue_pairs
    for item in overrides:
        p = item.nic
        if p is None:
            continue
        trust = p.trust or trust
        pfc = sorted(set(p.pfc)) if p.pfc is not None else pfc
        tos = p.roce_tos if p.roce_tos is not None else tos
        cnp_dscp = p.cnp_dscp if p.cnp_dscp is not None else cnp_dscp
        cnp_prio = p.cnp_priority if p.cnp_priority is not None else cnp_prio
        patch.update(p.dscp_to_priority or {})
        ecn_np = p.ecn_np if p.ecn_np is not None else ecn_np
        ecn_rp = p.ecn_rp if p.ecn_rp is not None else ecn_rp
        reorders = p.out_of_order if p.out_of_order is not None else reorders
        queue_pairs = p.queue_pairs if p.queue_pairs is not None else queue_pairs
    for d, prio in patch.items():
        table[d] = prio
    marked = qos.marked
    return NicQos(trust=trust, pfc=pfc, dscp_to_priority=table, roce_tos=tos, cnp_dscp=cnp_dscp,
                  cnp_priority=cnp_prio, ecn_np=marked if ecn_np else [],
                  ecn_rp=marked if ecn_rp else [], dcqcn=nic.dcqcn,
                  strict_tcs=sorted(qos.ets.strict),
                  tc_bw=[qos.ets.weights.get(tc, 0) for tc in range(8)],
                  pfc_prevention_ms=nic.pfc_prevention_ms, out_of_order=reorders,
                  queue_pairs=queue_pairs)


def plan_lossless(qos: QosIntent, state: FabricState,
                  llr_classes: frozenset[str] = frozenset()) -> None:
    """Add the lossless plane to a planned FabricState (in place); during a profile
    transition, also what every device carries in the profile the fabric leaves. Ports of
    links of `llr_classes` run link-level retry."""
    source = qos.transition_from
    if source is not None:
        leaving = qos.as_profile(source)
        _plan_profile(leaving, state, llr_classes)
        state.transition = Transition(profile=profile(leaving, state.roce_mtu), devices={
            name: SourceQos(qos=device.qos,
                            ports={n: i.qos for n, i in device.interfaces.items()
                                   if i.qos is not None},
                            nics={n: i.nic for n, i in device.interfaces.items()
                                  if i.nic is not None})
            for name, device in state.devices.items()})
    _plan_profile(qos, state, llr_classes)


def _plan_profile(qos: QosIntent, state: FabricState, llr_classes: frozenset[str]) -> None:
    state.lossless = profile(qos, state.roce_mtu)
    planner = _PortPlanner(qos)
    nic_default: NicQos | None = None
    asics: dict[str, Asic] = {}
    switch_qos: dict[str, tuple[DeviceQos, Asic, list[Override]]] = {}
    for device in state.devices.values():
        matching = [o for o in qos.overrides if _matches(o, device.name, None)]
        if device.role is Role.HOST:
            if matching:
                nic = _nic(qos, matching)
            else:
                nic_default = nic_default or _nic(qos, ())
                nic = nic_default
            for iface in device.interfaces.values():
                if iface.kind is IfKind.NIC:
                    iface.nic = nic
            continue
        asic = asics.get(device.platform)
        if asic is None:
            asic = asics[device.platform] = asic_of(qos, device.platform)
        device.qos = _device_qos(qos, asic)
        switch_qos[device.name] = (device.qos, asic, matching)
    # every lossless port is one end of a physical link, which gives its cable and far MTU
    devices = state.devices
    for link in state.links:
        if link.parent is not None:
            continue
        for here, there in ((link.a, link.b), (link.b, link.a)):
            found = switch_qos.get(here.device)
            if found is None:
                continue
            dev_qos, asic, matching = found
            iface = devices[here.device].interfaces[here.port]
            far = devices[there.device].interfaces[there.port]
            overrides = ([o for o in matching if _matches(o, here.device, here.port)]
                         if matching else [])
            mtu = iface.mtu or 0
            port, pg_profile = planner.port(asic, iface.speed_mbps or 0, link.cable_m, mtu,
                                            far.mtu or link.mtu, overrides,
                                            to_host=link.kind is LinkKind.HOST,
                                            llr=link.link_class in llr_classes)
            iface.qos = port
            if pg_profile is not None:
                dev_qos.profiles.setdefault(*pg_profile)
    for dev_qos, _, _ in switch_qos.values():
        dev_qos.profiles = dict(sorted(dev_qos.profiles.items()))
