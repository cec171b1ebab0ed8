"""`show running-config` of an NX-OS switch read back into the lossless model.

NX-OS keeps its lossless plane in MQC policies (Cisco N9K QoS guide): the `type qos` input
policy of a port classifies DSCP to qos-groups, the `type network-qos` policy of `system
qos` makes classes no-drop (`pause pfc-cos`), the `type queuing` output policy (the port's
own, else the system's) schedules and ECN-marks, and `priority-flow-control` lines turn
PFC and its watchdog on. The running config is the source of truth for all of it. What
NX-OS does not let an operator set (the PG a class uses, the buffer profiles) is fixed by
the hardware: the planned values stand in for it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from flatfab.model.state import EcnProfile, PortQos, QueueQos, Watchdog
from flatfab.platforms.nxos import lbmode
from flatfab.platforms.nxos.sections import blocks

_ECN = re.compile(r"^random-detect minimum-threshold (\d+) (bytes|kbytes|mbytes) "
                  r"maximum-threshold (\d+) (bytes|kbytes|mbytes) drop-probability (\d+)"
                  r"(?: weight \d+)? ecn$")
_UNIT = {"bytes": 1, "kbytes": 1000, "mbytes": 1_000_000}
_QUEUE = re.compile(r"^class type queuing c-out-8q-q(\d|-default)$")
_NQ = re.compile(r"^class type network-qos c-8q-nq(\d|-default)$")
_WATCHDOG = {"priority-flow-control watch-dog interval": "interval",
             "priority-flow-control watch-dog shutdown-multiplier": "shutdown",
             "priority-flow-control auto-restore multiplier": "restore"}


def _queue_number(text: str) -> int:
    return 0 if text == "-default" else int(text)


@dataclass
class NxosConfig:
    """What flatfab reads from one running config."""

    interfaces: dict[str, list[str]] = field(default_factory=dict)
    class_maps: dict[str, list[int]] = field(default_factory=dict)  # type qos: DSCP values
    qos_policies: dict[str, dict[str, int]] = field(default_factory=dict)  # class -> group
    nq_policies: dict[str, list[str]] = field(default_factory=dict)
    queuing: dict[str, list[str]] = field(default_factory=dict)
    system: list[str] = field(default_factory=list)
    globals: list[str] = field(default_factory=list)
    vrfs: list[str] = field(default_factory=list)
    load_sharing: list[str] = field(default_factory=list)  # global `ip load-sharing` lines
    resilient: list[str] = field(default_factory=list)  # `hardware profile ecmp resilient`
    dlb: list[str] = field(default_factory=list)  # a `hardware profile dlb` block, if any

    @classmethod
    def read(cls, text: str) -> NxosConfig:
        config = cls()
        for block in blocks(text):
            head, body = block[0], [line.strip() for line in block[1:]]
            words = head.split()
            if words[0] == "interface" and len(words) == 2:
                config.interfaces[words[1]] = body
            elif words[:2] == ["class-map", "type"] and words[2] == "qos":
                config.class_maps[words[-1]] = [
                    int(v) for line in body if line.startswith("match dscp ")
                    for v in _values(line.split()[-1])]
            elif words[:3] == ["policy-map", "type", "qos"]:
                config.qos_policies[words[-1]] = _qos_policy(body)
            elif words[:3] == ["policy-map", "type", "network-qos"]:
                config.nq_policies[words[-1]] = body
            elif words[:3] == ["policy-map", "type", "queuing"]:
                config.queuing[words[-1]] = body
            elif head == "system qos":
                config.system = body
            elif words[0] == "priority-flow-control":
                config.globals.append(head)
            elif words[:2] == ["ip", "load-sharing"]:
                config.load_sharing.append(head)
            elif lbmode.owned(head):
                config.resilient.append(head)
            elif head == lbmode.DLB or head.startswith(lbmode.DLB + " "):
                config.dlb += [head, *body]
            elif words[:2] == ["vrf", "context"] and len(words) == 3 \
                    and words[2] != "management":
                config.vrfs.append(words[2])
        return config

    def setting(self, interface: str, keyword: str) -> str | None:
        """The rest of an interface's line that starts with keyword (None when absent)."""
        for line in self.interfaces.get(interface, []):
            if line == keyword or line.startswith(keyword + " "):
                return line[len(keyword):].strip()
        return None

    def system_policy(self, kind: str) -> str | None:
        prefix = f"service-policy type {kind} "
        for line in self.system:
            if line.startswith(prefix):
                return line.split()[-1]
        return None


def _values(text: str) -> list[int]:
    """`26,48` or `24-31` as the DSCP values it names."""
    out: list[int] = []
    for part in text.split(","):
        low, _, high = part.partition("-")
        out += list(range(int(low), int(high or low) + 1))
    return out


