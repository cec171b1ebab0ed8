"""ECMP hashing on a QFX5220/5230/5240: `forwarding-options enhanced-hash-key`, rendered from
the plan's `DeviceState.lb` and read back from `show configuration | display json`.

The default hash of these switches reads the IPv4 and IPv6 5-tuple (source and destination
address, protocol or next header, layer-4 source and destination port) and not the IPv6 flow
label; a field leaves the hash through a `no-...` statement per family. Those fields are
read in `hash-mode layer2-payload`, the default mode (`layer2-header` hashes on the Ethernet
header instead). Sources: Juniper's CLI reference, "enhanced-hash-key", "inet
(enhanced-hash-key)", "inet6 (enhanced-hash-key)" and "hash-mode"; Juniper's YANG
(github.com/Juniper/yang, 24.4R1 `junos-qfx-conf-forwarding-options` and 24.4R1-EVO
`junos-conf-forwarding-options`, container `enhanced-hash-key`), where the statements are:

    enhanced-hash-key {
        hash-mode { layer2-payload; }
        inet { no-ipv4-source-address; no-ipv4-destination-address; no-protocol;
               no-l4-source-port; no-l4-destination-port; }
        inet6 { no-ipv6-source-address; no-ipv6-destination-address; no-next-header;
                no-l4-source-port; no-l4-destination-port; }
    }

(Juniper's CLI pages print the families as `family inet`; in both YANG models `family inet`
is the MX routers' key with other statements, and these statements sit in `inet` itself.)

What the render leaves out, the platform refuses at load (platform.yaml): a hash seed
(`enhanced-hash-key hash-seed` is documented for the QFX10000 only) and the IPv6 flow label
(Junos OS Evolved's YANG has no `inet6 ipv6-flow-label`; the QFX pages document it for the
QFX10000 only). The render states `hash-mode layer2-payload` as well: the field lists apply
in that mode only, and with it the statement flatfab owns (`replace: enhanced-hash-key`) is
never empty, so a `load replace` also takes away `no-...` statements a former plan put
there. Broadcom switches also mix the ingress port and device into the hash (Juniper
KB28946, "default fields used by the hashing algorithm" on EX4300/QFX5100): flatfab leaves
them as Junos has them (`no-incoming-port` is not rendered) and does not model them.

The way of balancing beyond the hash (`load_balancing.mode`: DLB's `ecmp-dlb`, resilient
hashing) sits in the same key and is junos/dlb.py's: the render adds its statements to the
key, so a `load replace` that returns to plain hashing also takes DLB away.
"""

from __future__ import annotations

from typing import Any

from flatfab.model.state import FIVE_TUPLE, HashField, LoadBalancing
from flatfab.platforms.junos import dlb
from flatfab.platforms.junos.text import REPLACE, Tree

HASH_KEY = "enhanced-hash-key"
MODE = "hash-mode"
PAYLOAD = "layer2-payload"  # hashes on the IP and layer-4 fields below (Junos's default)
HEADER = "layer2-header"  # hashes on the Ethernet header: no IP field at all
SEED = "hash-seed"
FLOW_LABEL = "ipv6-flow-label"  # QFX (Junos OS) YANG only: read, never rendered
# the statement that takes a field out of each family's hash
EXCLUDE: dict[str, dict[HashField, str]] = {
    "inet": {HashField.SRC_IP: "no-ipv4-source-address",
             HashField.DST_IP: "no-ipv4-destination-address",
             HashField.PROTOCOL: "no-protocol",
             HashField.SRC_PORT: "no-l4-source-port",
             HashField.DST_PORT: "no-l4-destination-port"},
    "inet6": {HashField.SRC_IP: "no-ipv6-source-address",
              HashField.DST_IP: "no-ipv6-destination-address",
              HashField.PROTOCOL: "no-next-header",  # IPv6's protocol field
              HashField.SRC_PORT: "no-l4-source-port",
              HashField.DST_PORT: "no-l4-destination-port"},
}
FAMILIES = tuple(EXCLUDE)
_KNOWN = {MODE, SEED, *FAMILIES, dlb.DLB, dlb.RESILIENT}


def render(lb: LoadBalancing) -> tuple[Tree, list[str]]:
    """The `forwarding-options` hierarchy of a planned switch's hashing, and what the plan
    asks that Junos on these switches cannot do (refused at load: named if it gets here)."""
    problems = []
    if lb.seed is not None:
        problems.append(f"ECMP hash seed {lb.seed}: no hash seed on QFX52xx (Juniper "
                        f"documents `{HASH_KEY} {SEED}` for the QFX10000 only)")
    if HashField.FLOW_LABEL in lb.hash_fields:
        problems.append(f"ECMP hash field {HashField.FLOW_LABEL.value}: Junos OS Evolved has "
                        f"no `{HASH_KEY} inet6 {FLOW_LABEL}` and the default hash leaves "
                        "the flow label out")
    key: Tree = {"@": REPLACE, MODE: {PAYLOAD: [None]}}
    for family, statements in EXCLUDE.items():
        removed = {s: [None] for f, s in statements.items() if f not in lb.hash_fields}
        if removed:
            key[family] = removed
    balancing, refused = dlb.render(lb)
    key.update(balancing)
    problems += refused
    clash = dlb.conflict(key)
    if clash is not None:
        problems.append(clash)
    return {HASH_KEY: key}, problems


