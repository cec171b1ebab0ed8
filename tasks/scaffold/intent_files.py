"""The new fabric's intent files: the example's, with its name and its switches' platforms
changed, and the lossless profile (qos.yaml) fitted to those platforms.

Files are edited in place with a round-trip YAML writer, so the example's comments and
layout survive. Fitting the profile is what a platform needs to express the example's
plane at all, each change named in a comment at the top of qos.yaml:
- `asics:` lists exactly the platforms the fabric runs; one the example did not list takes
  the family another bundled example gives it (the operator checks it: headroom and buffers
  are sized from it);
- `buffers:` goes when a platform (on its family) sizes its own buffers and cannot take them;
- a PFC watchdog action a platform cannot take (SR Linux only forwards; EOS, NVUE, NX-OS
  never forward) moves to one it can: an override that asks the impossible is dropped, and
  the fabric's action changes, or, where only some switches need another, an override for
  them is added.
fabric.yaml's `load_balancing` (or its `seeds`) goes where a platform of the fabric has no
render of it, named in fabric.yaml's header.
"""

from __future__ import annotations

import textwrap
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from ruamel.yaml.comments import CommentedMap, CommentedSeq

from flatfab.intent.models import Intent
from flatfab.intent.qos import AsicIntent, WatchdogIntent
from flatfab.model.state import FIVE_TUPLE, HashField
from flatfab.platforms.base import Platform
from flatfab.platforms.registry import DEFAULT_SWITCH
from flatfab.yamlio import dump_roundtrip, load_yaml

ACTIONS = ("drop", "forward", "alert")  # the PFC watchdog's, in order of preference
QOS_HEADER = ("# The lossless RoCEv2 profile: every key not written here has its canonical "
              "default\n# (RoCE on DSCP 26 -> priority 3 with PFC, CNP on DSCP 48 -> "
              "strict priority 6).\n")


@dataclass(frozen=True)
class Asic:
    """An ASIC entry another example gives a platform, and which example."""

    entry: Mapping[str, Any]
    example: str


@dataclass
class Edited:
    """The intent files by name, and what was changed to fit the platforms."""

    files: dict[str, str]
    notes: list[str] = field(default_factory=list)


def asic_catalogue(examples: Path) -> dict[str, Asic]:
    """Platform -> the first ASIC entry a bundled example gives it (in name order)."""
    found: dict[str, Asic] = {}
    for folder in sorted(p for p in examples.iterdir() if (p / "qos.yaml").is_file()):
        doc = load_yaml(folder / "qos.yaml")
        for platform, entry in ((doc or {}).get("asics") or {}).items():
            if platform not in found and isinstance(entry, dict):
                found[platform] = Asic(dict(entry), folder.name)
    return found


def _comments(text: str, first: str = "# ", rest: str = "# ") -> str:
    lines = textwrap.wrap(text, 92)
    return "".join(f"{first if i == 0 else rest}{line}\n" for i, line in enumerate(lines))


def _flow(mapping: Mapping[str, Any]) -> CommentedMap:
    out = CommentedMap(mapping)
    out.fa.set_flow_style()
    return out


def _set_platforms(doc: Any, intent: Intent, chosen: Mapping[str, str]) -> bool:
    """fabric.yaml's `platform` and each listed switch's: the most common choice is the
    fabric's, every other switch names its own. True when anything changed."""
    before = dump_roundtrip(doc)
    top = intent.fabric.platform
    if intent.fabric.scalable_units is not None:
        doc["platform"] = next(iter(chosen.values()), top)
    else:
        counts = Counter(chosen.values())
        fabric_wide = min(counts, key=lambda p: (-counts[p], p != top, p))
        doc["platform"] = fabric_wide
        for role in ("spines", "leaves"):
            for entry in doc.get(role) or []:
                if entry["name"] not in chosen:
                    continue
                wanted = chosen[entry["name"]]
                if wanted == fabric_wide:
                    entry.pop("platform", None)
                elif entry.get("platform") != wanted:
                    entry["platform"] = wanted
    return dump_roundtrip(doc) != before


