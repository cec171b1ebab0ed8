"""What every platform's physical-layer reader (`<platform>/phy.py`) shares: the error that
names a value it cannot read, the reason a command's facts are missing, and one port's facts
as they are read, each missing one with why."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from flatfab.model.physical import PortPhysical
from flatfab.model.state import DeviceState

# a platform's `read_ports(outputs, ports, now=...)`
Reader = Callable[..., dict[str, PortPhysical]]


class PhyReadError(ValueError):
    """A value a device states that flatfab cannot read: one line naming where it is."""

    @classmethod
    def at(cls, command: str, port: str, key: str, value: object) -> PhyReadError:
        return cls(f"{command}: {port}: {key}: cannot read {repr(value)[:60]}")


def missing(command: str) -> str:
    """Why the facts one command states are unknown: it was not answered."""
    return f"{command!r} is not in the outputs (not run, or not supported on this release)"


@dataclass(frozen=True)
class At:
    """Where a value is read from, so a bad one names its command, port and key."""

    command: str
    port: str

    def error(self, key: str, value: object) -> PhyReadError:
        return PhyReadError.at(self.command, self.port, key, value)

    def mapping(self, value: Any, key: str) -> dict[str, Any]:
        """An object (None: an empty one); anything else is an error."""
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise self.error(key, value)
        return value


@dataclass
class PortFacts:
    """One port's facts as they are read, and why each missing one is missing."""

    name: str
    fields: dict[str, Any] = field(default_factory=dict)
    unknown: dict[str, str] = field(default_factory=dict)

    def set(self, key: str, value: Any, why: str) -> None:
        if value is None:
            self.unknown[key] = why
        else:
            self.fields[key] = value

    def built(self) -> PortPhysical:
        return PortPhysical(**self.fields, unknown=self.unknown)


def scratch(planned: DeviceState) -> DeviceState:
    """A device to read shows into whose errors no one keeps (a command a release does not
    have is a fact the reader names as unknown, not a failed read)."""
    return DeviceState(name=planned.name, role=planned.role, platform=planned.platform)


def read_answered(outputs: dict[str, Any], ports: list[str],
                  read_ports: Reader) -> dict[str, PortPhysical]:
    """`read_ports` on the commands that were answered ({}: none were, or no port is cabled);
    a value that does not read leaves every port's physical layer unknown, with why."""
    answered = {command: reply for command, reply in outputs.items() if reply}
    if not answered or not ports:
        return {}
    try:
        # a switch's timestamps are its clock's: one apart from this machine's shifts
        # `last_change_s` by as much
        return read_ports(answered, ports, now=time.time())
    except PhyReadError as exc:
        return {port: PortPhysical(unknown={"module": str(exc)}) for port in ports}
