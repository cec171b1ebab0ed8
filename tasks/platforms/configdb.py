"""The lossless state of a switch in SONiC CONFIG_DB table format, both ways.

The lab's switches keep the ASIC-only part of the plane (PFC, ECN, buffers, watchdog) in a
*virtual ASIC* in this format, the way SONiC's virtual switch accepts QoS without an ASIC;
a SONiC platform pushes the same tables. Keys are "TABLE" -> "key[|subkey]" -> field -> str.
FLATFAB_ASIC is flatfab's own table: the headroom inputs SONiC keeps in STATE_DB.

Packet trimming follows SONiC's packet-trimming design (sonic-net/SONiC
doc/packet_trimming): `SWITCH_TRIMMING|GLOBAL` (size, `dscp_value` "from-tc" with `tc_value`,
`queue_index`), a buffer profile's `packet_discard_action` "trim", and each port's
`tc_to_dscp_map` giving trimmed packets the DSCP of that port's direction (asymmetric DSCP:
towards hosts or towards the fabric).

Link-level retry is a row per port of `LLR_PORT` (`llr_local`, `llr_remote`: the fields of
SONiC's `sonic-llr-port` model, in sonic-buildimage but in no release yet; flatfab writes and
reads "enabled" in both, as the model spells it).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from flatfab.model.state import (
    POOL_EGRESS_LOSSLESS,
    POOL_EGRESS_LOSSY,
    PROFILE_EGRESS_LOSSY,
    Asic,
    BufferPool,
    BufferProfile,
    DeviceQos,
    DeviceState,
    EcnProfile,
    PortQos,
    QosMaps,
    QueueQos,
    Trimming,
    Watchdog,
)

ConfigDb = dict[str, dict[str, dict[str, str]]]
MAP_TABLES = {  # table -> (QosMaps field, PORT_QOS_MAP field)
    "DSCP_TO_TC_MAP": ("dscp_to_tc", "dscp_to_tc_map"),
    "TC_TO_PRIORITY_GROUP_MAP": ("tc_to_pg", "tc_to_pg_map"),
    "TC_TO_QUEUE_MAP": ("tc_to_queue", "tc_to_queue_map"),
    "MAP_PFC_PRIORITY_TO_QUEUE": ("pfc_to_queue", "pfc_to_queue_map"),
    "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP": ("pfc_to_pg", "pfc_to_pg_map"),
}
DOT1P_TABLE = "DOT1P_TO_TC_MAP"
MAP_BASE = "AI_ROCE"
TRIM_TABLE = "SWITCH_TRIMMING"
TRIM_MAP_TABLE = "TC_TO_DSCP_MAP"
FROM_TC = "from-tc"  # trimmed packets take their DSCP from the egress port's tc_to_dscp_map
LLR_TABLE = "LLR_PORT"
LLR_ON = {"llr_local": "enabled", "llr_remote": "enabled"}
# a class the intent gives no ETS share: SONiC's DWRR weights are relative and at least 1
# (sonic-scheduler.yang), so it gets the smallest one under a name that reads back as "none"
SCHED_BEST_EFFORT = "SCHED_DWRR_BEST_EFFORT"
BEST_EFFORT_WEIGHT = 1


def pool_key(role: str) -> str:
    """SONiC's name of a buffer pool role: ingress_lossless -> ingress_lossless_pool."""
    return f"{role}_pool"


def profile_key(name: str) -> str:
    """SONiC's name of a buffer profile: egress_lossless -> egress_lossless_profile; a
    lossless PG profile (lossless_<speed>_...) -> pg_lossless_<speed>_..._profile."""
    return f"pg_{name}_profile" if name.startswith("lossless_") else f"{name}_profile"


def _role(key: str, suffix: str) -> str:
    """The neutral name back from SONiC's spelling (foreign names pass unchanged)."""
    if key.endswith(suffix):
        key = key[:-len(suffix)]
        return key[3:] if key.startswith("pg_lossless_") else key
    return key


class ConfigDbError(ValueError):
    """CONFIG_DB content that does not describe a lossless state flatfab can read."""


