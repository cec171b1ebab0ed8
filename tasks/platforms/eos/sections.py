"""An EOS config (rendered, or `show running-config`) split into flatfab's named sections.

A top-level line opens a block and its indented lines belong to it; the block's first
words name its section. Blocks flatfab does not render (management api, aaa, users, the
device's own defaults) belong to no section, so drift reports only what flatfab owns; so
do the management interfaces and everything of the VRF they are in (`vrf instance MGMT`,
`ip route vrf MGMT ...`), whose first words look like flatfab's own. A replace keeps all of
these (`merge_into`): NAPALM's replace starts from a clean config, and a config without
`management api http-commands` or the management address would lock flatfab out.
"""

from __future__ import annotations

import itertools

from flatfab.platforms.sections import cli_blocks

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


def blocks(config: str) -> list[list[str]]:
    return cli_blocks(config)


def management_vrfs(config: str, management: tuple[str, ...]) -> frozenset[str]:
    """The VRFs the management interfaces are in (their `vrf <name>` lines)."""
    return frozenset(line.split()[1] for block in blocks(config)
                     if _is_interface(block[0], management)
                     for line in block[1:] if line.split()[:1] == ["vrf"]
                     and len(line.split()) == 2)


def _is_interface(line: str, names: tuple[str, ...]) -> bool:
    words = line.split()
    return len(words) == 2 and words[0] == "interface" and words[1] in names


def owner(line: str, management: tuple[str, ...], vrfs: frozenset[str]) -> str | None:
    """The section a top-level line opens, None for what flatfab does not own."""
    if _is_interface(line, management):
        return None
    words = line.split()
    # `vrf instance MGMT`, `ip route vrf MGMT ...`, `no ip routing vrf MGMT`
    if any(word in ("vrf", "instance") and following in vrfs
           for word, following in itertools.pairwise(words)):
        return None
    return section_of(line)


def owned(config: str, management: tuple[str, ...]) -> str:
    """Only the blocks flatfab renders, in the order they appear (for drift)."""
    vrfs = management_vrfs(config, management)
    return "".join(f"{line}\n" for block in blocks(config)
                   if owner(block[0], management, vrfs) is not None for line in block)


def merge_into(running: str, intended: str, management: tuple[str, ...]) -> str:
    """The full config a replace needs: the running config's blocks flatfab does not own
    (management interfaces and VRF, management api, users, aaa), then the intended config."""
    vrfs = management_vrfs(running, management)
    kept = [line for block in blocks(running) if owner(block[0], management, vrfs) is None
            for line in block]
    return "".join(f"{line}\n" for line in kept) + intended


def split_sections(config: str, management: tuple[str, ...] = ()) -> dict[str, list[str]]:
    """Every line of a rendered config lands in a section: a top-level `!` goes with the
    block after it (the last ones with the last block)."""
    out: dict[str, list[str]] = {}
    current: str | None = None
    separators: list[str] = []
    vrfs = management_vrfs(config, management) if management else frozenset()
    for raw in config.splitlines():
        line = raw.rstrip()
        if not line.strip() or line == "end":
            continue
        if line.startswith("!"):
            separators.append(line)
            continue
        if not line.startswith(" "):
            current = owner(line, management, vrfs)
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
