"""CONFIG_DB changes: what flatfab owns of a running CONFIG_DB, the RFC 6902 patch from
running to intended, and which of its operations GCU's apply-patch refuses.

flatfab owns whole tables (render.OWNED_TABLES: a row it does not render is removed) and
only its own rows and fields of the hardware tables (render.MERGED_TABLES: PORT keeps
`lanes`, `alias`, ...; DEVICE_METADATA keeps `mac`, `hwsku`, ...; SWITCH_HASH keeps
`lag_hash` and the algorithms). SWITCH_TRIMMING's four fields are flatfab's whether the intent
renders them or not (FIXED_FIELDS): a fabric that does not trim wants them gone, which
orchagent does not do, so that change is refused (sonic/trimming.py). LLR_PORT is flatfab's
whole; a field taken out of one of its rows that stays is refused, since llrmgrd would keep
its effect (sonic/llr.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from flatfab.platforms.configdb import ConfigDb, json_field, json_fields, plain_references
from flatfab.platforms.sonic import hashing, llr, trimming
from flatfab.platforms.sonic.render import MERGED_TABLES, OWNED_TABLES

# fields of the hardware tables flatfab shows when it has no intended config to go by
DEFAULT_MERGED_FIELDS = {"PORT": ("admin_status", "mtu", "speed"),
                         "DEVICE_METADATA": ("hostname", "bgp_asn", "docker_routing_config_mode",
                                             "buffer_model", "default_pfcwd_status"),
                         hashing.TABLE: (hashing.FIELD,)}
# merged tables whose flatfab fields are these, with an intended config to go by or not
FIXED_FIELDS: dict[str, tuple[str, ...]] = {trimming.TABLE: trimming.FIELDS}
# GCU's field operation validators: the only BUFFER_PROFILE fields it edits in place
PROFILE_EDITABLE = frozenset({"dynamic_th", "xoff"})


def project(running: ConfigDb, reference: ConfigDb | None = None) -> ConfigDb:
    """The part of a running CONFIG_DB flatfab owns, in the shape render gives it.

    With a reference (the intended tables), hardware tables keep only its rows and fields;
    without one, every row with the fields flatfab renders. Object references are compared
    in the plain form: a release before 202012 writes ``[SCHEDULER|name]`` where the render
    writes ``name``, the same object (configdb.plain_references).
    """
    running = plain_references(running)
    out: ConfigDb = {t: {k: dict(f) for k, f in running[t].items()}
                     for t in OWNED_TABLES if running.get(t)}
    for table in MERGED_TABLES:
        rows = running.get(table, {})
        wanted: dict[str, tuple[str, ...]]
        if table in FIXED_FIELDS:  # the switch's own show as drift where none is intended
            wanted = {key: FIXED_FIELDS[table] for key, row in rows.items()
                      if any(f in row for f in FIXED_FIELDS[table])}
        elif reference is not None:
            wanted = {key: tuple(fields) for key, fields in reference.get(table, {}).items()}
        else:
            wanted = dict.fromkeys(rows, DEFAULT_MERGED_FIELDS[table])
        kept = {key: {f: rows[key][f] for f in fields if f in rows[key]}
                for key, fields in wanted.items() if key in rows}
        for fields in kept.values():  # the hash's fields in one order: another is no drift
            if table == hashing.TABLE and hashing.FIELD in fields:
                fields[hashing.FIELD] = hashing.canonical(fields[hashing.FIELD])
        if kept:
            out[table] = kept
    return out


def target(running: ConfigDb, intended: ConfigDb, *, merge: bool = False) -> ConfigDb:
    """The whole CONFIG_DB the switch should have: running with flatfab's part replaced
    (or, for a merge, only added to and updated)."""
    out: ConfigDb = {t: {k: dict(f) for k, f in rows.items()} for t, rows in running.items()}
    for table in (*OWNED_TABLES, *MERGED_TABLES):
        if table in OWNED_TABLES and not merge:
            out.pop(table, None)
        if table in FIXED_FIELDS and not merge:  # what the intent leaves out is to go
            rows = {key: {f: v for f, v in row.items() if f not in FIXED_FIELDS[table]}
                    for key, row in out.pop(table, {}).items()}
            if any(rows.values()):  # no empty row or table: GCU takes none
                out[table] = {key: row for key, row in rows.items() if row}
        for key, fields in intended.get(table, {}).items():
            row = out.setdefault(table, {}).setdefault(key, {})
            if table in OWNED_TABLES and not merge:
                row.clear()
            row.update(fields)
    return {t: rows for t, rows in out.items() if rows or t in running}


def _pointer(*parts: str) -> str:
    return "".join("/" + p.replace("~", "~0").replace("/", "~1") for p in parts)


def patch(running: ConfigDb, desired: ConfigDb) -> list[dict[str, Any]]:
    """RFC 6902 operations from running to desired: whole tables and rows where one side
    has none, single fields otherwise (GCU validates BUFFER_PROFILE edits per field).
    List fields (``name@`` as read) go back as the JSON lists GCU takes."""
    ops: list[dict[str, Any]] = []
    for table in sorted(set(running) | set(desired)):
        old, new = running.get(table), desired.get(table)
        if old is None:
            ops.append({"op": "add", "path": _pointer(table),
                        "value": {key: json_fields(row) for key, row in (new or {}).items()}})
            continue
        if new is None:
            ops.append({"op": "remove", "path": _pointer(table)})
            continue
        for key in sorted(set(old) | set(new)):
            if key not in new:
                ops.append({"op": "remove", "path": _pointer(table, key)})
            elif key not in old:
                ops.append({"op": "add", "path": _pointer(table, key),
                            "value": json_fields(new[key])})
            else:
                for name in sorted(set(old[key]) | set(new[key])):
                    field, value = json_field(name, new[key].get(name, ""))
                    path = _pointer(table, key, field)
                    if name not in new[key]:
                        ops.append({"op": "remove", "path": path})
                    elif name not in old[key]:
                        ops.append({"op": "add", "path": path, "value": value})
                    elif old[key][name] != new[key][name] and not hashing.same(
                            table, name, old[key][name], new[key][name]):
                        ops.append({"op": "replace", "path": path, "value": value})
    return ops


@dataclass(frozen=True)
class Refusal:
    path: str
    why: str
    needs: str
    # apply-patch refuses it (False: applies; it takes effect, or can be undone, only so)
    blocking: bool = True

    def __str__(self) -> str:
        return f"{self.path}: {self.why}; needs `{self.needs}` (disruptive)"


def _parts(path: str) -> list[str]:
    return [p.replace("~1", "/").replace("~0", "~") for p in path.split("/")[1:]]


def refusals(ops: list[dict[str, Any]]) -> list[Refusal]:
    """The operations apply-patch refuses (or that act only after a reload), with what
    the change needs instead."""
    out: list[Refusal] = []
    for op in ops:
        parts = _parts(op["path"])
        table = parts[0]
        if table == "BUFFER_POOL" and (len(parts) < 3 or parts[2] == "size"):
            out.append(Refusal(op["path"], "GCU does not resize or replace buffer pools",
                               "config qos reload"))
        elif table == trimming.TABLE and op["op"] == "remove":
            out.append(Refusal(op["path"], trimming.REMOVAL_REFUSED, "config reload"))
        elif table == trimming.TABLE and op["op"] == "add":
            out.append(Refusal(op["path"], trimming.ONCE_ON, "config reload", blocking=False))
        elif (table == "BUFFER_PROFILE" and parts[2:] == [trimming.DISCARD]
              and op["op"] == "remove"):
            out.append(Refusal(op["path"], f"{trimming.DISCARD_REMOVAL}, and GCU edits only "
                               "dynamic_th and xoff of a buffer profile", "config qos reload"))
        elif table == "BUFFER_PROFILE" and len(parts) == 3 and parts[2] not in PROFILE_EDITABLE:
            out.append(Refusal(op["path"], "GCU edits only dynamic_th and xoff of a buffer "
                               "profile", "config qos reload"))
        elif table == "BUFFER_PROFILE" and len(parts) == 1 and op["op"] == "remove":
            out.append(Refusal(op["path"], "GCU does not remove every buffer profile",
                               "config qos reload"))
        elif table == llr.TABLE and len(parts) == 3 and op["op"] == "remove":
            out.append(Refusal(op["path"], llr.FIELD_REMOVAL, "config reload"))
        elif table == "PFC_WD":
            out.append(Refusal(op["path"], "GCU refuses PFC watchdog edits on most ASICs",
                               "config reload"))
        elif parts[1:] == ["localhost", "docker_routing_config_mode"]:
            out.append(Refusal(op["path"], "the routing config mode is read at start-up",
                               "config save -y && config reload", blocking=False))
    return out
