"""The resolved live-health thresholds: a plain value the health engine takes, so the engine
needs no intent loading (tests and other tools build one directly)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Thresholds:
    """What counts as unhealthy; defaults are the intent's (qos.yaml `telemetry:`, resolved by
    flatfab.intent.thresholds.thresholds_of)."""

    interval_s: float = 10.0
    storm_pps: float = 1000.0
    storm_for_s: float = 30.0
    lossless_drops: int = 0  # per interval
    ecn_on_lossy: int = 0  # per interval
    pause_without_ecn_pps: float = 100.0
    dcqcn_min: int = 10  # per interval
    silent_after: int = 3  # intervals

    def __post_init__(self) -> None:
        # the intent model refuses these with file and key; this guards direct construction
        if self.interval_s <= 0 or self.silent_after < 1 or self.storm_pps <= 0:
            raise ValueError("interval_s, storm_pps must be > 0 and silent_after >= 1")

    @property
    def silent_s(self) -> float:
        """Seconds without a sample after which a target is silent."""
        return self.interval_s * self.silent_after

