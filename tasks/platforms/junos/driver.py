"""The driver workflows get for a Junos switch: NAPALM's junos driver, with flatfab's push
rules on top.

- `load_replace_candidate` loads with Junos `load replace` (PyEZ's default load action,
  which NAPALM's merge path sends), never `load override`: the rendered text tags what
  flatfab owns with `replace:` (tasks/platforms/junos/text.py), so `system`, the login
  accounts, the management interface and the `mgmt_junos` instance stay as they are. An
  override with flatfab's text would delete them and cut the switch off.
- A candidate that names a management interface is refused before it reaches the switch.
- `commit confirmed` counts whole minutes (Junos CLI reference, "commit"; NAPALM sends
  `revert_in // 60`): a revert time is rounded UP to the next whole minute, so a change is
  never reverted earlier than the caller asked (90 s -> 2 minutes).
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

from flatfab.errors import FlatfabError


class JunosDriverError(FlatfabError):
    """A push the Junos driver refuses (names the reason)."""


def revert_minutes(revert_in: int) -> int:
    """Whole minutes of `commit confirmed`, rounded up (Junos accepts 1..65535)."""
    if revert_in <= 0:
        raise JunosDriverError(f"revert_in must be a positive number of seconds, not "
                               f"{revert_in}")
    minutes = math.ceil(revert_in / 60)
    if minutes > 65535:
        raise JunosDriverError(f"revert_in {revert_in} s is more than Junos's 65535 minutes")
    return minutes


def touches(config: str, interfaces: tuple[str, ...]) -> list[str]:
    """The management interfaces a curly-brace candidate configures."""
    found = []
    for name in interfaces:
        if re.search(rf"(^|[\s{{;]){re.escape(name)}(\s*[{{;.]|\s*$)", config, re.M):
            found.append(name)
    return found


class JunosDriver:
    """NAPALM's JunOSDriver (open already) behind flatfab's push rules."""

    def __init__(self, inner: Any, management: tuple[str, ...]) -> None:
        self.inner = inner
        self.management = management

    def open(self) -> None:
        self.inner.open()

    def close(self) -> None:
        self.inner.close()

    def _text(self, filename: str | None, config: str | None) -> str:
        if config is None:
            if filename is None:
                raise JunosDriverError("load needs a config or a filename")
            config = Path(filename).read_text(encoding="utf-8")
        touched = touches(config, self.management)
        if touched:
            raise JunosDriverError(f"the candidate configures the management interface "
                                   f"{', '.join(touched)}: refused")
        return config

    def load_replace_candidate(self, filename: str | None = None,
                               config: str | None = None) -> None:
        # NAPALM's merge path is PyEZ's default `load replace`; its replace path would be
        # `load override` (see the module doc)
        self.inner.load_merge_candidate(config=self._text(filename, config))

    def load_merge_candidate(self, filename: str | None = None,
                             config: str | None = None) -> None:
        self.inner.load_merge_candidate(config=self._text(filename, config))

    def compare_config(self) -> str:
        return str(self.inner.compare_config())

    def discard_config(self) -> None:
        self.inner.discard_config()

    def commit_config(self, message: str = "", revert_in: int | None = None) -> None:
        if revert_in is None:
            self.inner.commit_config(message=message)
        else:
            self.inner.commit_config(message=message, revert_in=60 * revert_minutes(revert_in))

    def confirm_commit(self) -> None:
        self.inner.confirm_commit()

    def has_pending_commit(self) -> bool:
        return bool(self.inner.has_pending_commit())

    def rollback(self) -> None:
        self.inner.rollback()

    def get_config(self, retrieve: str = "all", full: bool = False,
                   sanitized: bool = False, format: str = "text") -> dict[str, str]:
        result: dict[str, str] = self.inner.get_config(retrieve=retrieve, full=full,
                                                       sanitized=sanitized, format=format)
        return result

    def get_facts(self) -> dict[str, Any]:
        result: dict[str, Any] = self.inner.get_facts()
        return result

    def cli(self, commands: list[str], encoding: str = "text") -> dict[str, Any]:
        result: dict[str, Any] = self.inner.cli(commands, encoding=encoding)
        return result

    def __getattr__(self, name: str) -> Any:
        # the other NAPALM getters (get_bgp_neighbors, get_lldp_neighbors, ...)
        if name.startswith("get_") or name == "is_alive":
            return getattr(self.inner, name)
        raise AttributeError(name)
