"""What flatfab's gNMI target implements, and how a requested path is judged against it.

A target serves schema trees, each under an `origin`; a request's path is resolved to one
tree, checked for syntax and for whether the target implements it, and the leaves it covers
are then the served leaves its pattern matches. Pure data and functions (no gRPC): the
target (`gnmi_target`) turns a `GnmiError` into the gRPC status it names.

Sources (openconfig/reference, read 2026-11-29):
- rpc/gnmi/gnmi-specification.md 2.2.2 (paths; `target` only in a prefix, 2.2.2.1),
  2.6 (`use_models`: elements outside the models named MUST NOT be used), 3.3.4 and 3.5.2.4
  (the GetResponse / SubscribeResponse behaviour tables: a syntactically wrong path is
  INVALID_ARGUMENT, a path the target does not implement UNIMPLEMENTED, a path that does not
  exist (yet) NOT_FOUND for Get and "nothing sent, RPC kept" for a STREAM).
- rpc/gnmi/gnmi-path-conventions.md: a path selects its node and every descendant; `*` as a
  name is one level of any name, `*` as a key value (or a key left out) any entry, `...` any
  number of levels (XPath's `//`, so none too).
- rpc/gnmi/mixed-schema.md: an unset origin is `openconfig`; one request MUST NOT set an
  origin in both its prefix and its path.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Final

from flatfab.telemetry import paths
from flatfab.telemetry.paths import Elem

OPENCONFIG: Final = "openconfig"
FLATFAB: Final = "flatfab"  # the origin of flatfab's own models (no OpenConfig leaf exists)

# gRPC status names (grpc.StatusCode members), kept as text: this module imports no gRPC
INVALID_ARGUMENT: Final = "INVALID_ARGUMENT"
NOT_FOUND: Final = "NOT_FOUND"
UNIMPLEMENTED: Final = "UNIMPLEMENTED"


class GnmiError(Exception):
    """A request the target refuses: `code` is the gRPC status, the text says why."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True, slots=True)
class Model:
    """One served model: its catalogue identity (`ModelData`), its origin and the root
    elements of the data tree it defines."""

    name: str
    organization: str
    version: str
    origin: str
    roots: tuple[str, ...]


MODELS: Final = (
    Model("openconfig-interfaces", "OpenConfig working group", "3.x", OPENCONFIG,
          ("interfaces",)),
    Model("openconfig-qos", "OpenConfig working group", "2.0.1", OPENCONFIG, ("qos",)),
    # the transceiver component's FEC and pre-FEC BER: its model augments the platform's,
    # which defines the root (named last: a JSON IETF tree is qualified with its module)
    Model("openconfig-platform-transceiver", "OpenConfig working group", "0.8.0", OPENCONFIG,
          ("components",)),
    Model("openconfig-platform", "OpenConfig working group", "0.x", OPENCONFIG,
          ("components",)),
    Model("flatfab-qos", "flatfab", "0.1.0", FLATFAB, ("flatfab-qos",)),
    Model("flatfab-nic", "flatfab", "0.1.0", FLATFAB, ("flatfab-nic",)),
    Model("flatfab-phy", "flatfab", "0.1.0", FLATFAB, ("flatfab-phy",)),
)


def _shape(elems: tuple[Elem, ...]) -> tuple[tuple[str, frozenset[str]], ...]:
    return tuple((name, frozenset(k for k, _ in keys)) for name, keys in elems)


@dataclass(frozen=True, slots=True)
class Resolved:
    """A requested path, judged: the tree (origin) it addresses, the origin to write on the
    answers, its elements (prefix and path joined) and the roots `use_models` allows."""

    origin: str
    echo: str
    elems: tuple[Elem, ...]
    roots: frozenset[str]

    def render(self) -> str:
        shown = paths.render(self.elems) if self.elems else "/"
        return f"{self.echo}:{shown}" if self.echo else shown