def _prio_list(values: list[int]) -> str:
    return ",".join(str(v) for v in values)


def _named(names: dict[tuple[int, ...], str], values: list[int]) -> str:
    """A stable name per distinct map on the device: AI_ROCE, AI_ROCE_1, ..."""
    key = tuple(values)
    if key not in names:
        names[key] = MAP_BASE if not names else f"{MAP_BASE}_{len(names)}"
    return names[key]


def to_config_db(device: DeviceState) -> ConfigDb:
    """The device's planned lossless state as CONFIG_DB tables (empty without QoS)."""
    if device.qos is None:
        return {}
    db: ConfigDb = {}

    def put(table: str, key: str, fields: dict[str, str]) -> None:
        db.setdefault(table, {})[key] = fields

    qos = device.qos
    asic = qos.asic
    put("FLATFAB_ASIC", "localhost", {
        "family": asic.family, "cell_bytes": str(asic.cell_bytes),
        "mac_phy_bytes": str(asic.mac_phy_bytes), "pipeline_bytes": str(asic.pipeline_bytes),
        "buffer_bytes": str(asic.buffer_bytes)})
    for name, pool in qos.pools.items():
        put("BUFFER_POOL", pool_key(name), {"type": pool.direction, "mode": pool.mode,
                                            "size": str(pool.size)})
    for name, prof in qos.profiles.items():
        fields = {"pool": pool_key(prof.pool), "size": str(prof.size)}
        if prof.xoff or prof.xon:
            fields |= {"xon": str(prof.xon), "xoff": str(prof.xoff)}
        if prof.dynamic_th is not None:
            fields["dynamic_th"] = str(prof.dynamic_th)
        if prof.static_th is not None:
            fields["static_th"] = str(prof.static_th)
        if prof.discard is not None:
            fields["packet_discard_action"] = prof.discard
        put("BUFFER_PROFILE", profile_key(name), fields)
    trimming = qos.trimming
    if trimming is not None:
        put(TRIM_TABLE, "GLOBAL", {"size": str(trimming.size), "dscp_value": FROM_TC,
                                   "tc_value": str(trimming.tc),
                                   "queue_index": str(trimming.queue)})
    map_names: dict[str, dict[tuple[int, ...], str]] = {t: {} for t in (*MAP_TABLES, DOT1P_TABLE)}
    # ports that share a PortQos object share its rows (and dump() writes each once)
    rows_of: dict[int, _PortRows] = {}
    cables = db.setdefault("CABLE_LENGTH", {}).setdefault("AZURE", {})
    tables = {t: db.setdefault(t, {}) for t in ("PORT", "PORT_QOS_MAP", "PFC_WD", "BUFFER_PG",
                                                "QUEUE", "BUFFER_QUEUE", LLR_TABLE)}
    watchdog_poll: int | None = None
    for port_name, iface in device.interfaces.items():
        port = iface.qos
        if port is None:
            continue
        rows = rows_of.get(id(port))
        if rows is None:
            rows = rows_of[id(port)] = _port_rows(port, map_names, put, trimming)
        tables["PORT"][port_name] = rows.port
        if port.llr:
            tables[LLR_TABLE][port_name] = dict(LLR_ON)
        cables[port_name] = rows.cable
        tables["PORT_QOS_MAP"][port_name] = rows.qos_map
        if rows.watchdog is not None:
            tables["PFC_WD"][port_name] = rows.watchdog
            poll = port.watchdog.poll_ms if port.watchdog else 0
            watchdog_poll = min(poll, watchdog_poll or poll)
        for pg, fields in rows.pgs:
            tables["BUFFER_PG"][f"{port_name}|{pg}"] = fields
        for queues, fields in rows.queues:
            tables["QUEUE"][f"{port_name}|{queues}"] = fields
        for queues, fields in rows.buffer_queues:
            tables["BUFFER_QUEUE"][f"{port_name}|{queues}"] = fields
    if watchdog_poll is not None:
        put("PFC_WD", "GLOBAL", {"POLL_INTERVAL": str(watchdog_poll)})
        put("DEVICE_METADATA", "localhost", {"default_pfcwd_status": "enable"})
    return {t: rows for t, rows in db.items() if rows}  # dump() sorts


