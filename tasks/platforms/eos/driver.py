"""NAPALM's EOS driver behind flatfab's push rules.

NAPALM's replace (`configure session` + `rollback clean-config` + the candidate) starts from
an empty config: what flatfab does not render, the management interface and VRF,
`management api http-commands`, users and aaa, would be gone after the commit, and with them
the eAPI the confirmation needs. A replace candidate is therefore the running config's
blocks flatfab does not own followed by the render (sections.merge_into), as the nxos
platform does for `configure replace`; a candidate that itself configures a management
interface is refused.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from flatfab.errors import FlatfabError
from flatfab.platforms.eos.sections import blocks, management_vrfs, merge_into, owner


class EosPushError(FlatfabError):
    """A push flatfab refuses on EOS (names the reason)."""


class EosDriver:
    """NAPALM's EOSDriver (opened by Nornir); every other call passes through to it."""

    def __init__(self, inner: Any, management: tuple[str, ...]) -> None:
        self.inner = inner
        self.management = management

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def _candidate(self, filename: str | None, config: str | None) -> str:
        if config is None:
            if filename is None:
                raise EosPushError("load needs a config or a filename")
            config = Path(filename).read_text(encoding="utf-8")
        vrfs = management_vrfs(config, self.management)
        touched = [block[0] for block in blocks(config)
                   if owner(block[0], self.management, vrfs) is None
                   and block[0].split()[:1] == ["interface"]]
        if touched:
            raise EosPushError(f"the candidate configures the management interface "
                               f"({touched[0]}): refused")
        return config

    def load_replace_candidate(self, filename: str | None = None,
                               config: str | None = None) -> None:
        candidate = self._candidate(filename, config)
        running = str(self.inner.get_config(retrieve="running")["running"])
        self.inner.load_replace_candidate(config=merge_into(running, candidate,
                                                            self.management))

    def load_merge_candidate(self, filename: str | None = None,
                             config: str | None = None) -> None:
        self.inner.load_merge_candidate(config=self._candidate(filename, config))
