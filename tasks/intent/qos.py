"""The lossless profile of a fabric: intents/<fabric>/qos.yaml.

Every key has the canonical RoCEv2 default (lossless-domain reference §1.1), so a fabric with
no qos.yaml, or an empty one, gets a correct lossless plane: RoCE on DSCP 26 -> priority 3,
PFC and its watchdog on priority 3 only, CNP on DSCP 48 -> strict priority 6, DSCP trust,
ECN marking on the RoCE queue, headroom sized per port from speed, cable and MTU.

Values that cannot exist (a DSCP of 64, weights that do not sum to 100, one DSCP in two
classes) are rejected here. Values that exist but break the plane (ECN min above max, PFC
on a lossy class, a pinned headroom below the requirement) load, and the check catalog
names them, with device and port, before anything is pushed.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, field_validator, model_validator

from flatfab.intent.base import SPEEDS_MBPS, Strict
from flatfab.qos.headroom import ASICS

Dscp = Annotated[int, Field(ge=0, le=63)]
Priority = Annotated[int, Field(ge=0, le=7)]
Bytes = Annotated[int, Field(ge=0, le=2**40)]
Trust = Literal["dscp", "pcp"]


class ClassIntent(Strict):
    dscp: Annotated[list[Dscp], Field(min_length=1)]
    priority: Priority


class WatchdogIntent(Strict):
    enabled: bool = True
    detect_ms: Annotated[int, Field(ge=100, le=5000)] = 200
    restore_ms: Annotated[int, Field(ge=100, le=60000)] = 400
    action: Literal["drop", "forward", "alert"] = "drop"
    poll_ms: Annotated[int, Field(ge=100, le=1000)] = 200


class PfcIntent(Strict):
    priorities: list[Priority] = Field(default_factory=lambda: [3])
    watchdog: WatchdogIntent = WatchdogIntent()


class EtsIntent(Strict):
    strict: list[Priority] = Field(default_factory=lambda: [6])  # traffic classes
    weights: dict[Priority, Annotated[int, Field(ge=1, le=100)]] = Field(
        default_factory=lambda: {0: 50, 3: 50})

    @model_validator(mode="after")
    def _shares(self) -> EtsIntent:
        total = sum(self.weights.values())
        if self.weights and total != 100:
            raise ValueError(f"DWRR weights must sum to 100, they sum to {total}")
        both = sorted(set(self.strict) & set(self.weights))
        if both:
            raise ValueError(f"traffic class {both[0]} is both strict and weighted")
        return self


class EcnThresholds(Strict):
    min_bytes: Annotated[int, Field(ge=1, le=2**40)]
    max_bytes: Annotated[int, Field(ge=1, le=2**40)]
    probability: Annotated[int, Field(ge=1, le=100)] = 10  # percent at max_bytes


class EcnIntent(Strict):
    default: EcnThresholds = EcnThresholds(min_bytes=150_000, max_bytes=1_500_000)
    per_speed: dict[str, EcnThresholds] = Field(default_factory=dict)

    @field_validator("per_speed")
    @classmethod
    def _speeds(cls, value: dict[str, EcnThresholds]) -> dict[str, EcnThresholds]:
        unknown = [s for s in value if s.upper() not in SPEEDS_MBPS]
        if unknown:
            raise ValueError(f"unknown speed {unknown[0]!r}; expected one of "
                             f"{', '.join(SPEEDS_MBPS)}")
        return {s.upper(): t for s, t in value.items()}

    def for_speed(self, speed_mbps: int) -> EcnThresholds:
        for name, thresholds in self.per_speed.items():
            if SPEEDS_MBPS[name] == speed_mbps:
                return thresholds
        return self.default


class AsicIntent(Strict):
    """Headroom inputs of one platform's ASIC: a known family, optionally adjusted."""

    family: str = "spectrum-4"
    cell_bytes: Annotated[int, Field(ge=0, le=4096)] | None = None
    mac_phy_bytes: Annotated[int, Field(ge=0, le=65536)] | None = None
    pipeline_bytes: Annotated[int, Field(ge=0, le=1 << 20)] | None = None
    buffer_bytes: Annotated[int, Field(ge=1 << 20, le=1 << 34)] | None = None

    @field_validator("family")
    @classmethod
    def _known(cls, value: str) -> str:
        if value not in ASICS:
            raise ValueError(f"unknown ASIC family {value!r}; expected one of "
                             f"{', '.join(ASICS)}")
        return value


class BuffersIntent(Strict):
    mode: Literal["dynamic", "static"] = "dynamic"
    ingress_lossless_pool: Bytes = 48_000_000
    ingress_lossy_pool: Bytes = 24_000_000
    egress_lossless_pool: Bytes = 48_000_000
    egress_lossy_pool: Bytes = 24_000_000
    lossless_dynamic_th: Annotated[int, Field(ge=-8, le=7)] = 0  # alpha = 2^n of free pool
    lossy_dynamic_th: Annotated[int, Field(ge=-8, le=7)] = 3
    lossless_static_th: Bytes = 4_000_000  # when mode is static
    lossy_static_th: Bytes = 1_000_000
    egress_queue_bytes: Bytes = 4_000_000  # per-queue limit of lossy queues (lab bfifo)