@dataclass
class Schema:
    """The element names (and list key names) a target serves, per origin. Made from the
    leaf templates of flatfab's path table; a leaf the source serves beyond them is added
    when first seen (a source never has its own leaves refused)."""

    models: tuple[Model, ...] = MODELS
    # origin -> every node's names from the root, with each element's key names
    _nodes: dict[str, set[tuple[tuple[str, frozenset[str]], ...]]] = field(
        default_factory=dict, repr=False)
    _root_origin: dict[str, str] = field(default_factory=dict, repr=False)
    _known: set[tuple[tuple[str, frozenset[str]], ...]] = field(default_factory=set, repr=False)
    # the target's streams read (and so add leaves) in threads of their own
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __post_init__(self) -> None:
        for model in self.models:
            for root in model.roots:
                self._root_origin.setdefault(root, model.origin)
            self._nodes.setdefault(model.origin, set())

    @classmethod
    def of_leaves(cls, leaves: Iterable[paths.Leaf] = paths.LEAVES,
                  models: tuple[Model, ...] = MODELS) -> Schema:
        schema = cls(models)
        for leaf in leaves:
            try:
                schema.add(paths.parse(leaf.template))
            except paths.PathError:
                continue  # a template flatfab cannot parse serves nothing here
        return schema

    @property
    def origins(self) -> tuple[str, ...]:
        return tuple(sorted(self._nodes))

    def origin_of(self, leaf: tuple[Elem, ...]) -> str:
        """The origin a served leaf belongs to (by its root element; unknown: openconfig)."""
        return self._root_origin.get(leaf[0][0], OPENCONFIG) if leaf else OPENCONFIG

    def add(self, leaf: tuple[Elem, ...]) -> None:
        shape = _shape(leaf)
        if shape in self._known:
            return
        with self._lock:
            self._known.add(shape)
            origin = self.origin_of(leaf)
            if leaf:
                self._root_origin.setdefault(leaf[0][0], origin)
            nodes = self._nodes.setdefault(origin, set())
            for depth in range(1, len(shape) + 1):
                nodes.add(shape[:depth])

    def allowed_roots(self, use_models: Iterable[Any]) -> frozenset[str] | None:
        """The roots the models a request names define (None: no restriction). A model this
        target does not serve is UNIMPLEMENTED (the specification names no code for it; the
        target cannot do what is asked, which is what UNIMPLEMENTED says)."""
        asked = list(use_models)
        if not asked:
            return None
        roots: set[str] = set()
        for want in asked:
            model = next((m for m in self.models if m.name == want.name
                          and want.organization in ("", m.organization)
                          and want.version in ("", m.version)), None)
            if model is None:
                served = ", ".join(f"{m.name} {m.version}" for m in self.models)
                asked_for = want.name + (f" {want.version}" if want.version else "")
                raise GnmiError(UNIMPLEMENTED, f"use_models: model {asked_for} is not served "
                                f"by this target (served: {served})")
            roots.update(model.roots)
        return frozenset(roots)

    def resolve(self, prefix: Any, path: Any, roots: frozenset[str] | None) -> Resolved:
        """Judge one requested path (a gNMI `Path` under an optional prefix)."""
        for where, p in (("prefix", prefix), ("path", path)):
            if p is not None and len(p.element):
                raise GnmiError(INVALID_ARGUMENT, f"{where} uses the deprecated string "
                                "`element` field; this target reads `elem` (gNMI 0.4.0 on)")
        if path is not None and path.target:
            raise GnmiError(INVALID_ARGUMENT, "`target` is set in a path; it belongs only in "
                            "the prefix (gNMI specification 2.2.2.1)")
        pre_origin = prefix.origin if prefix is not None else ""
        path_origin = path.origin if path is not None else ""
        if pre_origin and path_origin:
            raise GnmiError(INVALID_ARGUMENT, "origin is set in both the prefix and the path "
                            "(mixed-schema: a request MUST NOT)")
        elems = paths.from_proto(path, prefix)
        _check_syntax(elems)
        named = pre_origin or path_origin
        origin = named or self._default_origin(elems)
        if origin not in self._nodes:
            raise GnmiError(UNIMPLEMENTED, f"origin {named!r} is not served by this target "
                            f"(served: {', '.join(self.origins)})")
        with self._lock:
            served_roots = frozenset(r for r, o in self._root_origin.items() if o == origin)
        allowed = served_roots if roots is None else served_roots & roots
        echo = named or ("" if origin == OPENCONFIG else origin)
        resolved = Resolved(origin, echo, elems, allowed)
        if not self._implements(origin, elems, allowed):
            raise GnmiError(UNIMPLEMENTED, f"path {resolved.render()} is not implemented by "
                            "this target" + (" within the models asked (use_models)"
                                             if roots is not None else ""))
        return resolved

    def covers(self, resolved: Resolved, leaf: tuple[Elem, ...]) -> bool:
        """Does a resolved request cover a served leaf (same tree, allowed model, match)?"""
        return (bool(leaf) and leaf[0][0] in resolved.roots
                and self.origin_of(leaf) == resolved.origin
                and paths.matches(resolved.elems, leaf))

    def _default_origin(self, elems: tuple[Elem, ...]) -> str:
        """An unset origin is openconfig; a path that names a root only another origin
        defines is taken as that origin's (flatfab's own subscriber names none for its
        `/flatfab-qos` and `/flatfab-nic` paths). Wildcard roots stay openconfig."""
        if elems and elems[0][0] not in ("*", "..."):
            origin = self._root_origin.get(elems[0][0])
            if origin is not None and origin != OPENCONFIG:
                return origin
        return OPENCONFIG

    def _implements(self, origin: str, elems: tuple[Elem, ...], roots: frozenset[str]) -> bool:
        with self._lock:
            nodes = [n for n in self._nodes[origin] if n[0][0] in roots]
        if not elems:
            return bool(nodes)
        return any(_pattern_is(elems, 0, node, 0) for node in nodes)


def _check_syntax(elems: tuple[Elem, ...]) -> None:
    for i, (name, keys) in enumerate(elems):
        if not name:
            raise GnmiError(INVALID_ARGUMENT, f"path element {i + 1} has no name "
                            f"({paths.render(elems)})")
        if name == "..." and keys:
            raise GnmiError(INVALID_ARGUMENT, "`...` stands for any number of elements and "
                            "takes no keys")
        if any(not k for k, _ in keys):
            raise GnmiError(INVALID_ARGUMENT, f"element {name!r} has a key with no name")


def _pattern_is(pattern: tuple[Elem, ...], i: int,
                node: tuple[tuple[str, frozenset[str]], ...], j: int) -> bool:
    """Does the request pattern name exactly this schema node (`...` spans any levels)?"""
    while i < len(pattern):
        name, keys = pattern[i]
        if name == "...":
            return any(_pattern_is(pattern, i + 1, node, k) for k in range(j, len(node) + 1))
        if j >= len(node):
            return False
        node_name, node_keys = node[j]
        if name not in ("*", node_name):
            return False
        if any(k not in node_keys for k, _ in keys):
            return False
        i, j = i + 1, j + 1
    return j == len(node)
