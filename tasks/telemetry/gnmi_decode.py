"""How flatfab's subscriber reads the shapes real gNMI targets send, beyond a scalar per
leaf: JSON (IETF) objects for whole subtrees, with module-qualified member names and lists as
arrays of keyed entries; leaf-lists; target-defined aliases; deletes.

Sources: openconfig/reference rpc/gnmi/gnmi-specification.md (read 2026-11-29) 2.2.3
(`leaflist_val`), 2.3.1 (JSON / JSON_IETF values: a node's value is an object of its
children), 2.4.2 and 3.5.2.2 (an alias is announced in a notification whose prefix is the
aliased path and whose `alias` is `#name`, deleted by announcing it with an empty path, and
used as the single element of later prefixes), 3.5.2.3 (`delete`: a removed node, every leaf
under it gone); RFC 7951 4 (module-qualified member names, `module:name`), 5.4 (a list as
an array of objects holding their key leaves), 5.3 (a leaf-list as an array).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pygnmi.spec.v080 import gnmi_pb2

from flatfab.telemetry import paths
from flatfab.telemetry.paths import Elem

Leaf = tuple[Elem, ...]
ListKeys = Callable[[tuple[str, ...]], tuple[str, ...] | None]
# (the path as sent, the path with module qualifiers taken off, the value)
JsonLeaf = tuple[Leaf, Leaf, Any]


def _key_text(value: Any) -> str | None:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, str)):
        return str(value)
    return None  # a key is a scalar; anything else cannot name an entry


def json_leaves(tree: Any, base: Leaf, list_keys: ListKeys) -> tuple[list[JsonLeaf], int]:
    """Every leaf of a JSON value sent at `base`, and how many parts could not be made leaves
    (a list entry whose keys this table does not know, or that lacks them). A list of
    objects is a YANG list (its entries keyed by their key members), a list of scalars a
    leaf-list (its value a tuple)."""
    out: list[JsonLeaf] = []
    unread = 0

    def entries(items: list[Any], raw: Leaf, bare: Leaf, name: str, plain: str) -> None:
        nonlocal unread
        keys = list_keys(tuple(n for n, _ in (*bare, (plain, ()))))
        for entry in items:
            members = {paths.strip_module(str(k)): v for k, v in entry.items()}
            texts = [_key_text(members.get(k)) for k in keys or ()]
            if not keys or any(t is None for t in texts):
                unread += 1
                continue
            kv = tuple(sorted((k, str(t)) for k, t in zip(keys, texts, strict=True)))
            walk(entry, (*raw, (name, kv)), (*bare, (plain, kv)), dict(kv))

    def walk(node: dict[Any, Any], raw: Leaf, bare: Leaf, skip: dict[str, str]) -> None:
        nonlocal unread
        for key, value in node.items():
            name = str(key)
            plain = paths.strip_module(name)
            if plain in skip and _key_text(value) == skip[plain]:
                continue  # an entry's key: already in its path
            here, there = (*raw, (name, ())), (*bare, (plain, ()))
            if isinstance(value, dict):
                walk(value, here, there, {})
            elif isinstance(value, list) and value and all(isinstance(e, dict) for e in value):
                entries(value, raw, bare, name, plain)
            elif isinstance(value, list):
                if any(isinstance(e, (dict, list)) for e in value):
                    unread += 1
                else:
                    out.append((here, there, tuple(value)))
            else:
                out.append((here, there, value))

    bare_base = paths.strip_modules(base)
    if isinstance(tree, dict):
        walk(tree, base, bare_base, dict(base[-1][1]) if base else {})
    elif (isinstance(tree, list) and tree and base and not base[-1][1]
          and all(isinstance(e, dict) for e in tree)):
        # a list's entries sent at the list's own path (no keys given)
        entries(tree, base[:-1], bare_base[:-1], base[-1][0], bare_base[-1][0])
    return out, unread


def typed(val: Any) -> Any:
    """A TypedValue's content as Python: a scalar, a leaf-list as a tuple, JSON parsed (a
    JSON that does not parse, and the opaque kinds, as None)."""
    import json  # noqa: PLC0415 - only JSON values need it

    kind = val.WhichOneof("value")
    if kind is None:
        return None
    if kind == "leaflist_val":
        return tuple(typed(e) for e in val.leaflist_val.element)
    if kind in ("json_val", "json_ietf_val"):
        try:
            return json.loads(getattr(val, kind))
        except ValueError:
            return None
    if kind == "decimal_val":
        return val.decimal_val.digits / 10 ** val.decimal_val.precision
    if kind in ("bytes_val", "any_val", "proto_bytes"):
        return None
    return getattr(val, kind)


class Aliases:
    """The aliases a target defined on one subscription (they live as long as its RPC)."""

    def __init__(self) -> None:
        self._paths: dict[str, Any] = {}

    def clear(self) -> None:
        self._paths.clear()

    def learn(self, notif: Any) -> bool:
        """Take in an alias a notification announces (or deletes); True if that was all it
        carried."""
        if not notif.alias:
            return False
        prefix = notif.prefix if notif.HasField("prefix") else None
        if prefix is None or (not prefix.elem and not prefix.origin):
            self._paths.pop(notif.alias, None)
        else:
            kept = gnmi_pb2.Path()
            kept.CopyFrom(prefix)
            self._paths[notif.alias] = kept
        return not notif.update and not notif.delete

    def resolve(self, prefix: Any) -> tuple[Any, bool]:
        """(the prefix an alias stands for, or the prefix itself; False for an alias never
        announced)."""
        if prefix is None or len(prefix.elem) != 1:
            return prefix, True
        elem = prefix.elem[0]
        if not elem.name.startswith("#") or elem.key:
            return prefix, True
        found = self._paths.get(elem.name)
        return (prefix, False) if found is None else (found, True)