@dataclass(frozen=True)
class _PortRows:
    port: dict[str, str]
    cable: str
    qos_map: dict[str, str]
    watchdog: dict[str, str] | None
    pgs: list[tuple[int, dict[str, str]]]
    queues: list[tuple[str, dict[str, str]]]  # "3" or a range "4-5", as SONiC keys allow
    buffer_queues: list[tuple[str, dict[str, str]]]


def _ranges(rows: list[tuple[int, dict[str, str]]]) -> list[tuple[str, dict[str, str]]]:
    """Consecutive queues with equal rows as one range row ("0-2")."""
    out: list[tuple[int, int, dict[str, str]]] = []
    for index, fields in rows:
        if out and out[-1][1] == index - 1 and out[-1][2] == fields:
            out[-1] = (out[-1][0], index, out[-1][2])
        else:
            out.append((index, index, fields))
    return [(str(a) if a == b else f"{a}-{b}", fields) for a, b, fields in out]


def _indexes(text: str, where: str) -> list[int]:
    first, _, last = text.partition("-")
    if not first.isdigit() or (last and not last.isdigit()):
        raise ConfigDbError(f"{where}: bad index {text!r}")
    return list(range(int(first), int(last or first) + 1))


def _port_rows(port: PortQos, map_names: dict[str, dict[tuple[int, ...], str]],
               put: Callable[[str, str, dict[str, str]], None],
               trimming: Trimming | None) -> _PortRows:
    """The rows of one distinct port state; shared maps, schedulers and WRED go to `put`."""
    qos_map: dict[str, str] = {}
    if trimming is not None and port.trim_dscp is not None:
        name = f"FLATFAB_TRIM_{port.trim_dscp}"
        put(TRIM_MAP_TABLE, name, {str(trimming.tc): str(port.trim_dscp)})
        qos_map["tc_to_dscp_map"] = name
    for map_table, (attr, map_field) in MAP_TABLES.items():
        table, field = map_table, map_field
        values: list[int] = getattr(port.maps, attr)
        if table == "DSCP_TO_TC_MAP" and port.trust == "pcp":
            table, field, values = DOT1P_TABLE, "dot1p_to_tc_map", list(range(8))
        name = _named(map_names[table], values)
        put(table, name, {str(i): str(v) for i, v in enumerate(values)})
        qos_map[field] = name
    if port.pfc:
        qos_map["pfc_enable"] = _prio_list(port.pfc)
    watchdog = None
    if port.watchdog is not None:
        wd = port.watchdog
        qos_map["pfcwd_sw_enable"] = _prio_list(wd.priorities)
        watchdog = {"detection_time": str(wd.detect_ms), "restoration_time": str(wd.restore_ms)}
        if wd.action is not None:
            watchdog["action"] = wd.action
    queues = []
    for queue, q in port.queues.items():
        sched = ("SCHED_STRICT" if q.strict else
                 f"SCHED_DWRR_{q.weight}" if q.weight else SCHED_BEST_EFFORT)
        put("SCHEDULER", sched, {"type": "STRICT"} if q.strict
            else {"type": "DWRR", "weight": str(q.weight or BEST_EFFORT_WEIGHT)})
        fields = {"scheduler": sched}
        if q.ecn is not None:
            wred = f"ECN_{q.ecn.min_bytes}_{q.ecn.max_bytes}_{q.ecn.probability}"
            put("WRED_PROFILE", wred, {
                "ecn": "ecn_all", "wred_green_enable": "true",
                "green_min_threshold": str(q.ecn.min_bytes),
                "green_max_threshold": str(q.ecn.max_bytes),
                "green_drop_probability": str(q.ecn.probability)})
            fields["wred_profile"] = wred
        queues.append((queue, fields, {"profile": profile_key(q.profile)}))
    queue_rows = _ranges([(queue, fields) for queue, fields, _ in queues])
    buffer_rows = _ranges([(queue, buffer) for queue, _, buffer in queues])
    return _PortRows(port={"speed": str(port.speed_mbps), "mtu": str(port.mtu)},
                     cable=f"{port.cable_m:g}m", qos_map=qos_map, watchdog=watchdog,
                     pgs=[(pg, {"profile": profile_key(p)}) for pg, p in port.pgs.items()],
                     queues=queue_rows, buffer_queues=buffer_rows)


