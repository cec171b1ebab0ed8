"""The engine contract: an engine builds the command lines of a test from explicit
parameters and parses what the test printed into a typed measurement.

A pair engine (iperf3, ib_write_bw) runs a server on one NIC and a client on another; a
collective engine (nccl-tests) is one launch line over many servers. Building a command never
reads anything; parsing never runs anything: both are pure, so the tests and a report can use
them without a host.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from flatfab.errors import FlatfabError

# Gb/s everywhere in this layer is 10^9 bit/s, the unit link speeds are sold in
BITS_PER_GIGABIT = 1e9


class EngineOutputError(FlatfabError, ValueError):
    """An engine's output that cannot be read: malformed, truncated or an error report. One
    line naming the engine and what was missing, never a traceback from inside a parser."""

    def __init__(self, engine: str, missing: str) -> None:
        self.engine = engine
        self.missing = missing
        super().__init__(f"{engine}: {missing}")


class EngineSpecError(FlatfabError, ValueError):
    """Parameters an engine cannot build a command from (a missing RDMA device, a bad port)."""

    def __init__(self, engine: str, problem: str) -> None:
        self.engine = engine
        super().__init__(f"{engine}: {problem}")


@dataclass(frozen=True, kw_only=True)
class Side:
    """One end of a pair: the address its test traffic uses, and for RDMA engines the RDMA
    device (`mlx5_3`) and the GID index of that address's RoCEv2 GID on it."""

    address: str
    device: str | None = None
    gid_index: int | None = None


@dataclass(frozen=True, kw_only=True)
class PairSpec:
    """What a pairwise test needs, explicitly: the server and client ends, the control port
    (None: the engine's default), the duration, the message size (None: the engine's
    default), parallel streams or queue pairs, and the IP traffic class (ToS byte: DSCP << 2)
    the test traffic is marked with. `rdma_cm`: connect RDMA QPs through rdma_cm."""

    server: Side
    client: Side
    port: int | None = None
    duration_s: int = 10
    message_bytes: int | None = None
    parallel: int = 1
    tclass: int | None = None
    rdma_cm: bool = False

    def __post_init__(self) -> None:
        if self.port is not None and not 0 < self.port < 65536:
            raise ValueError(f"port {self.port} is not a TCP port (1-65535)")
        if self.duration_s < 1:
            raise ValueError(f"duration {self.duration_s} s: at least 1 s")
        if self.parallel < 1:
            raise ValueError(f"parallel {self.parallel}: at least 1")
        if self.message_bytes is not None and self.message_bytes < 1:
            raise ValueError(f"message size {self.message_bytes} B: at least 1 B")
        if self.tclass is not None and not 0 <= self.tclass <= 255:
            raise ValueError(f"traffic class {self.tclass}: a byte (0-255)")


@dataclass(frozen=True, kw_only=True)
class Measurement:
    """What one run of an engine measured: the figure judged (Gb/s) and the problems the
    run reports of its own (a failure whatever the figure, e.g. NCCL's wrong values)."""

    engine: str
    gbps: float
    problems: tuple[str, ...] = ()


class PairEngine(Protocol):
    """A pairwise engine: the server's and the client's argv for a pair, and the parser of
    the side that reports the figure."""

    @property
    def name(self) -> str: ...

    def server_argv(self, spec: PairSpec) -> list[str]: ...

    def client_argv(self, spec: PairSpec) -> list[str]: ...

    def parse(self, output: str) -> Measurement: ...
