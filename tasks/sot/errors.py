"""The error of the source-of-truth layer."""

from __future__ import annotations

from flatfab.errors import FlatfabError


class SotError(FlatfabError):
    """A source of truth (or the local Nautobot service) could not be reached or used."""
