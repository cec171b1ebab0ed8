"""Golden files: every example fabric's plan, rendered configs and lab topology, in files a
reviewer reads (tests/golden/<fabric>/; docs/development/running.md "Golden files").

- plan-digest.yaml: the plan in brief, and the sha256 of the whole plan;
- plan/fabric.json, plan/links.json, plan/devices/<device>.json: the plan itself, split so a
  change to one device diffs that device's file (tests/support/plan_golden.py);
- configs/<device>.conf, topology.clab.yml, topology/<fabric>/<device>/: what is rendered.

lab4x16 is lab at scale (4 spines, 16 leaves, 32 hosts, every one from its role's template):
its point is size, not content, so only representatives keep their files (the first and last
device of each role, and any device of a shape of its own: tests/support/golden.py
`representatives`), and every other device's files are held by their sha256 in
not-kept.sha256. Any change still fails, naming the device and the file: its sha256 line
differs, and so does the digest's sha256 of the whole plan.

Regenerate with `make golden` (FLATFAB_REGEN_GOLDEN=1) and review the diff.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

import pytest
import yaml

from flatfab.intent.loader import load_intent
from flatfab.lab import topology
from flatfab.model.state import FabricState
from flatfab.plan.planner import plan
from flatfab.platforms.registry import PLATFORMS
from flatfab.workflows.commands.rollout import render_all
from flatfab.yamlio import dump_yaml
from tests.support.golden import (
    NOT_KEPT,
    REGEN,
    differences,
    fail_on,
    golden_files,
    not_kept,
    regenerate,
    representatives,
    sha256,
)
from tests.support.oracles import ORACLES, usable
from tests.support.paths import ROOT
from tests.support.plan_golden import (
    DIGEST,
    FABRIC,
    LINKS,
    device_file,
    digest,
    plan_files,
    plan_of,
    whole,
)

GOLDEN = ROOT / "tests" / "golden"
FABRICS = sorted(p.parent.name for p in (ROOT / "intents").glob("*/fabric.yaml"))
# fabrics whose devices repeat their role's template: representatives keep their files
REPRESENTED = {"lab4x16"}


@dataclass(frozen=True)
class Produced:
    """What flatfab produces for one fabric, as paths relative to tests/golden/<fabric>/."""

    fabric: dict[str, str]  # the fabric's own files: digest, fabric.json, links, topology
    devices: dict[str, dict[str, str]]  # device -> its plan file, config, topology files
    kept: list[str] | None  # the devices whose files are kept (None: every device's)

    def files(self) -> dict[str, str]:
        return {**self.fabric, **{r: t for f in self.devices.values() for r, t in f.items()}}

    def keep(self) -> set[str] | None:
        if self.kept is None:
            return None
        return set(self.fabric) | {r for d in self.kept for r in self.devices[d]}

    def golden(self) -> dict[str, str]:
        """The files of tests/golden/<fabric>/."""
        why = None if self.kept is None else (
            f"The files of the {len(self.devices) - len(self.kept)} devices not kept, as "
            "sha256sum prints them. Each device is one of\n"
            "these with other numbers (tests/support/golden.py `representatives`):\n"
            f"{', '.join(self.kept)}.")
        return golden_files(self.files(), self.keep(), why or "")


def produce(state: FabricState, represented: bool) -> Produced:
    plan_texts = plan_files(state)
    devices: dict[str, dict[str, str]] = {
        name: {device_file(name): plan_texts[device_file(name)]} for name in state.devices}
    fabric = {FABRIC: plan_texts[FABRIC], LINKS: plan_texts[LINKS]}
    for name, text in render_all(state).items():
        devices[name][f"configs/{name}.conf"] = text
    doc, bound = topology.generate(state, topology.LabOptions())
    fabric["topology.clab.yml"] = dump_yaml(doc)
    for relative, text in bound.items():  # <lab>/<node>/<file>, or the lab's own
        owner = relative.split("/")[1] if relative.count("/") >= 2 else ""
        devices.get(owner, fabric)[f"topology/{relative}"] = text
    kept = representatives(
        (name, state.devices[name].role.value, "".join(t for _, t in sorted(files.items())))
        for name, files in devices.items()) if represented else None
    fabric[DIGEST] = digest(state, kept)
    return Produced(fabric, devices, kept)


@cache
def _state(fabric: str) -> FabricState:
    return plan(load_intent(ROOT / "intents" / fabric, known_platforms=PLATFORMS))


@cache
def _produced(fabric: str) -> Produced:
    produced = produce(_state(fabric), fabric in REPRESENTED)
    if REGEN:
        regenerate(GOLDEN / fabric, produced.golden())
    return produced


def fabric_problems(fabric: str, produced: Produced) -> list[str]:
    """What differs in tests/golden/<fabric>/ as a whole: the files there, the fabric's own
    files, and which files not-kept.sha256 lists; a changed digest names the devices whose
    files differ too."""
    folder = GOLDEN / fabric
    expected = produced.golden()
    on_disk = {str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()}
    found = []
    if on_disk != set(expected):
        found.append(f"{fabric}: golden files differ in number: missing "
                     f"{sorted(set(expected) - on_disk)}, stale {sorted(on_disk - set(expected))}")
    if set(not_kept(folder)) != set(produced.files()) - set(expected):
        found.append(f"{fabric}/{NOT_KEPT} lists other files than those not kept")
    fabric_files = differences(folder, produced.fabric, None, fabric)
    if any(f.startswith(f"{fabric}/{DIGEST} ") for f in fabric_files):
        changed = [d for d, files in produced.devices.items()
                   if differences(folder, files, produced.keep(), fabric)]
        old = yaml.safe_load((folder / DIGEST).read_text(encoding="utf-8")) or {}
        new = yaml.safe_load(produced.fabric[DIGEST])
        found.append(f"{fabric}: the plan changed (sha256 {str(old.get('sha256'))[:12]} -> "
                     f"{new['sha256'][:12]}); devices whose files differ: "
                     f"{', '.join(changed) or 'none'}")
    return found + fabric_files


def device_problems(fabric: str, produced: Produced, device: str) -> list[str]:
    return differences(GOLDEN / fabric, produced.devices[device], produced.keep(), fabric)


DEVICES = [(f, d) for f in FABRICS for d in _state(f).devices]


@pytest.mark.parametrize("fabric", FABRICS)
def test_golden_files_of_each_fabric(fabric: str) -> None:
    fail_on(fabric_problems(fabric, _produced(fabric)))


@pytest.mark.parametrize(("fabric", "device"), DEVICES, ids=[f"{f}/{d}" for f, d in DEVICES])
def test_golden_files_of_each_device(fabric: str, device: str) -> None:
    """Its plan file, config and topology files: the files where kept, else their sha256."""
    fail_on(device_problems(fabric, _produced(fabric), device))


@pytest.mark.parametrize("fabric", FABRICS)
def test_golden_plan_files_hold_the_whole_plan(fabric: str) -> None:
    """The plan files read back (the kept ones from tests/golden, the others as produced once
    their sha256 matched) are the plan byte for byte: the digest's sha256 is theirs."""
    folder, produced = GOLDEN / fabric, _produced(fabric)
    hashes = not_kept(folder)
    texts = {}
    for relative, text in produced.files().items():
        if not relative.startswith("plan/"):
            continue
        if relative in hashes:
            assert hashes[relative] == sha256(text), f"{fabric}/{relative}: `make golden`"
            texts[relative] = text
        else:
            texts[relative] = (folder / relative).read_text(encoding="utf-8")
    recorded = yaml.safe_load((folder / DIGEST).read_text(encoding="utf-8"))["sha256"]
    assert sha256(whole(plan_of(texts))) == recorded == sha256(whole(_state(fabric)))


