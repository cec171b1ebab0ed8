"""What the per-device phase of a run does on one device: read its state, read its running
and intended config texts, diff it against its intended config.

These are the only places verify, audit and rollout's diff pass touch a device, in one
process or in the shards of a distributed run alike, so the device side of every one of
them is replaced in one place (a test double, tests/doubles/shard_devices.py). The
workflows call them through this module (`device_io.observe(...)`), never by a name
imported from it.
"""

from __future__ import annotations

from nornir.core.task import Task

from flatfab.model.state import DeviceState, Probe
from flatfab.platforms.readback import separate_limitations
from flatfab.platforms.registry import get as get_platform
from flatfab.workflows.devices.connections import driver


def observe(task: Task, planned: DeviceState, probes: list[Probe],
            read_only: bool, physical: bool = False) -> DeviceState:
    """The device's observed state (its probes sent), through its platform's collect, with
    its ports' physical layer when asked (`verify --physical`); the settings its OS never
    states (the platform's data file) set apart as limitations."""
    platform = get_platform(planned.platform)
    session = driver(task, read_only=read_only)
    device = platform.collect(session, planned, probes)
    if physical:
        for name, seen in platform.collect_physical(session, planned).items():
            if name in device.interfaces:
                device.interfaces[name].phy = seen
    caps = platform.facts.capabilities
    family = planned.qos.asic.family if planned.qos is not None else None
    separate_limitations(device, lambda setting: caps.unreadable_match(setting, family))
    return device


def config_texts(task: Task, intended: str) -> tuple[str, str]:
    """(running, intended) config text as the platform compares them, read-only."""
    platform = get_platform(str(task.host.platform))
    return platform.drift_texts(driver(task, read_only=True), intended)


def config_diff(task: Task, intended: str, read_only: bool) -> tuple[str, list[str]]:
    """The device's diff to `intended` and its platform's notes on it (a change the OS's
    safe-commit path refuses, a disruptive step), read without changing anything."""
    device = driver(task, read_only=read_only)
    platform = get_platform(str(task.host.platform))
    diff = platform.diff(device, intended, read_only=read_only)
    notes = platform.change_notes(*platform.drift_texts(device, intended)) if diff else []
    return diff, notes