def _int(db: ConfigDb, table: str, key: str, field: str, default: int | None = None) -> int:
    try:
        return int(db[table][key][field])
    except KeyError:
        if default is not None:
            return default
        raise ConfigDbError(f"{table}|{key} has no {field}") from None
    except ValueError:
        raise ConfigDbError(f"{table}|{key}.{field} is not a number: "
                            f"{db[table][key][field]!r}") from None


_REFERENCE = re.compile(r"^\[([A-Z_]+)[|:](.*)\]$")
NULL_PROFILE = "NULL"


def ref(value: str | None) -> str | None:
    """The object a CONFIG_DB field names, in either spelling releases use: a plain name
    (202012 on) or a table reference ``[BUFFER_PROFILE|name]`` (older releases; APPL_DB
    writes ``[BUFFER_PROFILE_TABLE:name]``). None for no name, and for ``NULL``: the dynamic
    buffer model's "no profile here, buffermgrd computes one"."""
    if value is None:
        return None
    text = value.strip()
    found = _REFERENCE.match(text)
    if found:
        text = found.group(2).strip()
    return None if text in ("", NULL_PROFILE) else text


def plain_field(value: str) -> str:
    """A field with its object references in the plain form of 202012 on: ``[SCHEDULER|x]``
    (and APPL_DB's ``[TABLE:x]``) as ``x``, each of a comma-separated list of them
    (``profile_list``) too; any other value unchanged."""
    parts = value.split(",")
    found = [_REFERENCE.match(part.strip()) for part in parts]
    if not all(found):
        return value
    return ",".join(m.group(2).strip() for m in found if m)


def plain_references(db: ConfigDb) -> ConfigDb:
    """`db` with every object reference in the plain form (plain_field): a switch before
    202012 and the render name the same objects, so drift compares the names, not the
    spelling. Rows without a reference are shared with `db`, not copied."""
    out: ConfigDb = {}
    for table, rows in db.items():
        out[table] = {}
        for key, fields in rows.items():
            plain = {name: plain_field(value) for name, value in fields.items()}
            out[table][key] = fields if plain == fields else plain
    return out


def _map(db: ConfigDb, table: str, name: str | None, size: int, where: str) -> list[int]:
    if name is None:
        return list(range(size)) if table != "DSCP_TO_TC_MAP" else [0] * size
    rows = db.get(table, {}).get(name)
    if rows is None:
        raise ConfigDbError(f"{where} refers to {table}|{name}, which does not exist")
    values = [0] * size
    for key, value in rows.items():
        if not (key.isdigit() and value.isdigit() and int(key) < size):
            raise ConfigDbError(f"{table}|{name}: bad entry {key!r}: {value!r}")
        values[int(key)] = int(value)
    return values


def _prios(text: str | None) -> list[int]:
    return sorted({int(p) for p in text.split(",") if p.strip()}) if text else []


def _trust(qmap: dict[str, str], global_map: dict[str, str]) -> tuple[str, str | None]:
    """(trust, DSCP map name): SONiC has no trust setting; a port classifies by the map bound
    to it (PORT_QOS_MAP dscp_to_tc_map, else dot1p_to_tc_map; a switch-wide dscp_to_tc_map on
    PORT_QOS_MAP|global serves ports without their own). With none bound it trusts neither."""
    if ref(qmap.get("dscp_to_tc_map")):
        return "dscp", ref(qmap.get("dscp_to_tc_map"))
    if ref(qmap.get("dot1p_to_tc_map")):
        return "pcp", None
    if ref(global_map.get("dscp_to_tc_map")):
        return "dscp", ref(global_map.get("dscp_to_tc_map"))
    return "none", None


