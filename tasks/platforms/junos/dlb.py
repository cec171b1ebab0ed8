"""How a QFX5220/5230/5240 picks among equal-cost paths beyond the hash (fabric.yaml
`load_balancing.mode`): statements inside `forwarding-options enhanced-hash-key`, rendered
with the hash (junos/hashing.py, which owns the key) and read back from the configuration.

What Juniper documents ("Dynamic Load Balancing (DLB)", Interfaces User Guide for Switches;
"Configure Flowset Table Size in DLB Flowlet Mode", AI-ML Data Center Feature Guide for
Junos OS Evolved; Junos OS Evolved 23.4R2 release notes, "Reactive Path Rebalancing
(QFX5240)"), and Juniper's YANG (github.com/Juniper/yang 24.4R1-EVO
`junos-conf-forwarding-options`, `enhanced-hash-key ecmp-dlb`, a choice of one mode):

- `ecmp-dlb flowlet { inactivity-interval <us>; }`: DLB keeps a flow on its link until the
  flow pauses longer than the inactivity interval, then picks the best-quality link again:
  flatfab's `flowlet`. The YANG gives the interval in microseconds, a uint32 with no range
  and a default of 256 (no page found states a narrower range or a step).
- `ecmp-dlb per-packet`: every packet goes to the best-quality member link (packets of a
  flow may be reordered): flatfab's `adaptive` (the least loaded path per packet), not
  `spray` (every path in turn, whatever its load).
- `ecmp-dlb assigned-flow`: DLB picks a link for a flow once and keeps it (no reassignment):
  no flatfab mode; read back it is named, never mapped.
- DLB and resilient hashing exclude each other (the DLB page: a commit error). Junos OS
  Evolved's YANG has no `enhanced-hash-key ecmp-resilient-hash` (Junos OS's QFX YANG and
  the "enhanced-hash-key (EX)" page have it, for Junos OS switches): flatfab renders no
  resilient hashing for these switches and reads the statement where a switch states it.
- Without `ether-type`, DLB applies to every EtherType (the DLB page): none is rendered.

Which families take which mode is platform.yaml's (refused at load there); the render still
refuses a mode it has no statement for, and an interval YANG cannot hold.
"""

from __future__ import annotations

from typing import Any

from flatfab.model.state import LbMode, LoadBalancing
from flatfab.platforms.junos.text import Tree

DLB = "ecmp-dlb"
RESILIENT = "ecmp-resilient-hash"
FLOWLET = "flowlet"
INTERVAL = "inactivity-interval"
PER_PACKET = "per-packet"
ASSIGNED = "assigned-flow"
DEFAULT_INTERVAL_US = 256  # the YANG's default where `flowlet` states no interval
MAX_INTERVAL_US = 2**32 - 1  # uint32 in the YANG: no narrower range is documented
_KEY = "forwarding-options enhanced-hash-key"
# what flatfab renders no statement for, and why (platform.yaml refuses these at load)
REFUSED: dict[LbMode, str] = {
    LbMode.RESILIENT: (f"Junos OS Evolved has no `enhanced-hash-key {RESILIENT}` (not in "
                       "Juniper's 24.4R1-EVO YANG; documented for Junos OS switches)"),
    LbMode.SPRAY: (f"Junos spreads packets by link quality (`{DLB} {PER_PACKET}`, mode "
                   "adaptive); no statement sprays them over every path on these switches"),
}
# DLB statements beyond the mode: named where a switch configures them
_TUNING = {"egress-quantization": "DLB's link-quality bands",
           "ether-type": "which EtherTypes DLB applies to (without it: all)",
           "sampling-rate": "DLB's link-quality sampling rate"}
_MODES = (FLOWLET, PER_PACKET, ASSIGNED)  # the YANG's choice: one of them
_FLOWLET_TUNING = {"flowset-table-size": "DLB's flowset table share per ECMP group",
                   "reassignment": ("moves a flow within a flowlet to a better link "
                                    "(reactive path rebalancing)")}


