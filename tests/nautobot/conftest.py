"""One local Nautobot for the session (labs/nautobot/), always brought down after:
the `nautobot` fixture of tests/support/nautobot_service.py."""

from __future__ import annotations

from tests.support.nautobot_service import nautobot  # noqa: F401
