"""Sizes the wire protocols fix: neutral constants that the intent's validation and the checks
share (the checks judge observed state and must not import the intent to know them)."""

from __future__ import annotations

# GRH 40 + UDP 8 + BTH 12 + XRC 4 + AtomicETH 28 + ICRC 4 (kernel iboe_get_mtu).
ROCE_HEADER_BYTES = 96
