"""How flatfab's gNMI target words its answers: values in the encoding asked for, and the
shapes of notification real switches send (a test option, `Shapes`), so that flatfab's
subscriber is tested against each of them.

Sources (openconfig/reference rpc/gnmi/gnmi-specification.md, read 2026-11-29): 2.1 (a
Notification's timestamp, prefix, alias, update, delete), 2.2.3 (scalar TypedValues, a
leaf-list as `leaflist_val`), 2.3.1 (JSON and JSON_IETF: a leaf's value bare, a node's as an
object; JSON_IETF follows RFC 7951), 2.4.2 and 3.5.2.2 (a target-defined alias: announced
alone, a notification whose prefix is the path and whose `alias` is `#name`, then used as the
single element of later prefixes), 3.5.2.1 (bundling several updates in one notification).
RFC 7951: 4 (a member name is qualified with its module where the module changes, at the
top of a value always), 6.1 (64-bit integers and decimal64 as JSON strings), 5.4 (a list
as an array of objects whose members include the keys), 5.3 (a leaf-list as an array). A
float (a gauge: the pre-FEC BER, a decimal64 in OpenConfig) goes in PROTO as `double_val`,
which gNMI 0.8.0 (2.2.3) says to use for decimal64 (`decimal_val` is deprecated).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from pygnmi.spec.v080 import gnmi_pb2

from flatfab.telemetry import paths
from flatfab.telemetry.paths import Elem

Scalar = int | float | str
Value = Scalar | tuple[Scalar, ...]  # a tuple is a leaf-list
Leaf = tuple[Elem, ...]

JSON: Final[int] = gnmi_pb2.Encoding.JSON
PROTO: Final[int] = gnmi_pb2.Encoding.PROTO
JSON_IETF: Final[int] = gnmi_pb2.Encoding.JSON_IETF
ENCODINGS: Final = (JSON, JSON_IETF, PROTO)  # what the target advertises and serves


def encoding_name(encoding: int) -> str:
    try:
        return str(gnmi_pb2.Encoding.Name(encoding))
    except ValueError:
        return f"encoding {encoding}"


def _scalar(value: Scalar) -> Any:
    if isinstance(value, str):
        return gnmi_pb2.TypedValue(string_val=value)
    if isinstance(value, float):
        return gnmi_pb2.TypedValue(double_val=value)
    if value < 0:
        return gnmi_pb2.TypedValue(int_val=value)
    return gnmi_pb2.TypedValue(uint_val=value)


def _json_scalar(value: Scalar, ietf: bool) -> Any:
    # JSON_IETF: every integer flatfab serves is a 64-bit counter and every float a
    # decimal64, strings both in RFC 7951 6.1 (repr: a float read back is the same float)
    if not ietf or isinstance(value, str):
        return value
    return repr(value) if isinstance(value, float) else str(value)


def json_value(value: Value, ietf: bool) -> Any:
    if isinstance(value, tuple):
        return [_json_scalar(v, ietf) for v in value]
    return _json_scalar(value, ietf)


def _dump(tree: Any) -> bytes:
    return json.dumps(tree, separators=(",", ":"), sort_keys=True).encode()


def typed_value(value: Value, encoding: int = PROTO) -> Any:
    """One leaf's value: PROTO as a scalar TypedValue (a leaf-list as `leaflist_val`), JSON
    and JSON_IETF as the bare JSON value."""
    if encoding == JSON:
        return gnmi_pb2.TypedValue(json_val=_dump(json_value(value, False)))
    if encoding == JSON_IETF:
        return gnmi_pb2.TypedValue(json_ietf_val=_dump(json_value(value, True)))
    if isinstance(value, tuple):
        return gnmi_pb2.TypedValue(leaflist_val=gnmi_pb2.ScalarArray(
            element=[_scalar(v) for v in value]))
    return _scalar(value)


@dataclass(frozen=True, slots=True)
class Shapes:
    """How a target shapes its notifications beyond the plainest (a bundle of full leaf
    paths, no prefix): what real switches do, turned on one by one in the tests.

    - `subtree_depth` N > 0: in JSON encodings, the leaves below the first N elements of a
      path go as one JSON object at that path (module-qualified members in JSON_IETF).
    - `prefixed`: one notification per container, its path (and origin) in the prefix, the
      updates' paths relative to it.
    - `aliases`: where the client set `use_aliases`, each container's path is announced as
      an alias first and the alias is the prefix after.
    """

    subtree_depth: int = 0
    prefixed: bool = False
    aliases: bool = False

    @classmethod
    def from_config(cls, raw: Any) -> Shapes:
        if raw is None:
            return cls()
        if not isinstance(raw, dict):
            raise ValueError("shapes: must be a mapping")
        unknown = sorted(set(raw) - {"subtree_depth", "prefixed", "aliases"})
        if unknown:
            raise ValueError(f"shapes.{unknown[0]}: unknown key "
                             "(known: aliases, prefixed, subtree_depth)")
        depth = raw.get("subtree_depth", 0)
        if not isinstance(depth, int) or isinstance(depth, bool) or depth < 0:
            raise ValueError(f"shapes.subtree_depth: must be an integer >= 0 (got {depth!r})")
        for key in ("prefixed", "aliases"):
            if not isinstance(raw.get(key, False), bool):
                raise ValueError(f"shapes.{key}: must be true or false")
        return cls(depth, bool(raw.get("prefixed", False)), bool(raw.get("aliases", False)))


PLAIN: Final = Shapes()  # the lab's answers: a bundle of full leaf paths, no prefix

_CACHE_MAX: Final = 1 << 16
_PROTOS: dict[tuple[Leaf, str], Any] = {}


def leaf_proto(path: Leaf, origin: str = "") -> Any:
    """A leaf's gNMI Path, built once (a message given to another is copied, never shared)."""
    proto = _PROTOS.get((path, origin))
    if proto is None:
        if len(_PROTOS) >= _CACHE_MAX:
            _PROTOS.clear()
        proto = _PROTOS[(path, origin)] = paths.to_proto(path, origin)
    return proto


