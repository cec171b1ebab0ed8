"""The package as an operator installs it (tests/support/installed.py): a user who is not
root, a fresh venv of Debian's Python outside the checkout, the core alone."""

from __future__ import annotations

from tests.support import installed


def test_the_installed_command_starts_outside_the_checkout(
        operator: installed.Installed) -> None:
    here = operator.folder("empty")
    shown = operator.run("--help", cwd=here)
    assert shown.code == 0, shown.stderr
    assert "Usage" in shown.stdout
    # the package installs under its own name only
    assert list(operator.venv.glob("lib/python3*/site-packages/tasks")) == []
    assert list(operator.venv.glob("lib/python3*/site-packages/flatfab/examples/lab"))
