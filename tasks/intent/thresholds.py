"""The intent's `telemetry:` section (qos.yaml) resolved to the health engine's thresholds.

The engine (flatfab.telemetry) takes a plain `Thresholds` value and knows no intent; reading
the intent is the intent layer's part."""

from __future__ import annotations

from flatfab.intent.qos import TelemetryIntent
from flatfab.telemetry.thresholds import Thresholds


def thresholds_of(intent: TelemetryIntent) -> Thresholds:
    """The intent's `telemetry:` section as engine thresholds."""
    return Thresholds(
        interval_s=float(intent.interval_s),
        storm_pps=float(intent.pause_storm.pps),
        storm_for_s=float(intent.pause_storm.for_s),
        lossless_drops=intent.lossless_drops,
        ecn_on_lossy=intent.ecn_on_lossy,
        pause_without_ecn_pps=float(intent.pause_without_ecn_pps),
        dcqcn_min=intent.dcqcn_min,
        silent_after=intent.silent_after,
    )
