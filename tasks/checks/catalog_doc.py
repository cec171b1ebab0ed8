"""The check catalog as Markdown, generated from each check's docstring.

A check's docstring has three labelled parts, in this order: `Reads:` (the state it looks at),
`Expects:` (the invariant) and `Fails when:` (what makes a finding, and what it leaves
unjudged). The README's catalog section, between the two marker comments, is this module's
output:

    python -m flatfab.checks.catalog_doc --write README.md   # rewrite the section in place
    python -m flatfab.checks.catalog_doc --check README.md   # exit 1 if it is stale
    python -m flatfab.checks.catalog_doc                     # print the section
"""

from __future__ import annotations

import argparse
import inspect
import re
import sys
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from flatfab.checks import CATALOG
from flatfab.checks.base import Check, Scope, Stage

LABELS = ("Reads", "Expects", "Fails when")
START = "<!-- check-catalog:start -->"
END = "<!-- check-catalog:end -->"
REGENERATE = "python -m flatfab.checks.catalog_doc --write README.md"
WIDTH = 100

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
}

INTRO = (
    "Every check below runs statically on the plan (`flatfab check`, before anything is "
    "pushed), live on what the devices report (`flatfab verify`, `audit`, rollout gates), or "
    "both. The lossless checks run live with `verify --lossless` and in `audit`. A critical, "
    "error or warning finding makes `check` and `verify` exit 1; an info finding never does, "
    "nor does a not-judged one, which says what a check could not judge and why. A check "
    "marked *host-side* reads hosts' own state: live, it reports every unmanaged host "
    "(hosts.yaml `managed: false`) it would judge as not judged. "
    "This section is generated from each check's docstring (Reads, Expects, Fails when): "
    f"edit those, then run `{REGENERATE}` (part of `make golden`)."
)

_LABEL = re.compile(r"^(Reads|Expects|Fails when):", re.MULTILINE)
# a wrapped line must not start with what Markdown reads as a block: a quote, heading, list
# item or thematic break
_UNBREAKABLE = re.compile(r" (?=[>#*+=-]|\d+[.)](?:\s|$))")
_CODE = re.compile(r"`[^`]*`")
_SCOPES = {Scope.DEVICE: "per device", Scope.LINK: "per link", Scope.PATH: "per path",
           Scope.FABRIC: "fabric-wide"}


class CatalogDocError(ValueError):
    """A check whose docstring lacks a labelled part, or a file without the markers."""


@dataclass(frozen=True)
class CheckDoc:
    reads: str
    expects: str
    fails_when: str


def parse(item: Check) -> CheckDoc:
    """The three labelled parts of a check's docstring, each as one line of text."""
    where = f"check {item.id} ({item.func.__module__}.{item.func.__qualname__})"
    need = ", ".join(f"{label}:" for label in LABELS)
    doc = inspect.cleandoc(item.func.__doc__ or "")
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
        text = " ".join(doc[here.end():after.start() if after else len(doc)].split())
        if not text:
            raise CatalogDocError(f"{where}: its docstring's {here.group(1)}: is empty")
        parts.append(text)
    return CheckDoc(*parts)


def _area(module: str) -> str:
    if module in AREAS:
        return AREAS[module]
    name = module.removeprefix("flatfab.checks.")
    head, _, tail = name.rpartition(".")
    return f"{head.capitalize()}: {tail}" if head else name.capitalize()


def _wrap(text: str, first: str, rest: str) -> list[str]:
    """Lines of at most WIDTH characters, never breaking inside a code span."""
    protected = _CODE.sub(lambda m: m.group(0).replace(" ", "\0"), text)
    protected = _UNBREAKABLE.sub("\0", protected)
    lines = textwrap.wrap(protected, width=WIDTH, initial_indent=first, subsequent_indent=rest,
                          break_long_words=False, break_on_hyphens=False)
    return [line.replace("\0", " ") for line in lines]


def _stages(item: Check) -> str:
    return ", ".join(stage.value for stage in Stage if stage in item.stages)


def render(catalog: Mapping[str, Check] = CATALOG) -> str:
    """The catalog section, markers included; the same text for the same catalog."""
    order = {module: index for index, module in enumerate(AREAS)}
    areas: dict[str, list[Check]] = {}
    for item in catalog.values():
        areas.setdefault(item.func.__module__, []).append(item)
    lines = [START, "", "## Check catalog", "", *_wrap(INTRO, "", "")]
    for module in sorted(areas, key=lambda m: (order.get(m, len(order)), m)):
        lines += ["", f"### {_area(module)}", ""]
        # in the order of the module's source, which groups related checks
        for item in sorted(areas[module], key=lambda c: (c.func.__code__.co_firstlineno, c.id)):
            doc = parse(item)
            side = "; host-side" if item.hosts is not None else ""
            head = (f"**`{item.id}`** ({_stages(item)}; {item.severity.value}; "
                    f"{_SCOPES[item.scope]}{side}): {item.title}.")
            lines += _wrap(head, "- ", "  ")
            for label, text in zip(LABELS, (doc.reads, doc.expects, doc.fails_when),
                                   strict=True):
                lines += _wrap(f"*{label}:* {text}", "  - ", "    ")
    return "\n".join([*lines, "", END])


def replace_section(text: str, section: str, path: str = "README.md") -> str:
    """`text` with everything from the start marker to the end marker replaced by `section`."""
    start, end = text.find(START), text.find(END)
    if start < 0 or end < start or text.count(START) != 1 or text.count(END) != 1:
        raise CatalogDocError(f"{path}: needs exactly one {START} followed by one {END}")
    return text[:start] + section + text[end + len(END):]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m flatfab.checks.catalog_doc",
                                     description="The check catalog as Markdown.")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--write", metavar="FILE", help="rewrite FILE's catalog section")
    mode.add_argument("--check", metavar="FILE", help="exit 1 if FILE's section is stale")
    args = parser.parse_args(argv)
    try:
        section = render()
        if args.write is None and args.check is None:
            print(section)
            return 0
        path = Path(args.write or args.check)
        text = path.read_text(encoding="utf-8")
        wanted = replace_section(text, section, str(path))
    except (CatalogDocError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.check is not None:
        if wanted != text:
            print(f"{path}: the check catalog is stale; run `{REGENERATE}`", file=sys.stderr)
            return 1
        return 0
    if wanted != text:
        path.write_text(wanted, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
