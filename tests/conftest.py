"""Fixtures for every test. Shared helpers live in tests/support/ and test doubles in
tests/doubles/: plain modules, imported by name (a test module never imports another test
module or a conftest; tests/test_layout.py keeps it so)."""

from __future__ import annotations

import functools
from typing import Any

import pytest
import typer.testing

# helpers and doubles assert too: their failures read like the tests' own
pytest.register_assert_rewrite("tests.support", "tests.doubles")

from tests.support.flatfab import flatfab  # noqa: E402

# typer's test runner builds an app's click tree again on every invoke (0.1 s of CPU each);
# once per app is what the console script does too (flatfab.cli.app.command)
_cached = functools.cache(typer.testing._get_command)  # type: ignore[attr-defined]
typer.testing._get_command = _cached


@pytest.fixture
def run_flatfab() -> Any:
    return flatfab
