"""The platform contract, checked the same way for every registered platform.

Per-platform suites (tests/platforms/<platform>/) drive each driver against a stateful double
of its device (tests/doubles/); this module holds what every platform must satisfy alike:
facts that load and name things the platform can spell, a render in some example fabric, a
section split that loses no line, a read-only guard, layers above the platforms that speak
no platform's vocabulary, and layers that import only downwards.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

import pytest
from nornir.core.plugins.connections import ConnectionPluginRegister

from flatfab.intent.loader import load_intent
from flatfab.model.state import DeviceState, Role
from flatfab.plan.planner import plan
from flatfab.platforms.base import (
    CommitConfirm,
    DeviceDriver,
    Platform,
    ReadOnlyDriver,
    ReadOnlyError,
    ReadOnlyGuard,
)
from flatfab.platforms.registry import PLATFORMS

ROOT = Path(__file__).resolve().parents[2]
INTENTS = sorted(p for p in (ROOT / "intents").iterdir() if (p / "fabric.yaml").exists())
NEUTRAL_LAYERS = ("tasks/plan", "tasks/checks", "tasks/workflows", "tasks/lab", "tasks/reports",
                  "tasks/intent", "tasks/runbook", "tasks/sot", "tasks/distributed",
                  "tasks/scaffold")


def _spellings(platform: Platform) -> list[str]:
    """The names that are one platform's own: its ports, loopback, gateways and VRFs (from
    its naming) and what its data file lists under `vocabulary`."""
    found = list(platform.facts.vocabulary)
    naming = platform.facts.naming
    if naming is not None:
        for pattern in (naming.physical, naming.gateway, naming.vrf):
            head = pattern.split("{", 1)[0]
            if head:
                found.append(re.escape(head) + r"\w*")
        found.append(re.escape(naming.loopback))
    return found


# spellings that belong to one platform's folder, never to the layers above it
VOCABULARY = re.compile("[\"'](" + "|".join(sorted({s for p in PLATFORMS.values()
                                                   for s in _spellings(p)})) + ")[\"']")


def _devices() -> dict[str, list[DeviceState]]:
    by_platform: dict[str, list[DeviceState]] = {}
    for directory in INTENTS:
        state = plan(load_intent(directory, known_platforms=PLATFORMS))
        for device in state.devices.values():
            by_platform.setdefault(device.platform, []).append(device)
    return by_platform


DEVICES = _devices()


@pytest.fixture(params=sorted(PLATFORMS), ids=str)
def platform(request: pytest.FixtureRequest) -> Platform:
    return PLATFORMS[request.param]


@pytest.fixture(params=sorted(n for n, p in PLATFORMS.items() if p.facts.role == "switch"),
                ids=str)
def switch_platform(request: pytest.FixtureRequest) -> Platform:
    return PLATFORMS[request.param]


def test_every_platform_renders_in_some_example_fabric(platform: Platform) -> None:
    """A platform without a planned device in intents/ has no golden render."""
    assert DEVICES.get(platform.name), f"no example fabric uses {platform.name}"


def test_facts_are_consistent(platform: Platform) -> None:
    facts = platform.facts
    assert facts.sections and len(set(facts.sections)) == len(facts.sections)
    assert (facts.naming is not None) == (facts.role == "switch")
    ConnectionPluginRegister.auto_register()  # what InitNornir does
    assert facts.connection.plugin in ConnectionPluginRegister.available, (
        f"{facts.connection.plugin!r} is not a registered Nornir connection plugin")
    assert platform.commit_confirm == (facts.capabilities.commit_confirm
                                       is not CommitConfirm.NONE)


def test_switch_names_are_names_the_platform_accepts(switch_platform: Platform) -> None:
    names = switch_platform.names
    for number in range(1, 129):
        port = names.physical(number)
        assert names.is_port(port), port
        assert names.problem(port) is None
        for vlan in (1, 100, 4094):
            assert names.problem(names.subinterface(port, vlan)) is None
    assert names.problem(names.loopback) is None
    assert names.problem(names.gateway(None)) is None
    assert names.tenant_of(names.vrf("blue")) == "blue"


def test_render_is_deterministic_and_splits_into_its_sections(platform: Platform) -> None:
    for device in DEVICES.get(platform.name, [])[:6]:
        text = platform.render(device)
        assert text == platform.render(device.model_copy(deep=True))
        sections = platform.sections(text)
        assert set(sections) <= set(platform.facts.sections), (device.name, set(sections))
        kept = sorted(line for lines in sections.values() for line in lines)
        body = sorted(line for line in text.splitlines()
                      if line.strip() and not line.startswith("!! "))
        assert kept == body, f"{device.name}: the section split lost or added lines"


def test_switch_platforms_render_every_role(switch_platform: Platform) -> None:
    roles = {d.role for d in DEVICES.get(switch_platform.name, [])}
    assert roles & {Role.SPINE, Role.LEAF}


class _Recorder:
    """A device driver that records every call it gets."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def __getattr__(self, name: str) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            self.calls.append(name)
            if name == "cli":
                return dict.fromkeys(args[0], "")
            return {"running": "", "startup": "", "candidate": ""}
        return call


