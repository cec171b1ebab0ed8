"""An NX-OS config (rendered, or `show running-config`) split into flatfab's named sections.

A top-level line opens a block and its indented lines belong to it; the block's first
words name its section. What flatfab does not render (mgmt0, users, aaa, the boot lines,
NX-OS's own defaults) belongs to no section, so drift reports only what flatfab owns.
"""

from __future__ import annotations

from flatfab.platforms.nxos import lbmode
from flatfab.platforms.sections import cli_blocks

# first words of a top-level line -> section; the longest prefix wins
SECTION_OF: dict[str, str] = {
    "hostname": "system",
    "ip load-sharing": "system",  # ECMP hashing (hashing.py): one global line
    "hardware profile ecmp resilient": "system",  # its resilient mode (lbmode.py)
    "feature": "features",
    "vlan": "vlans",
    "vrf context": "vrfs",
    "class-map type qos": "qos",
    "policy-map type qos": "qos",
    "policy-map type network-qos": "qos",
    "policy-map type queuing": "qos",
    "system qos": "qos",
    "priority-flow-control": "pfc",
    "interface": "interfaces",
    "router bgp": "bgp",
}
_PREFIXES = sorted(SECTION_OF, key=len, reverse=True)
# NX-OS's own blocks flatfab never writes, though their first words look like its own
FOREIGN = ("vlan 1", "vrf context management", "interface mgmt0")
# the features flatfab turns on; others (nxapi, scp-server, ...) are the operator's and a
# configure replace must keep them
FEATURES = ("feature bgp", "feature interface-vlan", "feature lldp")
# MQC objects are flatfab's by name: an operator's own class or policy maps stay theirs
_MQC = ("class-map ", "policy-map ")
PREFIX = "FLATFAB-"
LOAD_SHARING = "ip load-sharing "


def section_of(line: str) -> str | None:
    if line in FOREIGN:
        return None
    if line.startswith("feature ") and line not in FEATURES:
        return None
    if line.startswith(_MQC) and not line.rsplit(maxsplit=1)[-1].startswith(PREFIX):
        return None
    for prefix in _PREFIXES:
        if line == prefix or line.startswith(prefix + " "):
            return SECTION_OF[prefix]
    return None


def split_sections(config: str) -> dict[str, list[str]]:
    """Every rendered line lands in a section; `!` and `!Command:`/`!Time:` comment lines
    and blank lines are not content."""
    out: dict[str, list[str]] = {}
    current: str | None = None
    for raw in config.splitlines():
        line = raw.rstrip()
        if not line.strip() or line.lstrip().startswith("!"):
            continue
        if not line.startswith(" "):
            current = section_of(line)
        if current is not None:
            out.setdefault(current, []).append(line)
    return out


def blocks(config: str) -> list[list[str]]:
    return cli_blocks(config)


def owned(config: str, load_sharing: bool = True) -> str:
    """Only the blocks flatfab renders, in the order they appear (for drift); without
    `load_sharing` (a plan that leaves the hashing alone) the switch's `ip load-sharing`
    and `hardware profile ecmp resilient` lines are the operator's, not drift."""
    return "".join(f"{line}\n" for block in blocks(config)
                   if section_of(block[0]) is not None
                   and (load_sharing or not _load_sharing(block[0])) for line in block)


def _load_sharing(line: str) -> bool:
    """A top-level line of the switch's ECMP balancing: hashing or its resilient mode."""
    return line.startswith(LOAD_SHARING) or lbmode.owned(line)


def merge_into(running: str, intended: str) -> str:
    """The full config a `configure replace` needs: the running config's blocks flatfab
    does not own (management, users, aaa, boot), then the intended config. A plan without
    hashing keeps the running `ip load-sharing` and `hardware profile ecmp resilient` lines:
    the replace would otherwise take the operator's hashing away. A plan with hashing owns
    both: a resilient line it does not render is removed (lbmode.change_notes: a reload)."""
    planned = any(_load_sharing(line) for line in intended.splitlines())
    kept = [line for block in blocks(running)
            if section_of(block[0]) is None or (not planned and _load_sharing(block[0]))
            for line in block]
    return "".join(f"{line}\n" for line in kept) + intended
