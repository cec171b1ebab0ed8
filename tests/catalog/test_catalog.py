"""The one catalog (flatfab.catalog): every finding id flatfab can raise, each once, each
saying what it holds, where it is raised, what it reads, expects, when it fails and the
fix; the documentation's catalog page lists exactly its ids, in its order."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from flatfab import catalog
from flatfab.catalog import Entry, Group, Place, Source, closest, entries
from flatfab.checks import CATALOG as CHECKS
from flatfab.checks.base import FindingKind, Scope, Severity, Stage
from flatfab.checks.catalog_doc import LABELS, CatalogDocError, parse_kind
from flatfab.docsite import check_catalog
from flatfab.sot.audit import KINDS as SOT_KINDS
from flatfab.sot.audit import SOT_CHECKS
from flatfab.telemetry.conditions import KINDS as TELEMETRY_KINDS
from flatfab.telemetry.conditions import SEVERITY
from flatfab.workflows.commands.acceptance import KINDS as ACCEPTANCE_KINDS
from flatfab.workflows.commands.burnin import KINDS as BURN_IN_KINDS
from flatfab.workflows.commands.scheduler import KINDS as SCHEDULER_KINDS
from flatfab.workflows.commands.traffic import KINDS as TRAFFIC_KINDS
from flatfab.workflows.commands.traffic import TRAFFIC_CHECKS

ENTRIES = entries()


@pytest.mark.parametrize("entry", ENTRIES.values(), ids=lambda e: e.id)
def test_every_entry_says_what_it_is_where_and_what_to_do(entry: Entry) -> None:
    assert entry.title.strip() and entry.description.strip()
    assert entry.reads and entry.expects and entry.fails_when and entry.fix
    assert entry.places and entry.where
    assert entry.as_dict()["id"] == entry.id and all(
        entry.as_dict()[key] for key in ("description", "reads", "expects", "fails_when", "fix"))


def test_it_holds_every_check_and_every_kind_raised_outside_them_once() -> None:
    kinds = [k.id for group in catalog.GROUPS for k in group.kinds]
    assert list(ENTRIES) == [*[i for i in ENTRIES if i in CHECKS], *kinds]
    assert sorted(ENTRIES) == sorted([*CHECKS, *kinds])
    assert not Counter(kinds) - Counter(set(kinds))  # no kind twice
    by_source = Counter(e.source for e in ENTRIES.values())
    assert by_source == {Source.CHECK: len(CHECKS), Source.TELEMETRY: len(TELEMETRY_KINDS),
                         Source.TRAFFIC: len(TRAFFIC_KINDS), Source.SOT: len(SOT_KINDS),
                         Source.BURN_IN: len(BURN_IN_KINDS),
                         Source.SCHEDULER: len(SCHEDULER_KINDS),
                         Source.ACCEPTANCE: len(ACCEPTANCE_KINDS)}


def test_the_kinds_agree_with_the_ids_their_modules_raise() -> None:
    assert {k.id: k.severity for k in TELEMETRY_KINDS} == SEVERITY
    assert sorted(k.id for k in TRAFFIC_KINDS) == sorted(TRAFFIC_CHECKS)
    assert sorted(k.id for k in SOT_KINDS) == sorted(SOT_CHECKS)


def test_where_a_check_is_raised_follows_its_stages() -> None:
    for entry in ENTRIES.values():
        if entry.source is not Source.CHECK:
            assert not entry.stages
            continue
        assert (Place.CHECK in entry.places) is (Stage.STATIC in entry.stages), entry.id
        live = Stage.LIVE in entry.stages
        item = CHECKS[entry.id]
        audit = Place.AUDIT_PHYSICAL if item.physical else Place.AUDIT  # asked for, or always
        assert (audit in entry.places and Place.GATE in entry.places) is live, entry.id
        verify = (Place.VERIFY_LOSSLESS if item.lossless else
                  Place.VERIFY_PHYSICAL if item.physical else Place.VERIFY)
        assert (verify in entry.places) is live, entry.id
    assert ENTRIES["telemetry.silent"].places == (Place.WATCH, Place.GATE_TELEMETRY)
    assert ENTRIES["traffic.class"].places == (Place.VERIFY_TRAFFIC,)
    assert ENTRIES["sot.cabling"].places == (Place.AUDIT_SOT,)
    assert ENTRIES["bgp.session"].description == (
        "Every planned BGP session is Established, in every VRF: a critical finding per "
        "link, raised by flatfab verify, audit and a rollout gate's checks.")


def test_an_id_declared_twice_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    twin = FindingKind("bgp.session", "A twin", Severity.ERROR, Scope.DEVICE,
                       "Reads: x.\nExpects: y.\nFails when: z.\nFix: w.")
    monkeypatch.setattr(catalog, "GROUPS", (Group("Twins", Source.SOT, (Place.AUDIT_SOT,),
                                                  (twin,)),))
    with pytest.raises(catalog.CatalogError, match=r"bgp\.session is declared twice"):
        entries.__wrapped__()


def test_a_kind_without_its_four_parts_is_refused() -> None:
    kind = FindingKind("demo.kind", "A demo", Severity.ERROR, Scope.DEVICE,
                       "Reads: x.\nExpects: y.\nFix: w.")
    with pytest.raises(CatalogDocError, match=r"finding demo\.kind"):
        parse_kind(kind)


@pytest.mark.parametrize(("wanted", "near"), [
    ("bgp.sesion", "bgp.session"), ("BGP.Session", "bgp.session"), ("bgp", "bgp.remote_asn"),
    ("telemetry.pause", "telemetry.pause_storm"), ("traffic.clas", "traffic.class"),
])
def test_the_closest_ids_to_an_unknown_one(wanted: str, near: str) -> None:
    assert near in closest(wanted)
    assert len(closest(wanted)) <= 5
    assert closest("nothing-like-any") == []


def test_the_page_lists_every_id_once_in_the_catalogs_order() -> None:
    page = check_catalog.markdown()
    assert page == check_catalog.markdown()
    entries_on_page = re.findall(r"^### `([^`]+)`", page, flags=re.MULTILINE)
    assert entries_on_page == list(ENTRIES)
    glance = re.findall(r"^\| \[`([^`]+)`\]", page, flags=re.MULTILINE)
    assert glance == list(ENTRIES)
    for label in LABELS:
        assert page.count(f"- **{label}:**") == len(entries_on_page)
    for group in catalog.GROUPS:
        assert f"## {group.heading}\n\nRaised by " in page
