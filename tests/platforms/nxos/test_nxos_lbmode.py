"""fabric.yaml `load_balancing.mode` on nxos (tasks/platforms/nxos/lbmode.py): `resilient`
rendered as `hardware profile ecmp resilient` beside the `ip load-sharing` line, read back by
collect, kept or removed by `configure replace`, announced before the push (a reload); the DLB
modes (`flowlet`, `adaptive`, `spray`) refused at load and at render with their reasons, and a
switch's own `hardware profile dlb` block named, never read as a mode.

No oracle exists for NX-OS. Every line here is written from Cisco's documentation: Cisco Nexus
9000 Series NX-OS Interfaces Configuration Guide, Release 10.3(x), "Enabling ECMP Resilient
Hashing" (`hardware profile ecmp resilient` in global configuration mode, "Warning: The command
will take effect after next reload", then `copy running-config startup-config` and `reload`),
and Release 10.6(x), "Resilient Hashing". The `hardware profile dlb` block a test lays on a
running config stands for a switch's DLB configuration flatfab does not read; its inner lines
are the shape third-party examples show, used only to check that flatfab names the block and
reads nothing of it. Nothing here was captured from a switch.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from flatfab.errors import InputError
from flatfab.intent.loader import load_intent
from flatfab.model.state import DeviceState, HashField, LbMode, LoadBalancing
from flatfab.plan.planner import plan
from flatfab.platforms.nxos import PLATFORM, hashing, lbmode
from flatfab.platforms.nxos.render import NxosRenderError
from flatfab.platforms.nxos.running import NxosConfig
from flatfab.platforms.nxos.sections import merge_into, owned, split_sections
from flatfab.platforms.registry import PLATFORMS
from tests.doubles.nxos import FACTORY, NxosDouble
from tests.support.nxos import nxos_balanced, nxos_fabric

HASH_LINE = "ip load-sharing address source-destination port source-destination"
RESILIENT = "hardware profile ecmp resilient"  # Cisco N9K Interfaces guide 10.3(x)
FOUR = [HashField.SRC_IP, HashField.DST_IP, HashField.SRC_PORT, HashField.DST_PORT]
REASONS = PLATFORMS["nxos"].facts.capabilities.unsupported
# a switch's own DLB block (third-party shape): flatfab names it and reads nothing of it
DLB_BLOCK = ("hardware profile dlb\n  dlb-interface Ethernet1/49\n  mode flowlet\n"
             "  flowlet-aging 500\n")
_BALANCING = re.compile(r"(?m)^(ip load-sharing .*|hardware profile .*)$")


def _balancing(config: str) -> list[str]:
    return _BALANCING.findall(config)


def _leaf1(lb: LoadBalancing | None) -> DeviceState:
    return nxos_fabric("lab").devices["leaf1"].model_copy(update={"lb": lb})


def _resilient(seed: int | None = None) -> LoadBalancing:
    return LoadBalancing(hash_fields=FOUR, seed=seed, mode=LbMode.RESILIENT)


def _seen(running: str, planned: DeviceState) -> DeviceState:
    double = NxosDouble(running)
    return PLATFORM.collect(PLATFORM.read_only(PLATFORM.adapt(double, read_only=True)),
                            planned, [])


def _notes(running: str, intended: str) -> list[str]:
    """The change notes plan and dry-run show for pushing `intended` onto `running`."""
    driver = PLATFORM.adapt(NxosDouble(running), read_only=True)
    return PLATFORM.change_notes(*PLATFORM.drift_texts(driver, intended))


# ---- renders ----------------------------------------------------------------------------

def test_resilient_renders_the_documented_global_line_after_the_hashing() -> None:
    assert lbmode.render(_resilient()) == [RESILIENT]
    assert hashing.render(_resilient(11)) == f"{HASH_LINE} universal-id 11"
    text = PLATFORM.render(_leaf1(_resilient(11)))
    assert _balancing(text) == [f"{HASH_LINE} universal-id 11", RESILIENT]
    assert split_sections(text)["system"][-2:] == [f"{HASH_LINE} universal-id 11", RESILIENT]
    assert text.index(RESILIENT) < text.index("class-map ")  # global, inside no block


def test_hash_renders_no_resilient_line() -> None:
    assert lbmode.render(LoadBalancing(hash_fields=FOUR)) == []
    assert _balancing(PLATFORM.render(_leaf1(LoadBalancing(hash_fields=FOUR)))) == [HASH_LINE]
    assert _balancing(PLATFORM.render(_leaf1(None))) == []


@pytest.mark.parametrize(("mode", "timer", "why"), [
    (LbMode.FLOWLET, 500, "NX-OS DLB flowlet mode is documented, but Cisco's configuration "
                          "text for NX-OS dynamic load balancing"),
    (LbMode.ADAPTIVE, None, "not as sending each to the least loaded one"),
    (LbMode.SPRAY, None, "NX-OS per-packet DLB is documented, but"),
])
def test_the_dlb_modes_are_not_rendered(mode: LbMode, timer: int | None, why: str) -> None:
    """The render's own guard: the load refuses these first (lb_* in platform.yaml)."""
    lb = LoadBalancing(hash_fields=FOUR, mode=mode, flowlet_us=timer)
    with pytest.raises(hashing.HashingError, match=re.escape(why)):
        hashing.render(lb)
    with pytest.raises(NxosRenderError, match=rf"leaf1: load balancing mode {mode.value}: "):
        PLATFORM.render(_leaf1(lb))


