"""The check catalog documents itself: every check's docstring says what it reads, what it
expects and when it fails, and the README's catalog section is generated from them."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from flatfab.checks import CATALOG
from flatfab.checks.base import Check, CheckContext, CheckFunc, Finding, Scope, Severity, Stage
from flatfab.checks.catalog_doc import (
    END,
    REGENERATE,
    START,
    WIDTH,
    CatalogDocError,
    main,
    parse,
    render,
    replace_section,
)
from tests.support.paths import ROOT

README = ROOT / "README.md"


@pytest.mark.parametrize("check_id", sorted(CATALOG))
def test_every_check_says_what_it_reads_expects_and_when_it_fails(check_id: str) -> None:
    doc = parse(CATALOG[check_id])
    assert doc.reads and doc.expects and doc.fails_when


def test_the_readme_section_is_generated_from_the_docstrings() -> None:
    text = README.read_text(encoding="utf-8")
    assert text.count(START) == 1 and text.count(END) == 1, f"README.md needs {START} ... {END}"
    section = text[text.index(START):text.index(END) + len(END)]
    assert section == render(), (
        f"README.md's check catalog is stale (a check or its docstring changed): run "
        f"`{REGENERATE}` (or `make golden`)")


def test_the_section_is_deterministic_and_fits_the_line_length() -> None:
    section = render()
    assert section == render()
    assert all(len(line) <= WIDTH for line in section.splitlines())
    ids = re.findall(r"^- \*\*`([^`]+)`\*\*", section, flags=re.MULTILINE)
    assert sorted(ids) == sorted(CATALOG)


def _undocumented(item: Check, ctx: CheckContext) -> Iterator[Finding]:
    """Reads: the plan.
    Fails when: never."""
    return iter(())


def _check(func: CheckFunc) -> Check:
    return Check(id="demo.check", title="A demo", scope=Scope.DEVICE, severity=Severity.ERROR,
                 stages=frozenset({Stage.STATIC}), func=func)


@pytest.mark.parametrize(("doc", "problem"), [
    (None, "has no docstring"),
    ("Reads: the plan.\nFails when: never.", "it needs Reads:, Expects:, Fails when:"),
    ("Expects: x.\nReads: y.\nFails when: z.", "in that order"),
    ("Checks x.\nReads: y.\nExpects: x.\nFails when: z.", "text before Reads:"),
    ("Reads: y.\nExpects:\nFails when: z.", "Expects: is empty"),
])
def test_a_docstring_without_its_three_parts_is_refused(doc: str | None, problem: str) -> None:
    def func(item: Check, ctx: CheckContext) -> Iterator[Finding]:
        return iter(())

    func.__doc__ = doc
    with pytest.raises(CatalogDocError, match=re.escape(problem)) as caught:
        parse(_check(func))
    assert "demo.check" in str(caught.value)


def test_render_names_the_check_without_its_parts() -> None:
    with pytest.raises(CatalogDocError, match=re.escape("demo.check")):
        render({"demo.check": _check(_undocumented)})


def test_check_and_write_modes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    readme = tmp_path / "README.md"
    readme.write_text(f"# title\n\n{START}\nold\n{END}\n\nafter\n", encoding="utf-8")
    assert main(["--check", str(readme)]) == 1
    assert REGENERATE in capsys.readouterr().err
    assert main(["--write", str(readme)]) == 0
    assert readme.read_text(encoding="utf-8") == f"# title\n\n{render()}\n\nafter\n"
    assert main(["--check", str(readme)]) == 0
    readme.write_text("# no markers\n", encoding="utf-8")
    assert main(["--check", str(readme)]) == 2
    assert START in capsys.readouterr().err


def test_replace_section_refuses_a_file_without_one_pair_of_markers() -> None:
    with pytest.raises(CatalogDocError):
        replace_section(f"{END}\n{START}\n", "x")
    with pytest.raises(CatalogDocError):
        replace_section(f"{START}\n{START}\n{END}\n", "x")
