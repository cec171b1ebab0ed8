"""Running one flatfab command in this process, as the console script runs it: much cheaper
than a subprocess where a test runs many."""

from __future__ import annotations

import sys

import pytest

from flatfab.cli.app import main


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of `flatfab *argv`."""
    old = sys.argv
    sys.argv = ["flatfab", *argv]
    try:
        main()
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 2
    finally:
        sys.argv = old
    out = capsys.readouterr()
    return code, out.out, out.err