# ---- at load ----------------------------------------------------------------------------

def test_resilient_loads_and_plans_onto_every_nxos_switch(tmp_path: Path) -> None:
    assert "lb_resilient" not in REASONS
    intent = load_intent(nxos_balanced(tmp_path, {
        "hash_fields": [f.value for f in FOUR], "seeds": {"leaf": 11, "spine": 12},
        "mode": "resilient"}), known_platforms=PLATFORMS)
    fabric = plan(intent)
    switches = [d for d in fabric.devices.values() if d.platform == "nxos"]
    assert switches
    for device in switches:
        assert device.lb is not None and device.lb.mode is LbMode.RESILIENT
        assert _balancing(PLATFORM.render(device))[-1] == RESILIENT, device.name


@pytest.mark.parametrize(("balancing", "feature"), [
    ({"mode": "flowlet", "flowlet_us": 500}, "lb_flowlet"),
    ({"mode": "adaptive"}, "lb_adaptive"),
    ({"mode": "spray"}, "lb_spray"),
])
def test_the_dlb_modes_are_refused_at_load_with_their_reasons(
        tmp_path: Path, balancing: dict[str, object], feature: str) -> None:
    with pytest.raises(InputError) as caught:
        load_intent(nxos_balanced(tmp_path, {"hash_fields": [f.value for f in FOUR],
                                            **balancing}), known_platforms=PLATFORMS)
    refused = {(Path(p.file).name, p.path, p.reason) for p in caught.value.problems}
    assert ("fabric.yaml", "load_balancing.mode",
            f"platform nxos cannot do this ({feature}): {REASONS[feature]}") in refused
    assert "third-party" in REASONS[feature]


# ---- read back --------------------------------------------------------------------------

@pytest.mark.parametrize("lb", [_resilient(), _resilient(4_000_000_000),
                                LoadBalancing(hash_fields=FOUR, seed=7)])
def test_the_render_reads_back_as_planned(lb: LoadBalancing) -> None:
    leaf1 = _leaf1(lb)
    seen = _seen(merge_into(FACTORY, PLATFORM.render(leaf1)), leaf1)
    assert seen.lb == lb
    assert (seen.lb.mode, seen.lb.flowlet_us) == (lb.mode, None)
    assert not any(k.startswith(("ip load-sharing", "hardware profile"))
                   for k in seen.not_modelled)


@pytest.mark.parametrize(("heads", "dlb", "mode", "named"), [
    ([], [], LbMode.HASH, []),
    ([RESILIENT], [], LbMode.RESILIENT, []),
    ([f"{RESILIENT} 64"], [], LbMode.HASH, [f"{RESILIENT} 64"]),
    ([], DLB_BLOCK.splitlines(), LbMode.HASH, ["hardware profile dlb"]),
    ([RESILIENT], DLB_BLOCK.splitlines(), LbMode.RESILIENT, ["hardware profile dlb"]),
])
def test_the_running_lines_read_into_a_mode(heads: list[str], dlb: list[str], mode: LbMode,
                                            named: list[str]) -> None:
    read, beyond = lbmode.read(heads, dlb)
    assert read is mode
    assert sorted(beyond) == named


