"""fabric.yaml `physical`: what the physical checks hold every port to, each with its reason.

Defaults, and why:
- `ber_margin` 10: a link's pre-FEC BER may reach a tenth of what its FEC is specified to
  correct (RS(544,514): 2.4e-4, IEEE 802.3bs/cd). A healthy 400G PAM4 link runs near 1e-8 to
  1e-6; one that climbs past a tenth of the limit has lost the margin that keeps the frame
  loss ratio within 802.3's objective, and is found before it drops frames, not after.
- `uncorrectable` 0: an uncorrectable codeword is a frame lost on the wire; RoCE retransmits
  from the lost packet on, so one such codeword costs a collective a round trip.
- `power_margin_db` 1: optical power stays a dB inside the module's own alarm thresholds
  (its warning thresholds are usually 1 to 3 dB inside them): room for a connector that
  gets dirtier.
- `temperature_margin_c` 5: the module stays 5 C below its own high-temperature alarm.
- `flaps` 0 in `flap_window_s` 3600: a link that changed state in the last hour is named;
  a training job sees every flap as a stalled collective.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from flatfab.intent.base import Strict
from flatfab.model.physical import PhysicalThresholds


class PhysicalIntent(Strict):
    """Thresholds of the physical-layer checks (`verify --physical`)."""

    ber_margin: Annotated[float, Field(ge=1)] = Field(
        10, description="The pre-FEC BER may reach the FEC's correction limit divided by this "
        "(RS(544,514) 2.4e-4, RS(528,514) 5e-5): 10 finds a degrading optic before it drops "
        "frames.")
    uncorrectable: Annotated[int, Field(ge=0)] = Field(
        0, description="Uncorrectable FEC codewords allowed (by `verify --physical` in a port's "
        "total, by a burn-in while its flows run, by `watch` in each interval): each is a "
        "frame lost on the wire, which RoCE pays for with a retransmission.")
    power_margin_db: Annotated[float, Field(ge=0, le=10)] = Field(
        1, description="Optical power (rx and tx) stays this far inside the module's own "
        "alarm thresholds, in dB.")
    temperature_margin_c: Annotated[float, Field(ge=0, le=40)] = Field(
        5, description="A module stays this far below its own high-temperature alarm, in C.")
    flaps: Annotated[int, Field(ge=0)] = Field(
        0, description="Link flaps allowed within `flap_window_s`.")
    flap_window_s: Annotated[int, Field(ge=60, le=30 * 86_400)] = Field(
        3600, description="The window flaps are counted in, in seconds (where the OS states "
        "when a link last changed state).")

    def thresholds(self) -> PhysicalThresholds:
        return PhysicalThresholds(**self.model_dump())
