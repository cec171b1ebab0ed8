"""Audit and watch reports: one pure renderer per format, all fed the same AuditReport.

`write_all` writes every format next to each other, each file atomically (a reader such as
node_exporter's textfile collector never sees half a file), and carries the last successful
audit's time over from the previous .prom file when this audit could not run.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from flatfab.atomic import write_atomic
from flatfab.reports import html, json_report, junit, markdown, prometheus
from flatfab.reports.model import AuditReport

FORMATS: dict[str, str] = {"html": ".html", "json": ".json", "junit": ".junit.xml",
                           "markdown": ".md", "prometheus": ".prom"}
_RENDERERS: dict[str, Callable[[AuditReport], str]] = {
    "html": html.render, "json": json_report.render, "junit": junit.render,
    "markdown": markdown.render,
}


def render(report: AuditReport, fmt: str, last_success_epoch: float | None = None) -> str:
    """The report in one format; `last_success_epoch` only matters to prometheus."""
    if fmt == "prometheus":
        return prometheus.render(report, last_success_epoch)
    if fmt not in _RENDERERS:
        raise ValueError(f"unknown report format {fmt!r} (known: {', '.join(sorted(FORMATS))})")
    return _RENDERERS[fmt](report)


def report_path(directory: Path, fabric: str, fmt: str, kind: str = "audit") -> Path:
    """Where write_all puts one format: `flatfab-<audit|watch>-<fabric><suffix>` (a watch's
    reports sit next to the audit's without replacing them)."""
    if not fabric or "/" in fabric or os.sep in fabric or fabric.startswith("."):
        raise ValueError(f"fabric name {fabric!r} cannot be part of a file name")
    return directory / f"flatfab-{kind}-{fabric}{FORMATS[fmt]}"


def _previous_success(path: Path, fabric: str, kind: str) -> float | None:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    return prometheus.previous_success(text, fabric, kind)


def write_all(report: AuditReport, directory: Path) -> dict[str, Path]:
    """Every format into `directory` (created if missing); format -> path written."""
    directory.mkdir(parents=True, exist_ok=True)
    paths = {fmt: report_path(directory, report.fabric, fmt, report.kind)
             for fmt in sorted(FORMATS)}
    last_success = _previous_success(paths["prometheus"], report.fabric, report.kind)
    for fmt, path in paths.items():
        write_atomic(path, render(report, fmt, last_success))
    return paths


__all__ = ["FORMATS", "AuditReport", "render", "report_path", "write_all", "write_atomic"]
