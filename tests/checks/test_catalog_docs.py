"""The check catalog documents itself: every check's docstring says what it reads, what it
expects, when it fails and what an operator does about a finding, and so does every finding
raised outside the catalog (watch, verify --traffic, audit --sot). The documentation's
catalog page is made from them at build time (tests/docs/ builds it)."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from flatfab.checks import CATALOG
from flatfab.checks.base import Check, CheckContext, CheckFunc, Finding, Scope, Severity, Stage
from flatfab.checks.catalog_doc import LABELS, CatalogDocError, parse, parse_kind
from flatfab.docsite import check_catalog
from flatfab.sot.audit import KINDS as SOT_KINDS
from flatfab.sot.audit import SOT_CHECKS
from flatfab.telemetry.conditions import KINDS as TELEMETRY_KINDS
from flatfab.telemetry.conditions import SEVERITY
from flatfab.workflows.traffic import KINDS as TRAFFIC_KINDS
from flatfab.workflows.traffic import TRAFFIC_CHECKS

OTHER_KINDS = (*TELEMETRY_KINDS, *TRAFFIC_KINDS, *SOT_KINDS)


@pytest.mark.parametrize("check_id", sorted(CATALOG))
def test_every_check_says_what_it_reads_expects_when_it_fails_and_the_fix(
        check_id: str) -> None:
    doc = parse(CATALOG[check_id])
    assert doc.reads and doc.expects and doc.fails_when and doc.fix


@pytest.mark.parametrize("kind", OTHER_KINDS, ids=lambda k: k.id)
def test_every_finding_outside_the_catalog_is_documented_alike(kind: object) -> None:
    doc = parse_kind(kind)  # type: ignore[arg-type]
    assert doc.reads and doc.expects and doc.fails_when and doc.fix


def test_every_finding_id_outside_the_catalog_has_a_kind() -> None:
    assert sorted(k.id for k in TELEMETRY_KINDS) == sorted(SEVERITY)
    assert {k.id: k.severity for k in TELEMETRY_KINDS} == SEVERITY
    assert sorted(k.id for k in TRAFFIC_KINDS) == sorted(TRAFFIC_CHECKS)
    assert sorted(k.id for k in SOT_KINDS) == sorted(SOT_CHECKS)
    assert not {k.id for k in OTHER_KINDS} & set(CATALOG)


def test_the_page_lists_every_check_and_finding_once_in_a_stable_order() -> None:
    page = check_catalog.markdown()
    assert page == check_catalog.markdown()
    entries = re.findall(r"^### `([^`]+)`", page, flags=re.MULTILINE)
    assert sorted(entries) == sorted([*CATALOG, *(k.id for k in OTHER_KINDS)])
    for label in LABELS:
        assert page.count(f"- **{label}:**") == len(entries)


def _check(func: CheckFunc) -> Check:
    return Check(id="demo.check", title="A demo", scope=Scope.DEVICE, severity=Severity.ERROR,
                 stages=frozenset({Stage.STATIC}), func=func)


@pytest.mark.parametrize(("doc", "problem"), [
    (None, "has no docstring"),
    ("Reads: the plan.\nExpects: x.\nFails when: never.",
     "it needs Reads:, Expects:, Fails when:, Fix:"),
    ("Expects: x.\nReads: y.\nFails when: z.\nFix: w.", "in that order"),
    ("Checks x.\nReads: y.\nExpects: x.\nFails when: z.\nFix: w.", "text before Reads:"),
    ("Reads: y.\nExpects:\nFails when: z.\nFix: w.", "Expects: is empty"),
    ("Reads: y.\nExpects: x.\nFails when: z.\nFix:", "Fix: is empty"),
])
def test_a_docstring_without_its_four_parts_is_refused(doc: str | None, problem: str) -> None:
    def func(item: Check, ctx: CheckContext) -> Iterator[Finding]:
        return iter(())

    func.__doc__ = doc
    with pytest.raises(CatalogDocError, match=re.escape(problem)) as caught:
        parse(_check(func))
    assert "demo.check" in str(caught.value)
