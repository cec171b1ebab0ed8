"""The engines an acceptance run measures with: pairwise (iperf3, ib_write_bw) and
collective (nccl-tests), each building its commands and parsing its output."""

from __future__ import annotations

from flatfab.acceptance.engines.base import PairEngine
from flatfab.acceptance.engines.iperf3 import Iperf3Engine
from flatfab.acceptance.engines.nccl import Collective, NcclEngine
from flatfab.acceptance.engines.perftest import IbWriteBwEngine

PAIR_ENGINES: dict[str, PairEngine] = {
    "iperf3": Iperf3Engine(),
    "ib_write_bw": IbWriteBwEngine(),
}
COLLECTIVE_ENGINES: dict[Collective, NcclEngine] = {c: NcclEngine(c) for c in Collective}
