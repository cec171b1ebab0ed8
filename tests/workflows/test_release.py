"""A session that fails to close once its device was read is logged, never the device's
failure: what was read stands (a closing error once made a read device unread)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from nornir.core.inventory import Host

from flatfab.workflows.devices.connections import release


class _Broken:
    def close(self) -> None:
        raise OSError("Socket is closed")


class _Fine:
    closed = False

    def close(self) -> None:
        self.closed = True


def test_a_close_that_fails_is_logged_and_the_others_still_close(
        caplog: pytest.LogCaptureFixture) -> None:
    host = Host(name="leaf1")
    fine = _Fine()
    host.connections.update({"netmiko": _Broken(), "napalm": fine})  # type: ignore[dict-item]
    task: Any = SimpleNamespace(host=host)
    release(task)
    assert host.connections == {} and fine.closed
    assert "leaf1: closing its netmiko session failed" in caplog.text
