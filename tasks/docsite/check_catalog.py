"""The check catalog page: every finding flatfab can raise (each check, and each finding
raised outside the checks' run), with what it reads, expects, when it fails and what an
operator does about a finding.

Made from the one catalog (`flatfab.catalog`), as `flatfab checks` lists it.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import groupby

from flatfab.catalog import Entry, Place, Source, entries
from flatfab.checks.base import Stage
from flatfab.checks.catalog_doc import SCOPES
from flatfab.docsite.markdown import anchor, code, prose, table


def _place(place: Place) -> str:
    if place is Place.GATE:
        return "a rollout gate's `checks:`"
    if place is Place.GATE_TELEMETRY:
        return "a rollout gate's `telemetry:`"
    return code(f"flatfab {place.value}")


def _places(places: Sequence[Place]) -> str:
    """"`flatfab watch` and a rollout gate's `telemetry:`"."""
    words = [_place(place) for place in places]
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"


def _stages(entry: Entry) -> str:
    return ", ".join(stage.value for stage in Stage if stage in entry.stages)


def _runs(entry: Entry) -> str:
    """A check's stages ("static, live"); for any other finding, where it is raised."""
    return _stages(entry) if entry.source is Source.CHECK else _places(entry.places)


def _tags(entry: Entry) -> str:
    scope = f"{entry.severity.value}; {SCOPES[entry.scope]}"
    if entry.source is not Source.CHECK:
        return scope
    # host-side: it judges hosts' own state, so it names each unmanaged host not judged
    return f"{_stages(entry)}; {scope}{'; host-side' if entry.host_side else ''}"


def _entry(entry: Entry) -> list[str]:
    return ["", f"### {code(entry.id)} {{#{anchor(entry.id)}}}", "",
            f"**{prose(entry.title)}.** *{_tags(entry)}*", "",
            f"- **Reads:** {prose(entry.reads)}",
            f"- **Expects:** {prose(entry.expects)}",
            f"- **Fails when:** {prose(entry.fails_when)}",
            f"- **Fix:** {prose(entry.fix)}"]


def markdown() -> str:
    """The catalog: a summary table, then one section per area and one entry per id."""
    found = list(entries().values())
    rows = [(f"[{code(e.id)}](#{anchor(e.id)})", prose(e.title), e.severity.value, _runs(e))
            for e in found]
    lines = ["## Every check at a glance", "",
             *table(("check", "what it holds", "severity", "runs"), rows)]
    for heading, of_area in groupby(found, key=lambda e: e.area):
        listed = list(of_area)
        lines += ["", f"## {heading}"]
        if listed[0].source is not Source.CHECK:
            lines += ["", f"Raised by {_places(listed[0].places)}, not by the catalog's run."]
        for entry in listed:
            lines += _entry(entry)
    return "\n".join(lines) + "\n"
