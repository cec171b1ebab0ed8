"""The check catalog documents itself: every check's docstring says what it reads, what it
expects, when it fails and what an operator does about a finding. The one catalog of every
finding (tests/catalog/) and the documentation's catalog page are made from them."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from flatfab.checks import CATALOG
from flatfab.checks.base import Check, CheckContext, CheckFunc, Finding, Scope, Severity, Stage
from flatfab.checks.catalog_doc import CatalogDocError, parse


@pytest.mark.parametrize("check_id", sorted(CATALOG))
def test_every_check_says_what_it_reads_expects_when_it_fails_and_the_fix(
        check_id: str) -> None:
    doc = parse(CATALOG[check_id])
    assert doc.reads and doc.expects and doc.fails_when and doc.fix


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
