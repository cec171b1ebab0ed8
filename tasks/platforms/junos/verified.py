"""NAPALM's junos driver with the switch's SSH host key checked: NAPALM's driver name
`flatfab_junos` (napalm_flatfab_junos is its entry point).

NAPALM's driver opens NETCONF through PyEZ without `hostkey_verify`, and PyEZ's default then
lets ncclient accept whatever key answers. Every other session flatfab opens checks the key
against known_hosts, and so does this one (ncclient reads the user's ~/.ssh/known_hosts).
"""

from __future__ import annotations

from typing import Any

from napalm.junos.junos import JunOSDriver


class FlatfabJunosDriver(JunOSDriver):  # type: ignore[misc]  # napalm is untyped
    def __init__(self, hostname: str, username: str, password: str, timeout: int = 60,
                 optional_args: dict[str, Any] | None = None) -> None:
        super().__init__(hostname, username, password, timeout, optional_args)
        # PyEZ keeps the choice on the Device NAPALM built without one; it reads it at open
        self.device._hostkey_verify = True
