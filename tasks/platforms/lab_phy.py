"""Reading the embedded lab's stand-in for hardware (`phy.json`, written by flatfab.lab).

A lab port is a veth with no module; the lab states, per port, the module the plan's link
class calls for, in flatfab's own PortPhysical form plus `changed_at` (epoch seconds of the
link's last change). What a collector reads from it is marked virtual, as the lab's ASIC is.
Where the lab's carrier watchers run (flatfab.platforms.lab_carrier), a port's flaps and the
time of its last change are the real link's, not the file's.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable
from typing import Any

from pydantic import ValidationError

from flatfab.model.physical import PortPhysical
from flatfab.model.state import DeviceState
from flatfab.platforms import lab_carrier

FILE = "phy.json"
# where the carrier watchers' logs start; a line no log line can be
_WATCHED = "== carrier watched =="


class LabPhyError(ValueError):
    """A phy.json flatfab cannot read."""


def read(text: str, now: float,
         carrier: dict[str, lab_carrier.Carrier] | None = None) -> dict[str, PortPhysical]:
    """Port -> its physical layer, as the lab states it at `now` (the node's clock); with
    `carrier` (the node's watchers ran), flaps and the last change are the real link's."""
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise LabPhyError(f"{FILE} is not JSON: {exc}") from None
    ports = doc.get("ports") if isinstance(doc, dict) else None
    if not isinstance(ports, dict):
        raise LabPhyError(f"{FILE}: no `ports` object")
    found: dict[str, PortPhysical] = {}
    for name, entry in ports.items():
        if not isinstance(entry, dict):
            raise LabPhyError(f"{FILE}: ports.{name} is not an object")
        found[name] = _port(name, entry, now)
        if carrier is not None:
            found[name] = _real_carrier(found[name], carrier.get(name), now)
    return found


def _real_carrier(phy: PortPhysical, seen: lab_carrier.Carrier | None,
                  now: float) -> PortPhysical:
    """The port with the flaps its watcher counted; its last change the watcher's, else the
    file's (the lab's start: no change seen since)."""
    update: dict[str, object] = {"flaps": seen.flaps if seen is not None else 0}
    if seen is not None and seen.changed_at is not None:
        update["last_change_s"] = max(0.0, now - seen.changed_at)
    return phy.model_copy(update=update)


def _port(name: str, entry: dict[str, Any], now: float) -> PortPhysical:
    fields = dict(entry)
    changed = fields.pop("changed_at", None)
    try:
        phy = PortPhysical.model_validate({**fields, "virtual": True})
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise LabPhyError(f"{FILE}: ports.{name}.{where}: {first['msg']}") from None
    if isinstance(changed, (int, float)) and not isinstance(changed, bool):
        return phy.model_copy(update={"last_change_s": max(0.0, now - changed)})
    unknown = {**phy.unknown, "last_change_s": "the lab's file states no time of the "
               "link's last change (stamped by `flatfab lab up`)"}
    return phy.model_copy(update={"unknown": unknown})


def read_driver_file(batch: Callable[[dict[str, str]], dict[str, str]],
                     path: str) -> dict[str, Any]:
    """A driver's get_physical in the lab: the node's phy.json as of the node's clock, each
    port's PortPhysical as JSON; {} where the node has none (not a lab, or an older one)."""
    out = batch({"phy": f"cat {shlex.quote(path)} 2>/dev/null || true", "now": "date +%s.%N",
                 "carrier": carrier_read(path)})
    if not out["phy"].strip():
        return {}
    try:
        now = float(out["now"].strip())
    except ValueError:
        raise LabPhyError(f"the node's clock is not a number: {out['now'].strip()[:40]!r}"
                          ) from None
    carrier = watched(out["carrier"])
    return {name: phy.model_dump(mode="json")
            for name, phy in read(out["phy"], now, carrier).items()}


def carrier_read(path: str) -> str:
    """The command that prints the carrier watchers' logs beside the phy.json at `path`,
    when the lab runs them (nothing where it does not)."""
    logs = shlex.quote(f"{path.rsplit('/', 1)[0]}/{lab_carrier.DIR}")
    return (f"if [ -d {logs} ]; then echo '{_WATCHED}'; "
            f"cat {logs}/{lab_carrier.CLEARED} 2>/dev/null; echo; "
            f"cat {logs}/*.log 2>/dev/null; fi; true")


def watched(text: str) -> dict[str, lab_carrier.Carrier] | None:
    """The carrier history in `read_driver_file`'s output (None: the node has no watchers)."""
    _, marker, rest = text.partition(_WATCHED + "\n")
    if not marker:
        return None
    cleared, _, logs = rest.partition("\n")
    return lab_carrier.history([logs], lab_carrier.parse_cleared(cleared))


def cabled(physical: dict[str, Any], planned: DeviceState) -> dict[str, PortPhysical]:
    """The ports of `planned` with a cable a driver's get_physical stated, as the model
    (a port whose statement does not read keeps why as an unknown)."""
    found: dict[str, PortPhysical] = {}
    for name, data in physical.items():
        iface = planned.interfaces.get(name)
        if iface is None or iface.peer is None:
            continue
        try:
            found[name] = PortPhysical.model_validate(data)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            found[name] = PortPhysical(unknown={"module": f"{where}: {first['msg']}"})
    return found


def read_cabled(getter: Callable[[], dict[str, Any]], planned: DeviceState,
                failures: tuple[type[Exception], ...]) -> dict[str, PortPhysical]:
    """`cabled` of what `getter` (a driver's get_physical) states; a statement that does not
    read leaves every cabled port's physical layer unknown, with why (the device's other
    state is read all the same)."""
    failed: tuple[type[Exception], ...] = (LabPhyError, *failures)
    try:
        stated = getter()
    except failed as exc:
        why = str(exc).strip().splitlines()
        return {port: PortPhysical(unknown={"module": f"not read: {why[-1] if why else exc}"})
                for port, iface in planned.interfaces.items()
                if iface.parent is None and iface.peer is not None}
    return cabled(stated, planned)