def _family(name: str, body: Any) -> tuple[set[HashField], list[str]]:
    """The fields one family's statements leave in the hash, and the statements flatfab
    does not model."""
    family = body if isinstance(body, dict) else {}
    name_of = {statement: f for f, statement in EXCLUDE[name].items()}
    removed = {name_of[s] for s in family if s in name_of}
    fields = {f for f in FIVE_TUPLE if f not in removed}
    known = {*name_of, *([FLOW_LABEL] if name == "inet6" else [])}
    other = sorted(s for s in family if not s.startswith("@") and s not in known)
    return fields, other


def instance_keys(routing_instances: Any) -> dict[str, str]:
    """A routing instance's own `forwarding-options enhanced-hash-key` (statement -> why):
    flatfab renders and reads the switch's."""
    entries = routing_instances.get("instance") if isinstance(routing_instances, dict) else None
    found = {}
    for entry in entries if isinstance(entries, list) else []:
        options = entry.get("forwarding-options") if isinstance(entry, dict) else None
        if isinstance(options, dict) and HASH_KEY in options:
            found[f"routing-instance {entry.get('name')} forwarding-options {HASH_KEY}"] = (
                "an instance's own hash key: flatfab renders and reads the switch's only")
    return found


def _names(fields: set[HashField]) -> str:
    return ", ".join(f.value for f in HashField if f in fields) or "nothing"


def read(forwarding_options: Any) -> tuple[LoadBalancing | None, dict[str, str]]:
    """The switch's hashing from its configuration's `forwarding-options` (absent: Junos's
    default, the 5-tuple, hashed), and what it configures there beyond flatfab's model
    (statement -> why), for `not_modelled`. None where the way of balancing is one flatfab
    cannot map (junos/dlb.py names it): the model states no hash without its mode."""
    options = forwarding_options if isinstance(forwarding_options, dict) else {}
    key = options.get(HASH_KEY)
    key = key if isinstance(key, dict) else {}
    beyond: dict[str, str] = {}
    where = f"forwarding-options {HASH_KEY}"
    for statement in sorted(s for s in key if not s.startswith("@") and s not in _KNOWN):
        beyond[f"{where} {statement}"] = ("hashing beyond the IP and layer-4 fields "
                                          "flatfab models")
    mode = key.get(MODE)
    mode = mode if isinstance(mode, dict) else {}
    for statement in sorted(s for s in mode if not s.startswith("@")
                            and s not in (PAYLOAD, HEADER)):
        beyond[f"{where} {MODE} {statement}"] = "a hash mode flatfab does not model"
    per_family: dict[str, set[HashField]] = {}
    for family in FAMILIES:
        fields, other = _family(family, key.get(family))
        per_family[family] = fields
        for statement in other:
            beyond[f"{where} {family} {statement}"] = (
                "adds to or takes from the hash what flatfab does not model (it models the "
                "addresses, protocol, layer-4 ports and IPv6 flow label)")
    if per_family["inet"] != per_family["inet6"]:
        beyond[f"{where} inet6"] = (
            f"IPv4 hashes on {_names(per_family['inet'])}, IPv6 on "
            f"{_names(per_family['inet6'])}: flatfab models one list, the fields both hash on")
    fields = per_family["inet"] & per_family["inet6"]
    inet6 = key.get("inet6")
    if isinstance(inet6, dict) and FLOW_LABEL in inet6:
        fields.add(HashField.FLOW_LABEL)  # IPv4 has no flow label: the IPv6 hash says it
    if HEADER in mode:
        fields = set()  # the Ethernet header only: no IP or layer-4 field
    seed = key.get(SEED)
    value = _number(seed.get("seed-value")) if isinstance(seed, dict) else None
    if SEED in key and value is None:
        beyond[f"{where} {SEED}"] = "a hash seed without a value flatfab can read"
    mode, interval, notes = dlb.read(key)
    beyond.update(notes)
    if mode is None:
        return None, beyond
    return (LoadBalancing(hash_fields=[f for f in HashField if f in fields], seed=value,
                          mode=mode, flowlet_us=interval), beyond)


def _number(value: Any) -> int | None:
    try:
        return int(str(value))
    except (TypeError, ValueError):
        return None
