"""The live health conditions, lossless and physical: each judges one tick's counter windows
(and gauge levels) and says, per subject it could judge, whether the condition holds (a
Finding) or not (None). A subject it could not judge (no window this tick) is left out: its
state stays as it was."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Final

from flatfab.checks.base import Finding, FindingKind, Scope, Severity
from flatfab.telemetry.lossless_map import LosslessMap
from flatfab.telemetry.physical_map import PhysicalMap, PortLink
from flatfab.telemetry.rates import Level, Listing, SeriesKey, Window, WindowMap
from flatfab.telemetry.samples import Metric
from flatfab.telemetry.thresholds import Thresholds

PAUSE_STORM = "telemetry.pause_storm"
WATCHDOG = "telemetry.watchdog"
LOSSLESS_DROPS = "telemetry.lossless_drops"
PAUSE_WITHOUT_ECN = "telemetry.pause_without_ecn"
ECN_ON_LOSSY = "telemetry.ecn_on_lossy"
DCQCN_IDLE = "telemetry.dcqcn_idle"
SILENT = "telemetry.silent"
FEC_UNCORRECTABLE = "telemetry.fec_uncorrectable"
PRE_FEC_BER = "telemetry.pre_fec_ber"
LINK_FLAPS = "telemetry.link_flaps"
# the physical layer's: judged against the plan's `physical` thresholds (fabric.yaml)
PHYSICAL_CONDITIONS = (FEC_UNCORRECTABLE, PRE_FEC_BER, LINK_FLAPS)
# what a host's own NIC counters feed (the pauses it sends and receives, DCQCN's CNPs): not
# judged for an unmanaged host, which is never polled
NIC_CONDITIONS = (PAUSE_STORM, DCQCN_IDLE)

SEVERITY: dict[str, Severity] = {
    LOSSLESS_DROPS: Severity.CRITICAL,  # the lossless promise is broken: RoCE retransmits
    PAUSE_STORM: Severity.ERROR,  # head-of-line blocking spreading through the fabric
    WATCHDOG: Severity.ERROR,  # a queue was stalled long enough to be forced (drop/forward)
    DCQCN_IDLE: Severity.ERROR,  # congestion is left to PFC alone
    SILENT: Severity.ERROR,  # everything else about the target is blind
    PAUSE_WITHOUT_ECN: Severity.WARNING,  # ECN should act first; lossless still holds
    ECN_ON_LOSSY: Severity.WARNING,  # a marking misconfiguration, no loss by itself
    FEC_UNCORRECTABLE: Severity.ERROR,  # frames lost on the wire now: RoCE retransmits
    # past the bound `phy.ber` fails at; a warning while it climbs towards it (BER_EARLY)
    PRE_FEC_BER: Severity.ERROR,
    LINK_FLAPS: Severity.ERROR,  # each flap stalls every collective crossing the link
}

# The pre-FEC BER rule (telemetry.pre_fec_ber). `phy.ber` fails a port whose pre-FEC BER is
# above its FEC's correction limit divided by `physical.ber_margin` (the bound); the stream
# names the climb before that: a warning once the BER is within BER_EARLY of the bound, or
# once it rose BER_RISE-fold within BER_RISE_INTERVALS intervals to at least the bound over
# BER_FLOOR (held while it stays that high), and an error past the bound.
BER_EARLY: Final = 10  # a decade below the bound: time to clean or swap in a maintenance window
BER_RISE: Final = 10  # a tenfold climb is a degrading optic's signature, whatever the level
BER_RISE_INTERVALS: Final = 3  # ... within this many intervals
BER_FLOOR: Final = 100  # below bound / 100 a tenfold swing is noise (a few errors counted)


def _kind(check: str, title: str, doc: str, scope: Scope = Scope.DEVICE) -> FindingKind:
    return FindingKind(check, title, SEVERITY[check], scope, doc)


# what each finding judges and what an operator does about it (the documentation's catalog)
KINDS = (
    _kind(LOSSLESS_DROPS, "No lossless queue drops packets", """
        Reads: the drop counters of every switch port's queues, per interval; the plan says
        which queues are lossless.
        Expects: at most `telemetry.lossless_drops` drops per interval (default 0) in a
        lossless queue.
        Fails when: a lossless queue drops more; cleared once an interval stays within it.
        Fix: Lossless traffic is being lost, so RoCE retransmits and jobs slow down. Check the
        port's headroom and buffers (`verify --lossless`: `buffer.headroom`, `buffer.budget`),
        PFC on both ends of the link (`pfc.link_symmetry`) and the watchdog (a `drop` action
        discards a stalled queue's packets on purpose: `telemetry.watchdog`)."""),
    _kind(PAUSE_STORM, "No port pauses or is paused in a storm", """
        Reads: the PFC pause frames every switch port received and sent, per priority, as a
        rate over each interval.
        Expects: a port's priority stays at or below `telemetry.pause_storm.pps` pauses per
        second, or goes above it for less than `pause_storm.for_s` seconds.
        Fails when: the rate stays above `pps` for `for_s` seconds of sample time; cleared
        once it drops below. A polled host NIC's pauses count too, but an unmanaged host
        (hosts.yaml `managed: false`) is never polled: not judged.
        Fix: Follow the storm to its source: pauses received come from the far end, so walk
        towards the receiver that cannot drain (a stuck or slow host, a NIC without DCQCN:
        `telemetry.dcqcn_idle`) and drain, fix or isolate it. The PFC watchdog should keep it
        from spreading (`pfc.watchdog` in `verify --lossless`)."""),
    _kind(WATCHDOG, "No PFC watchdog fires", """
        Reads: the PFC watchdog's storm counter of every switch port and priority.
        Expects: it stays flat.
        Fails when: it went up in an interval: a queue was paused long enough that the
        watchdog dropped or forwarded its traffic; cleared once it stays flat.
        Fix: The watchdog did its job, so look for the storm behind it
        (`telemetry.pause_storm` on this port or the far one) and the receiver that caused it.
        RoCE flows through the port lost packets (`drop`) or were sent on unpaused
        (`forward`) meanwhile."""),
    _kind(DCQCN_IDLE, "Every host NIC reacts to congestion (DCQCN)", """
        Reads: each GPU host NIC's counter of CNPs it reacted to, against the CNPs its leaf
        port sent it on the CNP queue (the reaction point); and its ECN-marked packets
        received, against the CNPs it sent (the notification point).
        Expects: the NIC's counter rises while `telemetry.dcqcn_min` or more CNPs (or marked
        packets) per interval arrive.
        Fails when: they arrive and the counter stays flat: for two intervals at the reaction
        point (its counters and the leaf's are read at different moments), for one at the
        notification point. An unmanaged host (hosts.yaml `managed: false`) is never
        polled: not judged; nor a point the plan turns off (qos.yaml `profile:
        lossless-no-dcqcn`).
        Fix: Turn DCQCN on for the NIC's lossless priorities (qos.yaml `hosts.dcqcn`,
        `ecn_np`, `ecn_rp`, then `flatfab rollout`) and check the NIC's firmware settings;
        meanwhile congestion is left to PFC alone."""),
    _kind(SILENT, "Every watched device keeps sending counters", """
        Reads: when each watched switch (gNMI target) or polled device last gave a sample.
        Expects: a sample every interval.
        Fails when: none came for `telemetry.silent_after` intervals; cleared when samples
        come again. A silent device's other findings stay as they were: nothing new about it
        is judged.
        Fix: Check the device's gNMI service (or, when polled, its SSH), the network path,
        the TLS certificate and the credentials (`flatfab watch` names a refused certificate
        or password in one line)."""),
    _kind(PAUSE_WITHOUT_ECN, "Every paused lossless queue marks ECN", """
        Reads: the pauses each switch port receives per lossless priority, and the ECN-marked
        count of the queue those pauses stop.
        Expects: a queue paused at `telemetry.pause_without_ecn_pps` or more marks ECN too:
        ECN should act before PFC.
        Fails when: pauses arrive at that rate while the queue marks nothing (marking off, or
        thresholds above the XOFF point). A queue whose marks are not reported is not judged.
        Fix: Check the queue's marking and thresholds (`verify --lossless`: `ecn.attached`,
        `ecn.before_pfc`, `ecn.intent`) and lower `ecn` `max_bytes` below the XOFF point in
        qos.yaml, then `flatfab rollout`."""),
    _kind(ECN_ON_LOSSY, "No lossy queue marks ECN", """
        Reads: the ECN-marked counts of every switch port's lossy queues, per interval.
        Expects: at most `telemetry.ecn_on_lossy` marks per interval (default 0): marking
        belongs to the queues the plan marks (the lossless ones; in a `lossy` fabric the RoCE
        queue).
        Fails when: a lossy queue marks more; cleared once an interval stays within it.
        Fix: Either marking is configured on a lossy queue, or RoCE traffic lands in one (a
        DSCP map that moved it, a sender marking the wrong DSCP): `flatfab rollout` restores
        the switches' QoS, and `verify --lossless` names a wrong map (`qos.dscp_map`) or host
        (`host.agreement`)."""),
    _kind(FEC_UNCORRECTABLE, "No link loses FEC codewords it cannot correct", """
        Reads: the uncorrectable FEC codewords every switch port counts, per interval; the
        fabric's `physical.uncorrectable` (fabric.yaml).
        Expects: at most `physical.uncorrectable` per interval (default 0).
        Fails when: a port counts more: each is a frame lost on the wire now, which RoCE pays
        for with a retransmission. The finding names the port and, where the plan has the
        link, its far end; cleared once an interval stays within.
        Fix: Look at the port's pre-FEC BER and optics (`telemetry.pre_fec_ber`, `flatfab
        verify --physical`: `phy.ber`, `phy.optics`); clean both connector ends and reseat,
        then replace the module or cable that keeps losing codewords (`verify --burn-in`
        confirms the repair under load).""", Scope.LINK),
    _kind(PRE_FEC_BER, "No link's pre-FEC BER climbs towards what its FEC corrects", """
        Reads: the pre-FEC bit error ratio every switch port streams, each interval; the
        FEC of the port's link class (the plan) and its correction limit (RS(544,514)
        2.4e-4, RS(528,514) 5e-5), the fabric's `physical.ber_margin`. The bound is the limit
        divided by the margin: where `phy.ber` (`verify --physical`) fails.
        Expects: the BER stays more than a decade below the bound, and does not climb.
        Fails when: a warning once it reaches a tenth of the bound, or once it rose tenfold
        within three intervals to at least a hundredth of the bound (held while it stays
        tenfold above where it was): a degrading optic climbs decades while every other
        check passes, so it is named a decade before `phy.ber` fails and long before frames
        are lost. An error once it is past the bound. Cleared when it is back below both.
        A port the plan has no physical link for is not judged (its FEC is not known).
        Fix: Clean both connector ends and reseat the module in a maintenance window, before
        the FEC runs out of margin; replace the module or cable whose BER keeps climbing
        (`phy.optics` often shows its rx power falling too).""", Scope.LINK),
    _kind(LINK_FLAPS, "No link flaps in bursts", """
        Reads: the carrier transitions (link state changes) every switch port counts; the
        fabric's `physical.flaps` and `physical.flap_window_s`.
        Expects: at most `physical.flaps` state changes within `flap_window_s` seconds
        (default: none in an hour), counted from the stream (what a port counted before the
        watch began is history, not judged).
        Fails when: the changes counted within the window exceed it: each flap stalls every
        collective crossing the link and a flapping optic is often degrading. Cleared once
        the window holds no more than allowed.
        Fix: Look at both ends' BER and optical power (`telemetry.pre_fec_ber`, `verify
        --physical`); clean and reseat, replace the module or cable that keeps flapping.""",
          Scope.LINK),
)

