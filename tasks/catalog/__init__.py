"""The one catalog: every finding flatfab can raise, static, live or streamed, by its id.

Each id is declared once, next to the code that raises it, and this package only collects:
- a check (`@check` in `flatfab.checks`): run statically on the plan by `flatfab check`,
  live by `verify`, `audit` and a rollout gate's `checks:`; its docstring says what it
  reads, expects, when it fails and the fix (`flatfab.checks.catalog_doc`);
- a `FindingKind` in the `KINDS` of the module that raises it, outside the checks' run:
  `flatfab.telemetry.conditions` (`watch`, a rollout gate's `telemetry:`),
  `flatfab.workflows.commands.traffic` (`verify --traffic`), `flatfab.workflows.commands.burnin`
  (`verify --burn-in`), `flatfab.sot.audit` (`audit --sot`),
  `flatfab.workflows.commands.scheduler` (`check` and `verify --scheduler`),
  `flatfab.workflows.commands.acceptance` (`accept`).

It sits above every module it collects (only the CLI and the documentation site import
it): `flatfab checks` lists and explains its entries, and the documentation's check catalog
page is made from it. A finding id raised anywhere and missing here fails a test
(tests/catalog/).
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cache
from typing import Any

from flatfab.checks import CATALOG as CHECKS
from flatfab.checks.base import Check, FindingKind, Scope, Severity, Stage
from flatfab.checks.catalog_doc import AREAS, SCOPES, CheckDoc, area, parse, parse_kind
from flatfab.sot import audit as sot_audit
from flatfab.telemetry import conditions
from flatfab.workflows.commands import acceptance, burnin, scheduler, traffic


def _and(words: Sequence[str]) -> str:
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"


class Source(StrEnum):
    """What raises a finding: a check of the catalog's run, or the code of one command."""

    CHECK = "check"  # flatfab.checks: static on the plan and/or live on collected state
    TELEMETRY = "telemetry"  # streamed or polled counters: watch, a rollout gate's telemetry
    TRAFFIC = "traffic"  # flows verify --traffic sends
    BURN_IN = "burn-in"  # links verify --burn-in accepts or rejects
    SOT = "sot"  # the source of truth against the fabric: audit --sot
    SCHEDULER = "scheduler"  # a scheduler's topology in use: check/verify --scheduler
    ACCEPTANCE = "acceptance"  # pairs and collectives flatfab accept measures


class Place(StrEnum):
    """Where an operator meets a finding: the command (or rollout gate) that raises it."""

    CHECK = "check"
    VERIFY = "verify"
    VERIFY_LOSSLESS = "verify --lossless"
    VERIFY_PHYSICAL = "verify --physical"
    VERIFY_TRAFFIC = "verify --traffic"
    VERIFY_BURN_IN = "verify --burn-in"
    AUDIT = "audit"
    AUDIT_PHYSICAL = "audit --physical"
    AUDIT_SOT = "audit --sot"
    CHECK_SCHEDULER = "check --scheduler"
    VERIFY_SCHEDULER = "verify --scheduler"
    ACCEPT = "accept"
    WATCH = "watch"
    GATE = "rollout gate"  # a phase's gate `checks:`
    GATE_TELEMETRY = "rollout gate telemetry"  # a phase's gate `telemetry: checks:`

    @property
    def gate(self) -> bool:
        return self in (Place.GATE, Place.GATE_TELEMETRY)


def raised_by(places: Sequence[Place]) -> str:
    """Places in a sentence: "flatfab verify, audit and a rollout gate's checks"."""
    commands = [place.value for place in places if not place.gate]
    words = [f"flatfab {commands[0]}", *commands[1:]] if commands else []
    words += [f"a rollout gate's {'telemetry' if place is Place.GATE_TELEMETRY else 'checks'}"
              for place in places if place.gate]
    return _and(words)


@dataclass(frozen=True)
class Group:
    """The finding kinds one module declares outside the checks' run, and where they are
    raised."""

    heading: str
    source: Source
    places: tuple[Place, ...]
    kinds: Sequence[FindingKind]


# every declaration of finding kinds outside the checks, in the order the catalog lists them
GROUPS: tuple[Group, ...] = (
    Group("Live telemetry", Source.TELEMETRY, (Place.WATCH, Place.GATE_TELEMETRY),
          conditions.KINDS),
    Group("Traffic", Source.TRAFFIC, (Place.VERIFY_TRAFFIC,), traffic.KINDS),
    Group("Burn-in", Source.BURN_IN, (Place.VERIFY_BURN_IN,), burnin.KINDS),
    Group("Source of truth", Source.SOT, (Place.AUDIT_SOT,), sot_audit.KINDS),
    Group("Scheduler topology", Source.SCHEDULER,
          (Place.CHECK_SCHEDULER, Place.VERIFY_SCHEDULER), scheduler.KINDS),
    Group("Acceptance runs", Source.ACCEPTANCE, (Place.ACCEPT,), acceptance.KINDS),
)


