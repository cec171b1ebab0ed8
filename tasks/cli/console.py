"""Where the CLI writes: the two consoles, JSON on stdout, and the output format option.

Light on purpose (rich and the standard library only): every command module imports it at
start, and `--help` and shell completion load nothing more than the commands' options.
"""

from __future__ import annotations

import json
import sys
from enum import StrEnum
from typing import Any

from rich.console import Console
from rich.markup import escape

from flatfab.errors import InputProblem

# wide enough for findings when piped or captured (CI logs), the terminal's width otherwise
console = Console(highlight=False, width=None if sys.stdout.isatty() else 160)
err_console = Console(stderr=True, highlight=False, width=None if sys.stderr.isatty() else 160)


class Format(StrEnum):
    TABLE = "table"
    JSON = "json"


def warn_input(problem: InputProblem) -> None:
    """An input that loads but deserves a word: one line on stderr, shaped like an error."""
    err_console.print(f"[yellow]warning:[/] {escape(str(problem))}", soft_wrap=True)


def emit_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=1, sort_keys=True) + "\n")