MUTATING = ("load_replace_candidate", "load_merge_candidate", "commit_config",
            "confirm_commit", "rollback")


def test_the_read_only_guard_refuses_every_change(platform: Platform) -> None:
    inner = _Recorder()
    guarded = platform.read_only(inner)  # type: ignore[arg-type]
    if platform.facts.capabilities.read_only is ReadOnlyGuard.TRANSPORT:
        assert guarded is inner  # opened read-only: the SSH transport refuses changes
        return
    assert isinstance(guarded, ReadOnlyDriver)
    for method in MUTATING:
        with pytest.raises(ReadOnlyError):
            getattr(guarded, method)()
    with pytest.raises(ReadOnlyError):
        guarded.cli(["configure terminal"])
    guarded.get_config(retrieve="running")
    assert inner.calls == ["get_config"]


def test_a_double_satisfies_the_driver_protocol() -> None:
    assert isinstance(_Recorder(), DeviceDriver)


def _python_files(layer: str) -> list[Path]:
    return sorted((ROOT / layer).rglob("*.py"))


@pytest.mark.parametrize("layer", NEUTRAL_LAYERS)
def test_layers_above_the_platforms_speak_no_platform_vocabulary(layer: str) -> None:
    found = []
    for path in _python_files(layer):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if VOCABULARY.search(line.split("#", 1)[0]):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not found, "\n".join(found)


def test_checks_never_import_the_planner() -> None:
    """A check that reuses the planner's helpers cannot catch the planner's bugs."""
    for path in _python_files("tasks/checks"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                assert not node.module.startswith("flatfab.plan"), (path, node.module)


# what each layer must never import: layers depend downwards only (model, qos, platforms' base,
# intent, plan, checks, platforms, then workflows, lab, sot, distributed, cli, and the
# documentation site's generators on top)
ABOVE = ("flatfab.workflows", "flatfab.lab", "flatfab.sot", "flatfab.distributed", "flatfab.cli",
         "flatfab.reports", "flatfab.runbook", "flatfab.docsite",
         "flatfab.scaffold")
FORBIDDEN_IMPORTS = {
    "tasks/model": ("flatfab.intent", "flatfab.plan", "flatfab.checks", "flatfab.platforms",
                    *ABOVE),
    "tasks/qos": ("flatfab.intent", "flatfab.plan", "flatfab.checks", "flatfab.platforms",
                  *ABOVE),
    "tasks/intent": ("flatfab.plan", "flatfab.checks", *ABOVE),  # platforms.base: the contract
    "tasks/plan": ("flatfab.checks", *ABOVE),
    "tasks/checks": ("flatfab.plan", *ABOVE),
    "tasks/platforms": ("flatfab.plan", "flatfab.checks", *ABOVE),
    "tasks/workflows": ("flatfab.sot", "flatfab.distributed", "flatfab.cli", "flatfab.docsite"),
    "tasks/lab": ("flatfab.sot", "flatfab.distributed", "flatfab.cli", "flatfab.docsite"),
    "tasks/sot": ("flatfab.distributed", "flatfab.cli", "flatfab.docsite"),
    # Celery stays out of every layer below it
    "tasks/distributed": ("flatfab.cli", "flatfab.docsite"),
    "tasks/scaffold": ("flatfab.sot", "flatfab.distributed", "flatfab.cli", "flatfab.docsite"),
    "tasks/cli": ("flatfab.docsite",),  # the CLI never needs its own documentation
}


def _imports(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            found += [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            found += [a.name for a in node.names]
    return found


@pytest.mark.parametrize("layer", sorted(FORBIDDEN_IMPORTS))
def test_layers_import_only_downwards(layer: str) -> None:
    """No cycle between layers: a layer that imported one above it (the workflows and the
    source of truth once did, both ways) could not be tested or replaced on its own."""
    found = [f"{path.relative_to(ROOT)}: {module}"
             for path in _python_files(layer) for module in _imports(path)
             if any(module == f or module.startswith(f"{f}.") for f in FORBIDDEN_IMPORTS[layer])]
    assert not found, "\n".join(found)


# the option of each connection plugin that keeps host keys checked: a real inventory
# (`flatfab init`) sets it, never leaves it to the plugin's default
STRICT_HOST_KEYS = {"netmiko": "extras.ssh_strict", "scrapli": "extras.auth_strict_key"}


def test_inventory_options_say_why_and_keep_host_keys_checked(platform: Platform) -> None:
    options = platform.inventory_options()
    keys = [o.key for o in options]
    assert len(keys) == len(set(keys)), keys
    assert all(o.why and o.key.split(".")[0] in {"extras", "port", "hostname", "username",
                                                   "platform"} for o in options)
    strict = STRICT_HOST_KEYS.get(platform.facts.connection.plugin)
    if strict is not None:
        assert any(o.key == strict and o.value is True and o.active for o in options)
