"""flatfab accept end to end on the lab's plan: pairs chosen from the plan, run through the
linux_host platform on host doubles, judged against acceptance.yaml's reference, the links
of failing pairs named with their counters; what could not run is named, never passed."""

from __future__ import annotations

import pytest

from flatfab import exitcodes
from flatfab.acceptance.results import PairKind
from flatfab.acceptance.selection import select, waves
from flatfab.checks.base import Severity
from flatfab.errors import InputError
from flatfab.intent.loader import load_intent
from flatfab.plan.planner import plan
from flatfab.workflows.commands import acceptance as acc
from tests.acceptance.support import (
    LAB_INTENT,
    canned_counters,
    lab_plan,
    nornir_of,
    slow_to_and_from,
)
from tests.doubles.engines import EngineShell
from tests.support.paths import ROOT

SHAPED = "leaf1:swp1 <-> leaf1-h1:eth1"
OPTIONS = acc.AcceptanceOptions(kinds=(PairKind.SAME_RAIL, PairKind.CROSS_RAIL), per_kind=8)


# ---------------------------------------------------------------- which pairs


def test_the_lab_measures_both_tenants_rings_across_the_spines() -> None:
    chosen = select(lab_plan(), list(PairKind), 16)
    pairs = [(str(p.source.ref), str(p.destination.ref), p.kind) for p in chosen.pairs]
    assert len(pairs) == 8 and {kind for *_, kind in pairs} == {PairKind.CROSS_RAIL}
    assert ("leaf4-h1/eth1", "leaf1-h1/eth1", PairKind.CROSS_RAIL) in pairs
    assert all(s.split("-")[1][:2] == d.split("-")[1][:2] for s, d, _ in pairs)  # one tenant
    skipped = {s.kind: s.why for s in chosen.skipped}
    assert set(skipped) == {PairKind.SAME_RAIL, PairKind.CROSS_POD, PairKind.CROSS_PLANE}
    assert skipped[PairKind.CROSS_PLANE].startswith("not allowed")


def test_the_rail_lab_has_every_allowed_kind_bounded_and_stable() -> None:
    rail = plan(load_intent(ROOT / "intents" / "rail"))
    chosen = select(rail, list(PairKind), 3)
    kinds = [p.kind for p in chosen.pairs]
    assert {k: kinds.count(k) for k in set(kinds)} == {
        PairKind.SAME_RAIL: 3, PairKind.CROSS_RAIL: 3, PairKind.CROSS_POD: 3}
    assert chosen == select(rail, list(PairKind), 3)  # deterministic
    for pair in chosen.pairs:
        a, b = pair.source, pair.destination
        assert a.server != b.server and a.plane == b.plane
        assert (a.leaf == b.leaf) == (pair.kind is PairKind.SAME_RAIL)
        assert (a.pod != b.pod) == (pair.kind is PairKind.CROSS_POD)


def test_no_two_pairs_of_a_wave_share_a_server_or_a_leaf() -> None:
    rail = plan(load_intent(ROOT / "intents" / "rail"))
    for wave in waves(select(rail, list(PairKind), 8).pairs):
        used = [x for p in wave for x in {*p.servers, p.source.leaf, p.destination.leaf}]
        assert len(used) == len(set(used))


def test_unmanaged_servers_run_nothing_and_are_named() -> None:
    state = lab_plan()
    state.devices["leaf1-h1"].managed = False
    chosen = select(state, [PairKind.CROSS_RAIL], 16)
    assert chosen.unmanaged == ("leaf1-h1",)
    assert all("leaf1-h1" not in p.servers for p in chosen.pairs)


# ---------------------------------------------------------------- the run


def test_a_healthy_run_passes_with_the_intents_reference(
        monkeypatch: pytest.MonkeyPatch) -> None:
    state = lab_plan()
    canned_counters(monkeypatch)
    shells: dict[str, EngineShell] = {}
    run = acc.run_acceptance(nornir_of(state, shells, lambda host, server: 2.4), state,
                             LAB_INTENT, OPTIONS)
    assert not run.failed and run.info.complete and len(run.info.results.pairs) == 8
    assert run.info.waves == 4  # the rings of both tenants share their leaves
    assert run.info.bases == (("iperf3 at 100G", "acceptance.yaml iperf3 at 100G: the lab's "
                               "iperf3 runs over veth on one machine's CPUs"),)
    assert acc.acceptance_report(state, run).status.exit_code == exitcodes.CLEAN
    # every server served once and was a client once, each with the pair's addresses
    ran = shells["leaf1-h1"].ran
    assert "timeout -k 2 30 iperf3 -s -1 -J -p 5201 -B 10.100.1.11" in ran  # its server
    assert [r for r in ran if r.startswith("iperf3 -c ")] == [
        "iperf3 -c 10.100.2.11 -p 5201 -B 10.100.1.11 -t 10 -P 1 -J"]