def _watchdog(db: ConfigDb, port: str, qmap: dict[str, str]) -> Watchdog | None:
    """A port's PFC watchdog as configured: PFC_WD|<port> plus the priorities it covers
    (pfcwd_sw_enable; releases before it watch the pfc_enable priorities). A setting the
    rows leave out is unknown with the reason, never a default."""
    row = db.get("PFC_WD", {}).get(port)
    prios = qmap.get("pfcwd_sw_enable")
    if row is None or not (prios or qmap.get("pfc_enable")):
        return None
    unknown: dict[str, str] = {}
    if prios is None:
        prios = qmap.get("pfc_enable")
        unknown["priorities"] = (f"PORT_QOS_MAP|{port} has no pfcwd_sw_enable: read as its "
                                 "pfc_enable priorities, as releases without the field do")
    values: dict[str, int] = {}
    for name, (table, key, field) in {"detect_ms": ("PFC_WD", port, "detection_time"),
                                      "restore_ms": ("PFC_WD", port, "restoration_time"),
                                      "poll_ms": ("PFC_WD", "GLOBAL", "POLL_INTERVAL")}.items():
        text = db.get(table, {}).get(key, {}).get(field, "").strip()
        if text.isdigit():
            values[name] = int(text)
        else:
            values[name] = 0
            unknown[name] = (f"{table}|{key} has no {field}" if not text else
                             f"{table}|{key}.{field} is not a number: {text[:40]!r}")
    action = row.get("action", "").strip() or None
    if action is None:
        unknown["action"] = f"PFC_WD|{port} has no action"
    return Watchdog(priorities=_prios(prios), action=action, unknown=unknown, **values)


def _per_port(db: ConfigDb) -> dict[str, dict[str, dict[str, str]]]:
    """"TABLE:port" -> index -> row of BUFFER_PG, QUEUE and BUFFER_QUEUE; keys are
    ``port|index`` or ``port|first-last`` (older releases also list ports: ``Ethernet0,
    Ethernet4|3-4``)."""
    per_port: dict[str, dict[str, dict[str, str]]] = {}
    for table in ("BUFFER_PG", "QUEUE", "BUFFER_QUEUE"):
        for key, row in db.get(table, {}).items():
            ports, _, index = key.partition("|")
            for one in _indexes(index, f"{table}|{key}"):
                for port in ports.split(","):
                    per_port.setdefault(f"{table}:{port.strip()}", {})[str(one)] = row
    return per_port


