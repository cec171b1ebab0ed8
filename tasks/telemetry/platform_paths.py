"""A platform's gNMI paths, read from `tasks/platforms/<name>/telemetry.yaml`.

Each switch platform's folder says, as data, where its OS keeps every `Metric`: the
subscription paths, the gNMI origin/target, one leaf template per metric (`{port}`, and
`{key}` for a priority or queue index) with the public source it comes from, or an explicit
`none:` with the reason the OS has no such leaf. Buffer watermarks are listed the same way
for the docs (no `Metric` carries them yet). The file is checked here, every problem one
InputError line naming file, key path and reason; what comes out is a `paths.PathTable` the
gNMI subscriber decodes with, plus the sources.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any, Final

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from flatfab.errors import InputError, InputProblem
from flatfab.telemetry import paths
from flatfab.telemetry.paths import Elem, Leaf, PathTable
from flatfab.telemetry.samples import Metric
from flatfab.yamlio import PathPart, format_path, line_of, load_yaml

FILE_NAME: Final = "telemetry.yaml"

# metrics that belong to a priority (PFC, watchdog), a queue or a lane (optical power): their
# leaf needs `{key}`
KEYED: Final = frozenset({Metric.PFC_RX, Metric.PFC_TX, Metric.WATCHDOG, Metric.QUEUE_TX,
                          Metric.QUEUE_DROPS, Metric.QUEUE_ECN, Metric.RX_POWER})
_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")
# what a placeholder stands for when a template is checked: a name with a slash, as real
# port names have ("Ethernet1/1"), so a template that would split it is caught
_SAMPLE_PORT, _SAMPLE_KEY = "Ethernet1/1", 3


class Values(StrEnum):
    """How the target sends a subscribed path's values."""

    SCALAR = "scalar"  # one update per leaf (OpenConfig targets, flatfab's own)
    # one JSON object per subscribed path (a database-backed target's wildcard views): the
    # leaf templates name its members as path elements below the subscribed path
    JSON = "json"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class LeafSpec(_Model):
    """Where one metric lives on the platform, or why nowhere."""

    path: str | None = None
    none: str | None = Field(default=None, min_length=1)  # why the platform has no leaf
    source: str = Field(min_length=1)  # public doc / YANG model / repo file, with version
    verified: bool  # false: not confirmed from the source; `note` says what is missing
    note: str = ""

    @model_validator(mode="after")
    def _one_of(self) -> LeafSpec:
        if (self.path is None) == (self.none is None):
            raise ValueError("give either `path:` (the leaf template) or `none:` (why the "
                             "platform has no such leaf), not both or neither")
        if not self.verified and not self.note and self.path is not None:
            raise ValueError("an unverified path needs a `note:` saying what is unconfirmed")
        return self


class WatermarkSpec(_Model):
    """A buffer high-water mark the platform exports (listed for the docs only)."""

    what: str = Field(min_length=1)
    path: str | None = None
    none: str | None = Field(default=None, min_length=1)
    source: str = Field(min_length=1)
    verified: bool
    note: str = ""

    @model_validator(mode="after")
    def _one_of(self) -> WatermarkSpec:
        if (self.path is None) == (self.none is None):
            raise ValueError("give either `path:` or `none:` (why not), not both or neither")
        return self


class Subscriptions(_Model):
    counters: tuple[str, ...]  # SAMPLE
    state: tuple[str, ...] = ()  # ON_CHANGE


class TelemetryFile(_Model):
    name: str = ""  # the table's name; the platform's name when empty
    description: str = Field(min_length=1)
    origin: str = ""
    target: str = ""
    values: Values = Values.SCALAR
    source: str = Field(min_length=1)  # where the subscription paths and origin/target come from
    subscriptions: Subscriptions
    metrics: dict[Metric, LeafSpec]
    watermarks: tuple[WatermarkSpec, ...] = ()


@dataclass(frozen=True)
class PlatformPaths:
    """A platform's table and what the docs say about it."""

    platform: str
    file: Path
    table: PathTable
    values: Values
    metrics: dict[Metric, LeafSpec]  # every metric, leaf or none, with its source
    watermarks: tuple[WatermarkSpec, ...]

    def missing(self) -> dict[Metric, str]:
        """Metric -> why the platform exports no leaf for it."""
        return {m: s.none for m, s in self.metrics.items() if s.none is not None}

    def unverified(self) -> tuple[Metric, ...]:
        return tuple(m for m, s in self.metrics.items() if s.path is not None and not s.verified)


def covers(request: tuple[Elem, ...], leaf: tuple[Elem, ...]) -> bool:
    """Does a subscription path cover a leaf? `paths.matches`, plus element names with a
    glob (`Ethernet*`), which some targets expand."""
    if paths.matches(request, leaf):
        return True
    if len(request) > len(leaf):
        return False
    for (name, keys), (lname, lkeys) in zip(request, leaf, strict=False):
        if name == "...":
            return True
        if not fnmatch.fnmatchcase(lname, name):
            return False
        have = dict(lkeys)
        if any(v != "*" and have.get(k) != v for k, v in keys):
            return False
    return True


