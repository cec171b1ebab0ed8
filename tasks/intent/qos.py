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

from typing import Annotated, Any, Literal

from pydantic import Field, field_validator, model_validator

from flatfab.intent.base import SPEEDS_MBPS, Kind, Strict
from flatfab.platforms.registry import DEFAULT_SWITCH
from flatfab.qos.ecn_delay import delay_bytes
from flatfab.qos.headroom import ASICS

Dscp = Annotated[int, Field(ge=0, le=63), Kind("DSCP")]
Priority = Annotated[int, Field(ge=0, le=7), Kind("priority")]
Bytes = Annotated[int, Field(ge=0, le=2**40), Kind("bytes")]
Trust = Literal["dscp", "pcp"]
CongestionProfile = Literal["lossless", "lossless-no-dcqcn", "lossy", "lossy-trimming"]
LOSSY_PROFILES = ("lossy", "lossy-trimming")
# what each profile changes from the lossless defaults when qos.yaml leaves the key out
_PROFILE_DEFAULTS: dict[str, dict[str, dict[str, Any]]] = {
    "lossless-no-dcqcn": {"hosts": {"dcqcn": False, "ecn_np": False, "ecn_rp": False}},
    "lossy": {"pfc": {"priorities": []}},
    # the trimmed packets' TC is sent before any other, beside CNP's
    "lossy-trimming": {"pfc": {"priorities": []}, "ets": {"strict": [6, 7]}},
}
# the keys the profiles set differently
_PROFILE_KEYS = (("pfc", "priorities"), ("hosts", "dcqcn"), ("hosts", "ecn_np"),
                 ("hosts", "ecn_rp"), ("hosts", "pfc"), ("ets", "strict"))
# what each profile refuses when qos.yaml sets it: (section, key) -> (the value it may not
# take, why)
_PROFILE_REFUSALS: dict[str, dict[tuple[str, str], str]] = {
    "lossless-no-dcqcn": {("hosts", "dcqcn"): "runs no DCQCN on the NICs",
                          ("hosts", "ecn_np"): "has no DCQCN notification point",
                          ("hosts", "ecn_rp"): "has no DCQCN reaction point"},
    "lossy": {("pfc", "priorities"): "pauses no priority",
              ("hosts", "pfc"): "pauses no priority, on the NICs either"},
    "lossy-trimming": {("pfc", "priorities"): "pauses no priority",
                       ("hosts", "pfc"): "pauses no priority, on the NICs either"},
}


class ClassIntent(Strict):
    """A traffic class: the DSCP code points it carries and its priority (= its TC)."""

    dscp: Annotated[list[Dscp], Field(min_length=1)] = Field(
        description="The class's DSCP code points; the first is what hosts mark.")
    priority: Priority = Field(description="Its priority and traffic class (they are the "
                               "same everywhere: PFC pauses the priority, ETS schedules the TC).")


class WatchdogIntent(Strict):
    """The PFC watchdog: what a port does about a queue paused for too long (a PFC storm
    or deadlock), so one stuck NIC cannot stall the fabric."""

    enabled: bool = Field(True, description="Whether ports with PFC run a watchdog; "
                          "`pfc.watchdog` fails a port without one.")
    detect_ms: Annotated[int, Field(ge=100, le=5000)] = Field(
        200, description="How long a queue stays paused before the watchdog acts.")
    restore_ms: Annotated[int, Field(ge=100, le=60000)] = Field(
        400, description="How long it acts before the queue is lossless again; no shorter "
        "than `detect_ms`.")
    action: Literal["drop", "forward", "alert"] = Field(
        "drop", description="`drop`: discard the stuck queue's packets; `forward`: ignore "
        "pauses and send them on; `alert`: only report, which `pfc.watchdog` fails. Some "
        "OSes lack an action: refused at load (the platforms page).")
    poll_ms: Annotated[int, Field(ge=100, le=1000)] = Field(
        200, description="How often the watchdog looks; no slower than `detect_ms`.")


