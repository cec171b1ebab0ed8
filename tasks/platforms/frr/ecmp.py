"""The `ecmp` section of an frr switch config: how the kernel hashes routed flows over
equal-cost next hops, in the switch's namespace and each of its VRF namespaces.

Linux keeps these per network namespace (Documentation/networking/ip-sysctl.rst):
`fib_multipath_hash_policy` (0 addresses, 1 the 5-tuple, 2 inner addresses, 3 the fields of
`fib_multipath_hash_fields`), for IPv4 and IPv6 apart, and `net.ipv4.fib_multipath_hash_seed`
(both families; 0 a random seed; Linux 6.11 and later). The section states them as lines:

    [vrf <name> ]ipv4 policy <n>[ fields <field>...]
    [vrf <name> ]ipv6 policy <n>[ fields <field>...]
    [vrf <name> ]seed <n>

How a switch picks among its paths beyond the hash (resilient, flowlet, adaptive, spray) is
the ASIC's, with no kernel counterpart: the lab's virtual ASIC holds it, the way it holds
PFC, as a table of its own in the qos section (`FLATFAB_LOAD_BALANCE|GLOBAL`: `mode`,
`flowlet_us`), absent for plain hashing.

A line without `vrf` holds in every namespace of the switch; a `vrf` line only where a VRF
namespace differs. A rendered section sets policy 3 with the intent's fields in both
families (the flow label in IPv6 only: IPv4 has none) and the tier's seed (0: the kernel's
own). A config without the section leaves the hashing alone.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, replace

from flatfab.model.state import DEFAULT_VRF, FIVE_TUPLE, HashField, LbMode, LoadBalancing

CUSTOM = 3  # the policy that hashes on the fields given
BITS = {HashField.SRC_IP: 0x1, HashField.DST_IP: 0x2, HashField.PROTOCOL: 0x4,
        HashField.FLOW_LABEL: 0x8, HashField.SRC_PORT: 0x10, HashField.DST_PORT: 0x20}
# what the fixed policies hash on, per family (the inner headers of policy 2 aside)
_POLICY_FIELDS = {
    "ipv4": {0: (HashField.SRC_IP, HashField.DST_IP), 1: FIVE_TUPLE,
             2: (HashField.SRC_IP, HashField.DST_IP)},
    "ipv6": {0: (HashField.SRC_IP, HashField.DST_IP, HashField.FLOW_LABEL, HashField.PROTOCOL),
             1: FIVE_TUPLE, 2: (HashField.SRC_IP, HashField.DST_IP, HashField.FLOW_LABEL,
                                 HashField.PROTOCOL)},
}
FAMILIES = ("ipv4", "ipv6")
_LINE_RE = re.compile(r"^(?:vrf (?P<vrf>\S+) )?(?:(?P<family>ipv4|ipv6) policy (?P<policy>\d+)"
                      r"(?: fields (?P<fields>[a-z_ ]+))?|seed (?P<seed>\d+))$")
_FILES = ("ipv4/fib_multipath_hash_policy", "ipv4/fib_multipath_hash_fields",
          "ipv6/fib_multipath_hash_policy", "ipv6/fib_multipath_hash_fields",
          "ipv4/fib_multipath_hash_seed")
SEED_FILE = "net.ipv4.fib_multipath_hash_seed"


class EcmpError(ValueError):
    """A line of the section, or a kernel value, that does not read."""


@dataclass(frozen=True)
class Family:
    policy: int
    fields: int = 0  # the mask, of policy 3 only

    def names(self) -> list[str]:
        return [f.value for f, bit in BITS.items() if self.fields & bit]

    def hashes_on(self, family: str) -> set[HashField]:
        if self.policy == CUSTOM:
            return {f for f, bit in BITS.items() if self.fields & bit}
        return set(_POLICY_FIELDS[family].get(self.policy, ()))


@dataclass(frozen=True)
class Hashing:
    """One namespace's hashing; `seed` None where the kernel has no seed."""

    ipv4: Family
    ipv6: Family
    seed: int | None = None


def mask(fields: list[HashField], family: str) -> int:
    return sum(BITS[f] for f in fields if family == "ipv6" or f is not HashField.FLOW_LABEL)


def render(lb: LoadBalancing) -> str:
    """The section a planned switch's hashing gives."""
    lines = [f"{family} policy {CUSTOM} fields "
             f"{' '.join(Family(CUSTOM, mask(lb.hash_fields, family)).names())}"
             for family in FAMILIES]
    return "\n".join([*lines, f"seed {lb.seed or 0}"]) + "\n"


