"""ECMP hashing on SR Linux: `/system/load-balancing/hash-options`, rendered from the plan's
`DeviceState.lb` and read back from the running configuration.

Source: Nokia's SR Linux YANG models v25.3.1 (github.com/nokia/srlinux-yang-models, tag
v25.3.1, `srl_nokia-load-balancing.yang`, which augments `/system` of `srl_nokia-system`
with `load-balancing/hash-options`): one boolean per packet field the hash reads
(`source-address`, `destination-address`, `protocol`, `source-port`, `destination-port`,
`ipv6-flow-label`, plus `vlan` on Trident 3/4 and Tomahawk 3/4 and `mpls-label-stack`) and
`hash-seed`, a union of uint16 and `generate-from-mac` (the default: a seed derived from the
box's MAC, i.e. the switch's own). SR Linux hashes switch-wide: no VRF hashes otherwise.

flatfab replaces the whole `hash-options` container: each of the six fields it models is set
explicitly, and `hash-seed` to the tier's seed or `generate-from-mac` (the plan's None).
The replace puts what flatfab does not model at its YANG default: `vlan` true where the chip
has the leaf (the VLAN ID is the same for every packet of a flow, so it moves no flow between
paths), `mpls-label-stack` false (a flatfab fabric carries no MPLS). The intent's seeds go
up to 2^32-1, SR Linux's to 65535: platform.yaml refuses a wider one at load
(`ecmp_hash_seed_32bit`, once the intent's capabilities name it); the render never writes one.
"""

from __future__ import annotations

from typing import Any

from flatfab.model.state import HashField, LoadBalancing

Json = dict[str, Any]

PATH = "/system/load-balancing/hash-options"
STEPS = tuple(PATH.strip("/").split("/"))
LEAVES: dict[HashField, str] = {
    HashField.SRC_IP: "source-address",
    HashField.DST_IP: "destination-address",
    HashField.PROTOCOL: "protocol",
    HashField.FLOW_LABEL: "ipv6-flow-label",
    HashField.SRC_PORT: "source-port",
    HashField.DST_PORT: "destination-port",
}
SEED = "hash-seed"
OWN_SEED = "generate-from-mac"  # the switch's own seed (the plan's None)
SEED_RANGE = (0, 0xFFFF)  # uint16
# what a leaf the box does not state holds (the models' defaults)
DEFAULTS: Json = {"source-address": True, "destination-address": True, "protocol": True,
                  "ipv6-flow-label": False, "source-port": True, "destination-port": True,
                  SEED: OWN_SEED}


class HashingError(ValueError):
    """A hash option or seed SR Linux cannot hold, or a value read that is not one."""


def render(lb: LoadBalancing) -> Json:
    """The `hash-options` container for a planned switch's hashing."""
    body: Json = {LEAVES[f]: f in lb.hash_fields for f in HashField}
    if lb.seed is None:
        body[SEED] = OWN_SEED
    elif SEED_RANGE[0] <= lb.seed <= SEED_RANGE[1]:
        body[SEED] = lb.seed
    else:  # refused at load (platform.yaml); a plan made otherwise still never renders it
        raise HashingError(f"ECMP hash seed {lb.seed} is outside SR Linux's "
                           f"{SEED_RANGE[0]}..{SEED_RANGE[1]} (hash-seed is a uint16)")
    return body


def options(running: Json) -> Json:
    """The `hash-options` container of a running configuration (module prefixes off), {}
    where it states none."""
    found: Any = running
    for step in STEPS:
        found = found.get(step) if isinstance(found, dict) else None
    return found if isinstance(found, dict) else {}


def _flag(stated: Json, leaf: str) -> bool:
    value = stated.get(leaf, DEFAULTS[leaf])
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value in ("true", "false"):  # a string, as some print it
        return value == "true"
    raise HashingError(f"{leaf} reads {value!r}, not a boolean")


def _seed(stated: Json) -> int | None:
    value = stated.get(SEED, OWN_SEED)
    if value == OWN_SEED:
        return None
    if isinstance(value, str) and value.isdigit():  # RFC 7951 prints uint16 as a number
        value = int(value)
    if isinstance(value, int) and not isinstance(value, bool) \
            and SEED_RANGE[0] <= value <= SEED_RANGE[1]:
        return value
    raise HashingError(f"{SEED} reads {value!r}, neither {OWN_SEED} nor a uint16")


def read(running: Json) -> LoadBalancing:
    """What the box hashes on as its running configuration states it (module prefixes off):
    each option it does not state holds its YANG default."""
    stated = options(running)
    return LoadBalancing(hash_fields=[f for f in HashField if _flag(stated, LEAVES[f])],
                         seed=_seed(stated))