class PfcIntent(Strict):
    """Priority flow control: which priorities are lossless."""

    priorities: list[Priority] = Field(
        default_factory=lambda: [3], description="The lossless priorities, paused instead "
        "of dropped (RoCE's; PFC on any other is `pfc.lossy_class`'s finding).")
    watchdog: WatchdogIntent = Field(WatchdogIntent(), description="The PFC watchdog of "
                                     "every port with PFC.")


class EtsIntent(Strict):
    """Egress scheduling (ETS): strict priority and DWRR shares per traffic class."""

    strict: list[Priority] = Field(
        default_factory=lambda: [6], description="Traffic classes sent before any other: "
        "CNP's, so rate cuts reach senders at once.")
    weights: dict[Priority, Annotated[int, Field(ge=1, le=100)]] = Field(
        default_factory=lambda: {0: 50, 3: 50},
        description="DWRR shares in percent per traffic class, summing to 100; the RoCE "
        "class needs one, and no class is both strict and weighted.")

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
    """ECN marking on a lossless queue (WRED with ECN): DCQCN's congestion signal. Each end
    in bytes of queue depth, or in microseconds of queue delay (`min_us`, `max_us`): the
    same delay is four times the bytes at 400G as at 100G, so one setting in time fits every
    port speed (bytes = µs x speed / 8, taken at each port's speed)."""

    min_bytes: Annotated[int, Field(ge=1, le=2**40)] | None = Field(
        None, description="Queue depth at which marking starts (or `min_us`).")
    max_bytes: Annotated[int, Field(ge=1, le=2**40)] | None = Field(
        None, description="Queue depth at which marking reaches `probability` (every packet "
        "above it); below the PG's XOFF point, or PFC pauses before ECN acts "
        "(`ecn.before_pfc`). Or `max_us`.")
    min_us: Annotated[float, Field(gt=0, le=1_000_000)] | None = Field(
        None, description="Queue delay at which marking starts, in microseconds at the "
        "port's speed (instead of `min_bytes`).")
    max_us: Annotated[float, Field(gt=0, le=1_000_000)] | None = Field(
        None, description="Queue delay at which marking reaches `probability`, in "
        "microseconds at the port's speed (instead of `max_bytes`).")
    probability: Annotated[int, Field(ge=1, le=100)] = Field(
        10, description="Percent of packets marked at the maximum.")

    @model_validator(mode="after")
    def _one_unit_each(self) -> EcnThresholds:
        for end in ("min", "max"):
            given = [f"{end}_{unit}" for unit in ("bytes", "us")
                     if getattr(self, f"{end}_{unit}") is not None]
            if not given:
                raise ValueError(f"no {end}imum: give `{end}_bytes` or `{end}_us`")
            if len(given) > 1:
                raise ValueError(f"the {end}imum twice: `{end}_bytes` or `{end}_us`, not both")
        return self

    def at(self, speed_mbps: int) -> EcnThresholds:
        """These thresholds in bytes at a port speed (microseconds x Mb/s = bits)."""
        if self.min_us is None and self.max_us is None:
            return self
        low = self.min_bytes if self.min_us is None else delay_bytes(self.min_us, speed_mbps)
        high = self.max_bytes if self.max_us is None else delay_bytes(self.max_us, speed_mbps)
        return EcnThresholds(min_bytes=low, max_bytes=high, probability=self.probability)

    @property
    def bytes(self) -> tuple[int, int]:
        """(min, max) in bytes: of thresholds already taken at a port's speed (`at`)."""
        if self.min_bytes is None or self.max_bytes is None:
            raise ValueError("ECN thresholds in microseconds have no bytes before a speed")
        return self.min_bytes, self.max_bytes


class EcnIntent(Strict):
    """ECN thresholds of the lossless queues, per port speed."""

    default: EcnThresholds = Field(
        EcnThresholds(min_bytes=150_000, max_bytes=1_500_000),
        description="Thresholds of ports whose speed has no `per_speed` entry (in bytes, "
        "or in microseconds taken at each port's speed).")
    per_speed: dict[str, EcnThresholds] = Field(
        default_factory=dict, description="Thresholds by port speed (`100G`, `400G`): "
        "faster ports fill their queues faster.")

    @field_validator("per_speed")
    @classmethod
    def _speeds(cls, value: dict[str, EcnThresholds]) -> dict[str, EcnThresholds]:
        unknown = [s for s in value if s.upper() not in SPEEDS_MBPS]
        if unknown:
            raise ValueError(f"unknown speed {unknown[0]!r}; expected one of "
                             f"{', '.join(SPEEDS_MBPS)}")
        return {s.upper(): t for s, t in value.items()}

    def for_speed(self, speed_mbps: int) -> EcnThresholds:
        """The thresholds of a port of this speed, in bytes."""
        for name, thresholds in self.per_speed.items():
            if SPEEDS_MBPS[name] == speed_mbps:
                return thresholds.at(speed_mbps)
        return self.default.at(speed_mbps)