# (check, device, port or "", what within the port): one finding's identity across ticks
Subject = tuple[str, str, str, str]
Verdict = tuple[Subject, Finding | None]
Windows = Mapping[SeriesKey, Window]


@dataclass
class Context:
    thresholds: Thresholds
    lossless: LosslessMap
    physical: PhysicalMap | None = None  # None: the physical layer is not judged
    # storm series -> sample time its rate went above the threshold (one float per series)
    storm_since: dict[SeriesKey, float] = field(default_factory=dict)
    # reaction-point subjects flat with CNPs delivered in the last interval (see dcqcn_idle)
    reaction_flat: set[Subject] = field(default_factory=set)
    # BER series -> its levels of the last BER_RISE_INTERVALS ticks, and the level a climb
    # still held started from (see pre_fec_ber)
    ber_recent: dict[SeriesKey, tuple[float, ...]] = field(default_factory=dict)
    ber_base: dict[SeriesKey, float] = field(default_factory=dict)
    # carrier-transition series -> (sample time, changes) within the flap window
    flaps: dict[SeriesKey, deque[tuple[float, int]]] = field(default_factory=dict)


def _of(windows: Windows, *metrics: Metric) -> Iterator[tuple[SeriesKey, Window]]:
    """The windows of `metrics`: from the drain's per-metric lists where there are some
    (a condition reads a fraction of the series), else by looking at every key."""
    if isinstance(windows, WindowMap):
        for metric in metrics:
            for key in windows.by_metric.get(metric, ()):
                yield key, windows[key]
        return
    for key, window in windows.items():
        if key[2] in metrics:
            yield key, window


