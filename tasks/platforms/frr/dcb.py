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

Collect reads the port back from the hardware (`read_port`): PFC from `dcb pfc`, trust from
`dcb apptrust` (from whether a DSCP app entry exists before iproute2 had it), the DSCP map
from `dcb app` through the ETS qdisc's priomap, strict bands, DWRR weights and RED/ECN from
`tc qdisc`, PG sizes and priority -> buffer from `dcb buffer`, pool sizes from `devlink sb`.
What it cannot read is unknown with the reason; the watchdog always is (no interface).
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass
from typing import Any

from flatfab.model.state import (
    POOL_EGRESS_LOSSLESS,
    POOL_EGRESS_LOSSY,
    POOL_INGRESS_LOSSLESS,
    POOL_INGRESS_LOSSY,
    BufferProfile,
    DeviceQos,
    EcnProfile,
    PortQos,
    QueueQos,
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


# ---- reading back what the hardware holds ------------------------------------------------

# mlxsw has no PFC watchdog interface upstream (lossless-domain reference §5): the watchdog
# flatfab stores for the port is its own record, not something the switch states
WATCHDOG_UNREAD = ("mlxsw has no PFC watchdog interface; the stored watchdog is flatfab's "
                   "own record, not read from the switch")
WATCHDOG_FIELDS = ("action", "priorities", "detect_ms", "restore_ms", "poll_ms")
POOL_UNREAD = "no devlink handle is configured: flatfab neither sets nor reads the pool size"


def readback_commands(ports: list[str], devlink: str | None = None) -> dict[str, str]:
    """Batch keys -> commands that read each port's DCB and qdisc state (stderr kept, so a
    command that is missing or refuses `-j` says why in its own words)."""
    commands = {}
    for port in sorted(ports):
        dev = shlex.quote(port)
        for what in ("pfc", "app", "apptrust", "buffer"):
            commands[f"dcb {what} {port}"] = f"dcb -j {what} show dev {dev} 2>&1"
        commands[f"qdisc {port}"] = f"tc -j qdisc show dev {dev} 2>&1"
    if devlink is not None:
        commands["devlink sb pool"] = f"devlink -j sb pool show {shlex.quote(devlink)} 2>&1"
    return commands


def _why(text: str, what: str) -> str:
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return f"`{what}` printed no JSON" + (f": {line[:120]}" if line else " (no output)")


def _load(text: str, what: str) -> tuple[Any, str | None]:
    """(parsed JSON, None) or (None, why it cannot be read)."""
    try:
        return json.loads(text), None
    except ValueError:
        return None, _why(text, what)


def _array(value: Any, size: int) -> list[Any] | None:
    """A per-index array as iproute2 prints it: a list, or an object keyed by index."""
    if isinstance(value, list) and len(value) == size:
        return value
    if isinstance(value, dict) and all(str(i) in value for i in range(size)):
        return [value[str(i)] for i in range(size)]
    return None


def _uint(value: Any) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return int(value) if isinstance(value, str) and value.isdigit() else None


def parse_pfc(text: str) -> tuple[list[int] | None, str | None]:
    """PFC priorities from `dcb -j pfc show` (`prio_pfc`: booleans by priority)."""
    data, why = _load(text, "dcb -j pfc show")
    if why is not None:
        return None, why
    flags = _array(data.get("prio_pfc") if isinstance(data, dict) else None, 8)
    if flags is None or not all(isinstance(f, bool) for f in flags):
        return None, "`dcb -j pfc show` has no prio_pfc for all 8 priorities"
    return [p for p, on in enumerate(flags) if on], None


def parse_app(text: str) -> tuple[dict[int, int] | None, str | None]:
    """DSCP -> priority entries from `dcb -j app show` (`dscp_prio`: [dscp, prio] pairs)."""
    data, why = _load(text, "dcb -j app show")
    if why is not None:
        return None, why
    if not isinstance(data, dict):
        return None, "`dcb -j app show` printed no object"
    table: dict[int, int] = {}
    for entry in data.get("dscp_prio") or []:
        pair = entry if isinstance(entry, list) else None
        if isinstance(entry, dict):
            pair = [entry.get("dscp"), entry.get("prio")]
        dscp, prio = (_uint(pair[0]), _uint(pair[1])) if pair and len(pair) == 2 else (None,
                                                                                         None)
        if dscp is None or prio is None or dscp > 63 or prio > 7:
            return None, f"`dcb -j app show` has a dscp_prio entry it cannot read: {entry!r}"
        table[dscp] = prio  # several priorities for one DSCP: the kernel uses the last
    return table, None


def parse_apptrust(text: str) -> tuple[str | None, str | None]:
    """The first trusted selector of `dcb -j apptrust show` (`order`), as dscp or pcp."""
    data, why = _load(text, "dcb -j apptrust show")
    if why is not None:
        return None, why
    order = data.get("order") if isinstance(data, dict) else None
    if not isinstance(order, list):
        return None, "`dcb -j apptrust show` has no order"
    first = next((o for o in order if o in ("dscp", "pcp")), None)
    return first or "pcp", None  # nothing trusted: classification falls back to PCP/default


def parse_buffer(text: str) -> tuple[tuple[list[int], list[int]] | None, str | None]:
    """(priority -> buffer, buffer -> size in bytes) from `dcb -j buffer show`."""
    data, why = _load(text, "dcb -j buffer show")
    if why is not None:
        return None, why
    if not isinstance(data, dict):
        return None, "`dcb -j buffer show` printed no object"
    prio = _array(data.get("prio_buffer"), 8)
    sizes = _array(data.get("buffer_size"), 8)
    if prio is None or sizes is None:
        return None, "`dcb -j buffer show` lacks prio_buffer or buffer_size"
    prio_ints, size_ints = [_uint(v) for v in prio], [_uint(v) for v in sizes]
    if None in prio_ints or None in size_ints:
        return None, "`dcb -j buffer show` has a non-numeric buffer"
    return ([v for v in prio_ints if v is not None], [v for v in size_ints if v is not None]), None


@dataclass(frozen=True)
class Scheduler:
    """The port's ETS root qdisc (bands by priority, strict bands, DWRR quanta) and the
    RED children that mark ECN, by band."""

    priomap: list[int]
    strict: int
    quanta: list[int]
    red: dict[int, EcnProfile]


def parse_qdiscs(text: str) -> tuple[Scheduler | None, str | None]:
    data, why = _load(text, "tc -j qdisc show")
    if why is not None:
        return None, why
    items = [q for q in data if isinstance(q, dict)] if isinstance(data, list) else []
    root = next((q for q in items if q.get("kind") == "ets" and q.get("root")), None)
    if root is None:
        return None, "the port has no ETS root qdisc"
    found = root.get("options")
    opts: dict[str, Any] = found if isinstance(found, dict) else {}
    priomap = [_uint(v) for v in (opts.get("priomap") or [])]
    strict = _uint(opts.get("strict", 0))
    quanta = [_uint(v) for v in (opts.get("quanta") or [])]
    if len(priomap) < 8 or None in priomap or strict is None or None in quanta:
        return None, "the ETS root qdisc lacks its priomap, strict bands or quanta"
    red: dict[int, EcnProfile] = {}
    handle = str(root.get("handle", "1:"))
    for q in items:
        parent, ropts = str(q.get("parent", "")), q.get("options")
        if q.get("kind") != "red" or not parent.startswith(handle) or not isinstance(ropts,
                                                                                       dict):
            continue
        band = _uint(parent[len(handle):])
        low, high, prob = _uint(ropts.get("min")), _uint(ropts.get("max")), ropts.get(
            "probability")
        marks = ropts.get("ecn") is True or "ecn" in str(ropts.get("flags", "")).split()
        if band is None or band < 1 or low is None or high is None or not marks \
                or not isinstance(prob, int | float):
            continue  # a RED child that does not mark ECN is not an ECN profile
        red[band - 1] = EcnProfile(min_bytes=low, max_bytes=high,
                                   probability=round(float(prob) * 100))
    return Scheduler(priomap=[int(v) for v in priomap[:8] if v is not None], strict=strict,
                     quanta=[int(v) for v in quanta if v is not None], red=red), None


def parse_pools(text: str, devlink: str) -> tuple[dict[int, tuple[int, str]] | None,
                                                   str | None]:
    """devlink pool number -> (size, threshold type) from `devlink -j sb pool show`."""
    data, why = _load(text, "devlink -j sb pool show")
    if why is not None:
        return None, why
    pools = data.get("pool") if isinstance(data, dict) else None
    rows = pools.get(devlink) if isinstance(pools, dict) else None
    if not isinstance(rows, list):
        return None, f"`devlink -j sb pool show` lists no pools of {devlink}"
    result = {}
    for row in rows:
        number = _uint(row.get("pool")) if isinstance(row, dict) else None
        size = _uint(row.get("size")) if isinstance(row, dict) else None
        if number is not None and size is not None and row.get("sb", 0) == 0:
            result[number] = (size, str(row.get("thtype", "")))
    return result, None


def read_device(stored: DeviceQos, out: dict[str, str], devlink: str | None) -> DeviceQos:
    """The device's pools as devlink states them; unknown with the reason where it cannot."""
    pools, unknown = dict(stored.pools), dict(stored.unknown)
    read: dict[int, tuple[int, str]] | None = None
    why = POOL_UNREAD
    if devlink is not None:
        read, found = parse_pools(out.get("devlink sb pool", ""), devlink)
        why = found or ""
    for role, pool in stored.pools.items():
        number = DEVLINK_POOLS.get(role)
        if read is not None and number is not None and number in read:
            size, thtype = read[number]
            pools[role] = pool.model_copy(update={
                "size": size, "mode": thtype if thtype in ("static", "dynamic") else pool.mode})
        else:
            unknown[f"pools.{role}.size"] = (why if read is None else
                                             f"devlink lists no pool for {role}")
    return stored.model_copy(update={"pools": pools, "unknown": unknown, "virtual": False})


def read_port(port: str, stored: PortQos, device: DeviceQos, out: dict[str, str]
              ) -> tuple[PortQos | None, dict[str, BufferProfile], list[str]]:
    """(the port as the hardware holds it, profiles it adds, errors).

    PFC and the ETS qdisc are what every lossless check judges: a port whose PFC or
    scheduler cannot be read is not judged at all (None, with the reason as an error).
    """
    pfc, why_pfc = parse_pfc(out.get(f"dcb pfc {port}", ""))
    sched, why_sched = parse_qdiscs(out.get(f"qdisc {port}", ""))
    app, why_app = parse_app(out.get(f"dcb app {port}", ""))
    errors = [f"lossless: port {port}: {why}" for why in (why_pfc, why_sched, why_app) if why]
    if pfc is None or sched is None or app is None:
        return None, {}, errors
    unknown = dict(stored.unknown)
    trust, _ = parse_apptrust(out.get(f"dcb apptrust {port}", ""))
    if trust is None:  # iproute2 before `apptrust`: mlxsw trusts DSCP once an entry exists
        trust = "dscp" if app else "pcp"
    # a DSCP without an app entry gets priority 0; priority p goes to band priomap[p],
    # and mlxsw numbers bands in reverse (band b = TC 7-b)
    dscp_to_tc = [7 - sched.priomap[app.get(d, 0)] for d in range(64)]
    queues: dict[int, QueueQos] = {}
    for queue, old in stored.queues.items():
        tcs = [tc for tc in TCS if stored.maps.tc_to_queue[tc] == queue]
        band = _band(tcs[0]) if tcs else None
        if band is None:
            queues[queue] = old
            continue
        strict = band < sched.strict
        index = band - sched.strict
        quantum = sched.quanta[index] if not strict and index < len(sched.quanta) else None
        # the push writes an unset weight as quantum 100 (weight 1): read it back as unset
        weight = (None if quantum is None or (quantum == 100 and old.weight is None)
                  else quantum // 100)
        queues[queue] = old.model_copy(update={"strict": strict, "weight": weight,
                                               "ecn": sched.red.get(band)})
    pfc_to_pg = list(stored.maps.pfc_to_pg)
    pgs = dict(stored.pgs)
    added: dict[str, BufferProfile] = {}
    buffers, why_buf = parse_buffer(out.get(f"dcb buffer {port}", ""))
    lossless_pgs = sorted(pg for pg, name in stored.pgs.items()
                          if name in device.profiles and device.profiles[name].xoff > 0)
    if buffers is None:
        unknown.update({f"pgs.{pg}": why_buf or "" for pg in lossless_pgs})
    else:
        prio_buffer, sizes = buffers
        for p in pfc:
            pfc_to_pg[p] = prio_buffer[p]
        for pg in lossless_pgs:
            profile = device.profiles[stored.pgs[pg]]
            if sizes[pg] != profile.size:  # the port holds its own size: judge that one
                name = f"{stored.pgs[pg]}@{port}"
                added[name] = profile.model_copy(update={"size": sizes[pg]})
                pgs[pg] = name
    watchdog = stored.watchdog
    if watchdog is not None:
        watchdog = watchdog.model_copy(update={
            "action": None, "unknown": dict.fromkeys(WATCHDOG_FIELDS, WATCHDOG_UNREAD)})
    seen = stored.model_copy(update={
        "trust": trust, "pfc": pfc, "watchdog": watchdog, "pgs": pgs, "queues": queues,
        "unknown": unknown, "maps": stored.maps.model_copy(update={
            "dscp_to_tc": dscp_to_tc, "pfc_to_pg": pfc_to_pg})})
    return seen, added, errors
