"""The fabric's counters an acceptance run takes before and after, flat per port.

Per switch port: each traffic class's packets and drops (the platform's class counters);
its PFC pause frames received and sent and its packets ECN-marked per queue (what collect
reads of the port: `PortCounters`); its physical layer's FEC codewords corrected and
uncorrectable and its flaps, where the platform reads them (verify --physical's reader).
Per host NIC: its pause frames, CNPs and ECN-marked packets (the platform's NIC counters).
A counter a device does not keep is absent, never 0, and so is its delta.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from flatfab.model.physical import PortPhysical
from flatfab.model.state import DeviceState

# device -> port -> counter name -> value
Snapshot = dict[str, dict[str, dict[str, int]]]
# the counters a verdict looks at: growth in any of them on a link a failing pair crossed is
# named (packets grow with any traffic and are shown only)
TROUBLE = ("drops", "pfc_rx", "pfc_tx", "ecn_marked", "cnp", "fec_uncorrectable", "flaps",
           "out_of_buffer")


def from_classes(per_port: Mapping[str, Mapping[int, Mapping[str, int]]]
                 ) -> dict[str, dict[str, int]]:
    """One device's class counters (port -> TC -> packets, drops) as `{port: {"drops.tc3":
    n, ...}}` (a device's part of a snapshot)."""
    return {
        port: {f"{name}.tc{tc}": value for tc, counts in sorted(per.items())
               for name, value in sorted(counts.items()) if name in ("packets", "drops")}
        for port, per in per_port.items()}


def from_ports(seen: DeviceState) -> dict[str, dict[str, int]]:
    """A switch's lossless port counters as collect read them: `pfc_rx`, `pfc_tx` (pause
    frames, all priorities) and `ecn_marked.q<queue>`."""
    found: dict[str, dict[str, int]] = {}
    for port, iface in seen.interfaces.items():
        counters = iface.counters
        if counters is None:
            continue
        counts = {name: value for name, value in (("pfc_rx", counters.pfc_rx_frames),
                                                  ("pfc_tx", counters.pfc_tx_frames))
                  if value is not None}
        counts.update({f"ecn_marked.q{queue}": value
                       for queue, value in sorted(counters.ecn_marked.items())})
        if counts:
            found[port] = counts
    return found


def from_physical(per_port: Mapping[str, PortPhysical]) -> dict[str, dict[str, int]]:
    found: dict[str, dict[str, int]] = {}
    for port, phy in per_port.items():
        counts: dict[str, int] = {}
        if phy.fec_counters is not None:
            for name, value in (("fec_corrected", phy.fec_counters.corrected),
                                ("fec_uncorrectable", phy.fec_counters.uncorrectable)):
                if value is not None:
                    counts[name] = value
        if phy.flaps is not None:
            counts["flaps"] = phy.flaps
        if counts:
            found[port] = counts
    return found


def from_nic(per_nic: Mapping[str, Mapping[str, int]]) -> dict[str, dict[str, int]]:
    """A host's NIC counters (flatfab.platforms.base NIC_* names) under the names above:
    `pfc_rx.3` as is, `ecn_marked_rx` as `ecn_marked`, CNPs sent and handled as `cnp_*`."""
    renamed = {"ecn_marked_rx": "ecn_marked", "cnp_sent": "cnp_sent", "cnp_handled":
               "cnp_handled", "out_of_buffer": "out_of_buffer"}
    return {nic: {renamed.get(name, name): value for name, value in sorted(counts.items())
                  if name in renamed or name.startswith("pfc_")}
            for nic, counts in per_nic.items()}


def merge(*parts: Mapping[str, Mapping[str, int]]) -> dict[str, dict[str, int]]:
    found: dict[str, dict[str, int]] = {}
    for part in parts:
        for port, counts in part.items():
            found.setdefault(port, {}).update(counts)
    return found


@dataclass(frozen=True)
class PortDelta:
    """One end of a link: each counter before and after (either None: not read)."""

    end: str  # device:port
    counters: tuple[tuple[str, int | None, int | None], ...]  # (name, before, after)

    def grew(self) -> dict[str, int]:
        """The counters of TROUBLE that grew, by how much."""
        return {name: after - before for name, before, after in self.counters
                if before is not None and after is not None and after > before
                and name.split(".")[0].startswith(TROUBLE)}

    @property
    def read(self) -> bool:
        return bool(self.counters)


def delta(before: Snapshot, after: Snapshot, end: str) -> PortDelta:
    device, _, port = end.partition(":")
    then = before.get(device, {}).get(port, {})
    now = after.get(device, {}).get(port, {})
    names = sorted({*then, *now})
    return PortDelta(end=end, counters=tuple((name, then.get(name), now.get(name))
                                             for name in names))