class NicIntent(Strict):
    """GPU host NIC (ConnectX) settings; unset ones follow the switch profile."""

    trust: Trust = "dscp"
    pfc: list[Priority] | None = None
    roce_tos: Annotated[int, Field(ge=0, le=255)] | None = None
    cnp_dscp: Dscp | None = None
    cnp_priority: Priority | None = None
    dscp_to_priority: dict[Dscp, Priority] = Field(default_factory=dict)
    ecn_np: bool = True
    ecn_rp: bool = True
    dcqcn: bool = True
    pfc_prevention_ms: Annotated[int, Field(ge=0, le=8000)] = 100


class NicPatch(Strict):
    trust: Trust | None = None
    pfc: list[Priority] | None = None
    roce_tos: Annotated[int, Field(ge=0, le=255)] | None = None
    cnp_dscp: Dscp | None = None
    cnp_priority: Priority | None = None
    dscp_to_priority: dict[Dscp, Priority] | None = None
    ecn_np: bool | None = None
    ecn_rp: bool | None = None


class Override(Strict):
    """Exceptions for matching switches (and ports) or hosts; shell patterns."""

    devices: Annotated[list[str], Field(min_length=1)]
    ports: list[str] = Field(default_factory=lambda: ["*"])
    trust: Trust | None = None
    pfc: list[Priority] | None = None
    dscp_to_tc: dict[Dscp, Priority] | None = None
    ecn: EcnThresholds | None = None
    ecn_enabled: bool | None = None
    watchdog: WatchdogIntent | None = None
    strict: list[Priority] | None = None
    xoff_bytes: Bytes | None = None
    nic: NicPatch | None = None


class PauseStormIntent(Strict):
    """PFC pause rate a port/priority may sustain before it is a storm."""

    # well above the few hundred pps of ordinary incast back-pressure, far below line-rate
    # storms (~150 k pps of pause quanta at 100G)
    pps: Annotated[int, Field(ge=1, le=10_000_000)] = 1000
    # longer than a burst of incast, shorter than a job notices a stalled collective
    for_s: Annotated[int, Field(ge=1, le=3600)] = 30


class TelemetryIntent(Strict):
    """Live lossless-health thresholds of streaming telemetry (`flatfab watch`)."""

    # the gNMI sample interval: coarse enough for 2 shared cores, fine enough to see a storm
    interval_s: Annotated[int, Field(ge=1, le=300)] = 10
    pause_storm: PauseStormIntent = PauseStormIntent()
    # packets a lossless queue may drop per interval: a lossless queue drops none
    lossless_drops: Annotated[int, Field(ge=0, le=2**40)] = 0
    # packets a lossy queue may mark ECN per interval: marking belongs to lossless queues only
    ecn_on_lossy: Annotated[int, Field(ge=0, le=2**40)] = 0
    # PFC pauses received per second before a queue marking no ECN is judged (below it a
    # pause is ordinary back-pressure the queue may absorb under the ECN minimum)
    pause_without_ecn_pps: Annotated[int, Field(ge=1, le=10_000_000)] = 100
    # CNPs (or ECN-marked receives) per interval before a flat reaction is judged: a few
    # CNPs may fall inside the NIC's CNP coalescing window
    dcqcn_min: Annotated[int, Field(ge=1, le=2**40)] = 10
    # intervals without a sample before a target is silent: one or two can be late under load
    silent_after: Annotated[int, Field(ge=1, le=1000)] = 3

    @model_validator(mode="after")
    def _storm_spans_a_sample(self) -> TelemetryIntent:
        if self.pause_storm.for_s < self.interval_s:
            raise ValueError(f"pause_storm.for_s ({self.pause_storm.for_s}) is shorter than "
                             f"interval_s ({self.interval_s}): a storm is seen one interval "
                             "at a time")
        return self


class QosIntent(Strict):
    roce: ClassIntent = ClassIntent(dscp=[26], priority=3)
    cnp: ClassIntent = ClassIntent(dscp=[48], priority=6)
    trust: Trust = "dscp"
    default_tc: Priority = 0
    dscp_to_tc: dict[Dscp, Priority] = Field(default_factory=dict)  # beyond RoCE and CNP
    pfc: PfcIntent = PfcIntent()
    ets: EtsIntent = EtsIntent()
    ecn: EcnIntent = EcnIntent()
    buffers: BuffersIntent = BuffersIntent()
    asics: dict[str, AsicIntent] = Field(default_factory=lambda: {"frr": AsicIntent()})
    hosts: NicIntent = NicIntent()
    overrides: list[Override] = Field(default_factory=list)
    telemetry: TelemetryIntent = TelemetryIntent()  # live health only: the plan carries none

    @model_validator(mode="after")
    def _classes_apart(self) -> QosIntent:
        shared = sorted(set(self.roce.dscp) & set(self.cnp.dscp))
        if shared:
            raise ValueError(f"DSCP {shared[0]} is both a RoCE and a CNP code point")
        if self.roce.priority == self.cnp.priority:
            raise ValueError(f"RoCE and CNP share priority {self.roce.priority}; CNP needs its "
                             "own (lossy, strict) class")
        return self

    def tc_of(self, dscp: int) -> int:
        """Traffic class of a DSCP in the fabric-wide map (identity priority = TC)."""
        if dscp in self.roce.dscp:
            return self.roce.priority
        if dscp in self.cnp.dscp:
            return self.cnp.priority
        return self.dscp_to_tc.get(dscp, self.default_tc)
