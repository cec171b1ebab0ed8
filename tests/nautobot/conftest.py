"""One local Nautobot for the session (tasks/sot/server.py), always brought down after:
the `nautobot` fixture of tests/support/nautobot_service.py."""

from __future__ import annotations

from tests.support.nautobot_service import nautobot  # noqa: F401
