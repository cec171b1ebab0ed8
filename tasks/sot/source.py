"""Which source of truth a fabric uses: `inventory/<fabric>/source.yaml`.

    nautobot:
      url: https://nautobot.example.net/
      token_env: FLATFAB_NAUTOBOT_TOKEN     # the token is read from this variable, never a file
      filters: {location: dc1}               # which devices form the fabric (API filters)
      roles: {super-spine: superspine, spine: spine, leaf: leaf, gpu-host: host,
              storage-host: storage}
      platforms: {frr: frr, linux: linux_host, arista_eos: eos, sonic: sonic}
      inventory: nautobot                   # Nornir hosts from Nautobot (default: files)

`roles` maps Nautobot role names to flatfab's (`host`: a GPU server or a one-NIC host,
`storage`: a storage server, a host too), `platforms` Nautobot platforms (by network
driver) to flatfab platforms (default: each platform's `source_of_truth.network_driver`):
both explicit, a device outside them is not part of the fabric
(roles) or refused (platforms).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, ValidationError, field_validator

from flatfab.errors import InputError
from flatfab.intent.base import Strict
from flatfab.intent.loader import validation_problems
from flatfab.platforms.registry import PLATFORMS, network_drivers
from flatfab.sot.importer import SotMapping
from flatfab.yamlio import load_yaml

FILE = "source.yaml"
Role = Literal["superspine", "spine", "leaf", "host", "storage"]
DEFAULT_ROLES: dict[str, Role] = {"super-spine": "superspine", "spine": "spine", "leaf": "leaf",
                                  "gpu-host": "host", "storage-host": "storage"}


class NautobotSource(Strict):
    url: Annotated[str, Field(pattern=r"^https?://[^\s/]+(/\S*)?$")]
    token_env: Annotated[str, Field(pattern=r"^[A-Z_][A-Z0-9_]*$")] = "FLATFAB_NAUTOBOT_TOKEN"
    filters: dict[str, str | list[str]] = Field(default_factory=dict)
    roles: dict[str, Role] = Field(
        default_factory=lambda: dict(DEFAULT_ROLES))
    # default: each platform's own source_of_truth.network_driver
    platforms: dict[str, str] = Field(default_factory=network_drivers)
    inventory: Literal["files", "nautobot"] = "files"  # where Nornir's hosts come from

    @field_validator("url")
    @classmethod
    def _site(cls, value: str) -> str:
        """The site root (the client adds /api/), whether the operator wrote it or /api/."""
        return value.rstrip("/").removesuffix("/api")

    @field_validator("platforms")
    @classmethod
    def _known_platforms(cls, value: dict[str, str]) -> dict[str, str]:
        unknown = sorted({p for p in value.values() if p not in PLATFORMS})
        if unknown:
            raise ValueError(f"{', '.join(map(repr, unknown))}: not a flatfab platform "
                             f"(known: {', '.join(sorted(PLATFORMS))})")
        return value

    @property
    def api_url(self) -> str:
        """The API root, as messages name it."""
        return f"{self.url}/api/"

    @property
    def mapping(self) -> SotMapping:
        return SotMapping(roles=self.roles, platforms=self.platforms)

    def token(self, shown: str) -> str:
        token = os.environ.get(self.token_env, "")
        if not token:
            raise InputError.single(shown, "nautobot.token_env", f"${self.token_env} is not "
                                    "set (the API token is read from the environment)")
        return token


class SourceFile(Strict):
    nautobot: NautobotSource


def load_source(inventory_dir: Path) -> NautobotSource:
    path = inventory_dir / FILE
    shown = str(path)
    if not path.exists():
        raise InputError.single(shown, "", "no source of truth configured for this fabric "
                                "(see the documentation: Source of truth (Nautobot))")
    doc: Any = load_yaml(path, display=shown)
    try:
        return SourceFile.model_validate(doc if doc is not None else {}).nautobot
    except ValidationError as exc:
        raise InputError(validation_problems(shown, doc, exc)) from None
