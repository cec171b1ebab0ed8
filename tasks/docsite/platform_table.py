"""The platforms page: each platform's data file (tasks/platforms/<name>/platform.yaml) as
tables and a section per platform: how it is reached, how a change is committed, what it
cannot express, what is proven about it and how."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

from flatfab.docsite.markdown import anchor, authored, code, prose, table
from flatfab.platforms.base import CommitConfirm, Platform, ReadOnlyGuard
from flatfab.platforms.registry import PLATFORMS

COMMIT = {
    CommitConfirm.NATIVE: "native: the OS's own commit timer reverts an unconfirmed change",
    CommitConfirm.EMULATED: "emulated: a revert timer flatfab starts on the device itself",
    CommitConfirm.NONE: "none: a backup, re-applied on failure",
}
GUARD = {
    ReadOnlyGuard.TRANSPORT: "the SSH transport refuses mutating commands",
    ReadOnlyGuard.DRIVER: "a wrapper refuses every config method and non-show command",
}
FLAGS = {
    "traffic_source": "sends `verify --traffic`'s flows and the probes",
    "class_counters": "per-class queue counters (`verify --traffic` follows flows through them)",
    "nic_counters": "NIC pause, CNP, ECN and buffer counters (`flatfab watch` polls them)",
}


def _reached(platform: Platform) -> str:
    link = platform.facts.connection
    text = f"Nornir plugin {code(link.plugin)}, driver {code(link.driver)}, port {link.port}"
    if link.extra:
        text += f"; needs `pip install 'flatfab[{link.extra}]'`"
    return text


def _cannot(platform: Platform) -> list[str]:
    caps = platform.facts.capabilities
    lines = [f"- ASIC families other than {', '.join(code(f) for f in caps.asic_families)}: "
             "the OS runs on these only"] if caps.asic_families else []
    lines += [f"- {code(feature)}: {prose(why)}"
              for feature, why in sorted(caps.unsupported.items())]
    for family, limits in sorted(caps.families.items()):
        lines += [f"- {code(feature)} on ASIC family {code(family)}: {prose(why)}"
                  for feature, why in sorted(limits.items())]
    return lines or ["- nothing flatfab plans: every intent key renders."]


def _naming(platform: Platform) -> str:
    naming = platform.facts.naming
    if naming is None:
        return ""
    first = naming.physical.format(index=naming.first)
    second = naming.physical.format(index=naming.first + naming.step)
    return (f"ports {code(first)}, {code(second)}, ...; sub-interfaces "
            f"{code(naming.subinterface)}; loopback {code(naming.loopback)}; VRF gateway "
            f"{code(naming.gateway)}; tenant VRF {code(naming.vrf)}")


def decisions(platform: Platform) -> str:
    """The platform folder's README.md (what it writes, and why), its headings under the
    platform's own section; "" where the folder has none."""
    readme = Path(inspect.getfile(type(platform))).parent / "README.md"
    if not readme.is_file():
        return ""
    text = readme.read_text(encoding="utf-8")
    text = re.sub(r"\A# .*\n+", "", text)  # its title: the section's heading says it
    return re.sub(r"^(#+) ", lambda m: "#" * (len(m.group(1)) + 2) + " ", text,
                  flags=re.MULTILINE).strip()


def _section(platform: Platform) -> list[str]:
    facts = platform.facts
    caps = facts.capabilities
    has = [why for flag, why in FLAGS.items() if getattr(caps, flag)]
    lab = f"containerlab kind {code(facts.lab.kind)}, image {code(facts.lab.image)}"
    if facts.lab.type:
        lab += f", type {code(facts.lab.type)}"
    lab += ("; the embedded lab runs it" if facts.lab.embedded
            else "; not in the embedded lab (`lab generate` writes it for containerlab)")
    lines = ["", f"## {code(facts.name)} {{#{anchor(facts.name)}}}", "",
             f"{prose(facts.description)}. A {facts.role}.", "",
             f"- **Reached by:** {_reached(platform)}.",
             f"- **Commit-confirm:** {COMMIT[caps.commit_confirm]}.",
             f"- **Read-only runs:** {GUARD[caps.read_only]}.",
             f"- **Config sections:** {', '.join(code(s) for s in facts.sections)}."]
    if facts.naming is not None:
        lines.append(f"- **Names:** {_naming(platform)}.")
    lines += [f"- **Management interfaces** (never touched): "
              f"{', '.join(code(i) for i in facts.management_interfaces)}.",
              *([f"- **Also:** {'; '.join(has)}."] if has else []),
              f"- **Lab node:** {lab}.",
              "", "What it cannot express (an intent asking for it is refused at load, "
              "naming file, key and line):", "", *_cannot(platform),
              "", "What is proven, and how:", "",
              f"- **Rendered, and checked by:** {authored(facts.proven.rendered)}",
              f"- **Driver tested against:** {authored(facts.proven.driver)}",
              f"- **Live:** {authored(facts.proven.live)}",
              f"- **Physical layer read from:** {authored(facts.proven.physical)}"]
    if facts.notes:
        lines += ["", "How flatfab drives it:", "", authored(" ".join(facts.notes.split()))]
    more = decisions(platform)
    if more:
        lines += ["", f"### What {facts.name} writes, and why", "", more]
    return lines


def markdown() -> str:
    """Both tables, then a section per platform, in the registry's order."""
    platforms = [PLATFORMS[name] for name in PLATFORMS]
    summary = [(f"[{code(p.name)}](#{anchor(p.name)})", prose(p.facts.description),
                f"{code(p.facts.connection.plugin)} / {code(p.facts.connection.driver)}"
                + (f", extra {code(p.facts.connection.extra)}" if p.facts.connection.extra
                   else ""),
                p.facts.capabilities.commit_confirm.value,
                "yes" if p.facts.lab.embedded else "no")
               for p in platforms]
    proven = [(code(p.name), authored(p.facts.proven.rendered), authored(p.facts.proven.driver),
               authored(p.facts.proven.live)) for p in platforms]
    lines = ["## The platforms", "",
             *table(("platform", "OS", "reached by", "commit-confirm", "embedded lab"),
                    summary),
             "", "## What is proven, and how", "",
             "Nothing here ran on vendor hardware or a vendor image; `intents/multivendor/` "
             "plans, renders and checks every platform in one fabric.", "",
             *table(("platform", "rendered, and checked by", "driver tested against", "live"),
                    proven)]
    for platform in platforms:
        lines += _section(platform)
    return "\n".join(lines) + "\n"
