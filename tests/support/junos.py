"""The junos platform tests' helpers: a rendered device's configuration tree, Juniper's YANG
judging `forwarding-options` (which the oracle does not load), collect over the double, and a
switch's healthy outputs with its configuration changed by hand."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from flatfab.model.state import DeviceState, FabricState
from flatfab.platforms.junos import PLATFORM
from flatfab.platforms.junos import collect as junos_collect
from flatfab.platforms.junos.render import configuration
from flatfab.platforms.junos.text import Tree
from tests.doubles.junos import (
    JunosDevice,
    healthy_outputs,
    napalm_driver,
    without_attributes,
)
from tests.support.checks import live_findings
from tests.support.oracles import JUNOS, usable

LB_CHECKS = ["lb.roce_entropy", "lb.intent"]


def config_tree(device: DeviceState) -> Tree:
    tree: Tree = configuration(device, PLATFORM.names)["configuration"]
    return tree


def hash_key_violations(options: Tree) -> list[str]:
    """What Juniper's QFX YANG says of a rendered `forwarding-options`. The oracle does not
    load that hierarchy's module (it drops it with a note); its module and the
    routing-instances module the oracle loads define the same grouping
    (`juniper-forwarding-options`, statement for statement in 24.4R1), used there for a
    routing instance's `forwarding-options`: the rendered tree is judged in that place."""
    graft = {"configuration": {"routing-instances": {"instance": [
        {"name": "hash-check", "instance-type": "virtual-router",
         "forwarding-options": without_attributes(options)}]}}}
    usable(JUNOS)
    return JUNOS.tree_violations(graft)


def collected(planned: DeviceState, outputs: dict[str, str]) -> DeviceState:
    driver = PLATFORM.adapt(napalm_driver(JunosDevice(shows=outputs)), read_only=True)
    return PLATFORM.collect(PLATFORM.read_only(driver), planned, [])


def lb_findings(fabric: FabricState, seen: DeviceState) -> list[tuple[str, str | None, str]]:
    """The load-balancing checks' findings on `seen` (the rest of the fabric as planned)."""
    return [(f.check, f.device, f.message) for f in live_findings(fabric, seen, only=LB_CHECKS)
            if f.device == seen.name]


def changed_outputs(fabric: FabricState, name: str,
                    change: Callable[[dict[str, Any]], None]) -> dict[str, str]:
    """The healthy outputs of `name` with its configuration changed by `change`."""
    outputs = healthy_outputs(fabric, name)
    config = json.loads(outputs[junos_collect.CONFIG])
    change(config["configuration"])
    return {**outputs, junos_collect.CONFIG: json.dumps(config)}


def hash_key(config: dict[str, Any]) -> dict[str, Any]:
    key: dict[str, Any] = config["forwarding-options"]["enhanced-hash-key"]
    return key
