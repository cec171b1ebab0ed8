"""Pinned loopbacks and ASNs (what a source of truth already holds) are planned as written,
and pins that break the allocation scheme are refused at load with file, key and line."""

from __future__ import annotations

from pathlib import Path

import pytest

from flatfab.intent.loader import load_intent
from flatfab.plan.planner import plan
from flatfab.platforms.registry import PLATFORMS
from tests.support.intent_edits import FABRIC, Edit, assert_refused, bad_copy, replace


def pin(switch: str, text: str) -> Edit:
    return replace(FABRIC, f"- name: {switch}\n", f"- {{name: {switch}, {text}}}\n")


def test_pins_are_planned_as_written_and_the_rest_is_allocated(tmp_path: Path) -> None:
    folder = bad_copy(tmp_path / "lab", pin("leaf2", "loopback: 10.0.0.200, asn: 4200000002"))
    state = plan(load_intent(folder, known_platforms=PLATFORMS))
    leaf2, leaf3 = state.devices["leaf2"], state.devices["leaf3"]
    assert (leaf2.loopback, leaf2.router_id, leaf2.asn) == ("10.0.0.200/32", "10.0.0.200",
                                                            4200000002)
    assert (leaf3.loopback, leaf3.asn) == ("10.0.0.19/32", 65103)
    # the spines peer with the pinned ASN
    peers = {p.remote_asn for p in state.devices["spine1"].bgp["default"].peers.values()
             if p.peer_device == "leaf2"}
    assert peers == {4200000002}


def test_pins_equal_to_the_allocation_change_nothing(tmp_path: Path) -> None:
    base = plan(load_intent(bad_copy(tmp_path / "a"), known_platforms=PLATFORMS))
    folder = bad_copy(tmp_path / "b", pin("leaf1", "loopback: 10.0.0.17/32, asn: 65101"),
                      pin("spine2", "loopback: 10.0.0.2, asn: 65000"))
    assert plan(load_intent(folder, known_platforms=PLATFORMS)) == base


@pytest.mark.parametrize(("edit", "path", "phrase"), [
    (pin("leaf1", "loopback: 10.9.0.1"), "leaves[0].loopback",
     "10.9.0.1 is outside underlay.loopback_pool 10.0.0.0/24"),
    (pin("leaf1", "loopback: 10.0.0.18"), "leaves[0].loopback",
     "10.0.0.18 is also 'leaf2''s loopback"),
    (pin("leaf1", "loopback: 10.0.0.17/31"), "leaves[0].loopback", "one address (/32)"),
    (pin("leaf1", "loopback: leaf1.example"), "leaves[0].loopback", "not an IPv4 address"),
    (pin("spine1", "asn: 65001"), "spines[0].asn",
     "spines share underlay.spine_asn 65000; 'spine1' is pinned to 65001"),
    (pin("leaf3", "asn: 65000"), "leaves[2].asn", "65000 is the spines' ASN"),
    (pin("leaf3", "asn: 65101"), "leaves[2].asn", "ASN 65101 is also 'leaf1''s"),
    (pin("leaf3", "asn: 23456"), "leaves[2].asn", "AS_TRANS"),
])
def test_pins_that_break_the_scheme_are_refused(tmp_path: Path, edit: Edit, path: str,
                                                phrase: str) -> None:
    assert_refused(bad_copy(tmp_path / "lab", edit), FABRIC, path, phrase)
