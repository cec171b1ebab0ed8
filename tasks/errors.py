"""Errors that reach the operator as one clear line each, never as a traceback."""

from __future__ import annotations

from dataclasses import dataclass


class FlatfabError(Exception):
    """An error the CLI reports as text and exit code 2 (could not run)."""


@dataclass(frozen=True)
class InputProblem:
    """One problem in an input file: where it is and why it is wrong."""

    file: str
    path: str
    reason: str
    line: int | None = None

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line is not None else self.file
        key = f" {self.path}:" if self.path else ""
        return f"{where}:{key} {self.reason}"


class InputError(FlatfabError):
    """Bad input (intent, inventory, runbook, topology, device output)."""

    def __init__(self, problems: list[InputProblem]) -> None:
        self.problems = sorted(problems, key=lambda p: (p.file, p.line or 0, p.path))
        super().__init__("\n".join(str(p) for p in self.problems))

    @classmethod
    def single(cls, file: str, path: str, reason: str, line: int | None = None) -> InputError:
        return cls([InputProblem(file=file, path=path, reason=reason, line=line)])
