"""ECMP hashing on SONiC: flatfab's hash fields in CONFIG_DB and back.

SONiC's Generic Hash (SONiC HLD `doc/hash/hash-design.md`, YANG model `sonic-hash`, its field
names the `hash-field` enumeration of `sonic-types`; orchagent's SwitchOrch, 202305 on) keeps
the packet fields the switch's ECMP hash reads in `SWITCH_HASH|GLOBAL` `ecmp_hash`, a list
(`ecmp_hash@` in CONFIG_DB's Redis spelling, which flatfab's CONFIG_DB uses too). The hash is
one for the whole switch: no VRF hashes otherwise. flatfab owns that one field; `lag_hash`
and the algorithms stay the switch's.

Every flatfab field has a SONiC name. `IPV6_FLOW_LABEL` came to the enumeration in 2025 (the
HLD's revision 0.4); an older release's GCU refuses it.

What stays out, refused at load (platform.yaml): the hash seed. CONFIG_DB holds none: the
Generic Hash design leaves the seed out of scope, the `sonic-device_metadata` model has no
`ecmp_hash_seed`, and orchagent sets the seed itself at start (APPL_DB
`SWITCH_TABLE:switch`, from its switch.json template, by DEVICE_METADATA `type`). So an
observed seed is the switch's own (None), as the plan says for SONiC.

A switch without `ecmp_hash` hashes as its SAI and ASIC do by default, which CONFIG_DB does
not state: its hashing is unknown (None), never guessed.
"""

from __future__ import annotations

from flatfab.model.state import HashField, LoadBalancing
from flatfab.platforms.configdb import ConfigDb

TABLE = "SWITCH_HASH"
KEY = "GLOBAL"
FIELD = "ecmp_hash@"  # a list: the switch prints `ecmp_hash` as a JSON list
# flatfab's fields as sonic-types' hash-field enumeration names them
SONIC_FIELDS: dict[HashField, str] = {
    HashField.SRC_IP: "SRC_IP",
    HashField.DST_IP: "DST_IP",
    HashField.PROTOCOL: "IP_PROTOCOL",
    HashField.FLOW_LABEL: "IPV6_FLOW_LABEL",
    HashField.SRC_PORT: "L4_SRC_PORT",
    HashField.DST_PORT: "L4_DST_PORT",
}
_FLATFAB_FIELDS = {name: field for field, name in SONIC_FIELDS.items()}
SEED_REFUSED = ("SONiC keeps no ECMP hash seed in CONFIG_DB: orchagent sets it at start "
                "from DEVICE_METADATA type")


def row(lb: LoadBalancing) -> dict[str, str]:
    """The `SWITCH_HASH|GLOBAL` fields a planned switch's hashing gives."""
    if lb.seed is not None:  # refused at load (platform.yaml): never rendered as something else
        raise ValueError(f"ECMP hash seed {lb.seed}: {SEED_REFUSED}")
    return {FIELD: ",".join(SONIC_FIELDS[f] for f in HashField if f in lb.hash_fields)}


def _names(value: str) -> list[str]:
    return [n.strip() for n in value.split(",") if n.strip()]


def canonical(value: str) -> str:
    """An `ecmp_hash@` value in the order flatfab renders: SONiC hashes on a set of fields,
    so another order on the switch is the same hashing, not drift."""
    names = _names(value)
    known = [SONIC_FIELDS[f] for f in HashField if SONIC_FIELDS[f] in names]
    return ",".join([*known, *sorted(n for n in set(names) if n not in _FLATFAB_FIELDS)])


def same(table: str, field: str, old: str, new: str) -> bool:
    """Whether two values of a CONFIG_DB field are one ECMP hash in another order."""
    return table == TABLE and field == FIELD and canonical(old) == canonical(new)


def from_config_db(db: ConfigDb) -> tuple[LoadBalancing | None, dict[str, str]]:
    """The switch's ECMP hashing (None: CONFIG_DB states none, and the SAI default is not
    known) and what of it flatfab has no place for (name -> why): a field it has no name
    for, the algorithm, a per-packet-type hash (a later Generic Hash revision)."""
    row = db.get(TABLE, {}).get(KEY, {})
    others: dict[str, str] = {}
    for field, value in sorted(row.items()):
        name = field.removesuffix("@")
        if name == "ecmp_hash_algorithm":
            others[f"{TABLE}|{KEY} {name} {value}"] = (
                "flatfab models the fields an ECMP hash reads, not its algorithm")
        elif name.startswith("ecmp_hash_"):
            others[f"{TABLE}|{KEY} {name}"] = (
                "a per-packet-type ECMP hash: those packets hash on it instead of ecmp_hash; "
                "flatfab models one hash per switch")
    names = _names(row.get(FIELD, ""))
    if not names:
        return None, others
    others.update({f"{TABLE}|{KEY} ecmp_hash {n}": "flatfab's hash fields have no such field"
                   for n in names if n not in _FLATFAB_FIELDS})
    fields = {_FLATFAB_FIELDS[n] for n in names if n in _FLATFAB_FIELDS}
    return LoadBalancing(hash_fields=[f for f in HashField if f in fields]), others