def _qos_policy(body: list[str]) -> dict[str, int]:
    groups: dict[str, int] = {}
    current: str | None = None
    for line in body:
        if line.startswith("class "):
            current = line.split()[-1]
        elif line.startswith("set qos-group ") and current is not None:
            groups[current] = int(line.split()[-1])
    return groups


def dscp_map(config: NxosConfig, policy: str) -> list[int]:
    """DSCP -> qos-group of a classification policy (unmatched DSCP: class-default, 0)."""
    table = [0] * 64
    for klass, group in config.qos_policies.get(policy, {}).items():
        for dscp in config.class_maps.get(klass, []):
            if 0 <= dscp < 64 and not table[dscp]:
                table[dscp] = group
    return table


def no_drop(config: NxosConfig) -> list[int]:
    """The CoS values the system network-qos policy pauses."""
    body = config.nq_policies.get(config.system_policy("network-qos") or "", [])
    return sorted({int(line.split()[-1]) for line in body if line.startswith("pause pfc-cos ")
                   for _ in [0]})


def _queues(body: list[str], planned: PortQos) -> dict[int, QueueQos]:
    found: dict[int, list[str]] = {}
    current: int | None = None
    for line in body:
        if m := _QUEUE.match(line):
            current = _queue_number(m[1])
            found[current] = []
        elif current is not None:
            found[current].append(line)
    queues = {}
    for queue, plan in planned.queues.items():
        lines = found.get(queue, [])
        strict = any(line.startswith("priority level") for line in lines)
        weight = next((int(line.split()[-1]) for line in lines
                       if line.startswith("bandwidth remaining percent ")), None)
        ecn = None
        for line in lines:
            if m := _ECN.match(line):
                ecn = EcnProfile(min_bytes=int(m[1]) * _UNIT[m[2]],
                                 max_bytes=int(m[3]) * _UNIT[m[4]], probability=int(m[5]))
        # `bandwidth remaining percent 0` is how a queue without a share is written
        queues[queue] = QueueQos(strict=strict, weight=None if strict or not weight else weight,
                                 ecn=ecn, profile=plan.profile)
    return queues


def _watchdog(config: NxosConfig, port: str, pfc: list[int]) -> Watchdog | None:
    if not pfc or "priority-flow-control watch-dog-interval on" not in config.globals \
            or config.setting(port, "priority-flow-control watch-dog-interval") == "off":
        return None
    values: dict[str, int] = {}
    for line in config.globals:
        for prefix, name in _WATCHDOG.items():
            if line.startswith(prefix + " ") and line.split()[-1].isdigit():
                values[name] = int(line.split()[-1])
    unknown: dict[str, str] = {}
    interval = values.get("interval")
    if interval is None:
        unknown["poll_ms"] = ("no `priority-flow-control watch-dog interval` line: NX-OS "
                              "uses its own default")
    fields = {"detect_ms": "shutdown", "restore_ms": "restore"}
    timers: dict[str, int] = {}
    for name, key in fields.items():
        if key not in values or interval is None:
            unknown[name] = f"no watchdog {key} multiplier (or interval): NX-OS default"
            timers[name] = 0
        else:
            timers[name] = values[key] * interval
    return Watchdog(priorities=pfc, detect_ms=timers["detect_ms"],
                    restore_ms=timers["restore_ms"], poll_ms=interval or 0,
                    action="drop", unknown=unknown)


def port_qos(config: NxosConfig, port: str, planned: PortQos, mtu: int | None,
             speed_mbps: int | None) -> PortQos | None:
    """A port's lossless state (None when the port has no classification policy)."""
    policy = config.setting(port, "service-policy type qos input")
    if policy is None:
        return None
    mode = config.setting(port, "priority-flow-control mode")
    # `auto` follows DCBX, which flatfab never relies on: only `on` is lossless for sure
    pfc = no_drop(config) if mode == "on" else []
    queuing = (config.setting(port, "service-policy type queuing output")
               or config.system_policy("queuing output") or "")
    maps = planned.maps.model_copy(update={"dscp_to_tc": dscp_map(config, policy)})
    unknown = {}
    if mode is None:
        unknown["pfc"] = "no `priority-flow-control mode` line: NX-OS's default is auto (DCBX)"
    return PortQos(trust="dscp", maps=maps, pfc=pfc, watchdog=_watchdog(config, port, pfc),
                   pgs=planned.pgs, queues=_queues(config.queuing.get(queuing, []), planned),
                   speed_mbps=speed_mbps or planned.speed_mbps, cable_m=planned.cable_m,
                   mtu=mtu or planned.mtu, unknown=unknown)