def render(lb: LoadBalancing) -> tuple[Tree, list[str]]:
    """The statements of `lb.mode` inside `enhanced-hash-key` (none for plain hashing), and
    what of it Junos on these switches cannot take."""
    if lb.mode in REFUSED:
        return {}, [f"load balancing mode {lb.mode.value}: {REFUSED[lb.mode]}"]
    if lb.mode is LbMode.ADAPTIVE:
        return {DLB: {PER_PACKET: [None]}}, []
    if lb.mode is LbMode.FLOWLET:
        return _flowlet(lb.flowlet_us)
    return {}, []


def _flowlet(interval: int | None) -> tuple[Tree, list[str]]:
    if interval is None:
        return {}, ["load balancing mode flowlet without `flowlet_us`: Junos would use its "
                    f"own {DEFAULT_INTERVAL_US} us"]
    if not 1 <= interval <= MAX_INTERVAL_US:
        return {}, [f"flowlet inactivity time {interval} us: `{DLB} {FLOWLET} {INTERVAL}` "
                    f"takes 1 to {MAX_INTERVAL_US} us"]
    return {DLB: {FLOWLET: {INTERVAL: interval}}}, []


def conflict(key: Tree) -> str | None:
    """Why an `enhanced-hash-key` tree cannot be committed: DLB with resilient hashing."""
    if DLB in key and RESILIENT in key:
        return (f"`{DLB}` with `{RESILIENT}`: Junos refuses dynamic load balancing and "
                "resilient hashing together at commit")
    return None


def read(key: Tree) -> tuple[LbMode | None, int | None, dict[str, str]]:
    """The mode and inactivity time a switch's `enhanced-hash-key` states (None: one flatfab
    cannot map, named with why), and its DLB statements beyond the model."""
    notes: dict[str, str] = {}
    dlb = key.get(DLB)
    if DLB in key and RESILIENT in key:
        notes[f"{_KEY} {DLB}"] = (f"with {RESILIENT}, which Junos refuses together: the "
                                  "mode is not read")
        return None, None, notes
    if RESILIENT in key:
        return LbMode.RESILIENT, None, notes
    if DLB not in key:
        return LbMode.HASH, None, notes
    body = dlb if isinstance(dlb, dict) else {}
    notes.update(_beyond(f"{_KEY} {DLB}", body, _TUNING, _MODES))
    modes = [m for m in _MODES if m in body]
    if modes == [PER_PACKET]:
        return LbMode.ADAPTIVE, None, notes
    if modes == [FLOWLET]:
        return _read_flowlet(body[FLOWLET], notes)
    where, why = _unmapped(modes)
    notes[where] = why + ": the mode is not read"
    return None, None, notes


def _unmapped(modes: list[str]) -> tuple[str, str]:
    """Where and why a DLB mode flatfab has no name for is named."""
    if modes == [ASSIGNED]:
        return (f"{_KEY} {DLB} {ASSIGNED}",
                f"DLB with a fixed link per flow ({ASSIGNED}): no flatfab mode")
    if not modes:  # the DLB page: there is no default mode
        return f"{_KEY} {DLB}", "DLB without a mode (Junos has no default DLB mode)"
    return f"{_KEY} {DLB}", f"DLB with more than one mode ({', '.join(modes)})"


def _read_flowlet(flowlet: Any, notes: dict[str, str]
                  ) -> tuple[LbMode | None, int | None, dict[str, str]]:
    body = flowlet if isinstance(flowlet, dict) else {}
    notes.update(_beyond(f"{_KEY} {DLB} {FLOWLET}", body, _FLOWLET_TUNING, (INTERVAL,)))
    if INTERVAL not in body:
        return LbMode.FLOWLET, DEFAULT_INTERVAL_US, notes  # the YANG's default
    interval = _number(body[INTERVAL])
    if interval is None:
        notes[f"{_KEY} {DLB} {FLOWLET} {INTERVAL}"] = (
            f"{body[INTERVAL]!r} is no number of microseconds: the inactivity time is not read")
    return LbMode.FLOWLET, interval, notes


def _beyond(where: str, body: Tree, known: dict[str, str], read: tuple[str, ...]
            ) -> dict[str, str]:
    """The statements of `body` flatfab does not read, each with why it matters."""
    return {f"{where} {s}": known.get(s, "a DLB statement") + ": flatfab does not model it"
            for s in sorted(body) if not s.startswith("@") and s not in read}


def _number(value: Any) -> int | None:
    try:
        return int(str(value))
    except (TypeError, ValueError):
        return None