_LABELS: dict[tuple[str, int | None], str] = {}


_NO_LEVELS: Final[dict[SeriesKey, Level]] = {}


def _levels(windows: Windows, metric: Metric) -> Iterator[tuple[SeriesKey, Level]]:
    """The levels of a gauge `metric` this tick: a drain holds them beside its windows (a
    mapping of windows alone has none; one with a `levels` attribute is read as a drain)."""
    levels: Mapping[SeriesKey, Level] = getattr(windows, "levels", _NO_LEVELS)
    for key, level in levels.items():
        if key[2] is metric:
            yield key, level


def _label(what: str, index: int | None) -> str:
    """`what index`, made once per pair: a subject is named for every window of a tick."""
    label = _LABELS.get((what, index))
    if label is None:
        label = _LABELS[(what, index)] = f"{what} {index}"
    return label


def _finding(check: str, device: str, port: str | None, message: str, expected: str,
             actual: str, *, link: str | None = None,
             severity: Severity | None = None) -> Finding:
    return Finding(check=check, severity=severity or SEVERITY[check], device=device,
                   port=port, link=link, message=message, expected=expected, actual=actual)


def _where(device: str, port: str | None) -> str:
    return f"{device} {port}" if port else device


def pause_storm(windows: Windows, ctx: Context) -> Iterator[Verdict]:
    """PFC pause rate (received or sent) of a port/priority above `storm_pps` for at least
    `storm_for_s` seconds of sample time."""
    limit = ctx.thresholds
    storm_pps, storm_since = limit.storm_pps, ctx.storm_since
    for key, window in _of(windows, Metric.PFC_RX, Metric.PFC_TX):
        device, port, metric, priority = key
        way = "received" if metric is Metric.PFC_RX else "sent"
        subject = (PAUSE_STORM, device, port or "", _label(way, priority))
        rate = window.rate
        if rate <= storm_pps:
            if storm_since:
                storm_since.pop(key, None)
            yield subject, None
            continue
        since = ctx.storm_since.setdefault(key, window.start)
        lasted = window.end - since
        if lasted < limit.storm_for_s:
            yield subject, None  # not yet a storm: the clock runs
            continue
        yield subject, _finding(
            PAUSE_STORM, device, port,
            f"{_where(device, port)} priority {priority}: {way} PFC pauses at {rate:.0f} pps "
            f"for {lasted:.0f} s (storm above {limit.storm_pps:.0f} pps for "
            f"{limit.storm_for_s:.0f} s)",
            expected=f"priority {priority}: <= {limit.storm_pps:.0f} pps {way}",
            actual=f"priority {priority}: {rate:.0f} pps {way} for {lasted:.0f} s")


