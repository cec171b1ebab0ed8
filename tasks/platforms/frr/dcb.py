"""The lossless plane on DCB-capable Linux ports (Spectrum under mlxsw): iproute2 commands.

The lab's veth ports have no DCB, so the lab enforces classification with tc HTB and keeps
the ASIC part virtual (kernel_qos, configdb). On a real switchdev port the same port state
becomes (lossless-domain reference §5), in the driver's "TC mode" because ECN needs RED:
- `dcb apptrust` + `dcb app` for DSCP trust and the DSCP -> priority entries,
- an ETS root qdisc (strict bands first, DWRR quanta by ETS weight; mlxsw numbers bands in
  reverse, band b = TC 7-b) with a RED child marking ECN on every lossless TC,
- `dcb pfc` for the PFC priorities and `dcb buffer` for the lossless PG's headroom,
- `devlink sb` pool sizes when the ASIC's devlink handle is known.
The PFC watchdog has no upstream Linux interface; it stays in the switch's CONFIG_DB record.
"""

from __future__ import annotations

from tasks.model.state import (
    POOL_EGRESS_LOSSLESS,
    POOL_EGRESS_LOSSY,
    POOL_INGRESS_LOSSLESS,
    POOL_INGRESS_LOSSY,
    DeviceQos,
    PortQos,
)

TCS = range(8)
# mlxsw numbers shared-buffer pools 0-3 ingress, 4-7 egress
DEVLINK_POOLS = {POOL_INGRESS_LOSSLESS: 0, POOL_INGRESS_LOSSY: 1,
                 POOL_EGRESS_LOSSLESS: 4, POOL_EGRESS_LOSSY: 5}


def _band(tc: int) -> int:
    return 7 - tc


def port_commands(port: str, qos: PortQos, device: DeviceQos) -> list[str]:
    dev = port
    cmds = [f"dcb apptrust set dev {dev} order {'dscp' if qos.trust == 'dscp' else 'pcp'}"]
    entries = " ".join(f"{d}:{tc}" for d, tc in enumerate(qos.maps.dscp_to_tc) if tc)
    cmds.append(f"dcb app flush dev {dev} dscp-prio")
    if entries:
        cmds.append(f"dcb app add dev {dev} dscp-prio {entries}")
    strict = sorted((tc for tc in TCS if qos.queues[qos.maps.tc_to_queue[tc]].strict),
                    reverse=True)
    # mlxsw makes the first N bands strict: every TC above the lowest strict one is strict
    lowest_strict = min(strict) if strict else 8
    n_strict = 8 - lowest_strict
    quanta = [max(qos.queues[qos.maps.tc_to_queue[7 - b]].weight or 0, 1) * 100
              for b in range(n_strict, 8)]
    priomap = " ".join(str(_band(tc)) for tc in TCS)
    cmds.append(f"tc qdisc replace dev {dev} root handle 1: ets bands 8 strict {n_strict}"
                + (f" quanta {' '.join(map(str, quanta))}" if quanta else "")
                + f" priomap {priomap}")
    for tc in TCS:
        ecn = qos.queues[qos.maps.tc_to_queue[tc]].ecn
        if ecn is None:
            continue
        band = _band(tc)
        limit = max(2 * ecn.max_bytes, 1_000_000)
        cmds.append(f"tc qdisc replace dev {dev} parent 1:{band + 1} handle {band + 11}: red "
                    f"limit {limit} avpkt 1000 min {ecn.min_bytes} max {ecn.max_bytes} "
                    f"probability {ecn.probability / 100:g} ecn nodrop")
    pfc = " ".join(f"{p}:on" for p in qos.pfc)
    cmds.append(f"dcb pfc set dev {dev} prio-pfc all:off" + (f" {pfc}" if pfc else ""))
    buffers = {p: qos.maps.pfc_to_pg[p] for p in qos.pfc}
    sizes = {pg: device.profiles[name].size for pg, name in qos.pgs.items()
             if name in device.profiles and device.profiles[name].xoff > 0}
    if sizes:
        prio_buffer = " ".join(f"{p}:{pg}" for p, pg in sorted(buffers.items()))
        sizes_text = " ".join(f"{pg}:{size}" for pg, size in sorted(sizes.items()))
        cmds.append(f"dcb buffer set dev {dev} prio-buffer all:0 {prio_buffer} "
                    f"buffer-size all:0 {sizes_text}")
    return cmds


def device_commands(ports: dict[str, PortQos], device: DeviceQos,
                    devlink: str | None = None) -> list[str]:
    """Every port's commands, plus shared-buffer pools when the devlink handle is known."""
    cmds: list[str] = []
    if devlink is not None:
        for name, pool in sorted(device.pools.items()):
            if name in DEVLINK_POOLS:
                cmds.append(f"devlink sb pool set {devlink} pool {DEVLINK_POOLS[name]} "
                            f"size {pool.size} thtype {pool.mode}")
    for name in sorted(ports):
        cmds += port_commands(name, ports[name], device)
    return cmds