def _template_problem(metric: Metric, template: str) -> str | None:
    """Why a leaf template cannot be used (None when it can)."""
    names = _PLACEHOLDER.findall(template)
    unknown = sorted(set(names) - {"port", "key"})
    if unknown:
        return f"unknown placeholder {{{unknown[0]}}}; a template has {{port}} and {{key}}"
    if names.count("port") != 1:
        return "a leaf template names {port} exactly once"
    keyed = "key" in names
    if keyed != (metric in KEYED) or names.count("key") > 1:
        return (f"{metric.value} is per priority, queue or lane: its template names {{key}} "
                "once" if metric in KEYED else
                f"{metric.value} has no priority, queue or lane: no {{key}}")
    if not template.startswith("/"):
        return "a leaf template starts with /"
    try:
        filled = template.format(port=_SAMPLE_PORT, key=_SAMPLE_KEY)
    except (ValueError, IndexError, KeyError) as exc:  # a lone brace
        return f"not a template: {exc}"
    try:
        canonical = paths.render(paths.parse(filled))
    except paths.PathError as exc:
        return str(exc)
    if canonical != filled:
        # the subscriber matches the canonical spelling (keys sorted, no empty elements)
        return f"not in canonical form: write it as {paths.render(paths.parse(template))!r}"
    return None


def _subscription_problem(path: str) -> str | None:
    try:
        paths.parse(path)
    except paths.PathError as exc:
        return str(exc)
    return None if path.startswith("/") else "a subscription path starts with /"


def load(file: Path, platform: str) -> PlatformPaths:
    """Read and check one platform's telemetry.yaml; InputError names every problem."""
    shown = str(file)
    doc = load_yaml(file, display=shown)
    if not isinstance(doc, dict):
        raise InputError.single(shown, "", "a telemetry file is a mapping with `subscriptions`"
                                " and `metrics`")
    try:
        spec = TelemetryFile.model_validate(doc)
    except ValidationError as exc:
        raise InputError([_problem(shown, doc, tuple(e["loc"]), _reason(e))
                          for e in exc.errors()]) from None
    problems: list[InputProblem] = []

    def problem(parts: tuple[PathPart, ...], reason: str) -> None:
        problems.append(_problem(shown, doc, parts, reason))

    for kind, subs in (("counters", spec.subscriptions.counters),
                       ("state", spec.subscriptions.state)):
        for i, sub in enumerate(subs):
            why = _subscription_problem(sub)
            if why:
                problem(("subscriptions", kind, i), why)
    for metric in Metric:
        if metric not in spec.metrics:
            problem(("metrics",), f"{metric.value} is missing: give its `path:` or `none:` "
                    "with the reason the platform has no such leaf")
    leaves: list[Leaf] = []
    for metric, leaf in spec.metrics.items():
        if leaf.path is None:
            continue
        why = _template_problem(metric, leaf.path)
        if why:
            problem(("metrics", metric.value, "path"), why)
            continue
        # a leaf nothing subscribes to would never arrive: SAMPLE for counters, ON_CHANGE
        # for state
        kind = "state" if metric is Metric.OPER_UP else "counters"
        subs = getattr(spec.subscriptions, kind)
        filled = paths.parse(leaf.path.format(port=_SAMPLE_PORT, key=_SAMPLE_KEY))
        if not any(covers(paths.parse(s), filled) for s in subs if not _subscription_problem(s)):
            problem(("metrics", metric.value, "path"),
                    f"no `subscriptions.{kind}` path covers this leaf")
        leaves.append(Leaf(metric, leaf.path, metric in KEYED))
    if problems:
        raise InputError(problems)
    table = PathTable(spec.name or platform, tuple(leaves), spec.subscriptions.counters,
                      spec.subscriptions.state, origin=spec.origin, target=spec.target)
    return PlatformPaths(platform, file, table, spec.values, dict(spec.metrics),
                         spec.watermarks)


def _problem(file: str, doc: Any, parts: tuple[PathPart, ...], reason: str) -> InputProblem:
    # pydantic marks a bad mapping key with a "[key]" step: the key itself is the place
    parts = tuple(p for p in parts if p != "[key]")
    return InputProblem(file=file, path=format_path(parts), reason=reason,
                        line=line_of(doc, parts))


def _reason(error: Any) -> str:
    kind, loc = error["type"], error["loc"]
    if kind == "extra_forbidden":
        return f"unknown key {loc[-1]!r}"
    if kind == "missing":
        return "required key is missing"
    if kind == "enum" and len(loc) >= 2 and loc[0] == "metrics":
        return f"{error['input']!r} is not a metric ({', '.join(m.value for m in Metric)})"
    message = str(error["msg"])
    return message.removeprefix("Value error, ")


def markdown(found: list[PlatformPaths]) -> str:
    """The per-platform table of the documentation's streaming telemetry page, made from the
    telemetry files at every build of the site (the files are the source of truth)."""
    nic = {m for m in Metric if m.value.startswith("nic_")}
    rows = ["| platform | subscribed (origin / target) | leaves | no leaf | unverified |",
            "| --- | --- | --- | --- | --- |"]
    for p in found:
        t = p.table
        where = " / ".join(x for x in (t.origin, t.target) if x)
        subs = "<br>".join(f"`{s}`" for s in (*t.counter_subscriptions, *t.state_subscriptions))
        if where:
            subs += f" ({where})"
        missing = p.missing()
        # a switch has no NIC counters: said once, not four times per row
        all_nic = nic <= set(missing)
        shown = [m.value for m in missing if not (all_nic and m in nic)]
        shown += ["nic_*"] if all_nic else []
        rows.append(f"| {p.platform} | {subs} | {', '.join(leaf.metric.value for leaf in t.leaves)}"
                    f" | {', '.join(shown) or '-'}"
                    f" | {', '.join(m.value for m in p.unverified()) or '-'} |")
    return "\n".join(rows) + "\n"