class AsicIntent(Strict):
    """Headroom inputs of one platform's ASIC: a known family, optionally adjusted."""

    family: str = Field("spectrum-4", description="The ASIC family (`generic`, "
                        "`spectrum-1`..`5`, `trident-3`/`4`, `tomahawk-3`..`5`, `jericho-2`): "
                        "its headroom model and buffer size. Some platforms refuse some "
                        "families' settings (the platforms page).")
    cell_bytes: Annotated[int, Field(ge=0, le=4096)] | None = Field(
        None, description="Buffer cell size; a packet occupies whole cells. Default: the "
        "family's.")
    mac_phy_bytes: Annotated[int, Field(ge=0, le=65536)] | None = Field(
        None, description="Bytes the MAC and PHY hold while a pause takes effect. Default: "
        "the family's.")
    pipeline_bytes: Annotated[int, Field(ge=0, le=1 << 20)] | None = Field(
        None, description="Pipeline latency before XON takes effect (the PG's xon). "
        "Default: the family's.")
    buffer_bytes: Annotated[int, Field(ge=1 << 20, le=1 << 34)] | None = Field(
        None, description="The ASIC's packet buffer, for `buffer.budget`. Default: the "
        "family's.")

    @field_validator("family")
    @classmethod
    def _known(cls, value: str) -> str:
        if value not in ASICS:
            raise ValueError(f"unknown ASIC family {value!r}; expected one of "
                             f"{', '.join(ASICS)}")
        return value


class BuffersIntent(Strict):
    """The switches' shared buffer: pools and the thresholds of the profiles drawing from
    them. Setting it is refused at load where a switch's OS keeps its own buffers (the
    platforms page)."""

    mode: Literal["dynamic", "static"] = Field(
        "dynamic", description="`dynamic`: a PG or queue may take alpha x the pool's free "
        "space; `static`: a fixed byte limit each.")
    ingress_lossless_pool: Bytes = Field(48_000_000, description="The ingress pool of the "
                                         "lossless PGs, their headroom included.")
    ingress_lossy_pool: Bytes = Field(24_000_000, description="The ingress pool of the "
                                      "lossy PGs.")
    egress_lossless_pool: Bytes = Field(48_000_000, description="The egress pool of the "
                                        "lossless queues.")
    egress_lossy_pool: Bytes = Field(24_000_000, description="The egress pool of the lossy "
                                     "queues.")
    lossless_dynamic_th: Annotated[int, Field(ge=-8, le=7)] = Field(
        0, description="`dynamic`: a lossless PG may take alpha = 2^n of the pool's free "
        "space; with the headroom it sets the XOFF point ECN must stay below.")  # alpha = 2^n
    lossy_dynamic_th: Annotated[int, Field(ge=-8, le=7)] = Field(
        3, description="`dynamic`: alpha = 2^n of a lossy PG or queue.")
    lossless_static_th: Bytes = Field(4_000_000, description="`static`: bytes a lossless PG "
                                      "may take.")  # when mode is static
    lossy_static_th: Bytes = Field(1_000_000, description="`static`: bytes a lossy PG or "
                                   "queue may take.")
    egress_queue_bytes: Bytes = Field(
        4_000_000, description="Read by no platform: the lab's kernel queues take their "
        "limits from the egress pools and profiles. Accepted so a qos.yaml that sets it "
        "still loads.")