def watchdog(windows: Windows, ctx: Context) -> Iterator[Verdict]:
    """The PFC watchdog of a port/priority fired (its storm counter went up)."""
    for (device, port, _, priority), window in _of(windows, Metric.WATCHDOG):
        subject = (WATCHDOG, device, port or "", _label("priority", priority))
        if window.delta <= 0:
            yield subject, None
            continue
        yield subject, _finding(
            WATCHDOG, device, port,
            f"{_where(device, port)} priority {priority}: the PFC watchdog fired "
            f"{window.delta} time(s): the queue was stalled by pauses and forced",
            expected=f"priority {priority}: watchdog quiet",
            actual=f"priority {priority}: fired {window.delta} time(s)")


def _per_interval(window: Window, ctx: Context) -> int:
    return round(window.per_interval(ctx.thresholds.interval_s))


def queue_counts(windows: Windows, ctx: Context) -> Iterator[Verdict]:
    """Drops in a lossless queue above `lossless_drops` and ECN marks on a lossy queue above
    `ecn_on_lossy`, per interval; the plan says which queues are lossless."""
    limit = ctx.thresholds
    classes_of = ctx.lossless.classes
    for (device, port, metric, queue), window in _of(windows, Metric.QUEUE_DROPS,
                                                     Metric.QUEUE_ECN):
        classes = classes_of(device, port)
        if classes is None or queue is None:
            continue
        lossless = queue in classes.lossless_queues
        if lossless is (metric is Metric.QUEUE_ECN):
            continue  # lossy drops and lossless marks are judged nowhere: not counted
        count = _per_interval(window, ctx)
        if metric is Metric.QUEUE_DROPS and lossless:
            subject = (LOSSLESS_DROPS, device, port or "", _label("queue", queue))
            yield subject, None if count <= limit.lossless_drops else _finding(
                LOSSLESS_DROPS, device, port,
                f"{_where(device, port)} lossless queue {queue} dropped {count} packets in "
                f"an interval (allowed {limit.lossless_drops})",
                expected=f"queue {queue}: <= {limit.lossless_drops} drops per interval",
                actual=f"queue {queue}: {count} drops per interval")
        elif metric is Metric.QUEUE_ECN and queue not in classes.marked_queues:
            subject = (ECN_ON_LOSSY, device, port or "", _label("queue", queue))
            yield subject, None if count <= limit.ecn_on_lossy else _finding(
                ECN_ON_LOSSY, device, port,
                f"{_where(device, port)} lossy queue {queue} marked {count} packets ECN-CE "
                "in an interval: marking belongs to the lossless queues",
                expected=f"queue {queue}: <= {limit.ecn_on_lossy} ECN marks per interval",
                actual=f"queue {queue}: {count} ECN marks per interval")


