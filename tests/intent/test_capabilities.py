"""Load-time refusals: what a platform, or a hardware family of it, cannot express is
refused with the file, key path and reason before anything is planned or rendered."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
import yaml

from flatfab.errors import InputError
from flatfab.intent.loader import load_intent
from flatfab.platforms.registry import PLATFORMS
from tests.support.flatfab import in_process
from tests.support.on_platform import balancing_for
from tests.support.paths import ROOT


def _intent(tmp_path: Path, example: str, platform: str, qos: dict[str, object]) -> Path:
    target = tmp_path / example
    shutil.copytree(ROOT / "intents" / example, target)
    fabric = target / "fabric.yaml"
    text = re.sub(r"(?m)^platform: \S+", f"platform: {platform}", fabric.read_text())
    # hashing's own refusals are tested in the checks' tests
    fabric.write_text(balancing_for(text, platform) if platform in PLATFORMS else text)
    qos_file = target / "qos.yaml"
    body = yaml.safe_load(qos_file.read_text()) if qos_file.exists() else {}
    body.update(qos)
    qos_file.write_text(yaml.safe_dump(body))
    return target


@pytest.mark.parametrize(("family", "reason"), [
    ("tomahawk-5", "Tomahawk EOS switches expose no configurable buffer profiles"),
    ("tomahawk-3", "Tomahawk EOS switches expose no configurable buffer profiles"),
    ("jericho-2", "Jericho EOS switches buffer per VOQ"),
    ("generic", "family 'generic' names no buffer hardware"),
])
def test_buffers_on_a_family_without_buffer_knobs_are_refused(tmp_path: Path, family: str,
                                                              reason: str) -> None:
    folder = _intent(tmp_path, "lab", "eos", {"asics": {"eos": {"family": family}},
                                              "buffers": {"mode": "dynamic"}})
    with pytest.raises(InputError) as caught:
        load_intent(folder, known_platforms=PLATFORMS)
    [problem] = caught.value.problems
    assert problem.file.endswith("qos.yaml") and problem.path == "buffers"
    assert f"platform eos on {family} hardware cannot do this (buffers)" in problem.reason
    assert reason in problem.reason


def test_buffers_on_trident_are_accepted(tmp_path: Path) -> None:
    folder = _intent(tmp_path, "lab", "eos", {"asics": {"eos": {"family": "trident-4"}},
                                              "buffers": {"mode": "dynamic"}})
    intent = load_intent(folder, known_platforms=PLATFORMS)
    assert intent.qos.asics["eos"].family == "trident-4"


def test_the_same_family_without_a_buffers_intent_is_accepted(tmp_path: Path) -> None:
    folder = _intent(tmp_path, "numbered", "eos", {"asics": {"eos": {"family": "tomahawk-5"}}})
    assert load_intent(folder, known_platforms=PLATFORMS).qos.asics["eos"].family == "tomahawk-5"


def test_a_vrf_name_the_platform_cannot_spell_is_refused(tmp_path: Path) -> None:
    folder = _intent(tmp_path, "lab", "sonic", {})
    tenants = yaml.safe_load((folder / "tenants.yaml").read_text())
    tenants["tenants"][0]["name"] = "research-lab1"  # Vrf_research-lab1: 17 characters
    (folder / "tenants.yaml").write_text(yaml.safe_dump(tenants))
    with pytest.raises(InputError) as caught:
        load_intent(folder, known_platforms=PLATFORMS)
    problems = [p for p in caught.value.problems if p.file.endswith("tenants.yaml")]
    assert problems and problems[0].path == "tenants[0].name"
    assert problems[0].reason == ("platform sonic: VRF name 'Vrf_research-lab1' does not "
                                  "match ^Vrf_[a-zA-Z0-9_-]{1,11}$")


def test_an_unknown_platform_is_refused_with_the_known_ones(tmp_path: Path) -> None:
    folder = _intent(tmp_path, "numbered", "vyos", {})
    with pytest.raises(InputError) as caught:
        load_intent(folder, known_platforms=PLATFORMS)
    [problem] = caught.value.problems
    assert problem.file.endswith("fabric.yaml") and problem.path == "platform"
    assert f"unknown platform 'vyos' ({', '.join(sorted(PLATFORMS))})" in problem.reason


@pytest.mark.parametrize(("qos", "path"), [
    ({"pfc": {"watchdog": {"action": "forward"}}}, "pfc.watchdog.action"),
    ({"overrides": [{"devices": ["spine1"], "watchdog": {"action": "forward"}}]},
     "overrides[0].watchdog.action"),
])
def test_a_forwarding_watchdog_on_eos_is_refused(tmp_path: Path, qos: dict[str, object],
                                                 path: str) -> None:
    """EOS cannot express it: rendering drop instead would be silently wrong."""
    qos = {**qos, "asics": {"eos": {"family": "trident-4"}}}
    with pytest.raises(InputError) as refused:
        load_intent(_intent(tmp_path, "lab", "eos", qos), known_platforms=PLATFORMS)
    [problem] = refused.value.problems
    assert problem.file.endswith("qos.yaml") and problem.path == path
    assert "platform eos cannot do this (pfc_watchdog_forward)" in problem.reason
    assert "it has no forward action" in problem.reason


def test_a_forwarding_watchdog_on_frr_and_sonic_loads(tmp_path: Path) -> None:
    for platform in ("frr", "sonic"):
        folder = _intent(tmp_path / platform, "lab", platform,
                         {"pfc": {"watchdog": {"action": "forward"}}})
        assert load_intent(folder, known_platforms=PLATFORMS).qos.pfc.watchdog.action == \
            "forward"


@pytest.mark.parametrize(("platform", "qos", "line"), [
    ("eos", {"asics": {"eos": {"family": "spectrum-4"}}},
     "asics.eos.family: platform eos does not run on ASIC family 'spectrum-4'; it runs on "
     "generic, trident, tomahawk, jericho"),
    ("eos", {}, "asics: platform eos does not run on ASIC family 'spectrum-4' (the default: "
     "asics names no eos); it runs on generic, trident, tomahawk, jericho"),
    ("nxos", {"asics": {"nxos": {"family": "generic"}}, "pfc": {"watchdog": {"action": "alert"}}},
     "pfc.watchdog.action: platform nxos cannot do this (pfc_watchdog_alert): the NX-OS PFC "
     "watchdog drops the stuck queue's traffic; it has no alert-only mode"),
])
def test_what_a_platform_s_data_file_refuses_is_one_line_before_any_render(
        tmp_path: Path, platform: str, qos: dict[str, object], line: str) -> None:
    """Whether a platform can express a setting is answered once, from its data file, when
    the intent loads: `render` fails there in one line naming the platform and the setting,
    and writes nothing (the renders check none of it again)."""
    folder = _intent(tmp_path / "intents", "lab", platform, qos)
    if "buffers" in PLATFORMS[platform].facts.capabilities.unsupported:
        body = yaml.safe_load((folder / "qos.yaml").read_text())
        del body["buffers"]  # refused there as well: one problem at a time
        (folder / "qos.yaml").write_text(yaml.safe_dump(body))
    out = tmp_path / "configs"
    run = in_process("--root", str(tmp_path), "--fabric", "lab", "render", "--out", str(out))
    assert run.code == 2, run.stdout + run.stderr
    [error] = run.stderr.splitlines()
    assert error.startswith("error: ") and "qos.yaml:" in error and error.endswith(line), error
    assert not out.exists()
