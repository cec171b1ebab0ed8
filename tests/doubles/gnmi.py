"""A fake counter source for the gNMI target: what the lab's `tc`/virtual-ASIC reader will be."""

from __future__ import annotations

import threading
from pathlib import Path

from flatfab.telemetry import paths, tls
from flatfab.telemetry.samples import Metric

PFC_PRIORITY = 3
QUEUE = 3


class FakeCounters:
    """Per-port counters that grow by `step` on every read; oper state set by the test."""

    def __init__(self, ports: tuple[str, ...] = ("swp1", "swp2"), step: int = 1) -> None:
        self._lock = threading.Lock()
        self.ports = ports
        self.step = step
        self.reads = 0
        self.failing = False  # True: every read raises, as a broken `tc` would
        self.oper = dict.fromkeys(ports, True)
        self.base: dict[tuple[Metric, str, int | None], int] = {}
        for port in ports:
            for metric in (Metric.PFC_RX, Metric.PFC_TX, Metric.WATCHDOG):
                self.base[(metric, port, PFC_PRIORITY)] = 0
            for metric in (Metric.QUEUE_TX, Metric.QUEUE_DROPS, Metric.QUEUE_ECN):
                self.base[(metric, port, QUEUE)] = 0

    def set_oper(self, port: str, up: bool) -> None:
        with self._lock:
            self.oper[port] = up

    def __call__(self) -> list[tuple[str, int | str]]:
        with self._lock:
            self.reads += 1
            if self.failing:
                raise OSError("tc: cannot talk to the kernel")
            for k in self.base:
                self.base[k] += self.step
            out: list[tuple[str, int | str]] = [
                (paths.leaf_path(m, port, key), value)
                for (m, port, key), value in self.base.items()
            ]
            out += [(paths.leaf_path(Metric.OPER_UP, port),
                     paths.leaf_value(Metric.OPER_UP, int(up)))
                    for port, up in self.oper.items()]
            return out


def fake_source(ports: list[str] | None = None, step: int = 1) -> FakeCounters:
    """The factory `python -m flatfab.telemetry.gnmi_target --config` names in the tests."""
    return FakeCounters(tuple(ports or ("swp1", "swp2")), step)


class LabPki:
    """A CA, a server certificate for 127.0.0.1/localhost, and an unrelated second CA."""

    def __init__(self, where: Path) -> None:
        ca = tls.make_ca("flatfab test CA")
        server = tls.make_server_cert(ca, ["localhost", "127.0.0.1"])
        other = tls.make_ca("somebody else's CA")
        self.ca_file = where / "ca.pem"
        self.other_ca_file = where / "other-ca.pem"
        self.cert_file, self.key_file = where / "server.pem", where / "server.key"
        self.ca_file.write_bytes(ca.cert)
        self.other_ca_file.write_bytes(other.cert)
        self.cert_file.write_bytes(server.cert)
        self.key_file.write_bytes(server.key)
        self.cert, self.key = server.cert, server.key


LAB_LOSSLESS_Q, LAB_LOSSY_Q = 3, 0  # the lab's RoCE queue (and its PFC priority), best effort


class HealthyCounters:
    """A healthy switch of the lab plan: traffic on both queues, drops only on the lossy one,
    ECN marks only on the lossless one, no pauses; a test changes one growth per read to start
    a condition."""

    def __init__(self, ports: tuple[str, ...]) -> None:
        self._lock = threading.Lock()
        self.values: dict[tuple[Metric, str, int], int] = {}
        self.growth: dict[tuple[Metric, str, int], int] = {}
        for port in ports:
            for queue in (LAB_LOSSY_Q, LAB_LOSSLESS_Q):
                self._add(Metric.QUEUE_TX, port, queue, 500)
                self._add(Metric.QUEUE_DROPS, port, queue, 2 if queue == LAB_LOSSY_Q else 0)
                self._add(Metric.QUEUE_ECN, port, queue, 5 if queue == LAB_LOSSLESS_Q else 0)
            for metric in (Metric.PFC_RX, Metric.PFC_TX, Metric.WATCHDOG):
                self._add(metric, port, LAB_LOSSLESS_Q, 0)
        self.ports = ports
        self.levels: dict[str, float] = {}  # port -> pre-FEC BER (add_physical)

    def add_physical(self) -> None:
        """Each port's physical layer too: a few codewords corrected, none lost, no flap, a
        pre-FEC BER of 1e-9 (the key of these unkeyed counters is 0: their leaves have none)."""
        with self._lock:
            for port in self.ports:
                self._add(Metric.FEC_CORRECTED, port, 0, 20)
                self._add(Metric.FEC_UNCORRECTABLE, port, 0, 0)
                self._add(Metric.CARRIER_TRANSITIONS, port, 0, 0)
                self.levels[port] = 1e-9

    def level(self, port: str, ber: float) -> None:
        with self._lock:
            self.levels[port] = ber

    def _add(self, metric: Metric, port: str, key: int, growth: int) -> None:
        self.values[(metric, port, key)] = 1000
        self.growth[(metric, port, key)] = growth

    def grow(self, metric: Metric, port: str, key: int, growth: int) -> None:
        with self._lock:
            self.growth[(metric, port, key)] = growth

    def remove(self, port: str) -> None:
        """The port goes away (a breakout undone, a line card out): its leaves are no more."""
        with self._lock:
            for gone in [k for k in self.values if k[1] == port]:
                del self.values[gone], self.growth[gone]
            self.levels.pop(port, None)
            self.ports = tuple(p for p in self.ports if p != port)

    def __call__(self) -> list[tuple[str, int | float | str]]:
        with self._lock:
            for k, g in self.growth.items():
                self.values[k] += g
            out: list[tuple[str, int | float | str]] = [
                (paths.leaf_path(m, port, key), v) for (m, port, key), v in self.values.items()]
            out += [(paths.leaf_path(Metric.PRE_FEC_BER, port), ber)
                    for port, ber in self.levels.items()]
        return out + [(paths.leaf_path(Metric.OPER_UP, p), paths.leaf_value(Metric.OPER_UP, 1))
                      for p in self.ports]
