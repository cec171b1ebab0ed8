"""The documentation site builds strictly, offline, with every generated part in it.

The build is `mkdocs build --strict` into a temporary folder, as `make docs` runs it: any
warning (a broken link or anchor, a page the nav lacks, a marker naming no generated part)
fails it. The generated pages are fresh by construction: made from the code at each build.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from flatfab.catalog import entries
from flatfab.docsite import generators, intent_reference
from flatfab.docsite.markdown import anchor, cell, lists_after_paragraphs, prose
from flatfab.intent.loader import INTENT_FILES
from flatfab.platforms.registry import PLATFORMS
from tests.support.paths import ROOT

DOCS = ROOT / "docs"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir",
                           str(out)], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300, check=False)
    log = done.stdout + done.stderr
    assert done.returncode == 0, log
    warnings = [line for line in log.splitlines() if re.match(r"\s*(WARNING|ERROR)\b", line)]
    assert not warnings, "\n".join(warnings)
    return out


def _text(page: Path) -> str:
    return page.read_text(encoding="utf-8")


def test_the_reference_pages_hold_what_the_code_holds(site: Path) -> None:
    checks = _text(site / "reference" / "checks.html")
    for finding_id in entries():  # the one catalog: checks, telemetry, traffic, sot
        assert f'id="{anchor(finding_id)}"' in checks, finding_id
    platforms = _text(site / "reference" / "platforms.html")
    assert all(f'id="{anchor(name)}"' in platforms for name in PLATFORMS)
    cli = _text(site / "reference" / "cli.html")
    for command in ("flatfab-rollout", "flatfab-verify", "flatfab-checks", "flatfab-lab-up",
                    "flatfab-sot-sync"):
        assert f'id="{command}"' in cli
    assert "--dry-run" in cli and "--gate-timeout" in cli
    intent = _text(site / "reference" / "intent.html")
    assert all(f'id="{stem}-yaml"' in intent for stem in INTENT_FILES)
    telemetry = _text(site / "operations" / "telemetry.html")
    assert "flatfab:generate" not in telemetry and "pfc_watchdog_storms" in telemetry


def test_the_runbooks_are_pages_and_their_files_one_more(site: Path) -> None:
    for procedure in (ROOT / "runbooks").glob("*.md"):
        name = "index" if procedure.name == "README.md" else procedure.stem
        assert (site / "runbooks" / f"{name}.html").is_file(), procedure.name
    files = _text(site / "runbooks" / "files.html")
    assert 'id="first-bring-up-yaml"' in files and 'id="schedule-flatfab-audit-timer"' in files
    index = _text(site / "runbooks" / "index.html")
    assert 'href="files.html#first-bring-up-yaml"' in index


def test_the_site_fetches_nothing(site: Path) -> None:
    """No font, script or stylesheet from another host: it reads offline, as built."""
    found = []
    for page in site.rglob("*.html"):
        for url in re.findall(r'(?:src|href)="(https?://[^"]+)"', _text(page)):
            found.append(f"{page.relative_to(site)}: {url}")
    assert not found, "\n".join(found[:20])
    assert "fonts.googleapis" not in "".join(_text(p) for p in site.rglob("*.html"))


def test_every_intent_key_says_what_it_is() -> None:
    """The intent reference shows each key's description: none may be missing."""
    found = intent_reference.sections()
    missing = [f"{s.model.__module__}.{s.model.__name__}.{name}" for s in found
               for name, info in s.model.model_fields.items()
               if not (info.description or "").strip()]
    assert len(found) > 20
    assert not missing, "add Field(description=...): " + ", ".join(missing)


def test_every_generated_part_is_asked_for_once_and_every_marker_is_known() -> None:
    asked: dict[str, list[str]] = {}
    for page in DOCS.rglob("*.md"):
        for name in generators.MARKER.findall(_text(page)):
            asked.setdefault(name, []).append(str(page.relative_to(ROOT)))
    assert sorted(asked) == sorted(generators.INSERTS)
    assert all(len(pages) == 1 for pages in asked.values()), asked


def test_a_marker_naming_no_generated_part_fails_the_page() -> None:
    with pytest.raises(generators.UnknownInsertError, match="no-such-part"):
        generators.fill("x.md", "# x\n\n<!-- flatfab:generate no-such-part -->\n")


def test_lists_read_as_github_reads_them() -> None:
    text = "Steps:\n- one\n- two\n\n```sh\nrun:\n- not a list\n```\n  - nested\n"
    assert lists_after_paragraphs(text) == (
        "Steps:\n\n- one\n- two\n\n```sh\nrun:\n- not a list\n```\n  - nested\n")


def test_text_from_the_code_stays_text() -> None:
    assert prose("intents/<fabric>/ `a <b>` runbooks/*.yaml") == \
        "intents/&lt;fabric&gt;/ `a <b>` runbooks/\\*.yaml"
    assert cell("a | b `c | d`\nnext") == "a \\| b `c | d` next"


def test_readme_is_the_front_page() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    lines = readme.splitlines()
    assert len(lines) < 200
    assert "make demo" in readme and "make test" in readme
    for link in re.findall(r"\]\(([^)#]+)", readme):
        assert (ROOT / link).exists(), link


def test_the_developers_picture_draws_every_layer_in_the_enforced_order(site: Path) -> None:
    """The layers picture is made from the declaration the layering tests enforce: every
    layer, top one first, the workflows' groups inside their band; the house page shows it."""
    from tests.conformance import layers  # noqa: PLC0415

    picture = _text(site / "development" / "layers.svg")
    labels = re.findall(r'font-weight="bold"[^>]*>([^<]+)</text>', picture)
    expected = [parts[0] if len(parts) == 1 else "top-level modules"
                for parts, _ in reversed(layers.LAYERS)]
    assert labels == expected
    groups = re.findall(r'font-family="monospace" font-size="13" fill="[^"]+" '
                        r'dominant-baseline="middle">([a-z]+)/</text>', picture)
    assert groups == [name for name, _ in reversed(layers.WORKFLOWS)]
    assert 'src="layers.svg"' in _text(site / "development" / "index.html")
    assert generators.layers_svg(ROOT) == picture  # deterministic: the same text twice