def pause_without_ecn(windows: Windows, ctx: Context) -> Iterator[Verdict]:
    """A port receiving pauses on a lossless priority (so the queue they stop fills) while
    that queue marks no ECN: marking is off, or its thresholds sit above the XOFF point.
    Received pauses are used, not sent ones: a port sends pauses for its ingress, whose
    congestion marks on other ports' queues. A queue whose marks are not reported is not
    judged."""
    limit = ctx.thresholds
    for (device, port, _, priority), window in _of(windows, Metric.PFC_RX):
        if priority is None:
            continue
        classes = ctx.lossless.classes(device, port)
        if classes is None or priority not in classes.lossless:
            continue
        queue = classes.pause_queue[priority]
        marks = windows.get((device, port, Metric.QUEUE_ECN, queue))
        if marks is None:
            continue
        subject = (PAUSE_WITHOUT_ECN, device, port or "", f"priority {priority}")
        rate = window.rate
        if rate < limit.pause_without_ecn_pps or marks.delta > 0:
            yield subject, None
            continue
        yield subject, _finding(
            PAUSE_WITHOUT_ECN, device, port,
            f"{_where(device, port)} priority {priority}: received PFC pauses at {rate:.0f} "
            f"pps while lossless queue {queue} marked no packet: ECN did not act before PFC "
            "(marking off, or thresholds above the XOFF point)",
            expected=f"queue {queue}: ECN marks while priority {priority} is paused",
            actual=f"queue {queue}: 0 marks, {rate:.0f} pps pauses received")


