"""The check catalog page: every check, and every finding raised outside the catalog, with
what it reads, expects, when it fails and what an operator does about a finding.

Made from each check's docstring (`flatfab.checks.catalog_doc`) and the `KINDS` of
`flatfab watch`, `verify --traffic` and `audit --sot`.
"""

from __future__ import annotations

from collections.abc import Sequence

from flatfab.checks import CATALOG
from flatfab.checks.base import Check, FindingKind
from flatfab.checks.catalog_doc import AREAS, SCOPES, CheckDoc, area, parse, parse_kind, stages
from flatfab.docsite.markdown import anchor, code, prose, table
from flatfab.sot.audit import KINDS as SOT_KINDS
from flatfab.telemetry.conditions import KINDS as TELEMETRY_KINDS
from flatfab.workflows.traffic import KINDS as TRAFFIC_KINDS

# (heading, where its findings are raised, kinds), after the catalog's own areas
OTHERS: tuple[tuple[str, str, Sequence[FindingKind]], ...] = (
    ("Live telemetry", "`flatfab watch` and a rollout gate's `telemetry:`", TELEMETRY_KINDS),
    ("Traffic", "`flatfab verify --traffic`", TRAFFIC_KINDS),
    ("Source of truth", "`flatfab audit --sot`", SOT_KINDS),
)


def _entry(check_id: str, title: str, tags: str, doc: CheckDoc) -> list[str]:
    return ["", f"### {code(check_id)} {{#{anchor(check_id)}}}", "",
            f"**{prose(title)}.** *{tags}*", "",
            f"- **Reads:** {prose(doc.reads)}",
            f"- **Expects:** {prose(doc.expects)}",
            f"- **Fails when:** {prose(doc.fails_when)}",
            f"- **Fix:** {prose(doc.fix)}"]


def _ordered_areas() -> list[tuple[str, list[Check]]]:
    order = {module: index for index, module in enumerate(AREAS)}
    modules: dict[str, list[Check]] = {}
    for item in CATALOG.values():
        modules.setdefault(item.func.__module__, []).append(item)
    return [(area(module), sorted(modules[module],
                                  key=lambda c: (c.func.__code__.co_firstlineno, c.id)))
            for module in sorted(modules, key=lambda m: (order.get(m, len(order)), m))]


def markdown() -> str:
    """The catalog: a summary table, then one section per area and one entry per check."""
    areas = _ordered_areas()
    rows = [(f"[{code(c.id)}](#{anchor(c.id)})", prose(c.title), c.severity.value, stages(c))
            for _, checks in areas for c in checks]
    rows += [(f"[{code(k.id)}](#{anchor(k.id)})", prose(k.title), k.severity.value, where)
             for _, where, kinds in OTHERS for k in kinds]
    lines = ["## Every check at a glance", "",
             *table(("check", "what it holds", "severity", "runs"), rows)]
    for heading, checks in areas:
        lines += ["", f"## {heading}"]
        for item in checks:
            # host-side: it judges hosts' own state, so it names each unmanaged host not judged
            side = "; host-side" if item.hosts is not None else ""
            tags = f"{stages(item)}; {item.severity.value}; {SCOPES[item.scope]}{side}"
            lines += _entry(item.id, item.title, tags, parse(item))
    for heading, where, kinds in OTHERS:
        lines += ["", f"## {heading}", "", f"Raised by {where}, not by the catalog's run."]
        for kind in kinds:
            tags = f"{kind.severity.value}; {SCOPES[kind.scope]}"
            lines += _entry(kind.id, kind.title, tags, parse_kind(kind))
    return "\n".join(lines) + "\n"
