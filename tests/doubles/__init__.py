"""Every test double of flatfab in one place: one module per platform (its device, answering
from recorded outputs and keeping the state its commit mechanism would) and the Nautobot API.

A platform's module offers `collect_cases()` for the conformance suite's shared collect test
(flatfab.testing.conformance, run by tests/conformance/test_platforms.py), as NAPALM's shared
getter tests run every driver over its own mocked data.
"""

from __future__ import annotations

from flatfab.testing.cases import CollectCase

__all__ = ["CollectCase"]