def test_a_slow_link_fails_the_pairs_that_cross_it_and_is_named_with_its_counters(
        monkeypatch: pytest.MonkeyPatch) -> None:
    state = lab_plan()
    canned_counters(monkeypatch, grow={("leaf1", "swp1"): {"drops.tc0": 812}})
    run = acc.run_acceptance(nornir_of(state, {}, slow_to_and_from(state, "leaf1-h1")),
                             state, LAB_INTENT, OPTIONS)
    failed = {(str(p.source), str(p.destination)) for p in run.info.results.pairs
              if not p.verdict.passed}
    assert failed == {("leaf1-h1/eth1", "leaf2-h1/eth1"), ("leaf4-h1/eth1", "leaf1-h1/eth1")}
    suspects = [f for f in run.findings if f.check == acc.LINK]
    assert len(suspects) == 1 and suspects[0].severity is Severity.ERROR
    assert suspects[0].message.startswith(f"link {SHAPED}: every pair that crossed it failed "
                                          "(2 of 2)")
    assert "leaf1:swp1 drops.tc0 +812" in suspects[0].message
    pairs = [f for f in run.findings if f.check == acc.PAIR]
    assert len(pairs) == 2 and all(SHAPED in f.message for f in pairs)
    assert "one path of 4 fabric links (ECMP)" in pairs[0].message
    report = acc.acceptance_report(state, run)
    assert report.status.exit_code == exitcodes.FINDINGS and report.status_word == "failed"


def test_a_pair_that_could_not_run_is_named_and_never_passed(
        monkeypatch: pytest.MonkeyPatch) -> None:
    state = lab_plan()
    canned_counters(monkeypatch)
    slow = slow_to_and_from(state, "leaf3-h2")

    def figure(host: str, server: str) -> float | None:
        return None if slow(host, server) < 1 else 2.4  # leaf3-h2's pairs time out

    run = acc.run_acceptance(nornir_of(state, {}, figure), state, LAB_INTENT, OPTIONS)
    assert not run.failed and len(run.info.unrun) == 2
    assert {u.why for u in run.info.unrun} == {"the client on leaf2-h2 timed out",
                                                "the client on leaf3-h2 timed out"}
    unrun = [f for f in run.findings if f.check == acc.UNRUN]
    assert all(f.severity is Severity.NOT_JUDGED for f in unrun) and len(unrun) == 2
    assert acc.acceptance_report(state, run).status.exit_code == exitcodes.INCOMPLETE


def test_a_server_that_never_listens_is_why_its_pair_did_not_run(
        monkeypatch: pytest.MonkeyPatch) -> None:
    state = lab_plan()
    canned_counters(monkeypatch)
    run = acc.run_acceptance(nornir_of(state, {}, lambda h, s: 2.4, listens=False), state,
                             LAB_INTENT, OPTIONS)
    assert not run.info.results.pairs and len(run.info.unrun) == 8
    assert "never listened on TCP port 5201" in run.info.unrun[0].why


def test_counters_not_read_leave_the_run_incomplete(monkeypatch: pytest.MonkeyPatch) -> None:
    state = lab_plan()
    canned_counters(monkeypatch, unread={"spine2"})
    run = acc.run_acceptance(nornir_of(state, {}, lambda h, s: 2.4), state, LAB_INTENT,
                             OPTIONS)
    assert set(run.unread) == {"spine2"} and "SSH session closed" in run.unread["spine2"]
    assert acc.acceptance_report(state, run).status.exit_code == exitcodes.INCOMPLETE


def test_ib_write_bw_on_a_nic_without_rdma_is_not_run_and_says_why(
        monkeypatch: pytest.MonkeyPatch) -> None:
    state = lab_plan()
    canned_counters(monkeypatch)
    run = acc.run_acceptance(nornir_of(state, {}, lambda h, s: 2.4), state, LAB_INTENT,
                             acc.AcceptanceOptions(engine="ib_write_bw",
                                                   kinds=(PairKind.CROSS_RAIL,)))
    assert not run.info.results.pairs and len(run.info.unrun) == 8
    assert "has no RDMA device with a RoCE v2 GID" in run.info.unrun[0].why


def test_a_reference_on_the_command_line_wins_and_says_so(
        monkeypatch: pytest.MonkeyPatch) -> None:
    state = lab_plan()
    canned_counters(monkeypatch)
    options = acc.AcceptanceOptions(kinds=(PairKind.CROSS_RAIL,), reference_gbps=3.0)
    run = acc.run_acceptance(nornir_of(state, {}, lambda h, s: 2.5), state, LAB_INTENT,
                             options)
    assert all(p.reference_gbps == 3.0 for p in run.info.results.pairs)
    assert run.info.bases[0][1] == "given on the command line (--reference)"
    assert not run.failed  # 17 % under 3.0: within the tolerance

def test_hosts_whose_platform_cannot_run_engines_are_refused_before_any_device() -> None:
    state = lab_plan()
    for device in state.devices.values():
        if device.role.value == "host":
            device.platform = "eos"
    with pytest.raises(InputError, match="cannot run test engines"):
        acc.run_acceptance(None, state, LAB_INTENT, OPTIONS)  # type: ignore[arg-type]
