"""What flatfab's exit codes say, one rule for every command that reads devices.

0 clean; 1 findings, drift, changes that did not land; 2 could not run (bad input, no
inventory, no broker); 3 incomplete: some devices (or a setting a device should state) were
not read, and nothing that was read is wrong. Findings on the devices read win over unread
ones: a run that found a fault says so with 1, and still names each device it could not read.
"""

from __future__ import annotations

from typing import Final

CLEAN: Final = 0
FINDINGS: Final = 1
COULD_NOT_RUN: Final = 2
INCOMPLETE: Final = 3


def judged(*, failed: bool, unread: bool) -> int:
    """The exit code of a run that read devices: `failed`, something read is wrong;
    `unread`, some device could not be read."""
    if failed:
        return FINDINGS
    return INCOMPLETE if unread else CLEAN