class Encoder:
    """The notifications of one RPC: its encoding, the target to echo (gNMI 2.2.2.1: set in
    the request's prefix, reflected in every answer's; never otherwise), its shapes, and the
    aliases it has announced so far."""

    def __init__(self, encoding: int, target: str, shapes: Shapes = PLAIN, *,
                 use_aliases: bool = False,
                 module_of: Callable[[str], str | None] = lambda _: None) -> None:
        self._encoding = encoding
        self._target = target
        self._shapes = shapes
        self._aliased = shapes.aliases and use_aliases
        self._grouped = shapes.prefixed or self._aliased
        self._module_of = module_of
        self._aliases: dict[tuple[str, Leaf], str] = {}

    def notifications(self, stamp_ns: int, updates: Mapping[Leaf, tuple[Value, str]],
                      deletes: Sequence[tuple[Leaf, str]] = ()) -> list[Any]:
        """`updates`: leaf -> (value, the origin to write); `deletes`: (leaf, origin)."""
        if not updates and not deletes:
            return []
        items = self._items(updates)
        if not self._grouped:
            return [gnmi_pb2.Notification(
                timestamp=stamp_ns, prefix=self._bare_prefix(),
                update=[gnmi_pb2.Update(path=leaf_proto(p, o), val=v) for o, p, v in items],
                delete=[leaf_proto(p, o) for p, o in deletes])]
        groups: dict[tuple[str, Leaf], tuple[list[Any], list[Any]]] = {}
        for origin, path, val in items:
            ups, _ = groups.setdefault((origin, path[:-1]), ([], []))
            ups.append(gnmi_pb2.Update(path=paths.to_proto(path[-1:]), val=val))
        for path, origin in deletes:
            _, dels = groups.setdefault((origin, path[:-1]), ([], []))
            dels.append(paths.to_proto(path[-1:]))
        out: list[Any] = []
        for (origin, base), (ups, dels) in sorted(groups.items(), key=lambda g: g[0]):
            prefix = self._group_prefix(stamp_ns, origin, base, out)
            out.append(gnmi_pb2.Notification(timestamp=stamp_ns, prefix=prefix, update=ups,
                                             delete=dels))
        return out

    # --- helpers ---------------------------------------------------------------------------

    def _bare_prefix(self) -> Any:
        return gnmi_pb2.Path(target=self._target) if self._target else None

    def _group_prefix(self, stamp_ns: int, origin: str, base: Leaf, out: list[Any]) -> Any:
        if not self._aliased:
            return gnmi_pb2.Path(origin=origin, target=self._target,
                                 elem=paths.to_proto(base).elem)
        alias = self._aliases.get((origin, base))
        if alias is None:
            alias = self._aliases[(origin, base)] = f"#{len(self._aliases) + 1}"
            out.append(gnmi_pb2.Notification(  # announced alone, before its first use
                timestamp=stamp_ns, alias=alias,
                prefix=gnmi_pb2.Path(origin=origin, target=self._target,
                                     elem=paths.to_proto(base).elem)))
        return gnmi_pb2.Path(target=self._target, elem=[gnmi_pb2.PathElem(name=alias)])

    def _items(self, updates: Mapping[Leaf, tuple[Value, str]]) -> list[tuple[str, Leaf, Any]]:
        """(origin, path, TypedValue) in path order: a leaf each, or a subtree each."""
        depth = self._shapes.subtree_depth
        if not depth or self._encoding not in (JSON, JSON_IETF):
            return [(o, p, typed_value(v, self._encoding))
                    for p, (v, o) in sorted(updates.items())]
        ietf = self._encoding == JSON_IETF
        trees: dict[tuple[str, Leaf], list[tuple[Leaf, Value]]] = {}
        out: list[tuple[str, Leaf, Any]] = []
        for p, (v, o) in sorted(updates.items()):
            if len(p) > depth:
                trees.setdefault((o, p[:depth]), []).append((p[depth:], v))
            else:
                out.append((o, p, typed_value(v, self._encoding)))
        for (o, base), rows in trees.items():
            tree = _tree(base, rows, ietf)
            module = self._module_of(base[0][0]) if ietf else None
            if module:
                tree = {f"{module}:{k}": v for k, v in tree.items()}
            val = (gnmi_pb2.TypedValue(json_ietf_val=_dump(tree)) if ietf
                   else gnmi_pb2.TypedValue(json_val=_dump(tree)))
            out.append((o, base, val))
        return sorted(out, key=lambda t: (t[0], t[1]))


def _tree(base: Leaf, rows: list[tuple[Leaf, Value]], ietf: bool) -> dict[str, Any]:
    """The JSON object of a node from its leaves below: containers as objects, list entries
    as arrays of objects with their keys as members (RFC 7951 5.4), the node's own keys too."""
    top: dict[str, Any] = dict(base[-1][1]) if base and base[-1][1] else {}
    for rest, value in rows:
        node = top
        for i, (name, keys) in enumerate(rest):
            if keys:
                entries: list[dict[str, Any]] = node.setdefault(name, [])
                entry = next((e for e in entries if all(e.get(k) == v for k, v in keys)), None)
                if entry is None:
                    entry = dict(keys)
                    entries.append(entry)
                node = entry
            elif i == len(rest) - 1:
                node[name] = json_value(value, ietf)
            else:
                node = node.setdefault(name, {})
    return top
