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

from pydantic import BaseModel

from flatfab.atomic import write_atomic
from flatfab.errors import InputError


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

    @classmethod
    def open(cls, state_dir: Path, run_id: str) -> Journal:
        """An existing run's journal; the run id must name a directory under runs/."""
        directory = state_dir / "runs" / run_id
        if not run_id or "/" in run_id or run_id.startswith(".") or not directory.is_dir():
            raise InputError.single("--run", "", f"no run {run_id!r} in {state_dir / 'runs'}")
        return cls(directory)

    @property
    def run_id(self) -> str:
        return self.directory.name

    def event(self, event: str, **fields: Any) -> None:
        record = {"ts": round(time.time(), 3), "event": event, **fields}
        line = json.dumps(record, sort_keys=True).encode() + b"\n"
        with (self.directory / "events.jsonl").open("ab+") as handle:
            if handle.seek(0, os.SEEK_END) > 0:
                handle.seek(-1, os.SEEK_END)
                if handle.read(1) != b"\n":
                    line = b"\n" + line  # a killed run cut its last line short: not this one
            handle.write(line)

    def events(self) -> list[dict[str, Any]]:
        """The events so far, in order; a last line a killed run left half-written is not one."""
        text = self.read("events.jsonl") or ""
        found: list[dict[str, Any]] = []
        for line in text.splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict):
                found.append(record)
        return found

    def write(self, relative: str, content: str) -> Path:
        """Write a file of the run atomically: a killed run leaves the old or the new one."""
        path = self.directory / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, content)
        return path

    def read(self, relative: str) -> str | None:
        path = self.directory / relative
        return path.read_text(encoding="utf-8") if path.is_file() else None

    def write_json(self, relative: str, data: Any) -> Path:
        return self.write(relative, json.dumps(data, indent=1, sort_keys=True) + "\n")

    def write_model(self, relative: str, model: BaseModel) -> Path:
        """A model as one line of JSON, serialized by pydantic-core: the stdlib encoder with
        indent builds every chunk in Python first (a 10,000-device plan peaked ~1 GB that way;
        this costs twice its ~70 MB text)."""
        return self.write(relative, model.model_dump_json() + "\n")
