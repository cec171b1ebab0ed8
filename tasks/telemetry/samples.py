"""One reading of one counter or state, the unit every telemetry source produces and the
health engine consumes (vendor-neutral: each platform's paths map onto these metrics)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Metric(StrEnum):
    """What a sample measures. Counters are cumulative since the device last cleared them;
    `key` is the priority (PFC) or queue index it belongs to, where one applies."""

    PFC_RX = "pfc_rx_frames"  # PFC pause frames received, per priority
    PFC_TX = "pfc_tx_frames"  # PFC pause frames sent, per priority
    QUEUE_TX = "queue_tx_packets"  # packets sent by a queue
    QUEUE_DROPS = "queue_drops"  # packets a queue dropped
    QUEUE_ECN = "queue_ecn_marked"  # packets a queue marked ECN-CE
    WATCHDOG = "pfc_watchdog_storms"  # times the PFC watchdog fired, per priority
    NIC_CNP_SENT = "nic_cnp_sent"  # CNPs the NIC sent (notification point)
    NIC_CNP_HANDLED = "nic_cnp_handled"  # CNPs the NIC reacted to (reaction point)
    NIC_ECN_MARKED_RX = "nic_ecn_marked_rx"  # ECN-CE packets the NIC received
    NIC_OUT_OF_BUFFER = "nic_out_of_buffer"  # receive drops for lack of buffer
    OPER_UP = "oper_up"  # state, not a counter: 1 up, 0 down


COUNTERS = frozenset(m for m in Metric if m is not Metric.OPER_UP)


@dataclass(frozen=True, slots=True)
class Sample:
    device: str
    port: str | None  # None: the device as a whole
    metric: Metric
    key: int | None  # priority or queue index (None where the metric has none)
    value: int
    time: float  # seconds since the epoch, as the source stamped it


@dataclass(frozen=True, slots=True)
class Gone:
    """What a target's delete took away: a metric of a port (None: of every port) and key
    (None: every key), from `time` on. Not a zero: the series ends."""

    device: str
    metric: Metric
    port: str | None
    key: int | None
    time: float