def dcqcn_idle(windows: Windows, ctx: Context) -> Iterator[Verdict]:
    """A host NIC whose DCQCN does not react. The NIC counts CNPs it reacted to
    (`nic_cnp_handled`, the reaction point) but not CNPs it received, so CNPs delivered are
    read where they leave the switch: the NIC's leaf port, on the CNP class's queue (the
    plan gives both; CNP is alone in its TC). Delivered >= `dcqcn_min` per interval with
    `nic_cnp_handled` flat: the reaction point is off. The notification point is judged
    too: ECN-CE packets received (`nic_ecn_marked_rx`) >= `dcqcn_min` while `nic_cnp_sent`
    stays flat means the NIC never tells senders to slow down.

    The reaction point compares two devices' counters, read at different moments: CNPs that
    left the leaf before its read may reach the NIC after the NIC's. So it is raised when
    flat for two intervals running (CNPs delivered in the first have arrived by the end of
    the second); the notification point reads one NIC and needs one interval."""
    limit = ctx.thresholds
    for (device, port, metric, key), window in _of(windows, Metric.NIC_CNP_HANDLED,
                                                   Metric.NIC_CNP_SENT):
        if not ctx.lossless.dcqcn_point(device, port, "rp" if metric is Metric.NIC_CNP_HANDLED
                                        else "np"):
            continue  # off by intent (lossless-no-dcqcn): host.intent judges the setting
        if metric is Metric.NIC_CNP_HANDLED:
            feed = ctx.lossless.cnp_feed(device, port)
            cnps = None if feed is None else windows.get(
                (feed.device, feed.port, Metric.QUEUE_TX, feed.queue))
            if feed is None or cnps is None:
                continue
            side, got, seen = "reaction", _per_interval(cnps, ctx), "CNPs delivered"
            where = f" (counted at {feed.device} {feed.port} queue {feed.queue})"
        elif metric is Metric.NIC_CNP_SENT:
            marked = windows.get((device, port, Metric.NIC_ECN_MARKED_RX, key))
            if marked is None:
                continue
            side, got, seen = "notification", _per_interval(marked, ctx), "ECN-CE received"
            where = ""
        else:
            continue
        subject = (DCQCN_IDLE, device, port or "", side)
        if got < limit.dcqcn_min or window.delta > 0:
            ctx.reaction_flat.discard(subject)
            yield subject, None
            continue
        if metric is Metric.NIC_CNP_HANDLED and subject not in ctx.reaction_flat:
            ctx.reaction_flat.add(subject)  # flat once: perhaps CNPs still in flight
            yield subject, None
            continue
        counter = metric.value
        yield subject, _finding(
            DCQCN_IDLE, device, port,
            f"{_where(device, port)}: {got} {seen} per interval{where} but {counter} stayed "
            f"flat: the DCQCN {side} point does not react (DCQCN off)",
            expected=f"{counter} rises with {seen}",
            actual=f"{seen}: {got} per interval, {counter}: +0")


def _link(device: str, port: str | None, end: PortLink | None) -> str:
    """` (link a -- b)` where the plan has the link, else nothing."""
    return f" (link {device}:{port} -- {end.far})" if end is not None else ""


def fec_uncorrectable(windows: Windows, ctx: Context) -> Iterator[Verdict]:
    """Uncorrectable FEC codewords per interval above the plan's `physical.uncorrectable`:
    frames lost on the wire now. Any streamed port is judged; the far end is named where the
    plan has the link."""
    physical = ctx.physical
    limits = physical.thresholds if physical is not None else None
    if physical is None or limits is None:
        return
    allowed = limits.uncorrectable
    for (device, port, _, _), window in _of(windows, Metric.FEC_UNCORRECTABLE):
        subject = (FEC_UNCORRECTABLE, device, port or "", "")
        count = _per_interval(window, ctx)
        if count <= allowed:
            yield subject, None
            continue
        end = physical.port(device, port)
        yield subject, _finding(
            FEC_UNCORRECTABLE, device, port,
            f"{_where(device, port)}: {count} uncorrectable FEC codewords in an interval "
            f"(allowed {allowed}): frames lost on the wire{_link(device, port, end)}",
            expected=f"<= {allowed} uncorrectable codewords per interval",
            actual=f"{count} per interval", link=end.link if end is not None else None)


