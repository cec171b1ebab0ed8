"""acceptance.yaml: the figures `flatfab accept` judges against, where the defaults do not
fit. Absent, every engine's default reference holds (flatfab.acceptance.reference, each with
its reason). A figure given here is per NIC speed, and says why it is what it is."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, field_validator, model_validator

from flatfab.intent.base import SPEEDS_MBPS, Kind, Strict

Gbps = Annotated[float, Field(gt=0), Kind("Gb/s")]


class EngineReference(Strict):
    """The figure one engine must reach: per NIC speed, or as a fraction of the NIC speed."""

    gbps: dict[str, Gbps] = Field(
        default_factory=dict, description="Per NIC speed (`100G`, `400G`), the figure a pair "
        "(for NCCL: a collective's busbw) must reach, in Gb/s; a speed not listed takes "
        "`fraction`, else the default.")
    fraction: float | None = Field(
        None, gt=0, le=1, description="The share of the NIC speed a pair must reach, for "
        "speeds `gbps` does not list (iperf3 and ib_write_bw only).")
    why: str = Field(description="Why the figure is what it is (a CPU-bound lab, a NIC in a "
                     "narrower slot): the reports print it beside every result it judges.")

    @field_validator("gbps")
    @classmethod
    def _known_speeds(cls, value: dict[str, float]) -> dict[str, float]:
        unknown = [speed for speed in value if speed.upper() not in SPEEDS_MBPS]
        if unknown:
            raise ValueError(f"unknown speed {unknown[0]!r}; expected one of "
                             f"{', '.join(SPEEDS_MBPS)}")
        return {speed.upper(): figure for speed, figure in value.items()}

    @model_validator(mode="after")
    def _says_something(self) -> EngineReference:
        if not self.gbps and self.fraction is None:
            raise ValueError("give `gbps` per speed or a `fraction`: an entry without either "
                             "changes nothing")
        if not self.why.strip():
            raise ValueError("`why` must say why the figure is what it is")
        return self

    def figure(self, speed_mbps: int) -> float | None:
        """The figure for a NIC speed, if this entry states one."""
        for speed, figure in self.gbps.items():
            if SPEEDS_MBPS[speed] == speed_mbps:
                return figure
        return None if self.fraction is None else self.fraction * speed_mbps / 1000


class AcceptanceIntent(Strict):
    """acceptance.yaml: the references an acceptance run judges against."""

    tolerance: float = Field(0.20, ge=0, lt=1, description="How far under its reference a "
                             "result may be and still pass (0.2: 20 %).")
    iperf3: EngineReference | None = Field(None, description="iperf3 pairs (default: 0.7 of "
                                           "the NIC speed).")
    ib_write_bw: EngineReference | None = Field(None, description="ib_write_bw pairs "
                                                "(default: the RoCE payload share of the "
                                                "NIC speed at the fabric's RoCE MTU).")
    all_reduce: EngineReference | None = Field(None, description="NCCL all_reduce busbw per "
                                               "NIC speed (default: the payload share of "
                                               "every NIC of a server).")
    alltoall: EngineReference | None = Field(None, description="NCCL alltoall busbw per NIC "
                                             "speed (default: from the NICs per GPU and the "
                                             "rank count).")
    gpus_per_server: int = Field(8, ge=1, le=64, description="GPUs of each server: the ranks "
                                 "a collective runs per server.")
    duration_s: int = Field(10, ge=1, le=600, description="Seconds each pairwise test runs.")
    parallel: int = Field(1, ge=1, le=128, description="iperf3 streams (-P) or ib_write_bw "
                          "queue pairs (-q) per pair.")
    nccl_env: dict[str, str] = Field(default_factory=dict, description="What mpirun exports "
                                     "to every NCCL rank (-x), e.g. NCCL_IB_HCA, "
                                     "NCCL_IB_GID_INDEX.")
    nccl_binary_dir: str = Field("", description="Where the servers keep nccl-tests' "
                                 "binaries (`all_reduce_perf`); empty: on the PATH.")

    def reference_of(self, engine: str) -> EngineReference | None:
        found = {"iperf3": self.iperf3, "ib_write_bw": self.ib_write_bw,
                 "all_reduce": self.all_reduce, "alltoall": self.alltoall}
        return found.get(engine)
