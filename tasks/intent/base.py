"""What every intent model shares."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

# IEEE speeds flatfab knows headroom and queue data for, in Mb/s.
SPEEDS_MBPS = {
    "10G": 10_000,
    "25G": 25_000,
    "40G": 40_000,
    "50G": 50_000,
    "100G": 100_000,
    "200G": 200_000,
    "400G": 400_000,
    "800G": 800_000,
}


class Strict(BaseModel):
    """Every intent model rejects unknown keys, so a typo is an error, not a silent default."""

    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=True)
