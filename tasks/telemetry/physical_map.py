"""What the plan says about each switch port's physical layer, for the streamed physical
conditions: the link it is an end of, the far end, the FEC its link class runs and the BER
bound `verify --physical` holds it to, and the fabric's physical thresholds. Built once per
engine, so judging a sample is a dictionary lookup."""

from __future__ import annotations

from dataclasses import dataclass

from flatfab.model.physical import CORRECTION_LIMIT, Fec, PhysicalThresholds
from flatfab.model.state import FabricState


@dataclass(frozen=True, slots=True)
class PortLink:
    """One end of a planned physical link, as the streamed conditions need it."""

    link: str  # the link's id
    far: str  # the other end, device:port
    fec: Fec | None  # the link class's FEC (None: the plan states no physical policy)
    limit: float | None  # the pre-FEC BER that FEC corrects to 802.3's objective
    bound: float | None  # the limit divided by `ber_margin`: where `phy.ber` fails


class PhysicalMap:
    def __init__(self, plan: FabricState) -> None:
        policy = plan.physical
        self.thresholds: PhysicalThresholds | None = (policy.thresholds if policy is not None
                                                      else None)
        self._ports: dict[tuple[str, str], PortLink] = {}
        for link in plan.links:
            if link.parent is not None:
                continue  # a VRF sub-link rides on its physical link: no layer of its own
            expect = policy.classes.get(link.link_class) if policy is not None else None
            fec = expect.fec if expect is not None else None
            limit = CORRECTION_LIMIT[fec] if fec is not None else None
            bound = (limit / self.thresholds.ber_margin
                     if limit is not None and self.thresholds is not None else None)
            for end, far in ((link.a, link.b), (link.b, link.a)):
                self._ports[(end.device, end.port)] = PortLink(link.id, str(far), fec, limit,
                                                               bound)

    def port(self, device: str, port: str | None) -> PortLink | None:
        """The planned link `port` is an end of (None: none, or not a port)."""
        return None if port is None else self._ports.get((device, port))