def from_config_db(db: ConfigDb, *, virtual: bool) -> tuple[DeviceQos | None, dict[str, PortQos]]:
    """Read CONFIG_DB tables back into the model (None, {} when there is no QoS)."""
    if not db.get("PORT_QOS_MAP") and not db.get("FLATFAB_ASIC"):
        return None, {}
    asic_row = db.get("FLATFAB_ASIC", {}).get("localhost", {})
    asic = Asic(family=asic_row.get("family", "unknown"),
                **{f: _int(db, "FLATFAB_ASIC", "localhost", f, 0)
                   for f in ("cell_bytes", "mac_phy_bytes", "pipeline_bytes", "buffer_bytes")})
    pools = {_role(name, "_pool"): BufferPool(
        direction=row.get("type", ""), mode=row.get("mode", ""),
        size=_int(db, "BUFFER_POOL", name, "size", 0), lossless="lossless" in name)
        for name, row in db.get("BUFFER_POOL", {}).items()}
    # the dynamic buffer model leaves pool sizes to the buffer manager: not stated, not zero
    device_unknown = {f"pools.{_role(name, '_pool')}.size":
                      f"BUFFER_POOL|{name} has no size (the buffer manager sizes it)"
                      for name, row in db.get("BUFFER_POOL", {}).items()
                      if not str(row.get("size", "")).strip()}
    profiles = {}
    for name, row in db.get("BUFFER_PROFILE", {}).items():
        if name == NULL_PROFILE:  # the old formats' placeholder object, not a profile
            continue
        th = {k: _int(db, "BUFFER_PROFILE", name, k) for k in ("dynamic_th", "static_th")
              if k in row}
        discard = row.get("packet_discard_action", "drop")
        profiles[_role(name, "_profile")] = BufferProfile(
            pool=_role(ref(row.get("pool")) or "", "_pool"),
            size=_int(db, "BUFFER_PROFILE", name, "size", 0),
            xon=_int(db, "BUFFER_PROFILE", name, "xon", 0),
            xoff=_int(db, "BUFFER_PROFILE", name, "xoff", 0), **th,
            discard=None if discard == "drop" else discard)
    trimming, same_dscp = _trimming(db)
    if trimming is not None and "tc_value" not in db[TRIM_TABLE]["GLOBAL"]:
        # symmetric DSCP: the switch states no TC for trimmed packets, none is guessed
        device_unknown["trimming.tc"] = f"{TRIM_TABLE}|GLOBAL has no tc_value (symmetric DSCP)"
    device = DeviceQos(asic=asic, pools=pools, profiles=profiles, trimming=trimming,
                       virtual=virtual, unknown=device_unknown)
    ports: dict[str, PortQos] = {}
    per_port = _per_port(db)
    cables = db.get("CABLE_LENGTH", {}).get("AZURE", {})
    global_map = db.get("PORT_QOS_MAP", {}).get("global", {})
    bound: dict[tuple[str | None, ...], QosMaps] = {}
    made_queues: dict[tuple[str | None, str | None, str | None], QueueQos] = {}
    for port_name, qmap in db.get("PORT_QOS_MAP", {}).items():
        if port_name == "global":
            continue
        where = f"PORT_QOS_MAP|{port_name}"
        unknown: dict[str, str] = {}
        # a row that binds no map is a stated value, never unknown: the port classifies by
        # none (every packet to TC 0), and qos.trust names it
        trust, dscp_map = _trust(qmap, global_map)
        named = tuple(dscp_map if attr == "dscp_to_tc" else ref(qmap.get(field))
                      for attr, field in MAP_TABLES.values())
        maps = bound.get(named)
        if maps is None:  # ports share a few map bindings: each read once
            maps = bound[named] = QosMaps(**{
                attr: _map(db, table, name, 64 if attr == "dscp_to_tc" else 8, where)
                for (table, (attr, _)), name in zip(MAP_TABLES.items(), named, strict=True)})
        pfc = _prios(qmap.get("pfc_enable"))
        pgs: dict[int, str] = {}
        for pg, row in per_port.get(f"BUFFER_PG:{port_name}", {}).items():
            pg_profile = ref(row.get("profile"))
            if pg_profile is None:
                unknown[f"pgs.{pg}"] = (f"BUFFER_PG|{port_name}|{pg} has profile "
                                        f"{row.get('profile', '')!r}: the switch computes it "
                                        "(dynamic buffer model), CONFIG_DB does not hold it")
            else:
                pgs[int(pg)] = _role(pg_profile, "_profile")
        queues = {}
        buffer_queues = per_port.get(f"BUFFER_QUEUE:{port_name}", {})
        for q, row in per_port.get(f"QUEUE:{port_name}", {}).items():
            # a thousand ports name the same few schedulers and profiles: one model each
            key = (ref(row.get("scheduler")), ref(row.get("wred_profile")),
                   ref(buffer_queues.get(q, {}).get("profile")))
            made = made_queues.get(key)
            if made is not None:
                queues[int(q)] = made
                continue
            sched_name = ref(row.get("scheduler")) or ""
            sched = db.get("SCHEDULER", {}).get(sched_name, {})
            strict = sched.get("type") == "STRICT"
            wred_name = ref(row.get("wred_profile"))
            ecn = None
            if wred_name:
                wred = db.get("WRED_PROFILE", {}).get(wred_name)
                if wred is None:
                    raise ConfigDbError(f"QUEUE|{port_name}|{q} refers to WRED_PROFILE|"
                                        f"{wred_name}, which does not exist")
                if wred.get("ecn", "ecn_none") != "ecn_none":
                    ecn = EcnProfile(
                        min_bytes=_int(db, "WRED_PROFILE", wred_name, "green_min_threshold"),
                        max_bytes=_int(db, "WRED_PROFILE", wred_name, "green_max_threshold"),
                        probability=_int(db, "WRED_PROFILE", wred_name,
                                         "green_drop_probability", 100))
            weighted = not strict and sched_name != SCHED_BEST_EFFORT
            queues[int(q)] = made_queues[key] = QueueQos(
                strict=strict, weight=int(sched.get("weight", "0") or 0) or None
                if weighted else None, ecn=ecn,
                profile=_role(ref(buffer_queues.get(q, {}).get("profile")) or "", "_profile"))
        port_row = db.get("PORT", {}).get(port_name, {})
        cable = cables.get(port_name, "0m").removesuffix("m") or "0"
        ports[port_name] = PortQos(
            trust=trust, maps=maps, pfc=pfc, watchdog=_watchdog(db, port_name, qmap),
            pgs=dict(sorted(pgs.items())), queues=dict(sorted(queues.items())),
            speed_mbps=int(port_row.get("speed", "0")), cable_m=float(cable),
            mtu=int(port_row.get("mtu", "0")),
            trim_dscp=same_dscp if same_dscp is not None or trimming is None
            else _trim_dscp(db, qmap, trimming.tc, where),
            llr=db.get(LLR_TABLE, {}).get(port_name) == LLR_ON, unknown=unknown)
    return device, ports


