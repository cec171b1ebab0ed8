"""How switches spread RoCE flows over equal-cost paths: the hash's fields and seeds."""

from __future__ import annotations

from collections.abc import Iterator

from flatfab.checks.base import (
    Check,
    CheckContext,
    Finding,
    Scope,
    Severity,
    Stage,
    check,
    not_judged,
)
from flatfab.model.state import SWITCH_ROLES, DeviceState, HashField, LinkKind, LoadBalancing

_NOT_READ = "no ECMP hash was read from it (its platform reads none, or none is configured)"
_SEED_LIMIT = "lb.seed"


def _fields(lb: LoadBalancing) -> str:
    return ", ".join(f.value for f in lb.hash_fields) or "nothing"


def _hashings(lb: LoadBalancing) -> Iterator[tuple[str | None, LoadBalancing]]:
    """The switch's own hashing, then each VRF's that differs (None: the switch's)."""
    yield None, lb
    yield from sorted(lb.vrfs.items())


def _timer(lb: LoadBalancing) -> str:
    return f" ({lb.flowlet_us} us)" if lb.flowlet_us is not None else ""


def _where(name: str, vrf: str | None) -> str:
    return name + (f" VRF {vrf}" if vrf else "")


def _switches(ctx: CheckContext) -> Iterator[tuple[str, DeviceState]]:
    for name, device in ctx.readable.items():
        if device.role in SWITCH_ROLES:
            yield name, device


@check("lb.roce_entropy", "Every switch hashes ECMP on the UDP source port, RoCEv2's entropy",
       scope=Scope.DEVICE, severity=Severity.ERROR)
def roce_entropy(item: Check, ctx: CheckContext) -> Iterator[Finding]:
    """Reads: the packet fields each switch's ECMP hash reads (the intent's `load_balancing`
    statically; live, what the switch states, each VRF apart where it hashes otherwise).
    Expects: the UDP source port among them: a RoCEv2 NIC varies it per queue pair, and the
    destination port is 4791 for every flow.
    Fails when: the hash leaves out the source port: every queue pair between two hosts then
    takes the same path, and a collective's flows pile onto a few links. Statically, a fabric
    without `load_balancing` is not judged (flatfab leaves each switch's hashing); live, a
    switch whose platform reads no hashing is named not judged where the intent sets one.
    Fix: Add `src_port` to `load_balancing.hash_fields` in fabric.yaml and roll out; live, a
    switch that drifted is put back by `flatfab rollout`.
    """
    for name, device in _switches(ctx):
        if device.lb is None:
            planned = ctx.plan.devices.get(name)
            if ctx.live and planned is not None and planned.lb is not None:
                yield not_judged(item.id, name, _NOT_READ, what=f"{name}'s ECMP hash")
            continue
        for vrf, lb in _hashings(device.lb):
            if HashField.SRC_PORT in lb.hash_fields:
                continue
            yield item.finding(name, f"{_where(name, vrf)} hashes ECMP on {_fields(lb)}, not "
                               "the UDP source port: every queue pair between two hosts takes "
                               "one path",
                               vrf=vrf, expected="src_port hashed", actual=_fields(lb))


@check("lb.seeds", "Adjacent tiers hash with different seeds",
       scope=Scope.FABRIC, severity=Severity.ERROR)
def seeds(item: Check, ctx: CheckContext) -> Iterator[Finding]:
    """Reads: the ECMP hash seed and fields of the two switches of every fabric link (the intent's
    seed per tier statically; live, each switch's own).
    Expects: the two ends hash with different seeds, or differently: with the same function and
    seed, a spine re-picks from the flows a leaf already split by that hash, and uses only some of
    its uplinks (polarization).
    Fails when: both ends of a link hash on the same fields with the same seed, once per pair of
    switches. A switch hashing with its own random seed (none set) is not judged; nor is one whose
    kernel has no seed (named once as a limitation).
    Fix: Give adjacent tiers different seeds in fabric.yaml (`load_balancing.seeds`: leaf, spine,
    superspine) and roll out; live, `flatfab rollout` puts back a switch that drifted.
    """
    readable = ctx.readable
    seen: set[tuple[str, str]] = set()
    for link in ctx.plan.links:
        if link.kind is not LinkKind.FABRIC:
            continue
        lower, upper = readable.get(link.a.device), readable.get(link.b.device)
        if lower is None or upper is None or (lower.name, upper.name) in seen:
            continue
        if lower.lb is None or upper.lb is None or lower.lb.seed is None:
            continue
        same = (lower.lb.seed == upper.lb.seed
                and lower.lb.hash_fields == upper.lb.hash_fields)
        if not same:
            continue
        seen.add((lower.name, upper.name))
        yield item.finding(upper.name, f"{upper.name} and {lower.name} (adjacent tiers) hash "
                           f"on the same fields with the same seed {upper.lb.seed}: their "
                           f"path choices correlate and {upper.name} leaves uplinks idle",
                           port=link.b.port, expected=f"a seed other than {lower.lb.seed}",
                           actual=f"seed {upper.lb.seed}")


@check("lb.intent", "Every switch hashes ECMP as the intent says",
       scope=Scope.DEVICE, severity=Severity.ERROR, stages=[Stage.LIVE])
def intent(item: Check, ctx: CheckContext) -> Iterator[Finding]:
    """Reads: live, each switch's ECMP hash fields and seed (each VRF apart where it hashes
    otherwise), and the plan's for it (`load_balancing` in fabric.yaml).
    Expects: what the plan gives: the same fields on every switch, its tier's seed. Switches of a
    tier that hash differently spread flows unevenly, and a mismatch is invisible to every
    routing check.
    Fails when: the fields or the seed differ from the plan's, or a VRF hashes otherwise than
    the switch. A fabric without `load_balancing` is not judged here; a switch whose platform
    reads no hashing is named by `lb.roce_entropy`; a seed the kernel has no sysctl for is a
    limitation, not drift.
    Fix: `flatfab rollout` puts the hashing back; if it was changed on purpose, write it into
    fabric.yaml first.
    """
    for name, device in _switches(ctx):
        planned = ctx.plan.devices.get(name)
        if planned is None or planned.lb is None or device.lb is None:
            continue
        want = planned.lb
        seed_known = _SEED_LIMIT not in device.limitations
        for vrf, got in _hashings(device.lb):
            where = _where(name, vrf)
            if got.hash_fields != want.hash_fields:
                yield item.finding(name, f"{where} hashes ECMP on {_fields(got)}, the intent "
                                   f"on {_fields(want)}", vrf=vrf, expected=_fields(want),
                                   actual=_fields(got))
            # a switch that states no inactivity time (EOS's DLB) is judged on its mode
            timer = want.flowlet_us if got.flowlet_us is None else got.flowlet_us
            if vrf is None and (got.mode, timer) != (want.mode, want.flowlet_us):
                yield item.finding(name, f"{name} balances by {got.mode.value}"
                                   f"{_timer(got)}, the intent by {want.mode.value}"
                                   f"{_timer(want)}", expected=want.mode.value + _timer(want),
                                   actual=got.mode.value + _timer(got))
            if seed_known and got.seed != want.seed:
                # a seed of 0 is a fixed seed on some OSes (NVUE): only None is random
                seen = "random" if got.seed is None else str(got.seed)
                asked = "random" if want.seed is None else str(want.seed)
                yield item.finding(name, f"{where} hashes with seed {seen}, the intent sets "
                                   f"{'none (random)' if want.seed is None else asked}",
                                   vrf=vrf, expected=asked, actual=seen)
