"""Unmanaged hosts against the simulated fleet: the lab with leaf1's and leaf2's hosts
unmanaged, every device served (the unmanaged hosts too, at intent: their team applied the
rendered config) and listed in the inventory the fleet writes. verify, audit, a dry run and
a watch run clean and name the unmanaged hosts as not judged; the fleet's login counts show
flatfab never tried to log in to one of them.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from flatfab.model.state import UNMANAGED
from tests.fleet.served import Run, Served, flatfab, intent_copy, served

UNMANAGED_HOSTS = ["leaf1-h1", "leaf1-h2", "leaf2-h1", "leaf2-h2"]
MANAGED = ["spine1", "spine2", "leaf1", "leaf2", "leaf3", "leaf4", "leaf3-h1", "leaf3-h2",
           "leaf4-h1", "leaf4-h2"]
HOSTS_EDIT = ("  mtu: 9000\n", "  mtu: 9000\nleaves:\n  leaf1: {count: 2, managed: false}\n"
              "  leaf2: {count: 2, managed: false}\n")


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    root = tmp_path_factory.mktemp("unmanaged")
    intent = intent_copy("lab", root / "project", {"hosts.yaml": HOSTS_EDIT})
    with served(intent, root / "fleet") as running:
        yield running


@pytest.fixture(scope="module")
def runs(fleet: Served) -> dict[str, Run]:
    """Every read-only run, in turn (the fleet counts their logins)."""
    return {"verify": flatfab(fleet, "verify", "--lossless", "-f", "json"),
            "audit": flatfab(fleet, "audit", "-f", "json"),
            "dry-run": flatfab(fleet, "rollout", "--dry-run", "-f", "json"),
            "watch": flatfab(fleet, "watch", "--count", "2", "--interval", "1", "-f", "json")}


def _settled(fleet: Served, timeout: float = 10.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        stats: dict[str, Any] = json.loads((fleet.folder / "stats.json").read_text())
        if stats["connections_open"] == 0 or time.monotonic() > deadline:
            return stats
        time.sleep(0.2)


def _failing(findings: list[dict[str, Any]]) -> list[str]:
    return [f["message"] for f in findings
            if f["severity"] not in ("info", "not-judged")]


def _not_judged(findings: list[dict[str, Any]]) -> set[str]:
    return {f["device"] for f in findings if f["severity"] == "not-judged"}


def test_the_inventory_lists_every_device_the_unmanaged_hosts_too(fleet: Served) -> None:
    hosts = yaml.safe_load((fleet.inventory / "hosts.yaml").read_text(encoding="utf-8"))
    assert set(UNMANAGED_HOSTS) <= set(hosts)  # listed, and still never connected to


def test_verify_judges_the_switches_and_managed_hosts_clean(runs: dict[str, Run]) -> None:
    run = runs["verify"]
    assert run.code == 0, run.stdout + run.stderr
    report = run.json()
    assert report["unmanaged"] == UNMANAGED_HOSTS and report["devices"] == 14
    assert _failing(report["findings"]) == []
    assert _not_judged(report["findings"]) == set(UNMANAGED_HOSTS)
    assert {f["message"] for f in report["findings"]} == {
        f"{h} is not judged: {UNMANAGED}" for h in UNMANAGED_HOSTS}


def test_audit_compares_no_unmanaged_config(runs: dict[str, Run]) -> None:
    run = runs["audit"]
    assert run.code == 0, run.stdout + run.stderr
    report = run.json()
    assert report["status"] == "clean" and report["drift"] == []
    assert [d["name"] for d in report["devices"] if not d["managed"]] == UNMANAGED_HOSTS
    assert _failing(report["findings"]) == []
    assert _not_judged(report["findings"]) == set(UNMANAGED_HOSTS)


def test_a_dry_run_diffs_only_what_it_may_change(runs: dict[str, Run]) -> None:
    run = runs["dry-run"]
    assert run.code == 0, run.stdout + run.stderr
    summary = run.json()
    assert summary["unmanaged"] == UNMANAGED_HOSTS
    assert summary["diffs"] == {} and summary["errors"] == {}
    assert not set(summary["unselected"]) & set(UNMANAGED_HOSTS)
    assert sorted(d for p in summary["phases"] for b in p["batches"] for d in b) == sorted(
        MANAGED)


def test_a_watch_polls_no_unmanaged_host(runs: dict[str, Run]) -> None:
    run = runs["watch"]
    assert run.code == 0, run.stdout + run.stderr
    report = run.json()
    assert _failing(report["findings"]) == []
    assert _not_judged(report["findings"]) == set(UNMANAGED_HOSTS)
    assert "4 unmanaged hosts not watched" in run.stderr


def test_flatfab_never_tried_to_log_in_to_an_unmanaged_host(fleet: Served,
                                                             runs: dict[str, Run]) -> None:
    assert all(r.code == 0 for r in runs.values())
    logins = _settled(fleet)["logins"]
    assert not set(logins) & set(UNMANAGED_HOSTS), logins
    assert set(logins) == set(MANAGED)


def test_the_cli_tables_say_what_was_not_judged(fleet: Served, tmp_path: Path) -> None:
    run = flatfab(fleet, "verify")
    assert run.code == 0, run.stdout + run.stderr
    assert "not judged (neither passed nor failed)" in run.stdout
    assert "(4 unmanaged hosts never read)" in run.stdout
    table = run.stdout[run.stdout.index("not judged (neither"):]
    assert all(h in table for h in UNMANAGED_HOSTS) and UNMANAGED in table
    dry = flatfab(fleet, "rollout", "--dry-run")
    assert dry.code == 0, dry.stdout + dry.stderr
    assert f"unmanaged, not touched: {', '.join(UNMANAGED_HOSTS)}" in dry.stdout
    assert "dry run: 0 of 10 devices would change" in dry.stdout