def _trimming(db: ConfigDb) -> tuple[Trimming | None, int | None]:
    """The switch's trimming, and the one DSCP every trimmed packet gets (symmetric DSCP;
    None where each port's tc_to_dscp_map gives it)."""
    row = db.get(TRIM_TABLE, {}).get("GLOBAL")
    if row is None:
        return None, None
    tc = _int(db, TRIM_TABLE, "GLOBAL", "tc_value", 0)
    queue = row.get("queue_index", "")
    trimming = Trimming(size=_int(db, TRIM_TABLE, "GLOBAL", "size"), tc=tc,
                        # "dynamic": the queue of the trimmed packet's TC
                        queue=tc if queue == "dynamic" else _int(db, TRIM_TABLE, "GLOBAL",
                                                                  "queue_index"))
    dscp = row.get("dscp_value", FROM_TC)
    return trimming, None if dscp == FROM_TC else _int(db, TRIM_TABLE, "GLOBAL", "dscp_value")


def _trim_dscp(db: ConfigDb, qmap: dict[str, str], tc: int, where: str) -> int | None:
    """The DSCP a port's tc_to_dscp_map gives trimmed packets (None: the port has none)."""
    name = ref(qmap.get("tc_to_dscp_map"))
    if name is None:
        return None
    row = db.get(TRIM_MAP_TABLE, {}).get(name)
    if row is None:
        raise ConfigDbError(f"{where} refers to {TRIM_MAP_TABLE}|{name}, which does not exist")
    value = row.get(str(tc))
    return None if value is None else _int(db, TRIM_MAP_TABLE, name, str(tc))


def normalize(data: Any) -> tuple[ConfigDb, list[str]]:
    """CONFIG_DB as a switch prints it (`show runningconfiguration all`, config_db.json) in
    flatfab's table -> key -> field -> string shape, and what was set aside.

    A switch carries more than flatfab reads: a top-level value that is not a table (202405
    on print the FRR config as a `bgpraw` string beside the tables) is set aside; a list field
    (ACL_TABLE ports, VLAN dhcp_servers, PORTCHANNEL members, ...) becomes SONiC's own Redis
    spelling, ``name@`` with the items joined by commas; a number or boolean becomes its
    text. Nothing here refuses the switch.
    """
    if not isinstance(data, dict):
        raise ConfigDbError("CONFIG_DB content must be an object of tables")
    db: ConfigDb = {}
    aside: list[str] = []
    for table, rows in data.items():
        if not isinstance(rows, dict):
            aside.append(f"{table}: not a table ({type(rows).__name__})")
            continue
        out = db.setdefault(str(table), {})
        for key, fields in rows.items():
            if not isinstance(fields, dict):
                aside.append(f"{table}|{key}: not a row ({type(fields).__name__})")
                continue
            row: dict[str, str] = {}
            for name, value in fields.items():
                if isinstance(value, str):
                    row[str(name)] = value
                elif isinstance(value, list) and all(isinstance(v, (str, int)) for v in value):
                    row[f"{name}@"] = ",".join(str(v) for v in value)
                elif isinstance(value, bool):
                    row[str(name)] = "true" if value else "false"
                elif isinstance(value, (int, float)):
                    row[str(name)] = str(value)
                else:
                    aside.append(f"{table}|{key}.{name}: {type(value).__name__} value")
            out[str(key)] = row
    return db, aside