@dataclass(frozen=True)
class Entry:
    """One finding id: what it holds, how bad a finding is, where it is raised, and its four
    documented parts."""

    id: str
    title: str  # the invariant it holds, one line
    severity: Severity  # of its findings, unless one says otherwise (a not-judged one)
    scope: Scope
    source: Source
    area: str  # the heading it is listed under
    places: tuple[Place, ...]
    doc: CheckDoc = field(repr=False)
    stages: frozenset[Stage] = frozenset()  # a check's; empty for the others
    host_side: bool = False  # a check that judges hosts' own state

    @property
    def reads(self) -> str:
        return self.doc.reads

    @property
    def expects(self) -> str:
        return self.doc.expects

    @property
    def fails_when(self) -> str:
        return self.doc.fails_when

    @property
    def fix(self) -> str:
        return self.doc.fix

    @property
    def where(self) -> str:
        """Where it is raised, short: "check, verify, audit, rollout gate"."""
        return ", ".join(place.value for place in self.places)

    @property
    def facts(self) -> str:
        """How bad a finding is, on what, and who raises it: "an error finding per link,
        raised by flatfab audit --sot"."""
        article = "an" if self.severity.value[0] in "aeiou" else "a"
        side = " (hosts' own state too)" if self.host_side else ""
        return (f"{article} {self.severity.value} finding {SCOPES[self.scope]}{side}, raised "
                f"by {raised_by(self.places)}")

    @property
    def description(self) -> str:
        """One sentence: what it holds, then its facts."""
        return f"{self.title}: {self.facts}."

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "title": self.title, "severity": self.severity.value,
                "scope": self.scope.value, "source": self.source.value, "area": self.area,
                "raised_by": [place.value for place in self.places],
                "stages": [stage.value for stage in Stage if stage in self.stages],
                "host_side": self.host_side, "description": self.description,
                "reads": self.reads, "expects": self.expects, "fails_when": self.fails_when,
                "fix": self.fix}


def _places(item: Check) -> tuple[Place, ...]:
    places = [Place.CHECK] if Stage.STATIC in item.stages else []
    if Stage.LIVE in item.stages:
        verify = (Place.VERIFY_LOSSLESS if item.lossless else
                  Place.VERIFY_PHYSICAL if item.physical else Place.VERIFY)
        audit = Place.AUDIT_PHYSICAL if item.physical else Place.AUDIT
        places += [verify, audit, Place.GATE]
    return tuple(places)


def _check_entry(item: Check) -> Entry:
    return Entry(id=item.id, title=item.title, severity=item.severity, scope=item.scope,
                 source=Source.CHECK, area=area(item.func.__module__), places=_places(item),
                 doc=parse(item), stages=item.stages, host_side=item.hosts is not None)


def _ordered_checks() -> list[Check]:
    """The checks by area (AREAS' order, then any other module by name), each area's in the
    order its module defines them."""
    order = {module: index for index, module in enumerate(AREAS)}
    return sorted(CHECKS.values(), key=lambda c: (
        order.get(c.func.__module__, len(order)), c.func.__module__,
        c.func.__code__.co_firstlineno, c.id))


class CatalogError(ValueError):
    """Two declarations of one finding id."""


@cache
def entries() -> dict[str, Entry]:
    """Every finding id flatfab can raise, in the catalog's order: the checks by area, then
    each group of kinds raised outside them."""
    found: dict[str, Entry] = {item.id: _check_entry(item) for item in _ordered_checks()}
    for group in GROUPS:
        for kind in group.kinds:
            if kind.id in found:
                raise CatalogError(f"finding {kind.id} is declared twice (a check, or another "
                                   "kind, has its id)")
            found[kind.id] = Entry(id=kind.id, title=kind.title, severity=kind.severity,
                                   scope=kind.scope, source=group.source, area=group.heading,
                                   places=group.places, doc=parse_kind(kind))
    return found


def closest(wanted: str, limit: int = 5) -> list[str]:
    """The catalog's ids nearest `wanted`: those it begins (`bgp` -> bgp.*), then the most
    alike."""
    ids = list(entries())
    text = wanted.strip().lower()
    head = text.rstrip(".")
    begun = [i for i in ids if head and (i.startswith(f"{head}.") or i.startswith(text))]
    alike = difflib.get_close_matches(text, ids, n=limit, cutoff=0.6)
    return list(dict.fromkeys([*alike, *begun]))[:limit]
