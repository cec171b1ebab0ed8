"""A run's journal under .flatfab/runs/<id>/: plan, configs, backups, diffs, events."""

from __future__ import annotations

import json
import os
import secrets
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any


@dataclass
class Journal:
    directory: Path

    @classmethod
    def start(cls, state_dir: Path, kind: str, fabric: str) -> Journal:
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        directory = state_dir / "runs" / f"{stamp}-{kind}-{fabric}-{secrets.token_hex(2)}"
        directory.mkdir(parents=True)
        journal = cls(directory)
        journal.event("start", kind=kind, fabric=fabric, pid=os.getpid())
        return journal

    @property
    def run_id(self) -> str:
        return self.directory.name

    def event(self, event: str, **fields: Any) -> None:
        record = {"ts": round(time.time(), 3), "event": event, **fields}
        with (self.directory / "events.jsonl").open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(record, sort_keys=True) + "\n")

    def write(self, relative: str, content: str) -> Path:
        path = self.directory / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
        return path

    def write_json(self, relative: str, data: Any) -> Path:
        return self.write(relative, json.dumps(data, indent=1, sort_keys=True) + "\n")