class NicIntent(Strict):
    """GPU host NIC (ConnectX) settings; unset ones follow the switch profile."""

    trust: Trust = Field("dscp", description="What the NIC classifies by: `dscp`, like "
                         "its leaf port (`qos.trust` fails anything else).")
    pfc: list[Priority] | None = Field(None, description="The NIC's PFC priorities. "
                                       "Default: the switches' (`pfc.priorities`).")
    roce_tos: Annotated[int, Field(ge=0, le=255)] | None = Field(
        None, description="The ToS byte RoCE traffic is sent with. Default: the first RoCE "
        "DSCP, ECN-capable (DSCP 26 -> 106).")
    cnp_dscp: Dscp | None = Field(None, description="The DSCP the NIC marks CNPs with. "
                                  "Default: the first of `cnp.dscp`.")
    cnp_priority: Priority | None = Field(None, description="The priority CNPs are sent on. "
                                          "Default: `cnp.priority`.")
    dscp_to_priority: dict[Dscp, Priority] = Field(
        default_factory=dict, description="Exceptions to the NIC's DSCP map, which is "
        "otherwise the switches' (not the NIC's own DSCP/8 default, which would put DSCP "
        "24-31 into the lossless priority).")
    ecn_np: bool = Field(True, description="DCQCN notification point: the NIC answers "
                         "ECN-marked packets with CNPs, on every lossless priority.")
    ecn_rp: bool = Field(True, description="DCQCN reaction point: the NIC slows down on "
                         "CNPs, on every lossless priority.")
    dcqcn: bool = Field(True, description="Whether DCQCN congestion control runs; off, "
                        "congestion is left to PFC alone (`telemetry.dcqcn_idle`).")
    out_of_order: bool = Field(
        False, description="Whether the NICs put packets of a flow that arrive out of order "
        "back in order (what per-packet spraying, fabric.yaml `load_balancing.mode: spray`, "
        "needs; `lb.spray_hosts` names a NIC that does not).")
    queue_pairs: Annotated[int, Field(ge=1, le=128)] = Field(
        1, description="Queue pairs per connection between two GPUs (NCCL's "
        "`NCCL_IB_QPS_PER_CONNECTION`): each is its own RoCE flow with its own UDP source "
        "port, so a hashing fabric spreads one connection over that many paths.")
    pfc_prevention_ms: Annotated[int, Field(ge=0, le=8000)] = Field(
        100, description="PFC storm prevention: the NIC stops sending pauses after this "
        "long (0 is off, which `pfc.watchdog` fails), so a stuck host cannot pause its leaf "
        "for ever.")


class NicPatch(Strict):
    """NIC settings an override changes for its hosts; unset ones stay as `hosts` sets."""

    trust: Trust | None = Field(None, description="See `hosts.trust`.")
    pfc: list[Priority] | None = Field(None, description="See `hosts.pfc`.")
    roce_tos: Annotated[int, Field(ge=0, le=255)] | None = Field(
        None, description="See `hosts.roce_tos`.")
    cnp_dscp: Dscp | None = Field(None, description="See `hosts.cnp_dscp`.")
    cnp_priority: Priority | None = Field(None, description="See `hosts.cnp_priority`.")
    dscp_to_priority: dict[Dscp, Priority] | None = Field(
        None, description="More exceptions to the NIC's DSCP map (on top of "
        "`hosts.dscp_to_priority`).")
    ecn_np: bool | None = Field(None, description="See `hosts.ecn_np`.")
    ecn_rp: bool | None = Field(None, description="See `hosts.ecn_rp`.")
    out_of_order: bool | None = Field(None, description="See `hosts.out_of_order`.")
    queue_pairs: Annotated[int, Field(ge=1, le=128)] | None = Field(
        None, description="See `hosts.queue_pairs`.")


