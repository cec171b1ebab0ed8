"""Capability flags decide behaviour and agree with the platform's code: a flag and the
method it names are declared together or the platform fails at import; verify --traffic
reads counters only where a platform keeps them and refuses hosts that cannot send."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from flatfab.errors import InputError
from flatfab.intent.loader import load_intent
from flatfab.plan.planner import plan
from flatfab.platforms.eos import EosPlatform
from flatfab.platforms.linux_host import LinuxHostPlatform
from flatfab.platforms.registry import PLATFORMS
from flatfab.workflows.commands.traffic import counted_switches, run_traffic
from tests.support.paths import ROOT


def test_every_registered_platform_declares_what_it_implements() -> None:
    for platform in PLATFORMS.values():
        caps = platform.facts.capabilities
        assert caps.traffic_source == (platform.name == "linux_host"), platform.name
        assert caps.class_counters == (platform.name in {"frr", "sonic", "nvue"}), platform.name


@pytest.mark.parametrize(("cls", "facts", "flag", "value"), [
    (EosPlatform, "eos", "class_counters: false", "class_counters: true"),
    (LinuxHostPlatform, "linux_host", "traffic_source: true", "traffic_source: false"),
])
def test_a_flag_that_disagrees_with_the_code_fails_at_import(
        tmp_path: Path, cls: type, facts: str, flag: str, value: str) -> None:
    source = ROOT / "tasks" / "platforms" / facts / "platform.yaml"
    target = tmp_path / "platform.yaml"
    shutil.copy(source, target)
    text = target.read_text(encoding="utf-8")
    assert flag in text
    target.write_text(text.replace(flag, value), encoding="utf-8")
    with pytest.raises(ValueError, match=value.split(":", maxsplit=1)[0]):
        cls(target)


def test_traffic_reads_counters_only_where_a_platform_keeps_them() -> None:
    mixed = plan(load_intent(ROOT / "intents" / "mixed"))
    counted = counted_switches(mixed)
    for name, device in mixed.devices.items():
        if device.role.value == "host":
            assert name not in counted
        else:
            assert (name in counted) == (device.platform in {"frr", "sonic", "nvue"}), name
    assert any(d.platform == "eos" for d in mixed.devices.values())


def test_traffic_from_hosts_that_cannot_send_is_refused_before_any_device() -> None:
    lab = plan(load_intent(ROOT / "intents" / "lab"))
    for device in lab.devices.values():
        if device.role.value == "host":
            device.platform = "eos"  # a platform without traffic_source
    with pytest.raises(InputError, match="cannot send test flows"):
        run_traffic(None, lab)  # type: ignore[arg-type]  # refused before any device
