"""A recorded device, for the shared collect test of the conformance suite."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from flatfab.model.state import DeviceState
from flatfab.platforms.base import DeviceDriver


@dataclass(frozen=True)
class CollectCase:
    """A device answering from recorded outputs, and the plan it must read back as.

    The shared test collects through the platform's read-only guard and expects no errors,
    every planned port with its MTU, every planned BGP peer established with its AS, and the
    planned lossless settings; `commands` returns what the device was sent, every one of
    which must be a read (judged by the platform's show_command where a driver guard keeps
    read-only; a transport-guarded platform's case opens its driver read-only instead).
    `source` says where the outputs come from: captured from a device (which, when), or
    derived from documentation (which), or written by hand (why).
    """

    name: str
    driver: DeviceDriver
    planned: DeviceState
    commands: Callable[[], list[str]]
    source: str