class Override(Strict):
    """Exceptions for matching switches (and ports) or hosts; shell patterns."""

    devices: Annotated[list[str], Field(min_length=1)] = Field(
        description="Device names or shell patterns (`leaf*`) it applies to.")
    ports: list[str] = Field(
        default_factory=lambda: ["*"], description="Port names or patterns on those "
        "switches (each must match some port).")
    trust: Trust | None = Field(None, description="The ports' trust instead of `trust`.")
    pfc: list[Priority] | None = Field(None, description="The ports' PFC priorities instead "
                                       "of `pfc.priorities`.")
    dscp_to_tc: dict[Dscp, Priority] | None = Field(
        None, description="More DSCP to TC entries for these ports.")
    ecn: EcnThresholds | None = Field(None, description="The ports' ECN thresholds.")
    ecn_enabled: bool | None = Field(None, description="`false`: the ports' lossless queues "
                                     "mark no ECN.")
    watchdog: WatchdogIntent | None = Field(None, description="The ports' PFC watchdog "
                                            "(e.g. `forward` where an OS cannot drop).")
    strict: list[Priority] | None = Field(None, description="The ports' strict-priority "
                                          "traffic classes.")
    xoff_bytes: Bytes | None = Field(
        None, description="A pinned headroom for the ports' lossless PGs instead of the "
        "computed one; below the requirement, `buffer.headroom` names it.")
    nic: NicPatch | None = Field(None, description="NIC settings of matching hosts.")


class PauseStormIntent(Strict):
    """PFC pause rate a port/priority may sustain before it is a storm."""

    # well above the few hundred pps of ordinary incast back-pressure, far below line-rate
    # storms (~150 k pps of pause quanta at 100G)
    pps: Annotated[int, Field(ge=1, le=10_000_000)] = Field(
        1000, description="Pauses per second (received or sent) above which a port's "
        "priority is storming: well above the few hundred of ordinary incast "
        "back-pressure, far below a line-rate storm (about 150,000 at 100G).")
    # longer than a burst of incast, shorter than a job notices a stalled collective
    for_s: Annotated[int, Field(ge=1, le=3600)] = Field(
        30, description="Seconds the rate must last: longer than an incast burst, shorter "
        "than a job notices a stalled collective; at least `interval_s`.")


class TelemetryIntent(Strict):
    """Live lossless-health thresholds of streaming telemetry (`flatfab watch`)."""

    # the gNMI sample interval: coarse enough for 2 shared cores, fine enough to see a storm
    interval_s: Annotated[int, Field(ge=1, le=300)] = Field(
        10, description="The gNMI sample interval in seconds (the default of `watch "
        "--interval`): coarse enough for a busy controller, fine enough to see a storm.")
    pause_storm: PauseStormIntent = Field(PauseStormIntent(), description="When pauses are "
                                          "a storm (`telemetry.pause_storm`).")
    # packets a lossless queue may drop per interval: a lossless queue drops none
    lossless_drops: Annotated[int, Field(ge=0, le=2**40)] = Field(
        0, description="Packets a lossless queue may drop per interval: none, it is "
        "lossless (`telemetry.lossless_drops`).")
    # packets a lossy queue may mark ECN per interval: marking belongs to lossless queues only
    ecn_on_lossy: Annotated[int, Field(ge=0, le=2**40)] = Field(
        0, description="Packets a lossy queue may mark ECN per interval: marking belongs "
        "to the lossless queues (`telemetry.ecn_on_lossy`).")
    # PFC pauses received per second before a queue marking no ECN is judged (below it a
    # pause is ordinary back-pressure the queue may absorb under the ECN minimum)
    pause_without_ecn_pps: Annotated[int, Field(ge=1, le=10_000_000)] = Field(
        100, description="Pauses received per second before a queue that marks no ECN is "
        "judged (`telemetry.pause_without_ecn`); fewer are ordinary back-pressure a queue "
        "may absorb below its ECN minimum.")
    # CNPs (or ECN-marked receives) per interval before a flat reaction is judged: a few
    # CNPs may fall inside the NIC's CNP coalescing window
    dcqcn_min: Annotated[int, Field(ge=1, le=2**40)] = Field(
        10, description="CNPs (or ECN-marked packets received) per interval before a NIC "
        "that does not react is judged (`telemetry.dcqcn_idle`); a few may fall inside the "
        "NIC's CNP coalescing window.")
    # intervals without a sample before a target is silent: one or two can be late under load
    silent_after: Annotated[int, Field(ge=1, le=1000)] = Field(
        3, description="Intervals without a sample before a device is silent "
        "(`telemetry.silent`); one or two can be late under load.")

    @model_validator(mode="after")
    def _storm_spans_a_sample(self) -> TelemetryIntent:
        if self.pause_storm.for_s < self.interval_s:
            raise ValueError(f"pause_storm.for_s ({self.pause_storm.for_s}) is shorter than "
                             f"interval_s ({self.interval_s}): a storm is seen one interval "
                             "at a time")
        return self