def pre_fec_ber(windows: Windows, ctx: Context) -> Iterator[Verdict]:
    """A pre-FEC BER climbing towards the bound `phy.ber` fails at (the link class's FEC
    limit over `ber_margin`): a warning within BER_EARLY of it, or after a BER_RISE-fold climb
    within BER_RISE_INTERVALS intervals to at least bound / BER_FLOOR; an error past it. The
    level judged is the tick's highest reading. A port the plan has no physical link for is
    not judged: its FEC, and so its bound, is not known."""
    physical = ctx.physical
    limits = physical.thresholds if physical is not None else None
    if physical is None or limits is None:
        return
    for key, level in _levels(windows, Metric.PRE_FEC_BER):
        device, port, _, _ = key
        end = physical.port(device, port)
        if end is None or end.bound is None or end.limit is None or end.fec is None:
            continue
        ber, bound = level.peak, end.bound
        early, floor = bound / BER_EARLY, bound / BER_FLOOR
        recent = ctx.ber_recent.get(key, ())
        lowest = min(recent) if recent else None
        # a tuple, not a deque: 16 bytes a level where a deque costs 600 (a port each)
        ctx.ber_recent[key] = (*recent[1 - BER_RISE_INTERVALS:], ber)
        base = ctx.ber_base.get(key)
        if base is None and lowest is not None and ber >= floor and ber >= BER_RISE * lowest:
            base = ctx.ber_base[key] = lowest  # the climb starts from there
        elif base is not None and (ber < floor or ber < BER_RISE * base):
            del ctx.ber_base[key]  # back down: the climb is over
            base = None
        where, link = _where(device, port), _link(device, port, end)
        fec = f"{end.fec} corrects to {end.limit:.1e}, `phy.ber` fails above {bound:.1e} " \
              f"(margin {limits.ber_margin:g}x)"
        rising = (PRE_FEC_BER, device, port or "", "rising")
        if ber < early and base is None:
            yield rising, None
        else:
            if base is not None and ber < early:
                # a BER below 1e-18 is stated as 0 (OpenConfig's decimal64): error free
                fold = f"{ber / base:.0f}-fold " if base > 0 else ""
                why = f"rose {fold}from {base:.1e} within {BER_RISE_INTERVALS} intervals"
            else:
                why = (f"is within {BER_EARLY}x of {bound:.1e}" if ber <= bound
                       else f"is past {bound:.1e}")
            yield rising, _finding(
                PRE_FEC_BER, device, port,
                f"{where}: pre-FEC BER {ber:.2e} {why}: {fec}; clean and reseat both ends "
                f"before it drops frames{link}",
                expected=f"pre-FEC BER below {early:.1e} and not climbing tenfold",
                actual=f"{ber:.2e}" + (f" (from {base:.1e})" if base is not None else ""),
                link=end.link, severity=Severity.WARNING)
        over = (PRE_FEC_BER, device, port or "", "over")
        yield over, None if ber <= bound else _finding(
            PRE_FEC_BER, device, port,
            f"{where}: pre-FEC BER {ber:.2e} is past the bound: {fec}; frames are at risk, "
            f"clean and reseat both ends, else replace the module or cable{link}",
            expected=f"pre-FEC BER <= {bound:.2e}", actual=f"{ber:.2e}", link=end.link)


