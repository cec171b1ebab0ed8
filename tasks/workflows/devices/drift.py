"""Config drift: intended vs running config text of one device, split into the sections
its platform names (Platform.sections), so drift is per section on every platform."""

from __future__ import annotations

from collections.abc import Callable

from flatfab.platforms.cli_driver import unified_diff
from flatfab.reports.model import DeviceDrift, SectionDrift

Splitter = Callable[[str], dict[str, list[str]]]


def device_drift(device: str, running: str, intended: str,
                 sections: Splitter) -> DeviceDrift | None:
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
