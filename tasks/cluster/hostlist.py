"""Slurm's host list expressions: `su1-s[1-4,7]`, `leaf[01-16]`, comma-separated lists.

Slurm reads `Nodes=` and `Switches=` of topology.conf as host lists (slurm.conf(5), "NODE
CONFIGURATION": a range of numbers in brackets, with leading zeros kept; several bracket
groups in one name expand as their product). flatfab writes them compressed on the trailing
number only, which every Slurm version reads, and reads any of them back.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable

_TRAILING = re.compile(r"^(.*?)(\d+)$")
_GROUP = re.compile(r"\[([^\[\]]*)\]")


class HostlistError(ValueError):
    """A host list expression Slurm would not read."""


def _split(expression: str) -> list[str]:
    """The comma-separated items of an expression, commas inside brackets kept."""
    items, depth, start = [], 0, 0
    for index, char in enumerate(expression):
        if char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
            if depth < 0:
                raise HostlistError(f"{expression!r}: ']' without '['")
        elif char == "," and depth == 0:
            items.append(expression[start:index])
            start = index + 1
    if depth:
        raise HostlistError(f"{expression!r}: '[' without ']'")
    items.append(expression[start:])
    return [item.strip() for item in items if item.strip()]


def _range(text: str, expression: str) -> list[str]:
    """`1-4,7` (leading zeros kept: `01-10` is 01, 02, ... 10) as the numbers' texts."""
    out: list[str] = []
    for part in text.split(","):
        low, dash, high = part.strip().partition("-")
        if not low.isdigit() or (dash and not high.isdigit()):
            raise HostlistError(f"{expression!r}: {part!r} is not a number or a range")
        width = len(low) if low.startswith("0") else 0
        first, last = int(low), int(high) if dash else int(low)
        if last < first:
            raise HostlistError(f"{expression!r}: range {part!r} runs backwards")
        out.extend(str(n).zfill(width) for n in range(first, last + 1))
    return out


def expand(expression: str) -> list[str]:
    """Every name of a host list expression, in its order, each once."""
    names: list[str] = []
    for item in _split(expression):
        pieces = _GROUP.split(item)  # text, range, text, range, ..., text
        choices = [[piece] if index % 2 == 0 else _range(piece, expression)
                   for index, piece in enumerate(pieces)]
        names.extend("".join(parts) for parts in itertools.product(*choices))
    return list(dict.fromkeys(names))


def compress(names: Iterable[str]) -> str:
    """A host list expression of `names` (sorted naturally; runs of a trailing number of one
    width in brackets)."""
    runs: dict[tuple[str, int], list[int]] = {}
    plain: list[str] = []
    for name in sorted(set(names), key=natural):
        match = _TRAILING.match(name)
        if match is None:
            plain.append(name)
            continue
        digits = match.group(2)
        width = len(digits) if digits.startswith("0") and len(digits) > 1 else 0
        runs.setdefault((match.group(1), width), []).append(int(digits))
    items = [*plain, *(_run(prefix, width, numbers)
                       for (prefix, width), numbers in runs.items())]
    return ",".join(sorted(items, key=natural))


def _run(prefix: str, width: int, numbers: list[int]) -> str:
    if len(numbers) == 1:
        return f"{prefix}{str(numbers[0]).zfill(width)}"
    spans: list[str] = []
    for _, group in itertools.groupby(enumerate(sorted(numbers)), lambda p: p[1] - p[0]):
        values = [n for _, n in group]
        low, high = str(values[0]).zfill(width), str(values[-1]).zfill(width)
        spans.append(low if low == high else f"{low}-{high}")
    return f"{prefix}[{','.join(spans)}]"


def natural(name: str) -> tuple[tuple[int, str | int], ...]:
    """Sort key that orders leaf2 before leaf10."""
    return tuple((1, int(part)) if part.isdigit() else (0, part)
                 for part in re.split(r"(\d+)", name) if part)
