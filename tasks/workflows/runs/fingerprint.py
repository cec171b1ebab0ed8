"""Which intent and which plan a process works from, as short digests.

A distributed run is judged on the coordinator's plan from devices its workers read
against theirs; a worker whose plan differs (another intent, another flatfab) would be
read against other expectations, so every shard result carries its worker's plan hash.
The intent digest is cheap (the files' bytes) and keys a worker's plan cache; the plan
hash covers what the planner made of them.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from flatfab.intent.loader import INTENT_FILES
from flatfab.model.state import FabricState


def intent_digest(directory: Path) -> str:
    """sha256 over the intent files a load reads (name and bytes; a missing one counts)."""
    digest = hashlib.sha256()
    for stem in sorted(INTENT_FILES):
        path = directory / f"{stem}.yaml"
        digest.update(f"{stem}\0".encode())
        try:
            digest.update(path.read_bytes())
        except OSError as exc:  # the load that follows names the problem
            digest.update(f"\0unreadable {type(exc).__name__}".encode())
        digest.update(b"\0")
    return digest.hexdigest()


def plan_hash(plan: FabricState) -> str:
    """sha256 of the plan's canonical JSON, shortened (16 hex digits)."""
    return hashlib.sha256(plan.model_dump_json().encode()).hexdigest()[:16]