def test_lab4x16_keeps_the_files_of_one_device_per_template() -> None:
    """Its spines differ in numbers only (addresses, port peers), as do its leaves, and its
    hosts but for their tenant: the first and last of each role stand for the others (the
    first host is blue, the last red). A device given a shape of its own (an override, a
    port more) would be kept too, and this list would say so."""
    assert _produced("lab4x16").kept == ["spine1", "spine4", "leaf1", "leaf16", "leaf1-h1",
                                         "leaf16-h2"]


def _leaf7_mtu(state: FabricState) -> None:
    state.devices["leaf7"].interfaces["swp51"].mtu = 9100


def _leaf1_hold(state: FabricState) -> None:
    state.devices["leaf1"].bgp["default"].hold = 30


def _a_cable(state: FabricState) -> None:
    state.links[-1].cable_m = 4.0


def _lossless(state: FabricState) -> None:
    assert state.lossless is not None
    state.lossless.cnp_priority = 7


def _device_order(state: FabricState) -> None:
    names = list(state.devices)
    seventh, eighth = names.index("leaf7"), names.index("leaf8")
    names[seventh], names[eighth] = names[eighth], names[seventh]
    state.devices = {n: state.devices[n] for n in names}


# a change to the plan -> the files whose messages name it
CHANGES: dict[str, tuple[Callable[[FabricState], None], list[str]]] = {
    "a device not kept": (_leaf7_mtu, ["lab4x16/plan/devices/leaf7.json (not kept",
                                       "lab4x16/configs/leaf7.conf (not kept"]),
    "a kept device": (_leaf1_hold, ["lab4x16/plan/devices/leaf1.json differs", '"hold": 30'],),
    "a link": (_a_cable, [f"lab4x16/{LINKS} differs"]),
    "the lossless profile": (_lossless, [f"lab4x16/{FABRIC} differs"]),
    "the order of devices": (_device_order, [f"lab4x16/{FABRIC} differs"]),
}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_any_change_to_the_plan_fails_a_golden_test_naming_it(change: str) -> None:
    """A plan changed in memory: the digest's sha256 of the whole plan catches it wherever it
    is, and the messages name the fabric, the device and the file, kept or not."""
    mutate, named = CHANGES[change]
    state = _state("lab4x16").model_copy(deep=True)
    mutate(state)
    produced = produce(state, represented=True)
    assert produced.kept == _produced("lab4x16").kept
    found = "\n".join(fabric_problems("lab4x16", produced) + [
        p for d in produced.devices for p in device_problems("lab4x16", produced, d)])
    assert "lab4x16: the plan changed (sha256" in found
    for part in named:
        assert part in found, found[:2000]
    if change == "a device not kept":
        assert produced.kept is not None and "leaf7" not in produced.kept
        assert "devices whose files differ: leaf7\n" in found + "\n"
        assert device_problems("lab4x16", produced, "leaf1") == []


