"""The embedded lab's real carrier changes: link flaps counted from the kernel's own events.

A lab port is a veth, and a veth does lose and regain carrier: when either end goes down,
when a node moves a port into a VRF's namespace, when a test bounces it. Linux counts those
changes (`carrier_changes` in sysfs) but keeps no time of the last one, so `flatfab lab up`
runs a watcher in each of a node's network namespaces, `ip -ts -o monitor link` (iproute2),
appending to `<state dir>/carrier/<namespace>.log`: every link event, timestamped in UTC.
`flatfab lab clear-counters` writes `carrier/cleared` (epoch seconds), as an operator clears
a switch's counters after turn-up: flaps count from then, the time of the last change does
not reset (as on a switch).

A line as iproute2 6.1 prints it (recorded in the lab, a veth taken down):
    [2026-11-30T01:56:03.949510] 2: eth1@swp1: <BROADCAST,MULTICAST> mtu 1500 ... state DOWN ...
A port moved to another namespace is `Deleted ...` in one log and appears in the other's.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime

DIR = "carrier"
CLEARED = "cleared"

_LINE = re.compile(r"^\[(?P<ts>[0-9T:.-]+)\] (?P<deleted>Deleted )?\d+: "
                   r"(?P<name>[^:@\s]+)(?:@\S+)?: <[^>]*>.* state (?P<state>[A-Z]+)\b")


@dataclass(frozen=True)
class Carrier:
    """One port's carrier history as the lab's watchers saw it."""

    flaps: int  # carrier lost since the last clear (since the lab came up when never cleared)
    transitions: int  # every change, up or down, since the lab came up (a flap counts two)
    changed_at: float | None  # epoch seconds of the last change; None: none seen


def events(logs: Iterable[str]) -> list[tuple[float, str, bool]]:
    """(time, port, running) of every link line in the watchers' logs, oldest first. A line
    that does not read as one (a partial last line, another kind of event) is skipped."""
    found: list[tuple[float, str, bool]] = []
    for text in logs:
        for line in text.splitlines():
            match = _LINE.match(line)
            if match is None:
                continue
            try:
                at = datetime.fromisoformat(match["ts"]).replace(tzinfo=UTC)
            except ValueError:
                continue
            running = match["deleted"] is None and match["state"] == "UP"
            found.append((at.timestamp(), match["name"], running))
    found.sort(key=lambda event: event[0])
    return found


def history(logs: Iterable[str], cleared: float | None) -> dict[str, Carrier]:
    """Port -> its carrier history. A port's first event sets its state without counting: what
    it did before its watcher started is unknown, never a flap."""
    running: dict[str, bool] = {}
    flaps: dict[str, int] = {}
    transitions: dict[str, int] = {}
    changed: dict[str, float] = {}
    for at, port, up in events(logs):
        before = running.get(port)
        running[port] = up
        if before is None or before == up:
            continue
        transitions[port] = transitions.get(port, 0) + 1
        changed[port] = at
        if not up and (cleared is None or at > cleared):
            flaps[port] = flaps.get(port, 0) + 1
    return {port: Carrier(flaps=flaps.get(port, 0), transitions=transitions.get(port, 0),
                          changed_at=changed.get(port))
            for port in running}


def parse_cleared(text: str) -> float | None:
    """The time of the last `clear-counters` (None: never cleared, or unreadable)."""
    try:
        value = float(text.strip())
    except ValueError:
        return None
    return value if value > 0 else None
