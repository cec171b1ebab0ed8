"""The `links` section of an frr switch config: Linux interface state FRR does not own.

FRR (zebra) holds addresses and routing; the kernel holds MTU, admin state, bridges and,
with FRR's netns VRF backend, which VRF namespace a port lives in. flatfab renders that
state as one line per interface, reads it back from `ip -j -d link`, and turns the
difference into iproute2 commands:

    link <name>[ vrf <vrf>][ type bridge][ master <bridge>] mtu <mtu> <up|down>

An interface that is down, at MTU 1500, in the default VRF, in no bridge and not a bridge
is unconfigured (the factory state) and has no line, so a replace that drops a line returns
the port to that state.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, replace

from flatfab import devicejson
from flatfab.model.state import DEFAULT_VRF
from flatfab.platforms.names import sort_interfaces

DEFAULT_MTU = 1500
LINE_RE = re.compile(
    r"^link (?P<name>\S+)(?: vrf (?P<vrf>\S+))?(?: type (?P<type>bridge))?"
    r"(?: master (?P<master>\S+))? mtu (?P<mtu>\d+) (?P<state>up|down)$")
SECTION_LINKS = "!! links"
SECTION_FRR = "!! frr"
SECTION_QOS = "!! qos"
SECTION_ECMP = "!! ecmp"  # flatfab.platforms.frr.ecmp
SECTIONS = {SECTION_LINKS: "links", SECTION_QOS: "qos", SECTION_ECMP: "ecmp",
            SECTION_FRR: "frr"}


class LinksError(ValueError):
    """A links line that does not parse, or a state that cannot be reached."""


@dataclass(frozen=True)
class LinkSpec:
    name: str
    vrf: str = DEFAULT_VRF
    bridge: bool = False
    master: str | None = None
    mtu: int = DEFAULT_MTU
    up: bool = False

    @property
    def unconfigured(self) -> bool:
        return (not self.up and self.mtu == DEFAULT_MTU and not self.master
                and not self.bridge and self.vrf == DEFAULT_VRF)

    def line(self) -> str:
        parts = [f"link {self.name}"]
        if self.vrf != DEFAULT_VRF:
            parts.append(f"vrf {self.vrf}")
        if self.bridge:
            parts.append("type bridge")
        if self.master:
            parts.append(f"master {self.master}")
        parts.append(f"mtu {self.mtu} {'up' if self.up else 'down'}")
        return " ".join(parts)


def _order(specs: dict[str, LinkSpec]) -> list[LinkSpec]:
    vrfs = sorted({s.vrf for s in specs.values()}, key=lambda v: (v != DEFAULT_VRF, v))
    out = []
    for vrf in vrfs:
        names = [n for n, s in specs.items() if s.vrf == vrf]
        out += [specs[n] for n in sort_interfaces(names)]
    return out


def format_links(specs: dict[str, LinkSpec]) -> str:
    return "".join(f"{s.line()}\n" for s in _order(specs) if not s.unconfigured)


def parse_links(text: str) -> dict[str, LinkSpec]:
    specs: dict[str, LinkSpec] = {}
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith(("!", "#")):
            continue
        match = LINE_RE.match(line)
        if match is None:
            raise LinksError(f"links line {number}: cannot parse {line!r}")
        name = match["name"]
        if name in specs:
            raise LinksError(f"links line {number}: {name} is given twice")
        specs[name] = LinkSpec(name=name, vrf=match["vrf"] or DEFAULT_VRF,
                               bridge=match["type"] == "bridge", master=match["master"],
                               mtu=int(match["mtu"]), up=match["state"] == "up")
    for spec in specs.values():
        if spec.master and (spec.master not in specs or not specs[spec.master].bridge):
            raise LinksError(f"{spec.name}: master {spec.master} is not a bridge in the config")
        if spec.master and specs[spec.master].vrf != spec.vrf:
            raise LinksError(f"{spec.name}: bridge {spec.master} is in another VRF")
    return specs


def sections(text: str) -> dict[str, str]:
    """Section name ('links', 'qos', 'frr') -> its text; text before any marker is frr."""
    parts: dict[str, list[str]] = {}
    target = parts.setdefault("frr", [])
    for line in text.splitlines():
        if line in SECTIONS:
            target = parts.setdefault(SECTIONS[line], [])
        else:
            target.append(line)
    out = {name: "\n".join(lines).strip("\n") + "\n" for name, lines in parts.items()}
    if "links" in out:
        out["links"] = "\n".join(parts["links"]) + "\n"
    return out


def split_sections(text: str) -> tuple[str | None, str]:
    """(links text or None when the config does not manage links, frr text)."""
    found = sections(text)
    return found.get("links"), found.get("frr", "\n")


def qos_section(text: str) -> str | None:
    """The qos section (virtual ASIC and kernel queues, JSON), None when not managed."""
    return sections(text).get("qos")


def ecmp_section(text: str) -> str | None:
    """The ecmp section (the kernel's multipath hashing), None when not managed."""
    return sections(text).get("ecmp")


def join_sections(links: str, frr: str, qos: str | None = None,
                  ecmp: str | None = None) -> str:
    middle = f"{SECTION_QOS}\n{qos}" if qos is not None else ""
    hashing = f"{SECTION_ECMP}\n{ecmp}" if ecmp is not None else ""
    return f"{SECTION_LINKS}\n{links}{middle}{hashing}{SECTION_FRR}\n{frr}"


def from_ip_json(outputs: dict[str, str], ignore: set[str]) -> dict[str, LinkSpec]:
    """Running state from `ip -j -d link show` per namespace ('default' or a VRF name).

    What iproute2 adds (altnames, link_netnsid, linkinfo of kinds flatfab does not make,
    ...) is ignored. A link without an `mtu` (iproute2 leaves it out for some kinds) is not
    one flatfab can manage, so it has no line: a candidate that names it is refused as a
    missing interface rather than judged against a guessed MTU.
    """
    specs: dict[str, LinkSpec] = {}
    for vrf, text in outputs.items():
        try:
            links = devicejson.loads(text or "[]")
        except ValueError as exc:
            raise LinksError(f"ip -j link output of VRF {vrf} is not JSON: {exc}") from None
        if not isinstance(links, list):
            raise LinksError(f"ip -j link output of VRF {vrf} is not a list")
        for link in links:
            if not isinstance(link, dict):
                continue
            name = link.get("ifname", "")
            mtu = link.get("mtu")
            if not isinstance(name, str) or not name or name in ignore or name == "lo":
                continue
            if not isinstance(mtu, int) or isinstance(mtu, bool):
                continue
            info = link.get("linkinfo")
            kind = info.get("info_kind") if isinstance(info, dict) else None
            master = link.get("master")
            flags = link.get("flags")
            specs[name] = LinkSpec(name=name, vrf=vrf, bridge=kind == "bridge",
                                   master=master if isinstance(master, str) else None,
                                   mtu=mtu, up=isinstance(flags, list) and "UP" in flags)
    return specs


def plan_ops(current: dict[str, LinkSpec], desired: dict[str, LinkSpec]) -> list[str]:
    """iproute2 commands (for `sh`, run in the switch's default netns) from current to desired.

    With the netns VRF backend a VRF is a namespace named after it; `netns $$` moves a port
    back to the namespace of the shell, which is the switch's own.
    """

    def ip(vrf: str) -> str:
        return "ip" if vrf == DEFAULT_VRF else f"ip -n {shlex.quote(vrf)}"

    missing = [n for n, s in desired.items() if n not in current and not s.bridge]
    if missing:
        raise LinksError(f"no such interface on the device: {', '.join(missing)}")
    retyped = [n for n, s in desired.items() if n in current and current[n].bridge != s.bridge]
    if retyped:
        # a bridge cannot become a port (or the reverse) in place: say so instead of guessing
        raise LinksError(f"cannot change between bridge and port: {', '.join(sorted(retyped))}")
    ops: list[str] = []
    state = dict(current)
    # 1. release ports and remove bridges that are no longer wanted
    for name, cur in current.items():
        want = desired.get(name)
        if cur.bridge and (want is None or not want.bridge or want.vrf != cur.vrf):
            ops.append(f"{ip(cur.vrf)} link del {name}")
            del state[name]
        elif cur.master and (want is None or want.master != cur.master or want.vrf != cur.vrf):
            ops.append(f"{ip(cur.vrf)} link set {name} nomaster")
            state[name] = replace(cur, master=None)
    # 2. create bridges, move ports between VRF namespaces
    for name, want in desired.items():
        cur_or_none = state.get(name)
        if want.bridge and cur_or_none is None:
            ops.append(f"{ip(want.vrf)} link add {name} type bridge")
            state[name] = LinkSpec(name=name, vrf=want.vrf, bridge=True)
        elif cur_or_none is not None and cur_or_none.vrf != want.vrf:
            target = "$$" if want.vrf == DEFAULT_VRF else shlex.quote(want.vrf)
            ops.append(f"{ip(cur_or_none.vrf)} link set {name} netns {target}")
            state[name] = replace(cur_or_none, vrf=want.vrf, up=False)
    # 3. ports that are no longer configured go back to the unconfigured state
    for name, cur in list(state.items()):
        if name not in desired and not cur.unconfigured:
            ops.append(f"{ip(cur.vrf)} link set {name} down mtu {DEFAULT_MTU}")
            if cur.vrf != DEFAULT_VRF:
                ops.append(f"{ip(cur.vrf)} link set {name} netns $$")
            state[name] = LinkSpec(name=name)
    # 4. mtu, bridge membership, admin state
    for want in _order(desired):
        cur = state[want.name]
        args = []
        if cur.mtu != want.mtu:
            args.append(f"mtu {want.mtu}")
        if want.master and cur.master != want.master:
            args.append(f"master {want.master}")
        if cur.up != want.up:
            args.append("up" if want.up else "down")
        if args:
            ops.append(f"{ip(want.vrf)} link set {want.name} {' '.join(args)}")
    return ops