def test_every_golden_fabric_is_an_example_intent() -> None:
    assert sorted(p.name for p in GOLDEN.iterdir() if p.is_dir()
                  and p.name not in {"reports", "platforms"}) == FABRICS


def test_rendering_is_byte_identical_across_runs() -> None:
    state = plan(load_intent(ROOT / "intents" / "lab", known_platforms=PLATFORMS))
    again = plan(load_intent(ROOT / "intents" / "lab", known_platforms=PLATFORMS))
    assert produce(state, True).files() == produce(again, True).files()


def test_committed_lab_topologies_are_up_to_date() -> None:
    """labs/<fabric>.clab.yml is what `flatfab lab generate` writes (lab up checks it too)."""
    for path in sorted((ROOT / "labs").glob("*.clab.yml")):
        fabric = path.name.removesuffix(".clab.yml")
        doc = _produced(fabric).fabric["topology.clab.yml"]
        assert path.read_text(encoding="utf-8").endswith(doc), f"regenerate {path}"


def _platform(fabric: str, device: str) -> str:
    return _state(fabric).devices[device].platform


# every config whose platform has an oracle; nxos has none (its goldens are checked against
# Cisco's documented syntax, tests/platforms/nxos/): see the test after this one
CHECKED = [(f, d) for f, d in DEVICES if _platform(f, d) in ORACLES]


@pytest.mark.parametrize(("fabric", "device"), CHECKED,
                         ids=[f"{f}/{d}-{_platform(f, d)}" for f, d in CHECKED])
def test_every_config_passes_its_platforms_oracle(fabric: str, device: str) -> None:
    """Each config of every example fabric (the golden file where it is kept) is judged by
    its platform's oracle (tests/support/oracles.py): the vendors' schemas (pyavd, SONiC,
    SR Linux and Junos YANG, nvueschema) or flatfab's own parsers (frr, linux_host)."""
    planned = _state(fabric).devices[device]
    oracle = usable(ORACLES[planned.platform])
    text = _produced(fabric).devices[device][f"configs/{device}.conf"]
    found = oracle.validate(device, text, planned)
    assert found == [], "\n".join(found)


def test_nxos_is_the_only_platform_without_an_oracle() -> None:
    assert set(ORACLES) <= set(PLATFORMS)
    assert set(PLATFORMS) - set(ORACLES) == {"nxos"}
    unchecked = {(f, d) for f, d in DEVICES} - set(CHECKED)
    assert {_platform(f, d) for f, d in unchecked} == {"nxos"}  # multivendor's spine2