def _fit_asics(doc: CommentedMap, running: set[str], catalogue: Mapping[str, Asic],
               notes: list[str]) -> dict[str, str]:
    """`asics:` for exactly the platforms that run; platform -> its family."""
    asics = doc.get("asics")
    if asics is None:
        if running == {DEFAULT_SWITCH}:  # the profile's default is the default platform's
            return {DEFAULT_SWITCH: AsicIntent().family}
        asics = doc["asics"] = CommentedMap()
    for platform in [p for p in asics if p not in running]:
        del asics[platform]
        notes.append(f"asics.{platform} removed: no switch runs {platform}")
    for platform in sorted(running - set(asics)):
        known = catalogue.get(platform)
        asics[platform] = _flow(known.entry if known else {"family": "generic"})
        source = f"the {known.example} example's" if known else "generic: no example gives one"
        asics.yaml_set_comment_before_after_key(
            platform, before=f"{source}: set your {platform} switches' ASIC family", indent=2)
        notes.append(f"asics.{platform} added ({source}, family "
                     f"{asics[platform].get('family', 'generic')}): check it, headroom and "
                     "buffers are sized from it")
    return {p: AsicIntent.model_validate(dict(asics[p])).family for p in asics}


def _watchdog(override: Any) -> WatchdogIntent | None:
    watchdog = override.get("watchdog") if isinstance(override, dict) else None
    return None if watchdog is None else WatchdogIntent.model_validate(dict(watchdog))


def _fit_watchdog(doc: CommentedMap, intent: Intent, chosen: Mapping[str, str],
                  can: Mapping[str, set[str]], notes: list[str]) -> None:
    """Every switch's PFC watchdog action one its platform takes."""
    overrides = doc.get("overrides") or []
    for override in list(overrides):
        watchdog = _watchdog(override)
        if watchdog is None or not watchdog.enabled:
            continue
        matched = [s for s in chosen if any(fnmatchcase(s, p) for p in override["devices"])]
        if all(watchdog.action in can[chosen[s]] for s in matched):
            continue
        del override["watchdog"]
        notes.append(f"the watchdog override of {', '.join(override['devices'])} removed: "
                     f"{', '.join(sorted({chosen[s] for s in matched}))} cannot "
                     f"{watchdog.action}")
        if set(override) <= {"devices", "ports"}:
            overrides.remove(override)
    if "overrides" in doc and not overrides:
        del doc["overrides"]
    fabric_wide = intent.qos.pfc.watchdog
    if not fabric_wide.enabled:
        return
    covered = {s for o in overrides if _watchdog(o) is not None
               and list(o.get("ports", ["*"])) == ["*"]
               for s in chosen if any(fnmatchcase(s, p) for p in o["devices"])}
    own = {s: p for s, p in chosen.items() if s not in covered}
    lacking = {s: p for s, p in own.items() if fabric_wide.action not in can[p]}
    if not lacking:
        return
    shared = [a for a in ACTIONS if all(a in can[p] for p in own.values())]
    if len(lacking) == len(own) and shared:
        pfc = doc.setdefault("pfc", CommentedMap())
        watchdog = pfc.setdefault("watchdog", _flow({}))
        watchdog["action"] = shared[0]
        notes.append(f"pfc.watchdog.action {fabric_wide.action} -> {shared[0]}: "
                     f"{', '.join(sorted(set(own.values())))} cannot {fabric_wide.action}")
        return
    for platform in sorted(set(lacking.values())):
        action = next((a for a in ACTIONS if a in can[platform]), None)
        if action is None:
            continue  # the intent's own check names it
        devices = sorted(s for s, p in lacking.items() if p == platform)
        entry = fabric_wide.model_dump() | {"action": action}
        added = CommentedMap({"devices": devices, "watchdog": _flow(entry)})
        doc.setdefault("overrides", CommentedSeq()).append(added)
        notes.append(f"a watchdog override for the {platform} switches ({action}): "
                     f"{platform} cannot {fabric_wide.action}")


def _fit_qos(doc: CommentedMap, intent: Intent, chosen: Mapping[str, str],
             platforms: Mapping[str, Platform], catalogue: Mapping[str, Asic]) -> list[str]:
    notes: list[str] = []
    running = set(chosen.values())
    families = _fit_asics(doc, running, catalogue, notes)
    limits = {p: {**platforms[p].facts.capabilities.unsupported,
                  **platforms[p].facts.capabilities.family_limits(families.get(
                      p, AsicIntent().family))} for p in running}
    sizing_own = sorted(p for p in running if "buffers" in limits[p])
    if "buffers" in doc and sizing_own:
        del doc["buffers"]
        notes.append(f"buffers removed: {', '.join(sizing_own)} "
                     f"{'sizes its' if len(sizing_own) == 1 else 'size their'} own")
    can = {p: {a for a in ACTIONS if f"pfc_watchdog_{a}" not in limits[p]} for p in running}
    _fit_watchdog(doc, intent, chosen, can, notes)
    return notes


