"""The operator's install (tests/support/installed.py), made once per session and shared by
the tests of the package as installed and of its lab."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import installed

# a platform package of its own (tests/packaging/test_platform_package.py builds and installs
# it): its tests run in its own install, not in flatfab's session
collect_ignore = ["flatfab_acme"]


@pytest.fixture(scope="session")
def dist(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The sdist and the wheel built from it (once for all of `make test`'s sessions)."""
    return installed.shared_dist(tmp_path_factory.mktemp("dist"))


@pytest.fixture(scope="session")
def operator(dist: tuple[Path, Path]) -> Iterator[installed.Installed]:
    """The wheel in a fresh venv of a user who is not root, core only."""
    why = installed.not_possible()
    if why is not None:
        pytest.skip(why)
    made = installed.install(dist[1])
    yield made
    installed.remove(made)