def json_fields(fields: dict[str, str]) -> dict[str, Any]:
    """A row back in the switch's JSON spelling (``name@`` fields as lists), for patches."""
    return dict(json_field(name, value) for name, value in fields.items())


def json_field(name: str, value: str) -> tuple[str, Any]:
    """One field back in the switch's JSON spelling."""
    if name.endswith("@"):
        return name[:-1], value.split(",") if value else []
    return name, value


def parse_json(data: Any) -> ConfigDb:
    """Validate the shape of loaded JSON: table -> key -> field -> string."""
    if not isinstance(data, dict):
        raise ConfigDbError("CONFIG_DB content must be an object of tables")
    for table, rows in data.items():
        if not isinstance(rows, dict):
            raise ConfigDbError(f"table {table} must be an object")
        for key, fields in rows.items():
            if not isinstance(fields, dict) or not all(
                    isinstance(v, str) for v in fields.values()):
                raise ConfigDbError(f"{table}|{key} must map fields to strings")
    return data


_SAFE = re.compile(r"[A-Za-z0-9_|.:,@/ -]*")


@lru_cache(maxsize=1 << 16)
def _quote(text: str) -> str:
    """JSON string literal; names and keys repeat across devices, so cached."""
    return f'"{text}"' if _SAFE.fullmatch(text) else json.dumps(text)


def dump(db: ConfigDb) -> str:
    """Canonical text: sorted, one field per line, so diffs name exactly what changed.

    Byte for byte `json.dumps(db, indent=1, sort_keys=True)`, but each distinct fields
    object is written once: ports that share their lossless state share those objects, and
    a 1,000-port spine is written in milliseconds instead of a second.
    """
    if not db:
        return "{}\n"
    written: dict[int, str] = {}

    def fields_text(fields: dict[str, str]) -> str:
        text = written.get(id(fields))
        if text is None:
            names = sorted(fields)
            text = ("{\n" + ",\n".join(f"   {_quote(n)}: {_quote(fields[n])}" for n in names)
                    + "\n  }") if names else "{}"
            written[id(fields)] = text
        return text

    tables = []
    for table in sorted(db):
        rows = db[table]
        if not rows:
            tables.append(f" {_quote(table)}: {{}}")
            continue
        body = ",\n".join([f"  {_quote(key)}: {fields_text(rows[key])}" for key in sorted(rows)])
        tables.append(f" {_quote(table)}: {{\n{body}\n }}")
    return "{\n" + ",\n".join(tables) + "\n}\n"


def load(text: str) -> ConfigDb:
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ConfigDbError(f"not JSON: {exc}") from None
    return parse_json(data)


def queue_limits(qos: DeviceQos) -> tuple[int, int]:
    """Per-queue byte limits (lossless, lossy) the lab enforces with bfifo."""
    lossless = qos.pools.get(POOL_EGRESS_LOSSLESS)
    lossy_profile = qos.profiles.get(PROFILE_EGRESS_LOSSY)
    lossy_pool = qos.pools.get(POOL_EGRESS_LOSSY)
    lossy = 1_000_000
    if lossy_profile is not None and lossy_profile.static_th is not None:
        lossy = lossy_profile.static_th
    elif lossy_profile is not None and lossy_profile.dynamic_th is not None and lossy_pool:
        alpha = 2.0 ** lossy_profile.dynamic_th
        lossy = int(lossy_pool.size * alpha / (1 + alpha))
    return (lossless.size if lossless else 16_000_000), lossy