# ---- the device ---------------------------------------------------------------------------

def readback_command(namespace: str) -> str:
    """Every hashing value of one namespace as `file:value` lines (what this kernel has)."""
    read = f"cd /proc/sys/net && grep -H . {' '.join(_FILES)} 2>/dev/null; true"
    if namespace == DEFAULT_VRF:
        return read
    return f"ip netns exec {shlex.quote(namespace)} sh -c {shlex.quote(read)}"


def parse_readback(text: str, namespace: str) -> Hashing:
    values: dict[str, int] = {}
    for line in text.splitlines():
        name, sep, value = line.strip().partition(":")
        if not sep:
            continue
        try:
            values[name] = int(value.strip(), 0)
        except ValueError:
            raise EcmpError(f"{namespace}: {name} reads {value.strip()!r}, not a number"
                            ) from None
    missing = [f for f in _FILES[:4] if f not in values]
    if missing:
        raise EcmpError(f"{namespace}: the kernel states no {missing[0].replace('/', '.')} "
                        "(multipath routing off?)")

    def family(name: str) -> Family:
        policy = values[f"{name}/fib_multipath_hash_policy"]
        fields = values[f"{name}/fib_multipath_hash_fields"] if policy == CUSTOM else 0
        return Family(policy, fields)

    return Hashing(family("ipv4"), family("ipv6"), values.get("ipv4/fib_multipath_hash_seed"))


# ---- the section text ---------------------------------------------------------------------

def _lines(hashing: Hashing, vrf: str | None, base: Hashing | None) -> list[str]:
    prefix = f"vrf {vrf} " if vrf else ""
    out = []
    for name in FAMILIES:
        fam: Family = getattr(hashing, name)
        if base is not None and getattr(base, name) == fam:
            continue
        fields = f" fields {' '.join(fam.names())}" if fam.policy == CUSTOM else ""
        out.append(f"{prefix}{name} policy {fam.policy}{fields}")
    if hashing.seed is not None and (base is None or base.seed != hashing.seed):
        out.append(f"{prefix}seed {hashing.seed}")
    return out


def format_state(state: dict[str, Hashing]) -> str:
    """The section of what each namespace holds: the switch's own, then each VRF's
    differences."""
    default = state[DEFAULT_VRF]
    lines = _lines(default, None, None)
    for vrf in sorted(n for n in state if n != DEFAULT_VRF):
        lines += _lines(state[vrf], vrf, default)
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Wanted:
    """A section read as what it asks: per namespace (None: every one) each value."""

    values: dict[str | None, dict[str, Family | int]]


def parse_section(text: str) -> Wanted:
    values: dict[str | None, dict[str, Family | int]] = {}
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith(("!", "#")):
            continue
        match = _LINE_RE.match(line)
        if match is None:
            raise EcmpError(f"ecmp line {number}: cannot parse {line!r}")
        where = values.setdefault(match["vrf"], {})
        if match["seed"] is not None:
            key: str = "seed"
            value: Family | int = int(match["seed"])
        else:
            key, policy = match["family"], int(match["policy"])
            if policy > CUSTOM:
                raise EcmpError(f"ecmp line {number}: policy {policy} (0-3)")
            names = (match["fields"] or "").split()
            unknown = [n for n in names if n not in HashField.__members__.values()]
            if unknown:
                raise EcmpError(f"ecmp line {number}: unknown field {unknown[0]!r}")
            if (policy == CUSTOM) != bool(names):
                raise EcmpError(f"ecmp line {number}: fields go with policy {CUSTOM}, and "
                                "only with it")
            value = Family(policy, sum(BITS[HashField(n)] for n in names))
        if key in where:
            raise EcmpError(f"ecmp line {number}: {key} is given twice")
        where[key] = value
    return Wanted(values)


