"""Fixtures for every test. Shared helpers live in tests/support/ and test doubles in
tests/doubles/: plain modules, imported by name (a test module never imports another test
module or a conftest; tests/test_layout.py keeps it so)."""

from __future__ import annotations

from typing import Any

import pytest

# helpers and doubles assert too: their failures read like the tests' own
pytest.register_assert_rewrite("tests.support", "tests.doubles")

from tests.support.flatfab import flatfab  # noqa: E402


@pytest.fixture
def run_flatfab() -> Any:
    return flatfab
