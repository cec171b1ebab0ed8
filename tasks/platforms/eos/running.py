"""`show running-config` of an EOS switch read back into the lossless model.

EOS keeps its lossless plane in configuration only (one DSCP map per switch, a qos profile
per port, switch-wide PFC watchdog timers, one Trident MMU queue profile), so the running
config is the source of truth for it, as CONFIG_DB is on SONiC. What EOS does not let an
operator set (TC -> PG/queue, PFC -> PG/queue maps, pools) is fixed by the hardware; the
planned values stand in for it, as they are the hardware's defaults flatfab plans with.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from flatfab.model.state import (
    BufferProfile,
    DeviceQos,
    EcnProfile,
    PortQos,
    QueueQos,
    Watchdog,
)

_MAP = re.compile(r"^qos map dscp ([\d ]+) to traffic-class (\d)$")
_ECN = re.compile(r"^random-detect ecn minimum-threshold (\d+) bytes maximum-threshold (\d+) "
                  r"bytes max-mark-probability (\d+)$")
_WATCHDOG_TIMER = re.compile(
    r"^priority-flow-control pause watchdog default (timeout|recovery-time|polling-interval) "
    r"(\S+)$")
_PORT_TIMER = "priority-flow-control pause watchdog port timer "
_TIMER_FIELDS = {"timeout": "detect_ms", "recovery-time": "restore_ms",
                 "polling-interval": "poll_ms"}
TRUST = {"dscp": "dscp", "cos": "pcp"}
# Trident alpha -> flatfab's dynamic_th (alpha 2^n)
ALPHA_EXPONENT = {"1/128": -7, "1/64": -6, "1/32": -5, "1/16": -4, "1/8": -3, "1/4": -2,
                  "1/2": -1, "1": 0, "2": 1, "4": 2, "8": 3}


@dataclass
class Block:
    line: str
    children: list[Block] = field(default_factory=list)

    def lines(self) -> list[str]:
        return [child.line for child in self.children]


def parse(text: str) -> list[Block]:
    """Indented EOS config into blocks (`!` separators and `end` dropped)."""
    roots: list[Block] = []
    stack: list[tuple[int, Block]] = []
    for raw in text.splitlines():
        stripped = raw.strip()
        if not stripped or stripped.startswith("!") or stripped == "end":
            continue
        depth = len(raw) - len(raw.lstrip(" "))
        block = Block(stripped)
        while stack and stack[-1][0] >= depth:
            stack.pop()
        (stack[-1][1].children if stack else roots).append(block)
        stack.append((depth, block))
    return roots


@dataclass
class EosConfig:
    """What flatfab reads from one running config."""

    blocks: list[Block]
    interfaces: dict[str, Block] = field(default_factory=dict)
    profiles: dict[str, Block] = field(default_factory=dict)
    dscp_to_tc: dict[int, int] = field(default_factory=dict)
    watchdog_timers: dict[str, str] = field(default_factory=dict)  # seconds, or "auto"
    watchdog_action: str | None = None
    mmu: Block | None = None
    vrfs: list[str] = field(default_factory=list)

    @classmethod
    def read(cls, text: str) -> EosConfig:
        config = cls(parse(text))
        for block in config.blocks:
            words = block.line.split()
            if words[0] == "interface" and len(words) == 2:
                config.interfaces[words[1]] = block
            elif words[:2] == ["qos", "profile"] and len(words) == 3:
                config.profiles[words[2]] = block
            elif words[:2] == ["vrf", "instance"] and len(words) == 3:
                config.vrfs.append(words[2])
            elif m := _MAP.match(block.line):
                for dscp in m[1].split():
                    config.dscp_to_tc[int(dscp)] = int(m[2])
            elif m := _WATCHDOG_TIMER.match(block.line):
                config.watchdog_timers[m[1]] = m[2]
            elif block.line.startswith("priority-flow-control pause watchdog action "):
                config.watchdog_action = words[-1]
            elif block.line.startswith("platform trident mmu queue profile ") and len(words) == 6:
                config.mmu = block
        return config

    def setting(self, interface: str, keyword: str) -> str | None:
        """The rest of an interface's line that starts with keyword (None when absent)."""
        block = self.interfaces.get(interface)
        for line in block.lines() if block is not None else []:
            if line == keyword or line.startswith(keyword + " "):
                return line[len(keyword):].strip()
        return None


def dscp_map(config: EosConfig) -> tuple[list[int], list[int]]:
    """The switch's DSCP -> TC table and the code points the config leaves unmapped
    (those keep EOS's own default, which flatfab does not assume: they read as TC 0)."""
    missing = [d for d in range(64) if d not in config.dscp_to_tc]
    return [config.dscp_to_tc.get(d, 0) for d in range(64)], missing