def _fit_balancing(doc: CommentedMap, chosen: Mapping[str, str],
                   platforms: Mapping[str, Platform]) -> list[str]:
    """`load_balancing` (or its seeds) goes where a platform the fabric runs cannot take it."""
    balancing = doc.get("load_balancing")
    if balancing is None:
        return []
    running = sorted(set(chosen.values()))
    for feature, key in (("ecmp_hash", None), ("ecmp_hash_seed", "seeds")):
        refusing = {p: platforms[p].facts.capabilities.unsupported[feature] for p in running
                    if feature in platforms[p].facts.capabilities.unsupported}
        if not refusing:
            continue
        platform, reason = next(iter(refusing.items()))
        if key is None:
            del doc["load_balancing"]
            return [f"load_balancing removed ({platform}: {reason})"]
        if isinstance(balancing, dict) and key in balancing:
            del balancing[key]
            return [f"load_balancing.{key} removed ({platform}: {reason})"]
    return _fit_hash_fields(doc, running, platforms)


def _fit_hash_fields(doc: CommentedMap, running: list[str],
                     platforms: Mapping[str, Platform]) -> list[str]:
    """`hash_fields` set to the one list a platform of fixed lists renders (or the section
    removed where two such platforms share none)."""
    balancing = doc["load_balancing"]
    fixed = {p: allowed for p in running
             if (allowed := platforms[p].facts.capabilities.hash_fields) is not None}
    if not fixed or not isinstance(balancing, dict):
        return []
    asked = frozenset(HashField(f) for f in balancing.get("hash_fields", FIVE_TUPLE))
    common = set.intersection(*(set(a.sets) for a in fixed.values()))
    if asked in common:
        return []
    platform = next(iter(fixed))
    if not common:
        del doc["load_balancing"]
        return [f"load_balancing removed ({', '.join(fixed)} hash on no common fields)"]
    chosen = sorted(common, key=len, reverse=True)[0]
    fields = CommentedSeq(f.value for f in HashField if f in chosen)
    fields.fa.set_flow_style()
    balancing["hash_fields"] = fields
    return [f"load_balancing.hash_fields set to [{', '.join(fields)}] "
            f"({platform}: {fixed[platform].why})"]


def edited(example: Path, intent: Intent, fabric: str, chosen: Mapping[str, str],
           platforms: Mapping[str, Platform], catalogue: Mapping[str, Asic],
           command: str) -> Edited:
    """The example's intent files for the new fabric (`command`: the init command line, for
    the notes). Unchanged files keep their exact text."""
    files = {p.name: p.read_text(encoding="utf-8") for p in sorted(example.glob("*.yaml"))}
    fabric_doc = load_yaml(example / "fabric.yaml")
    fabric_doc["name"] = fabric
    changed = _set_platforms(fabric_doc, intent, chosen)
    fitted = _fit_balancing(fabric_doc, chosen, platforms)
    files["fabric.yaml"] = dump_roundtrip(fabric_doc)
    if changed:
        files["fabric.yaml"] = (_comments(f"Written by `{command}`: the switches' platforms "
                                          "changed; the notes below describe the example as "
                                          "it was.")
                                + "".join(_comments(note, "#  - ", "#    ") for note in fitted)
                                + files["fabric.yaml"])
    had_qos = "qos.yaml" in files
    qos_doc = load_yaml(example / "qos.yaml") if had_qos else None
    if not isinstance(qos_doc, CommentedMap):
        qos_doc = CommentedMap()
    notes = _fit_qos(qos_doc, intent, chosen, platforms, catalogue)
    if notes:
        header = _comments(f"`{command}` fitted this profile to the switches' platforms:")
        header += "".join(_comments(note, "#  - ", "#    ") for note in notes)
        text = dump_roundtrip(qos_doc) if len(qos_doc) else ""
        files["qos.yaml"] = (QOS_HEADER if not had_qos else "") + header + text
    return Edited(files=files, notes=notes)