def desired(current: dict[str, Hashing], wanted: Wanted) -> dict[str, Hashing]:
    """Each namespace after the section is applied: what it asks, where it asks it. A seed
    of 0 (the kernel's own) on a kernel without seeds is what that kernel does already."""
    unknown = sorted(v for v in wanted.values if v is not None and v not in current)
    if unknown:
        raise EcmpError(f"vrf {unknown[0]}: the switch has no such VRF namespace")
    out = {}
    for namespace, have in current.items():
        asked = {**wanted.values.get(None, {}), **wanted.values.get(namespace, {})}
        seed = asked.get("seed", have.seed)
        assert seed is None or isinstance(seed, int)
        if have.seed is None and seed == 0:
            seed = None
        ipv4, ipv6 = asked.get("ipv4", have.ipv4), asked.get("ipv6", have.ipv6)
        assert isinstance(ipv4, Family) and isinstance(ipv6, Family)
        out[namespace] = replace(have, ipv4=ipv4, ipv6=ipv6, seed=seed)
    return out


def asks_a_seed(wanted: Wanted) -> bool:
    """Whether the section sets a seed other than the kernel's own."""
    return any(values.get("seed", 0) != 0 for values in wanted.values.values())


def unreachable(current: dict[str, Hashing], wanted: dict[str, Hashing]) -> str | None:
    """Why `wanted` cannot be had on this kernel (a seed it has no sysctl for), or None."""
    for namespace, want in sorted(wanted.items()):
        if want.seed is not None and current[namespace].seed is None:
            return (f"this kernel has no {SEED_FILE} (Linux 6.11 and later): seed "
                    f"{want.seed} cannot be set ({namespace})")
    return None


def ops(current: dict[str, Hashing], wanted: dict[str, Hashing]) -> list[str]:
    """sysctl commands from current to wanted, one per namespace that changes."""
    out = []
    for namespace in sorted(wanted, key=lambda n: (n != DEFAULT_VRF, n)):
        have, want = current[namespace], wanted[namespace]
        sets = []
        for name in FAMILIES:
            fam, was = getattr(want, name), getattr(have, name)
            if fam == was:
                continue
            if fam.policy == CUSTOM:  # the fields first: a policy 3 with the old ones is wrong
                sets.append(f"net.{name}.fib_multipath_hash_fields={fam.fields}")
            sets.append(f"net.{name}.fib_multipath_hash_policy={fam.policy}")
        if want.seed is not None and want.seed != have.seed:
            sets.append(f"{SEED_FILE}={want.seed}")
        if not sets:
            continue
        command = f"sysctl -q -w {' '.join(sets)} >/dev/null"
        out.append(command if namespace == DEFAULT_VRF else
                   f"ip netns exec {shlex.quote(namespace)} {command}")
    return out


# ---- what it means --------------------------------------------------------------------------

def _model(hashing: Hashing) -> LoadBalancing:
    fields = hashing.ipv4.hashes_on("ipv4")
    if HashField.FLOW_LABEL in hashing.ipv6.hashes_on("ipv6"):
        fields.add(HashField.FLOW_LABEL)  # IPv4 has none: the IPv6 hash says it
    return LoadBalancing(hash_fields=[f for f in HashField if f in fields],
                         seed=hashing.seed or None)


def to_model(state: dict[str, Hashing]) -> LoadBalancing:
    """The switch's hashing as flatfab models it, with each VRF namespace that hashes
    otherwise apart (`vrfs`)."""
    own = _model(state[DEFAULT_VRF])
    others = {vrf: _model(h) for vrf, h in sorted(state.items()) if vrf != DEFAULT_VRF}
    return own.model_copy(update={"vrfs": {v: m for v, m in others.items() if m != own}})


# ---- the virtual ASIC's dynamic load balancing ----------------------------------------------

MODE_TABLE = "FLATFAB_LOAD_BALANCE"


def mode_rows(lb: LoadBalancing | None) -> dict[str, dict[str, str]] | None:
    """The virtual ASIC's rows for a switch's way of balancing (None: plain hashing)."""
    if lb is None or lb.mode is LbMode.HASH:
        return None
    row = {"mode": lb.mode.value}
    if lb.flowlet_us is not None:
        row["flowlet_us"] = str(lb.flowlet_us)
    return {"GLOBAL": row}


def with_mode(lb: LoadBalancing, rows: dict[str, dict[str, str]] | None) -> LoadBalancing:
    """The read hashing with the mode the virtual ASIC states (none: plain hashing)."""
    row = (rows or {}).get("GLOBAL", {})
    try:
        mode = LbMode(row.get("mode", LbMode.HASH.value))
        timer = int(row["flowlet_us"]) if "flowlet_us" in row else None
    except ValueError as exc:
        raise EcmpError(f"{MODE_TABLE}|GLOBAL: {exc}") from None
    return lb.model_copy(update={"mode": mode, "flowlet_us": timer})
