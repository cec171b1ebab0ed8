"""`flatfab *argv` in this process, as the tests that run many commands call it: (exit code,
stdout, stderr) of tests/support/flatfab.py's `in_process`."""

from __future__ import annotations

import pytest

from tests.support.flatfab import in_process


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """`capsys`: the test's capture, emptied first (a test reads only this run's output)."""
    capsys.readouterr()
    done = in_process(*argv)
    return done.code, done.stdout, done.stderr
