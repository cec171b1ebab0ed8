"""A measurement against its reference: pass or fail, and by how much.

More than DEFAULT_TOLERANCE under the reference fails. Between two healthy NICs a run lands
within a few per cent of its reference; 20 % leaves room for a busy host and still catches
what a hand-over is for: a link at a lower speed (400G at 200G is -50 %), a NIC in a narrower
PCIe slot, a lossy path (pause storms, retransmits), two flows hashed onto one uplink. A
problem the measurement reports of its own (NCCL's #wrong) fails whatever the figure.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from flatfab.acceptance.engines.base import Measurement
from flatfab.acceptance.reference import Reference

DEFAULT_TOLERANCE = 0.20


class Outcome(StrEnum):
    PASS = "pass"
    FAIL = "fail"


@dataclass(frozen=True)
class Verdict:
    outcome: Outcome
    figure_gbps: float
    reference_gbps: float
    margin: float  # figure / reference - 1: -0.25 is 25 % under the reference
    tolerance: float
    reasons: tuple[str, ...] = ()  # why it failed (empty when it passed)

    @property
    def passed(self) -> bool:
        return self.outcome is Outcome.PASS


def judge(measurement: Measurement, reference: Reference,
          tolerance: float = DEFAULT_TOLERANCE) -> Verdict:
    """Fail when the figure is more than `tolerance` under the reference, or when the
    measurement reports a problem of its own."""
    if not 0 <= tolerance < 1:
        raise ValueError(f"tolerance {tolerance}: a fraction from 0 to under 1")
    if reference.gbps <= 0:
        raise ValueError(f"reference {reference.gbps} Gb/s: not a figure to reach")
    margin = measurement.gbps / reference.gbps - 1
    reasons = list(measurement.problems)
    if margin < -tolerance:
        reasons.append(f"{measurement.gbps:.1f} Gb/s is {-margin:.0%} under the reference "
                       f"{reference.gbps:.1f} Gb/s (more than {tolerance:.0%} fails)")
    return Verdict(outcome=Outcome.FAIL if reasons else Outcome.PASS,
                   figure_gbps=measurement.gbps, reference_gbps=reference.gbps,
                   margin=margin, tolerance=tolerance, reasons=tuple(reasons))
