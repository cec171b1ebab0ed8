"""What flatfab's NAPALM-style drivers share where they spell a NAPALM method the same way.

- `LoadedCandidate`: load_replace_candidate, load_merge_candidate and discard_config around
  the one `_load` a driver has (every driver, the shell drivers of frr and linux_host too);
- `CliDriver`: a driver over a CLI session Nornir opened and closes (netmiko, scrapli): the
  read-only flag, the show-command test, loading a candidate file, compare_config as the
  diff of two texts, and the checks every commit makes first;
- `parse_json`, `last_line`, `config_diff`: reading a command's output, diffing config text.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, Generic, TypeVar

from flatfab.platforms.base import ReadOnlyError

C = TypeVar("C")


def last_line(text: str) -> str:
    """The last non-blank line of a command's output (where devices say what went wrong)."""
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:200] if lines else ""


def parse_json(text: str, what: str, error: Callable[[str], Exception],
               tail: Callable[[str], str] = last_line) -> Any:
    """The JSON document in a command's output (a warning line before it is skipped)."""
    starts = [i for i in (text.find("{"), text.find("[")) if i >= 0]
    if not starts:
        raise error(f"{what}: no JSON in the output ({tail(text)!r})")
    try:
        value, _ = json.JSONDecoder().raw_decode(text[min(starts):])
    except ValueError as exc:
        raise error(f"{what}: bad JSON ({exc})") from None
    return value


def _diff(before: str, after: str, fromfile: str, tofile: str) -> str:
    return "".join(difflib.unified_diff(before.splitlines(keepends=True),
                                        after.splitlines(keepends=True), fromfile, tofile))


def unified_diff(before: str, after: str, name: str = "config") -> str:
    """A section's (or a whole config's) diff, files named running/<name>, candidate/<name>."""
    return _diff(before, after, f"running/{name}", f"candidate/{name}")


def config_diff(running: str, candidate: str) -> str:
    """compare_config's unified diff of two config texts."""
    return _diff(running, candidate, "running", "candidate")


class LoadedCandidate(Generic[C]):
    """The loaded candidate (C: the driver's form of it) and whether it merges."""

    _candidate: C | None
    _merge: bool

    def _load(self, filename: str | None, config: str | None, *, merge: bool) -> None:
        raise NotImplementedError

    def load_replace_candidate(self, filename: str | None = None,
                               config: str | None = None) -> None:
        self._load(filename, config, merge=False)

    def load_merge_candidate(self, filename: str | None = None,
                             config: str | None = None) -> None:
        self._load(filename, config, merge=True)

    def discard_config(self) -> None:
        self._candidate = None
        self._merge = False


class CliDriver(LoadedCandidate[C]):
    """Base of a driver over a CLI session Nornir opened; `error` is the platform's
    one-line error, `_parse_candidate` turns candidate text into C (or raises `error`)."""

    error: type[Exception] = Exception

    def __init__(self, *, read_only: bool, is_show: Callable[[str], bool],
                 timeout: float) -> None:
        self.read_only = read_only
        self.is_show = is_show
        self.timeout = timeout
        # a show command's limit: the run's command timeout (flatfab.workflows.devices.connections
        # sets it); a change keeps `timeout`, the driver's own
        self.read_timeout: float | None = None
        self._candidate = None
        self._merge = False

    def wait_s(self, *, mutating: bool) -> float:
        """How long one command may take to answer."""
        return self.timeout if mutating or self.read_timeout is None else self.read_timeout

    def open(self) -> None:
        """Nornir opened the SSH connection already."""

    def close(self) -> None:
        """Nornir closes the SSH connection."""

    def _parse_candidate(self, config: str) -> C:
        raise NotImplementedError

    def _load(self, filename: str | None, config: str | None, *, merge: bool) -> None:
        if config is None:
            if filename is None:
                raise self.error("no candidate: give a filename or a config")
            config = Path(filename).read_text(encoding="utf-8")
        self._candidate = self._parse_candidate(config)
        self._merge = merge

    def _compare_texts(self, candidate: C) -> tuple[str, str]:
        """(running, what it becomes with the candidate), in the form compare_config diffs."""
        raise NotImplementedError

    def compare_config(self) -> str:
        if self._candidate is None:
            return ""
        return config_diff(*self._compare_texts(self._candidate))

    def _committable(self) -> C:
        """The loaded candidate, once commit_config may go on (loaded, not read-only)."""
        if self._candidate is None:
            raise self.error("no candidate loaded")
        if self.read_only:
            raise ReadOnlyError("read-only: commit_config() is refused")
        return self._candidate
