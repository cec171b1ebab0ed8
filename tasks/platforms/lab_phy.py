"""Reading the embedded lab's stand-in for hardware (`phy.json`, written by flatfab.lab).

A lab port is a veth with no module; the lab states, per port, the module the plan's link
class calls for, in flatfab's own PortPhysical form plus `changed_at` (epoch seconds of the
link's last change). What a collector reads from it is marked virtual, as the lab's ASIC is.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable
from typing import Any

from pydantic import ValidationError

from flatfab.model.physical import PortPhysical
from flatfab.model.state import DeviceState

FILE = "phy.json"


class LabPhyError(ValueError):
    """A phy.json flatfab cannot read."""


def read(text: str, now: float) -> dict[str, PortPhysical]:
    """Port -> its physical layer, as the lab states it at `now` (the node's clock)."""
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
    return found


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
    out = batch({"phy": f"cat {shlex.quote(path)} 2>/dev/null || true", "now": "date +%s.%N"})
    if not out["phy"].strip():
        return {}
    try:
        now = float(out["now"].strip())
    except ValueError:
        raise LabPhyError(f"the node's clock is not a number: {out['now'].strip()[:40]!r}"
                          ) from None
    return {name: phy.model_dump(mode="json") for name, phy in read(out["phy"], now).items()}


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
