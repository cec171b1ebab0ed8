"""Config drift: intended vs running config text of one device, split into sections.

frr configs are `!! name` blocks (links, qos, frr); linux_host configs are one statement a
line, so a line's first word (nic, address, route, qos) is its section.
"""

from __future__ import annotations

from tasks.platforms.shell_driver import unified_diff
from tasks.reports.model import DeviceDrift, SectionDrift

HEADER = "!! "


def sections(text: str) -> dict[str, list[str]]:
    """Section name -> its lines, in first-seen order."""
    out: dict[str, list[str]] = {}
    current: str | None = None
    for line in text.splitlines():
        if line.startswith(HEADER):
            current = line[len(HEADER):].strip() or "config"
            out.setdefault(current, [])
            continue
        if not line.strip():
            continue
        name = current or line.split(maxsplit=1)[0]
        out.setdefault(name, []).append(line)
    return out


def device_drift(device: str, running: str, intended: str) -> DeviceDrift | None:
    """The sections whose running lines differ from the intended ones; None when equal."""
    have, want = sections(running), sections(intended)
    found: list[SectionDrift] = []
    for name in sorted({*have, *want}):
        got, wanted = have.get(name, []), want.get(name, [])
        if got == wanted:
            continue
        got_set, wanted_set = set(got), set(wanted)
        found.append(SectionDrift(
            section=name,
            missing=tuple(line for line in wanted if line not in got_set),
            unexpected=tuple(line for line in got if line not in wanted_set),
            diff=unified_diff("\n".join(got) + "\n" if got else "",
                              "\n".join(wanted) + "\n" if wanted else "",
                              name=f"{device}/{name}")))
    return DeviceDrift(device=device, sections=tuple(found)) if found else None