class TrimmingIntent(Strict):
    """Packet trimming (profile `lossy-trimming`): a RoCE packet the RoCE queue cannot admit
    is cut down and re-marked instead of dropped, and sent on in a strict lossy queue, so
    the receiving NIC learns of the loss at once and asks for the packet again. The DSCPs
    towards hosts and towards the fabric differ, so a receiver tells a congested host link
    from a congested fabric."""

    size: Annotated[int, Field(ge=256, le=1024)] = Field(
        256, description="Bytes a trimmed packet keeps: enough for its headers (NVUE takes "
        "256-1024).")
    dscp_to_hosts: Dscp = Field(44, description="The DSCP trimmed packets leave host-facing "
                                "ports with; no data class may use it (`trim.dscp`).")
    dscp_to_fabric: Dscp = Field(45, description="The DSCP trimmed packets leave fabric "
                                 "ports with; no data class may use it (`trim.dscp`).")
    priority: Priority = Field(7, description="The TC (and queue) trimmed packets are sent "
                               "in: strict and lossy on every hop (`trim.queue`).")


class QosIntent(Strict):
    """qos.yaml: the RoCEv2 plane. Every key defaults to the canonical lossless profile."""

    profile: CongestionProfile = Field(
        "lossless", description="How RoCE survives congestion. `lossless`: PFC on the RoCE "
        "priority with headroom, ECN marking and DCQCN on the NICs. `lossless-no-dcqcn`: the "
        "same switches, the NICs' DCQCN notification and reaction points off (congestion is "
        "left to PFC and the collective library). `lossy`: no PFC on any port or NIC, no "
        "lossless PG; the RoCE queue marks ECN and the NICs' DCQCN reacts, drops are "
        "retransmitted. `lossy-trimming`: `lossy` where the RoCE queue trims a packet it "
        "cannot admit instead of dropping it (`trimming`). A profile's defaults replace the "
        "keys it changes; setting one of them against the profile is refused at load. "
        "Moving a running fabric between profiles: `transition_from`.")
    transition_from: CongestionProfile | None = Field(
        None, description="Set only while a running fabric moves from this profile to "
        "`profile` (runbooks/profile-change.md): live checks accept each switch and host "
        "wholly in either profile, as long as no device still lossless sits below one that "
        "is lossy (`congestion.transition`), and name any other mix. Remove it once the "
        "change has landed.")
    roce: ClassIntent = Field(ClassIntent(dscp=[26], priority=3),
                              description="The RoCE class: lossless, ECN-marked.")
    cnp: ClassIntent = Field(ClassIntent(dscp=[48], priority=6),
                             description="The CNP class: lossy and strict priority, apart "
                             "from RoCE (a paused CNP delays every rate cut).")
    trust: Trust = Field("dscp", description="What switch ports classify by: `dscp` (L3, "
                         "survives routing; `qos.trust` fails anything else).")
    default_tc: Priority = Field(0, description="The traffic class of every DSCP not named "
                                 "elsewhere; it must be lossy (`qos.dscp_map`).")
    dscp_to_tc: dict[Dscp, Priority] = Field(
        default_factory=dict, description="More DSCP to TC entries, beyond the RoCE and "
        "CNP code points.")  # beyond RoCE and CNP
    pfc: PfcIntent = Field(PfcIntent(), description="Lossless priorities and the PFC "
                           "watchdog.")
    ets: EtsIntent = Field(EtsIntent(), description="Egress scheduling.")
    ecn: EcnIntent = Field(EcnIntent(), description="ECN thresholds of the lossless queues.")
    buffers: BuffersIntent = Field(BuffersIntent(), description="Buffer pools and "
                                   "thresholds.")
    asics: dict[str, AsicIntent] = Field(
        default_factory=lambda: {DEFAULT_SWITCH: AsicIntent()},
        description="Per platform (by name), the ASIC its switches have: headroom model, "
        "buffer size and what the OS can set on it. A platform not listed gets the "
        "defaults.")
    trimming: TrimmingIntent = Field(
        TrimmingIntent(), description="Packet trimming, in profile `lossy-trimming` only.")
    hosts: NicIntent = Field(NicIntent(), description="The GPU hosts' NIC settings.")
    overrides: list[Override] = Field(
        default_factory=list, description="Exceptions for matching switches, ports or "
        "hosts, in file order (a later one wins).")
    telemetry: TelemetryIntent = Field(
        TelemetryIntent(), description="Thresholds of live health (`flatfab watch`, a "
        "rollout gate's `telemetry:`); the plan carries none.")  # live health only

    @model_validator(mode="before")
    @classmethod
    def _profile_defaults(cls, data: Any) -> Any:
        """A profile's own defaults for the keys qos.yaml leaves out (one set against the
        profile is refused by `profile_conflicts`, with its path)."""
        if not isinstance(data, dict) or data.get("profile") not in _PROFILE_DEFAULTS:
            return data
        name = data["profile"]
        merged = dict(data)
        for section, keys in _PROFILE_DEFAULTS[name].items():
            given = merged.get(section)
            base = dict(given) if isinstance(given, dict) else {}
            merged[section] = {**keys, **{k: v for k, v in base.items() if v is not None}}
        return merged

    @model_validator(mode="after")
    def _classes_apart(self) -> QosIntent:
        shared = sorted(set(self.roce.dscp) & set(self.cnp.dscp))
        if shared:
            raise ValueError(f"DSCP {shared[0]} is both a RoCE and a CNP code point")
        if self.roce.priority == self.cnp.priority:
            raise ValueError(f"RoCE and CNP share priority {self.roce.priority}; CNP needs its "
                             "own (lossy, strict) class")
        return self

    def profile_conflicts(self) -> list[tuple[tuple[str, ...], str]]:
        """The keys set against the profile: ((section, key), why), in a stable order."""
        found: list[tuple[tuple[str, ...], str]] = []
        for (section, key), why in _PROFILE_REFUSALS.get(self.profile, {}).items():
            value = getattr(getattr(self, section), key)
            if value not in (None, [], False):
                found.append(((section, key), f"{value!r} in profile {self.profile}, which "
                              f"{why}; leave it out"))
        if "trimming" in self.model_fields_set and self.profile != "lossy-trimming":
            found.append((("trimming",), f"packet trimming in profile {self.profile}: it "
                          "belongs to profile lossy-trimming; leave it out"))
        if self.transition_from == self.profile:
            found.append((("transition_from",), f"{self.profile} is the profile itself: "
                          "remove it, or name the profile the fabric moves from"))
        return found

    @property
    def lossy(self) -> bool:
        return self.profile in LOSSY_PROFILES

    @property
    def trims(self) -> bool:
        return self.profile == "lossy-trimming"

    @property
    def marked(self) -> list[int]:
        """The priorities whose queues mark ECN and whose NICs run DCQCN's points: the
        lossless ones, or in a lossy fabric the RoCE priority."""
        return sorted({*self.pfc.priorities, *([self.roce.priority] if self.lossy else [])})

    def as_profile(self, name: CongestionProfile) -> QosIntent:
        """This qos.yaml under another profile (the plan of the side a `transition_from`
        moves away from): every key the same, except those the profiles set differently
        (`_PROFILE_KEYS`), which take that profile's defaults."""
        data = self.model_dump(exclude_unset=True)
        for section, key in _PROFILE_KEYS:
            data.get(section, {}).pop(key, None)
        data.update(profile=name, transition_from=None)
        return QosIntent.model_validate(data)

    def tc_of(self, dscp: int) -> int:
        """Traffic class of a DSCP in the fabric-wide map (identity priority = TC)."""
        if dscp in self.roce.dscp:
            return self.roce.priority
        if dscp in self.cnp.dscp:
            return self.cnp.priority
        if dscp in self.dscp_to_tc:
            return self.dscp_to_tc[dscp]
        trim = self.trimming
        if self.trims and dscp in (trim.dscp_to_hosts, trim.dscp_to_fabric):
            return trim.priority
        return self.default_tc
