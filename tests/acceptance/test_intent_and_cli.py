"""acceptance.yaml (the references an acceptance run judges against, each with its why) and
the `flatfab accept` command's refusals of bad input (exit 2, before any device)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from flatfab.acceptance.engines.nccl import Collective
from flatfab.errors import InputError
from flatfab.intent.acceptance import AcceptanceIntent, EngineReference
from flatfab.intent.loader import load_intent
from flatfab.workflows.commands import acceptance as acc
from tests.support.flatfab import in_process
from tests.support.paths import ROOT

LAB = ROOT / "intents" / "lab"


def _with(tmp_path: Path, text: str) -> Path:
    folder = tmp_path / "lab"
    shutil.copytree(LAB, folder)
    (folder / "acceptance.yaml").write_text(text, encoding="utf-8")
    return folder


def test_acceptance_yaml_is_read_with_its_reasons(tmp_path: Path) -> None:
    intent = load_intent(_with(tmp_path, "tolerance: 0.1\niperf3:\n  gbps: {100g: 2.5}\n"
                                         "  why: veth in one machine\n"))
    assert intent.acceptance.tolerance == 0.1
    found = acc.reference_for_pair("iperf3", 100_000, intent.acceptance, roce_mtu=4096)
    assert found.gbps == 2.5 and found.basis == ("acceptance.yaml iperf3 at 100G: veth in "
                                                 "one machine")


def test_absent_it_leaves_every_default_with_its_reason() -> None:
    intent = load_intent(LAB)
    assert intent.acceptance == AcceptanceIntent()
    found = acc.reference_for_pair("ib_write_bw", 400_000, intent.acceptance, roce_mtu=4096)
    assert 380 < found.gbps < 400 and "RoCE payload share at MTU 4096" in found.basis
    iperf3 = acc.reference_for_pair("iperf3", 100_000, intent.acceptance, roce_mtu=4096)
    assert iperf3.gbps == pytest.approx(70.0) and "one core" in iperf3.basis


def test_a_fraction_covers_the_speeds_gbps_does_not_list() -> None:
    entry = EngineReference(gbps={"400G": 350}, fraction=0.5, why="a PCIe Gen4 x8 slot")
    assert entry.figure(400_000) == 350 and entry.figure(100_000) == 50


def test_a_collective_takes_its_busbw_figure_per_speed() -> None:
    intent = AcceptanceIntent(all_reduce=EngineReference(gbps={"400G": 2800}, why="measured "
                                                         "at hand-over of pod 1"))
    found = acc.reference_for_collective(Collective.ALL_REDUCE, speed_mbps=400_000,
                                      nics_per_server=8, servers=4, intent=intent,
                                      roce_mtu=4096)
    assert found.gbps == 2800 and "pod 1" in found.basis
    default = acc.reference_for_collective(Collective.ALLTOALL, speed_mbps=400_000,
                                        nics_per_server=8, servers=4, intent=intent,
                                        roce_mtu=4096)
    assert "alltoall busbw" in default.basis


@pytest.mark.parametrize(("text", "why"), [
    ("iperf3: {gbps: {100G: 2}}\n", "why"),
    ("iperf3: {why: x}\n", "give `gbps` per speed or a `fraction`"),
    ("iperf3: {gbps: {99G: 2}, why: x}\n", "unknown speed '99G'"),
    ("tolerance: 1.5\n", "less than 1"),
    ("iperf3: {gbps: {100G: 0}, why: x}\n", "greater than 0"),
    ("speed: 1\n", "unknown key 'speed'"),
])
def test_a_bad_acceptance_yaml_is_refused_with_why(tmp_path: Path, text: str,
                                                   why: str) -> None:
    with pytest.raises(InputError, match=r"acceptance\.yaml") as raised:
        load_intent(_with(tmp_path, text))
    assert why in str(raised.value)


@pytest.mark.parametrize(("args", "why"), [
    (("--engine", "netperf"), "'netperf': one of iperf3, ib_write_bw, nccl"),
    (("--kinds", "same-rail,diagonal"), "'diagonal': one of same-rail"),
    (("--reference", "fast"), "'fast' is not a figure in Gb/s"),
])
def test_bad_options_are_refused_before_any_device(args: tuple[str, ...], why: str) -> None:
    run = in_process("--fabric", "lab", "accept", *args)
    assert run.code == 2, run.stdout + run.stderr
    assert why in run.stderr


def test_accept_is_listed_after_verify() -> None:
    run = in_process("--help")
    assert run.code == 0
    assert run.stdout.index(" verify ") < run.stdout.index(" accept ") < \
        run.stdout.index(" audit ")