def _queues(profile: Block, planned: PortQos) -> dict[int, QueueQos]:
    configured: dict[int, Block] = {}
    for child in profile.children:
        words = child.line.split()
        if words[0] == "tx-queue" and len(words) == 2 and words[1].isdigit():
            configured[int(words[1])] = child
    queues = {}
    for queue, plan in planned.queues.items():
        block = configured.get(queue)
        lines = block.lines() if block is not None else []
        weight = ecn = None
        for line in lines:
            if line.startswith("bandwidth percent "):
                weight = int(line.split()[-1])
            elif m := _ECN.match(line):
                ecn = EcnProfile(min_bytes=int(m[1]), max_bytes=int(m[2]),
                                 probability=int(m[3]))
        # a tx-queue not told otherwise is strict on EOS
        strict = "no priority" not in lines
        queues[queue] = QueueQos(strict=strict, weight=None if strict else weight, ecn=ecn,
                                 profile=plan.profile)
    return queues


def _watchdog(config: EosConfig, profile: Block, pfc: list[int],
              planned: PortQos) -> Watchdog | None:
    """The watchdog as configured: the switch-wide action and `default` timers, overridden
    by the profile's `port action` and `port timer` lines. A setting no line gives (no action
    line, no timeout line, `polling-interval auto`) is unknown with the reason: EOS then
    acts on its own default or computes it, which flatfab does not assume."""
    lines = profile.lines()
    if "priority-flow-control pause watchdog" not in lines or not pfc:
        return None
    unknown: dict[str, str] = {}
    action = config.watchdog_action
    timers = dict(config.watchdog_timers)
    for line in lines:
        if line.startswith("priority-flow-control pause watchdog port action "):
            action = line.split()[-1]
        elif line.startswith(_PORT_TIMER):
            words = line[len(_PORT_TIMER):].split()
            timers |= {k: v for k, v in zip(words[::2], words[1::2], strict=False)
                       if k in _TIMER_FIELDS}
    if action is None:
        unknown["action"] = ("no `priority-flow-control pause watchdog action` line: EOS "
                             "applies its own default action")
    elif action == "notify-only" and planned.watchdog is not None \
            and planned.watchdog.action in {"notify", "alert"}:
        action = planned.watchdog.action  # EOS spells both notify-only
    values: dict[str, int] = {}
    for keyword, name in _TIMER_FIELDS.items():
        text = timers.get(keyword)
        try:
            values[name] = round(float(text or "") * 1000)
        except ValueError:
            values[name] = 0
            unknown[name] = (f"no `priority-flow-control pause watchdog default {keyword}` "
                             "line: EOS uses its own" if text is None else
                             f"{keyword} is {text!r}: EOS computes it")
    return Watchdog(priorities=pfc, action=action, unknown=unknown, **values)


def port_qos(config: EosConfig, port: str, planned: PortQos, mtu: int | None,
             speed_mbps: int | None) -> PortQos | None:
    """A port's lossless state from its service-profile (None when it has none)."""
    name = config.setting(port, "service-profile")
    profile = config.profiles.get(name or "")
    if profile is None:
        return None
    lines = profile.lines()
    # a setting on the interface itself wins over its profile's
    own = config.setting(port, "qos trust")
    written = own if own is not None else next(
        (line.split()[-1] for line in lines if line.startswith("qos trust ")), None)
    if written is None:
        # EOS's default trust follows the port mode: routed ports DSCP, switched ports CoS
        routed = config.setting(port, "no switchport") is not None
        written = "dscp" if routed else "cos"
    trust = TRUST.get(written, written)
    pfc = sorted(int(line.split()[2]) for line in lines
                 if re.fullmatch(r"priority-flow-control priority \d no-drop", line))
    if "priority-flow-control on" not in lines:
        pfc = []
    table, _ = dscp_map(config)
    maps = planned.maps.model_copy(update={"dscp_to_tc": table})
    return PortQos(trust=trust, maps=maps, pfc=pfc,
                   watchdog=_watchdog(config, profile, pfc, planned),
                   pgs=planned.pgs, queues=_queues(profile, planned),
                   speed_mbps=speed_mbps or planned.speed_mbps, cable_m=planned.cable_m,
                   mtu=mtu or planned.mtu)


def mmu_qos(config: EosConfig, planned: DeviceQos) -> DeviceQos | None:
    """Trident buffers: the active queue profile is switch-wide, so every lossless PG on
    every port has its headroom and reserve (None when no profile is configured)."""
    if config.mmu is None:
        return None
    headroom = 0
    reserved: dict[int, int] = {}
    thresholds: dict[int, int] = {}
    for line in config.mmu.lines():
        words = line.split()
        if line.startswith("ingress headroom bytes "):
            headroom = int(words[-1])
        elif words[:2] == ["ingress", "priority-group"] and words[3] == "reserved":
            reserved[int(words[2])] = int(words[-1])
        elif words[:2] == ["ingress", "priority-group"] and words[3] == "threshold":
            thresholds[int(words[2])] = ALPHA_EXPONENT.get(words[-1], 0)
    lossless_pgs = [pg for pg in reserved if pg != 0]
    share = headroom // max(len(lossless_pgs), 1)
    profiles = {}
    for name, profile in planned.profiles.items():
        if profile.xoff > 0 and lossless_pgs:
            pg = lossless_pgs[0]
            xon = reserved.get(pg, 0)
            profiles[name] = BufferProfile(pool=profile.pool, xon=xon, xoff=share,
                                           size=xon + share,
                                           dynamic_th=thresholds.get(pg, profile.dynamic_th))
        else:
            profiles[name] = profile
    return planned.model_copy(update={"profiles": profiles})
