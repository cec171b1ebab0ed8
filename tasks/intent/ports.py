"""The ports each device will have, named the way its platform spells them, before planning.

A qos override's `ports` patterns are matched against these names when the lossless plane is
planned (flatfab.plan.lossless); a pattern that matches no port of the devices the override
names is a typo (swp99, Ethernet4 on a switch that counts by 8, swp1 on an EOS spine) and is
refused at load, with its key path and line, instead of silently changing nothing.

The names follow the planner's arithmetic (flatfab.plan.planner): a spine's downlink to a leaf
is port `spine_downlink_base + leaf id`, a leaf's uplink to a spine `leaf_uplink_base + spine
id`, a host's leaf port `leaf_host_base + host port`; a host's one port is its NIC. Only
physical ports take QoS, so sub-ports and gateways are not listed.
tests/intent/test_refusals.py holds these names equal to the plan's for every example fabric.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterator, Mapping

from flatfab.intent import layout
from flatfab.intent.layout import expand_hosts
from flatfab.intent.models import Intent
from flatfab.intent.problem import QOS, Problem
from flatfab.intent.qos import Override
from flatfab.platforms.base import Platform

SHOWN_DEVICES = 6  # devices a refusal names before "and N more"
SHOWN_PORTS = 4  # ports of the first device a refusal names as an example


def device_ports(intent: Intent, platforms: Mapping[str, Platform]) -> dict[str, list[str]]:
    """Device name -> its physical ports (switches in YAML order, then hosts)."""
    fabric = intent.fabric
    base = fabric.ports
    ports: dict[str, list[str]] = {}

    slots = layout.switches(fabric)
    # listed switches in YAML order (refusals name devices in that order)
    listed = [*fabric.spines, *fabric.leaves]
    for name in [s.name for s in listed] + [s.name for s in slots]:
        ports.setdefault(name, [])
    platform_of = {s.name: platforms[s.platform or fabric.platform] for s in slots}
    for cable in layout.cables(fabric, slots):
        ports[cable.upper].append(platform_of[cable.upper].names.physical(cable.upper_port))
        ports[cable.lower].append(platform_of[cable.lower].names.physical(cable.lower_port))
    hosts = expand_hosts(intent)
    for host in hosts:
        ports[host.leaf].append(
            platform_of[host.leaf].names.physical(base.leaf_host_base + host.port))
    for host in hosts:
        ports.setdefault(host.name, []).append(host.nic)
    return ports


def override_problems(intent: Intent, platforms: Mapping[str, Platform]) -> list[Problem]:
    """Port patterns, written in qos.yaml overrides, that match no port of their devices."""
    written = [(index, override) for index, override in enumerate(intent.qos.overrides)
               if "ports" in override.model_fields_set]
    if not written:
        return []  # the default ["*"] matches every port there is
    ports = device_ports(intent, platforms)
    return list(_unmatched(written, ports))


def _unmatched(written: list[tuple[int, Override]],
               ports: dict[str, list[str]]) -> Iterator[Problem]:
    for index, override in written:
        devices = [d for d in ports if any(fnmatch.fnmatchcase(d, p) for p in override.devices)]
        if not devices:
            continue  # refused as a device pattern that matches no device
        for p_index, pattern in enumerate(override.ports):
            if any(fnmatch.fnmatchcase(port, pattern) for d in devices for port in ports[d]):
                continue
            yield Problem(QOS, ("overrides", index, "ports", p_index),
                          f"{pattern!r} matches no port on {_devices(devices)}"
                          f"{_example(devices[0], ports[devices[0]])}")


def _devices(devices: list[str]) -> str:
    shown = ", ".join(devices[:SHOWN_DEVICES])
    more = len(devices) - SHOWN_DEVICES
    return shown if more <= 0 else f"{shown} and {more} more"


def _example(device: str, ports: list[str]) -> str:
    if not ports:
        return f" ({device} has no ports)"
    ordered = sorted(set(ports), key=_natural)
    shown = ", ".join(ordered[:SHOWN_PORTS])
    return f" ({device} has {shown}{', ...' if len(ordered) > SHOWN_PORTS else ''})"


def _natural(name: str) -> tuple[object, ...]:
    return tuple(int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name))
