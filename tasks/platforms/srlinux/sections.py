"""The rendered replaces split into sections, and a running config put in the same form.

A rendered config is `{"replaces": [...]}` with every entry opening a line
`{"path": "/<tree>...` at column 0: the tree (`interface`, `network-instance`,
`routing-policy`, `qos`, `system` for its load-balancing hash options) is the section. A
running config (napalm-srlinux get_config: the JSON of `/` from the running datastore, module
prefixes where modules change) is turned into the same entries, projected onto what the
intended config sets, so drift compares like with like.
"""

from __future__ import annotations

import json
import re
from typing import Any

from flatfab.platforms.srlinux import hashing
from flatfab.platforms.srlinux.render import Json, dump

_ENTRY = re.compile(r'^\{"path": "/([a-z-]+)')
_PATH = re.compile(r"^/([a-z-]+)(?:\[name=([^\]]+)\])?$")
LIST_TREES = ("interface", "network-instance")
CONTAINER_TREES = ("routing-policy", "qos")
# containers below the root flatfab replaces whole -> what a leaf the box does not state
# holds (YANG defaults), so a box that prints only what differs compares like with like
NESTED: dict[str, Json] = {hashing.PATH: hashing.DEFAULTS}


class SectionError(ValueError):
    """A config that is neither flatfab's replaces nor an SR Linux JSON tree."""


def split(text: str) -> dict[str, list[str]]:
    """Every non-blank line in the section of the entry it belongs to; the opening line
    goes with the first entry, the closing one with the last."""
    out: dict[str, list[str]] = {}
    pending: list[str] = []
    current: str | None = None
    for line in text.splitlines():
        if not line.strip():
            continue
        found = _ENTRY.match(line)
        if found:
            current = found.group(1)
            out.setdefault(current, []).extend(pending)
            pending = []
        if current is None:
            pending.append(line)
        else:
            out.setdefault(current, []).append(line)
    if pending:  # no entry at all: a running tree or an empty config
        return split(dump(entries_of(_load(text)))) if text.strip() else {}
    return out


def _load(text: str) -> Json:
    try:
        loaded = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SectionError(f"SR Linux config is not JSON: {exc}") from exc
    if not isinstance(loaded, dict):
        raise SectionError("SR Linux config is not a JSON object")
    return loaded


def unprefixed(value: Any) -> Any:
    """Module prefixes off member names and identity values (`srl_nokia-x:name` -> `name`)."""
    if isinstance(value, dict):
        return {k.split(":", 1)[-1]: unprefixed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [unprefixed(v) for v in value]
    if isinstance(value, str) and re.match(r"^srl_nokia-[a-z0-9-]+:[a-z0-9-]+$", value):
        return value.split(":", 1)[1]
    return value


def entries_of(config: Json) -> list[tuple[str, Json]]:
    """A config, as replaces (`{"replaces": ...}`) or as a tree, in entry form."""
    if "replaces" in config:
        return [(str(e["path"]), unprefixed(e["value"])) for e in config["replaces"]]
    tree = unprefixed(config)
    entries: list[tuple[str, Json]] = []
    for head in LIST_TREES:
        for entry in tree.get(head, []) or []:
            entries.append((f"/{head}[name={entry.get('name')}]", entry))
    for head in CONTAINER_TREES:
        if isinstance(tree.get(head), dict):
            entries.append((f"/{head}", tree[head]))
    for path in NESTED:
        found: Any = tree
        for step in path.strip("/").split("/"):
            found = found.get(step) if isinstance(found, dict) else None
        if isinstance(found, dict):
            entries.append((path, found))
    return entries


def _key(entry: Json) -> Any:
    """A list entry's key: the first member (flatfab renders keys first)."""
    return next(iter(entry.items()), (None, None))


def project(running: Any, intended: Any) -> Any:
    """Running reduced to the members intended sets; list entries matched by key, entries
    only running has kept whole (they are drift)."""
    if isinstance(intended, dict) and isinstance(running, dict):
        return {k: project(running[k], v) for k, v in intended.items() if k in running}
    if (isinstance(intended, list) and isinstance(running, list)
            and all(isinstance(e, dict) and e for e in intended)):
        by_key = {json.dumps(_key(e)): e for e in running if isinstance(e, dict)}
        out = []
        for entry in intended:
            key = json.dumps(_key(entry))
            if key in by_key:
                out.append(project(by_key.pop(key), entry))
        return out + list(by_key.values())
    return running


def normalized_running(running: str, intended: str) -> str:
    """The running config as the intended one's replaces, projected onto what it sets;
    an intended path the box does not have is left out (the diff shows it missing), but for
    the NESTED containers, whose leaves the box does not print hold their defaults."""
    loaded = _load(running)
    have = dict(entries_of(loaded))
    if "replaces" not in loaded:  # the box's tree: a container it does not print is defaults
        for path, defaults in NESTED.items():
            have[path] = {**defaults, **have.get(path, {})}
    wanted = entries_of(_load(intended))
    return dump([(path, project(have[path], value)) for path, value in wanted
                 if path in have])
