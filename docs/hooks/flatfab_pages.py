"""mkdocs hooks: the site's generated parts (flatfab.docsite), made from the code at build
time. Hooks rather than a plugin package: mkdocs loads them from this file, with no more
dependencies than mkdocs itself."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

from flatfab.docsite import generators, runbooks

ROOT = Path(__file__).resolve().parents[2]
RUNBOOKS = "Runbooks"


def on_config(config: MkDocsConfig) -> MkDocsConfig:
    """The Runbooks section of the nav lists every procedure, in the index's order."""
    folder = ROOT / "runbooks"
    pages: list[Any] = [{"Overview": "runbooks/index.md"},
                        *(f"runbooks/{name}" for name in runbooks.order(folder)),
                        {"Rollout plans and schedules": f"runbooks/{runbooks.FILES_PAGE}"}]
    for item in config.nav or []:
        if isinstance(item, dict) and RUNBOOKS in item:
            item[RUNBOOKS] = pages
    return config


def on_files(files: Files, config: MkDocsConfig) -> Files:
    """Pages made from files outside docs/: the runbooks and the inventory guide."""
    for path, text in generators.virtual_pages(ROOT).items():
        files.append(File.generated(config, path, content=text))
    return files


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    """A page's `<!-- flatfab:generate NAME -->` markers, filled."""
    try:
        return generators.fill(page.file.src_uri, markdown)
    except generators.UnknownInsertError as exc:
        raise PluginError(str(exc)) from None
