"""What an intent rule reports: file, key path and reason (the loader adds the line)."""

from __future__ import annotations

from dataclasses import dataclass

from flatfab.yamlio import PathPart

FABRIC, HOSTS, TENANTS, QOS = "fabric", "hosts", "tenants", "qos"


@dataclass(frozen=True)
class Problem:
    file: str
    path: tuple[PathPart, ...]
    reason: str


