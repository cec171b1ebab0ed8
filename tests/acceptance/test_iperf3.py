"""iperf3: its -J report parsed (the received figure, -P streams, UDP, errors), its argv, and
one real loopback run through both."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from flatfab.acceptance.engines.base import EngineOutputError, EngineSpecError, PairSpec, Side
from flatfab.acceptance.engines.iperf3 import Iperf3Engine, Iperf3Measurement, parse
from tests.support.paths import FIXTURES
from tests.support.sockets import closed_port
from tests.support.waiting import wait_for

HERE = FIXTURES / "acceptance" / "iperf3"
SPEC = PairSpec(server=Side(address="10.0.2.12"), client=Side(address="10.0.1.11"),
                duration_s=20, parallel=4)


def _read(name: str) -> Iperf3Measurement:
    return parse((HERE / name).read_text(encoding="utf-8"))


def test_a_single_stream_is_judged_on_what_was_received() -> None:
    result = _read("tcp_single_stream.json")
    assert result.engine == "iperf3" and result.protocol == "TCP"
    assert result.gbps == pytest.approx(22.94, abs=0.005)
    assert result.gbps < result.sent_gbps  # bytes still in flight count as sent only
    assert result.retransmits == 0 and result.problems == ()


def test_parallel_streams_are_summed() -> None:
    result = _read("tcp_four_streams.json")
    assert len(result.streams_gbps) == 4
    assert result.gbps == pytest.approx(sum(result.streams_gbps), rel=1e-6)
    assert result.gbps == pytest.approx(19.82 + 21.17 + 18.74 + 20.09, abs=0.01)
    assert result.retransmits == 15


def test_udp_is_judged_on_what_arrived_not_the_offered_load() -> None:
    result = _read("udp_two_streams.json")
    report = json.loads((HERE / "udp_two_streams.json").read_text(encoding="utf-8"))
    offered = report["end"]["sum"]["bits_per_second"] / 1e9
    assert result.protocol == "UDP" and result.retransmits is None
    assert result.gbps == pytest.approx(4.83 + 4.79, abs=0.01)
    assert offered == pytest.approx(10.0, abs=0.01) and result.gbps < offered
    assert result.lost_percent == pytest.approx(3.8, abs=0.05)


def test_streams_that_do_not_add_up_are_refused() -> None:
    report = json.loads((HERE / "tcp_four_streams.json").read_text(encoding="utf-8"))
    report["end"]["streams"][0]["receiver"]["bits_per_second"] *= 2
    with pytest.raises(EngineOutputError, match="streams' receiver figures add up"):
        parse(json.dumps(report))


@pytest.mark.parametrize(("text", "said"), [
    ((HERE / "error_refused.json").read_text(encoding="utf-8"),
     "the run failed: unable to connect to server: Connection refused"),
    ((HERE / "truncated.json").read_text(encoding="utf-8"), "not a JSON report"),
    ("", "not a JSON report"),
    ("[1, 2]", "not a JSON object"),
    ('{"start": {}, "end": {"sum_sent": {"bits_per_second": 1}}}', "no end.sum_received"),
    ('{"end": {"sum_received": {"bits_per_second": "fast"}, "sum_sent": {}}}',
     "no number end.sum_received.bits_per_second"),
])
def test_bad_reports_are_one_clear_error(text: str, said: str) -> None:
    with pytest.raises(EngineOutputError) as caught:
        parse(text)
    assert str(caught.value).startswith("iperf3: ") and said in str(caught.value)
    assert isinstance(caught.value, ValueError)


def test_argv_of_both_sides() -> None:
    engine = Iperf3Engine()
    assert engine.server_argv(SPEC) == ["iperf3", "-s", "-1", "-J", "-p", "5201",
                                        "-B", "10.0.2.12"]
    assert engine.client_argv(SPEC) == ["iperf3", "-c", "10.0.2.12", "-p", "5201",
                                        "-B", "10.0.1.11", "-t", "20", "-P", "4", "-J"]


def test_argv_options() -> None:
    spec = PairSpec(server=Side(address="10.0.2.12"), client=Side(address="10.0.1.11"),
                    port=5301, message_bytes=131072, tclass=104)
    argv = Iperf3Engine(udp_bitrate="10G").client_argv(spec)
    assert argv[argv.index("-p") + 1] == "5301"
    assert argv[-7:] == ["-l", "131072", "-S", "104", "-u", "-b", "10G"]
    with pytest.raises(EngineSpecError, match="rdma_cm"):
        Iperf3Engine().server_argv(PairSpec(server=Side(address="a"), client=Side(address="b"),
                                            rdma_cm=True))


@pytest.mark.parametrize("bad", [{"port": 0}, {"duration_s": 0}, {"parallel": 0},
                                 {"tclass": 256}, {"message_bytes": 0}])
def test_a_spec_refuses_impossible_values(bad: dict[str, int]) -> None:
    with pytest.raises(ValueError):
        PairSpec(server=Side(address="a"), client=Side(address="b"), **bad)  # type: ignore[arg-type]


def _listening(port: int) -> bool:
    """Whether a TCP socket listens on `port` (read from /proc: a probe connection would use
    up the one-off server)."""
    wanted = f":{port:04X} "
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        lines = Path(table).read_text(encoding="utf-8").splitlines()[1:]
        if any(wanted in line and line.split()[3] == "0A" for line in lines):
            return True
    return False


@pytest.mark.skipif(shutil.which("iperf3") is None, reason="iperf3 is not installed")
def test_a_real_loopback_run_parses() -> None:
    engine = Iperf3Engine()
    spec = PairSpec(server=Side(address="127.0.0.1"), client=Side(address="127.0.0.1"),
                    port=closed_port(), duration_s=1, parallel=2)
    server = subprocess.Popen(engine.server_argv(spec), stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True)
    try:
        wait_for(lambda: _listening(spec.port or 0), "iperf3 server listening", timeout=10)
        client = subprocess.run(engine.client_argv(spec), capture_output=True, text=True,
                                timeout=30, check=False)
        server_out, _ = server.communicate(timeout=30)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    result = engine.parse(client.stdout)
    assert result.protocol == "TCP" and len(result.streams_gbps) == 2
    assert result.gbps > 0.1  # loopback: gigabits, whatever the machine
    assert engine.parse(server_out).gbps == pytest.approx(result.gbps, rel=1e-6)