def test_the_running_config_splits_the_balancing_lines_from_the_rest() -> None:
    config = NxosConfig.read(f"{HASH_LINE}\n{RESILIENT}\nhardware profile ecmp "
                             f"auto-recovery threshold 80\n{DLB_BLOCK}" + FACTORY)
    assert config.load_sharing == [HASH_LINE]
    assert config.resilient == [RESILIENT]  # another `hardware profile ecmp` is not its own
    assert config.dlb == [line.strip() for line in DLB_BLOCK.splitlines()]


def test_collect_names_a_dlb_block_and_states_only_the_hashing() -> None:
    leaf1 = _leaf1(LoadBalancing(hash_fields=FOUR))
    seen = _seen(merge_into(DLB_BLOCK + FACTORY, PLATFORM.render(leaf1)), leaf1)
    assert seen.lb == LoadBalancing(hash_fields=FOUR)
    assert "hardware profile dlb" in seen.not_modelled
    assert "does not read its mode" in seen.not_modelled["hardware profile dlb"]


def test_a_resilient_line_without_hashing_is_named_not_stated() -> None:
    leaf1 = _leaf1(None)
    seen = _seen(merge_into(f"{RESILIENT}\n" + FACTORY, PLATFORM.render(leaf1)), leaf1)
    assert seen.lb is None
    assert "switch hashes on its own default fields" in seen.not_modelled[RESILIENT]


# ---- configure replace, drift and change notes -------------------------------------------

def test_a_plan_with_hashing_removes_a_resilient_line_it_does_not_render() -> None:
    intended = PLATFORM.render(_leaf1(LoadBalancing(hash_fields=FOUR)))
    running = merge_into(f"{RESILIENT}\n" + FACTORY, PLATFORM.render(_leaf1(_resilient())))
    assert _balancing(running) == [HASH_LINE, RESILIENT]
    assert _balancing(merge_into(running, intended)) == [HASH_LINE]
    assert _balancing(owned(running)) == [HASH_LINE, RESILIENT]  # drift shows it


def test_a_plan_without_hashing_keeps_the_operator_s_resilient_line() -> None:
    intended = PLATFORM.render(_leaf1(None))
    running = f"{HASH_LINE} universal-id 9\n{RESILIENT}\n" + intended
    assert _balancing(merge_into(running, intended)) == [f"{HASH_LINE} universal-id 9",
                                                         RESILIENT]
    assert _balancing(owned(running, load_sharing=False)) == []
    assert _notes(running, intended) == []


def test_a_dlb_block_is_the_operator_s_and_kept() -> None:
    intended = PLATFORM.render(_leaf1(_resilient()))
    kept = merge_into(DLB_BLOCK + FACTORY, intended)
    assert DLB_BLOCK in kept
    assert "hardware profile dlb" not in owned(kept)


def test_resilient_committed_through_configure_replace_shows_no_drift() -> None:
    intended = PLATFORM.render(_leaf1(_resilient(11)))
    double = NxosDouble()
    driver = PLATFORM.adapt(double, read_only=False)
    driver.load_replace_candidate(config=intended)
    assert f"+{RESILIENT}" in driver.compare_config()
    driver.commit_config(revert_in=120)
    driver.confirm_commit()
    assert _balancing(double.running) == [f"{HASH_LINE} universal-id 11", RESILIENT]
    assert double.startup == double.running  # saved: the reload that applies it keeps it
    have, want = PLATFORM.drift_texts(PLATFORM.adapt(double, read_only=True), intended)
    assert have == want
    assert _notes(double.running, intended) == []


def test_setting_resilient_hashing_warns_of_the_reload() -> None:
    before = merge_into(FACTORY, PLATFORM.render(_leaf1(LoadBalancing(hash_fields=FOUR))))
    notes = _notes(before, PLATFORM.render(_leaf1(_resilient())))
    assert len(notes) == 1
    assert notes[0].startswith(f"{RESILIENT} added: NX-OS applies it only after the next reload")


def test_removing_resilient_hashing_warns_of_the_reload() -> None:
    before = merge_into(FACTORY, PLATFORM.render(_leaf1(_resilient())))
    notes = _notes(before, PLATFORM.render(_leaf1(LoadBalancing(hash_fields=FOUR))))
    assert len(notes) == 1 and notes[0].startswith(f"{RESILIENT} removed: ")
    assert "reload the switch after the commit" in notes[0]


def test_a_first_plan_with_resilient_hashing_warns_too() -> None:
    """No hashing on the switch yet (a factory config): the resilient line is new."""
    assert _notes(FACTORY, PLATFORM.render(_leaf1(_resilient())))[0].startswith(
        f"{RESILIENT} added")