def link_flaps(windows: Windows, ctx: Context) -> Iterator[Verdict]:
    """Carrier transitions counted within the last `physical.flap_window_s` seconds of sample
    time above `physical.flaps`. What a port counted before its first reading is history:
    the first reading is a baseline."""
    physical = ctx.physical
    limits = physical.thresholds if physical is not None else None
    if physical is None or limits is None:
        return
    span, allowed = limits.flap_window_s, limits.flaps
    for key, window in _of(windows, Metric.CARRIER_TRANSITIONS):
        device, port, _, _ = key
        events = ctx.flaps.get(key)
        if window.delta > 0:
            if events is None:
                events = ctx.flaps[key] = deque()
            events.append((window.end, int(window.delta)))
        total = 0
        if events is not None:
            while events and events[0][0] <= window.end - span:
                events.popleft()
            total = sum(count for _, count in events)
            if not events:
                del ctx.flaps[key]
        subject = (LINK_FLAPS, device, port or "", "")
        if total <= allowed:
            yield subject, None
            continue
        end = physical.port(device, port)
        yield subject, _finding(
            LINK_FLAPS, device, port,
            f"{_where(device, port)}: {total} link state changes in the last {span} s "
            f"(allowed {allowed}): the link flaps{_link(device, port, end)}",
            expected=f"<= {allowed} link state changes in {span} s",
            actual=f"{total} in {span} s", link=end.link if end is not None else None)


# What the conditions read by walking a metric's windows: a counter that counted nothing
# this tick is "holds not" for every one of these with thresholds >= 0, so only the moved
# ones need a Window (a healthy fabric's drops, watchdogs and flaps stay flat); the NIC
# counters, few, are always walked. Looked up by key (the CNP queue, a paused queue's marks)
# whatever they counted.
_WALKED_WHEN_MOVED: Final = frozenset({
    Metric.PFC_RX, Metric.PFC_TX, Metric.WATCHDOG, Metric.QUEUE_DROPS, Metric.QUEUE_ECN,
    Metric.FEC_UNCORRECTABLE, Metric.CARRIER_TRANSITIONS})
_WALKED_ALWAYS: Final = frozenset({Metric.NIC_CNP_HANDLED, Metric.NIC_CNP_SENT})
_LEVELS_READ: Final = frozenset({Metric.PRE_FEC_BER})  # the gauges a condition judges


def listing(ctx: Context, active: Iterable[Subject]) -> Listing:
    """Which windows a tick's drain must list for CONDITIONS to judge as if they walked
    every one: the moved ones of what they walk, and every window of a port with an active
    finding (to clear it) or with a series a condition tracks across ticks (a storm's clock,
    the flaps in the window)."""
    limits = ctx.thresholds
    always = set(_WALKED_ALWAYS)
    if limits.pause_without_ecn_pps <= 0:
        always.add(Metric.PFC_RX)  # a flat priority is then judged too
    if limits.lossless_drops < 0 or limits.ecn_on_lossy < 0:
        always |= {Metric.QUEUE_DROPS, Metric.QUEUE_ECN}
    physical = ctx.physical.thresholds if ctx.physical is not None else None
    if physical is not None and physical.uncorrectable < 0:
        always.add(Metric.FEC_UNCORRECTABLE)
    if physical is not None and physical.flaps < 0:
        always.add(Metric.CARRIER_TRANSITIONS)
    keep = {(s[1], s[2] or None) for s in active}
    keep.update((k[0], k[1]) for k in ctx.storm_since)
    keep.update((k[0], k[1]) for k in ctx.flaps)
    return Listing(_WALKED_WHEN_MOVED - always, frozenset(always), frozenset(keep),
                   _LEVELS_READ)


CONDITIONS = (pause_storm, watchdog, queue_counts, pause_without_ecn, dcqcn_idle,
              fec_uncorrectable, pre_fec_ber, link_flaps)


def silent(device: str, last: float, now: float, limit: Thresholds) -> Finding:
    quiet = now - last
    return _finding(SILENT, device, None,
                    f"{device}: no counters for {quiet:.0f} s ({quiet / limit.interval_s:.1f} "
                    f"intervals; silent after {limit.silent_after})",
                    expected=f"a sample every {limit.interval_s:.0f} s",
                    actual=f"last heard {quiet:.0f} s ago")
