"""An EOS config (rendered, or `show running-config`) split into flatfab's named sections.

A top-level line opens a block and its indented lines belong to it; the block's first
words name its section. Blocks flatfab does not render (management, aaa, users, the
device's own defaults) belong to no section, so drift reports only what flatfab owns.
"""

from __future__ import annotations

# first words of a top-level line -> section, longest prefix wins
SECTION_OF: dict[str, str] = {
    "hostname": "system",
    "qos map": "qos",
    "qos profile": "qos",
    "priority-flow-control": "pfc",
    "platform trident mmu": "buffers",
    "vlan": "vlans",
    "vrf instance": "vrfs",
    "interface": "interfaces",
    "ip routing": "routing",
    "ipv6 unicast-routing": "routing",
    "router bgp": "bgp",
}
_PREFIXES = sorted(SECTION_OF, key=len, reverse=True)


def section_of(line: str) -> str | None:
    for prefix in _PREFIXES:
        if line == prefix or line.startswith(prefix + " "):
            return SECTION_OF[prefix]
    return None


def split_sections(config: str) -> dict[str, list[str]]:
    """Every line of a rendered config lands in a section: a top-level `!` goes with the
    block after it (the last ones with the last block)."""
    out: dict[str, list[str]] = {}
    current: str | None = None
    separators: list[str] = []
    for raw in config.splitlines():
        line = raw.rstrip()
        if not line.strip() or line == "end":
            continue
        if line.startswith("!"):
            separators.append(line)
            continue
        if not line.startswith(" "):
            current = section_of(line)
        if current is not None:
            out.setdefault(current, []).extend([*separators, line])
        separators = []
    if separators and current is not None:
        out.setdefault(current, []).extend(separators)
    return out


def without_comments(config: str) -> str:
    """A config without `!` lines and `end`: EOS places separators its own way, so drift
    compares statements only."""
    return "".join(f"{line}\n" for line in config.splitlines()
                   if line.strip() and not line.strip().startswith("!")
                   and line.strip() != "end")
