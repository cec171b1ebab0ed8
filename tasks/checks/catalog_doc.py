"""What each check (and each finding raised outside the catalog) documents about itself.

A check's docstring has four labelled parts, in this order: `Reads:` (the state it looks
at), `Expects:` (the invariant), `Fails when:` (what makes a finding, and what it leaves
unjudged) and `Fix:` (what an operator does about a finding). A `FindingKind` (the findings
of `flatfab watch`, `verify --traffic` and `audit --sot`) carries the same four parts. The
one catalog of every finding (flatfab.catalog) is made from them, and from it `flatfab
checks` and the documentation site's check catalog; a test fails while a check lacks one.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass

from flatfab.checks.base import Check, FindingKind, Scope, Stage

LABELS = ("Reads", "Expects", "Fails when", "Fix")

# module -> heading, in the order the catalog lists them; a module not named here gets a
# heading from its own name, after these
AREAS: dict[str, str] = {
    "flatfab.checks.interfaces": "Devices, interfaces and cabling",
    "flatfab.checks.underlay": "eBGP underlay",
    "flatfab.checks.tenancy": "Tenants",
    "flatfab.checks.topology": "AI back-end topology",
    "flatfab.checks.lossless.classification": "Lossless: classification",
    "flatfab.checks.lossless.pfc": "Lossless: PFC",
    "flatfab.checks.lossless.ecn": "Lossless: ECN",
    "flatfab.checks.lossless.buffers": "Lossless: buffers",
    "flatfab.checks.lossless.scheduling": "Lossless: scheduling",
    "flatfab.checks.lossless.mtu": "Lossless: MTU",
    "flatfab.checks.lossless.hosts": "Lossless: host NICs",
    "flatfab.checks.lossless.capacity": "Lossless: capacity",
    "flatfab.checks.lossless.unread": "Lossless: what was not read",
    "flatfab.checks.physical": "Physical layer",
    "flatfab.checks.rdma": "GPU servers: NCCL and RDMA",
}

_LABEL = re.compile(r"^(Reads|Expects|Fails when|Fix):", re.MULTILINE)
SCOPES = {Scope.DEVICE: "per device", Scope.LINK: "per link", Scope.PATH: "per path",
          Scope.FABRIC: "fabric-wide"}


class CatalogDocError(ValueError):
    """A check (or finding kind) whose documentation lacks a labelled part."""


@dataclass(frozen=True)
class CheckDoc:
    reads: str
    expects: str
    fails_when: str
    fix: str


def parse_text(where: str, text: str | None) -> CheckDoc:
    """The four labelled parts of a check's documentation, each as one line of text."""
    need = ", ".join(f"{label}:" for label in LABELS)
    doc = inspect.cleandoc(text or "")
    if not doc:
        raise CatalogDocError(f"{where} has no docstring: it needs {need}")
    found = list(_LABEL.finditer(doc))
    labels = tuple(m.group(1) for m in found)
    if labels != LABELS:
        have = ", ".join(f"{label}:" for label in labels) or "none of them"
        raise CatalogDocError(f"{where}: its docstring has {have}; it needs {need}, in that "
                              "order, each once at the start of a line")
    if doc[:found[0].start()].strip():
        raise CatalogDocError(f"{where}: its docstring has text before Reads:")
    parts = []
    for here, after in zip(found, [*found[1:], None], strict=True):
        body = " ".join(doc[here.end():after.start() if after else len(doc)].split())
        if not body:
            raise CatalogDocError(f"{where}: its docstring's {here.group(1)}: is empty")
        parts.append(body)
    return CheckDoc(*parts)


def parse(item: Check) -> CheckDoc:
    """The labelled parts of a check's docstring."""
    return parse_text(f"check {item.id} ({item.func.__module__}.{item.func.__qualname__})",
                      item.func.__doc__)


def parse_kind(kind: FindingKind) -> CheckDoc:
    """The labelled parts of a finding kind's documentation."""
    return parse_text(f"finding {kind.id}", kind.doc)


def area(module: str) -> str:
    """The catalog heading of a check module."""
    if module in AREAS:
        return AREAS[module]
    name = module.removeprefix("flatfab.checks.")
    head, _, tail = name.rpartition(".")
    return f"{head.capitalize()}: {tail}" if head else name.capitalize()


def stages(item: Check) -> str:
    """Where a check runs: "static", "live" or both."""
    return ", ".join(stage.value for stage in Stage if stage in item.stages)
