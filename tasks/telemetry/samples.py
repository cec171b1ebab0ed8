"""One reading of one counter, gauge or state, the unit every telemetry source produces and
the health engine consumes (vendor-neutral: each platform's paths map onto these metrics).

A counter's value is an int, exact however large it grows (a float would lose counts past
2**53), and so is a state's (1 up, 0 down); a gauge's (GAUGES: a ratio such as the pre-FEC
bit error ratio) is a float. The decoders (flatfab.telemetry.paths.sample_value) make them so."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Metric(StrEnum):
    """What a sample measures. Counters are cumulative since the device last cleared them,
    gauges a level read now; `key` is the priority (PFC) or queue index it belongs to, where
    one applies."""

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
    # the physical layer of a switch port (flatfab.model.physical says what each means)
    FEC_CORRECTED = "fec_corrected_codewords"  # codewords the FEC corrected
    FEC_UNCORRECTABLE = "fec_uncorrectable_codewords"  # codewords it could not: frames lost
    CARRIER_TRANSITIONS = "carrier_transitions"  # link state changes (a flap counts two)
    PRE_FEC_BER = "pre_fec_ber"  # gauge: the bit error ratio before FEC corrects it
    # gauge: a lane's received optical power in dBm; key: the lane as the OS numbers it
    RX_POWER = "rx_power_dbm"
    OPER_UP = "oper_up"  # state, not a counter: 1 up, 0 down


GAUGES = frozenset({Metric.PRE_FEC_BER, Metric.RX_POWER})  # a level, a float: no rate
COUNTERS = frozenset(m for m in Metric if m is not Metric.OPER_UP and m not in GAUGES)

Number = int | float  # an int for a counter or a state, a float for a gauge


@dataclass(frozen=True, slots=True)
class Sample:
    device: str
    port: str | None  # None: the device as a whole
    metric: Metric
    key: int | None  # priority or queue index (None where the metric has none)
    value: Number  # an int (a counter, a state), a float for a gauge (GAUGES)
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
