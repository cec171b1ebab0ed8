"""What every platform's physical-layer reader (`<platform>/phy.py`) shares: the error that
names a value it cannot read, the reason a command's facts are missing, and one port's facts
as they are read, each missing one with why."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from flatfab.model.physical import PortPhysical


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
