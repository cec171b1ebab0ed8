"""Import from a source-of-truth snapshot: the lab's own snapshot changes nothing; changes in
the source become reviewable edits of the intent files (comments kept); pins only where the
source differs from the allocation; bad data and what the intent cannot say are refused,
naming the source object; the check mode names every disagreement."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import pytest

from flatfab.errors import InputError
from flatfab.intent.loader import load_intent
from flatfab.plan.planner import plan
from flatfab.platforms.registry import PLATFORMS
from flatfab.sot.snapshot import INCOMPLETE, Snapshot, SotCable, SotDevice
from flatfab.sot.workflow import run_check, run_import
from tests.support.paths import ROOT
from tests.support.sot_snapshot import LAB, MAPPING, ref, snapshot_of


def _copy(tmp_path: Path, fabric: str) -> Path:
    return Path(shutil.copytree(ROOT / "intents" / fabric, tmp_path / fabric))


@pytest.fixture
def lab(tmp_path: Path) -> Path:
    return _copy(tmp_path, "lab")


def _replace(snapshot: Snapshot, **changes: object) -> Snapshot:
    return snapshot.model_copy(update=changes)


def _device(snapshot: Snapshot, name: str, **changes: object) -> Snapshot:
    return _replace(snapshot, devices=[d.model_copy(update=changes) if d.name == name else d
                                       for d in snapshot.devices])


def test_the_labs_own_snapshot_imports_to_identical_files(lab: Path) -> None:
    before = {p.name: p.read_bytes() for p in lab.iterdir()}
    report = run_import(snapshot_of(LAB), lab, MAPPING, write=True)
    assert (report.changed, report.diff, report.notes, report.written) == ([], "", [], False)
    assert {p.name: p.read_bytes() for p in lab.iterdir()} == before
    assert run_check(snapshot_of(LAB), lab, MAPPING) == []


def test_an_import_is_the_same_plan_and_deterministic(lab: Path) -> None:
    first = run_import(snapshot_of(LAB), lab, MAPPING, write=False)
    second = run_import(snapshot_of(LAB), lab, MAPPING, write=False)
    assert first == second
    assert plan(load_intent(lab, known_platforms=PLATFORMS)) == LAB


def _without(snapshot: Snapshot, *names: str) -> Snapshot:
    return _replace(snapshot, devices=[d for d in snapshot.devices if d.name not in names],
                    cables=[c for c in snapshot.cables
                            if c.a_device not in names and c.b_device not in names])


def test_a_host_gone_from_the_source_becomes_a_count_in_hosts_yaml(lab: Path) -> None:
    report = run_import(_without(snapshot_of(LAB), "leaf3-h2"), lab, MAPPING, write=True)
    assert report.changed == ["hosts.yaml"]
    assert "+leaves:\n+  leaf3: {count: 1}\n" in report.diff
    # the comment at the top of the file survives
    assert (lab / "hosts.yaml").read_text().startswith("# Two GPU hosts per leaf")
    state = plan(load_intent(lab, known_platforms=PLATFORMS))
    assert "leaf3-h2" not in state.devices and "leaf3-h1" in state.devices
    assert run_check(_without(snapshot_of(LAB), "leaf3-h2"), lab, MAPPING) == []


def test_a_new_leaf_with_a_non_default_host_is_added(lab: Path) -> None:
    snap = snapshot_of(LAB)
    extra = [SotDevice(ref=ref("dcim.device", "leaf5"), name="leaf5", role="leaf",
                       platform="frr"),
             SotDevice(ref=ref("dcim.device", "gpu17"), name="gpu17", role="gpu-host",
                       platform="linux", tenant="blue")]
    cables = [SotCable(ref=ref("dcim.cable", f"leaf5-{s}"), a_device="leaf5",
                       a_port="swp5" + str(i), b_device=s, b_port="swp5")
              for i, s in ((1, "spine1"), (2, "spine2"))]
    cables.append(SotCable(ref=ref("dcim.cable", "gpu17"), a_device="gpu17", a_port="eth2",
                           b_device="leaf5", b_port="swp3"))
    snap = _replace(snap, devices=[*snap.devices, *extra], cables=[*snap.cables, *cables])
    report = run_import(snap, lab, MAPPING, write=True)
    assert report.changed == ["fabric.yaml", "hosts.yaml", "tenants.yaml"]
    assert "+  - name: leaf5\n" in report.diff
    assert "+  leaf5:\n+    hosts:\n+      - {name: gpu17, port: 3, nic: eth2}\n" in report.diff
    state = plan(load_intent(lab, known_platforms=PLATFORMS))
    assert state.devices["gpu17"].tenant == "blue"
    assert run_check(snap, lab, MAPPING) == []
    # a second import changes nothing
    assert run_import(snap, lab, MAPPING, write=True).changed == []


def test_loopbacks_and_asns_become_pins_only_where_they_differ(lab: Path) -> None:
    snap = _device(snapshot_of(LAB), "leaf2", loopback="10.0.0.200", asn=4200000002)
    report = run_import(snap, lab, MAPPING, write=True)
    assert report.changed == ["fabric.yaml"]
    assert "   - name: leaf2\n+    loopback: 10.0.0.200\n+    asn: 4200000002\n" in report.diff
    assert report.diff.count("loopback:") == 1  # the others equal the allocation
    state = plan(load_intent(lab, known_platforms=PLATFORMS))
    assert (state.devices["leaf2"].loopback, state.devices["leaf2"].asn) == ("10.0.0.200/32",
                                                                             4200000002)


def test_tenant_membership_follows_the_source_and_patterns_stay_while_true(lab: Path) -> None:
    report = run_import(_device(snapshot_of(LAB), "leaf4-h1", tenant="red"), lab, MAPPING,
                        write=True)
    assert report.changed == ["tenants.yaml"]
    text = (lab / "tenants.yaml").read_text()
    assert "members: [leaf1-h1, leaf2-h1, leaf3-h1]" in text
    assert "members: [leaf1-h2, leaf2-h2, leaf3-h2, leaf4-h1, leaf4-h2]" in text


@pytest.mark.parametrize(("change", "subject", "reason"), [
    (lambda s: _device(s, "leaf2", role=None), "dcim.device leaf2 (id-leaf2)", "has no role"),
    (lambda s: _device(s, "spine1", platform=None), "dcim.device spine1 (id-spine1)",
     "has no platform"),
    (lambda s: _device(s, "spine1", platform="junos"), "dcim.device spine1 (id-spine1)",
     "platform 'junos' is not mapped"),
    (lambda s: _replace(s, devices=[*s.devices, s.devices[0].model_copy(
        update={"ref": ref("dcim.device", "copy")})]), "dcim.device copy (id-copy)",
     "duplicate device name 'leaf1'"),
    (lambda s: _replace(s, cables=[*s.cables, SotCable(
        ref=ref("dcim.cable", "x"), a_device="leaf1", a_port="swp9", b_device="storage1",
        b_port="p1", outside=["storage1"])]), "dcim.cable x (id-x)",
     "cables leaf1:swp9 to storage1:p1, but storage1 is not among the devices the source's "
     "filters select"),
    (lambda s: _replace(s, cables=[*s.cables, SotCable(
        ref=ref("dcim.cable", "x"), a_device="leaf1", a_port="swp9", b_device=INCOMPLETE,
        b_port="dcim.frontport", outside=[INCOMPLETE])]), "dcim.cable x (id-x)",
     "the cable path from leaf1:swp9 ends at a dcim.frontport, not at an interface"),
    # a device of the same name outside the fabric is still outside
    (lambda s: _replace(s, cables=[*s.cables, SotCable(
        ref=ref("dcim.cable", "x"), a_device="spine1", a_port="p1", b_device="leaf1",
        b_port="swp9", outside=["spine1"])]), "dcim.cable x (id-x)",
     "cables leaf1:swp9 to spine1:p1, but spine1 is not among the devices"),
    (lambda s: _replace(s, devices=[*s.devices, SotDevice(
        ref=ref("dcim.device", "fw1"), name="fw1", role="firewall", platform="frr")],
        cables=[*s.cables, SotCable(ref=ref("dcim.cable", "x"), a_device="fw1", a_port="p1",
                                    b_device="spine2", b_port="swp9")]),
     "dcim.cable x (id-x)", "cables spine2:swp9 to fw1:p1, but fw1 has role 'firewall', "
     "which is not mapped to a flatfab role (mapped: gpu-host, leaf, spine)"),
    (lambda s: _replace(s, devices=[d.model_copy(update={"name": "leaf 1"}) if d.name == "leaf1"
                                    else d for d in s.devices]),
     "dcim.device leaf1 (id-leaf1)", "name 'leaf 1'"),
])
def test_bad_data_in_the_source_names_the_object(lab: Path, change: object, subject: str,
                                                 reason: str) -> None:
    snap = change(snapshot_of(LAB))  # type: ignore[operator]
    before = {p.name: p.read_bytes() for p in lab.iterdir()}
    with pytest.raises(InputError) as caught:
        run_import(snap, lab, MAPPING, write=True)
    found = [p for p in caught.value.problems if p.path == subject]
    assert found and reason in found[0].reason, caught.value.problems
    assert found[0].file == "https://sot.test/api/"
    assert {p.name: p.read_bytes() for p in lab.iterdir()} == before  # nothing written


def test_a_cable_the_port_scheme_cannot_express_refuses_the_import(lab: Path) -> None:
    snap = snapshot_of(LAB)
    moved = [c.model_copy(update={"a_port": "swp53"})
             if (c.a_device, c.a_port, c.b_device) == ("leaf1", "swp51", "spine1") else c
             for c in snap.cables]
    with pytest.raises(InputError) as caught:
        run_import(_replace(snap, cables=moved), lab, MAPPING, write=True)
    reasons = [f"{p.path}: {p.reason}" for p in caught.value.problems]
    assert any("cables leaf1:swp53 to spine1:swp1, which the plan does not; the plan cables "
               "spine1:swp1 to leaf1:swp51" in r for r in reasons), reasons


def test_check_names_each_disagreement_by_source_object(lab: Path) -> None:
    snap = _device(_without(snapshot_of(LAB), "leaf4-h2"), "leaf1", asn=65999)
    found = [str(d) for d in run_check(snap, lab, MAPPING)]
    assert "leaf1: dcim.device leaf1 (id-leaf1): ASN 65999; the plan gives 65101" in found
    assert ("leaf4-h2: intent: planned, but the source of truth has no such device (with a "
            "fabric role)") in found
    assert any(f.startswith("leaf4-h2: intent: plans leaf4-h2:eth1--leaf4:swp2") for f in found)


NUMBERED = plan(load_intent(ROOT / "intents" / "numbered", known_platforms=PLATFORMS))


@pytest.fixture
def numbered(tmp_path: Path) -> Path:
    return _copy(tmp_path, "numbered")


def test_explicit_links_keep_their_link_class_and_new_ones_get_the_default(
        numbered: Path) -> None:
    """The source has no link classes: a full mesh of long and short links stays explicit."""
    assert run_import(snapshot_of(NUMBERED), numbered, MAPPING, write=False).changed == []
    gone = _replace(snapshot_of(NUMBERED), cables=[
        c for c in snapshot_of(NUMBERED).cables if {c.a_device, c.b_device} != {"lf-a", "sp-a"}])
    report = run_import(gone, numbered, MAPPING, write=True)
    assert report.changed == ["fabric.yaml"]
    assert "-  - {leaf: lf-a, spine: sp-a}\n" in report.diff
    assert "{leaf: lf-a, spine: sp-b, class: long}" in (numbered / "fabric.yaml").read_text()
    back = run_import(snapshot_of(NUMBERED), numbered, MAPPING, write=True)
    assert "+  - {leaf: lf-a, spine: sp-a}\n" in back.diff
    assert plan(load_intent(numbered, known_platforms=PLATFORMS)) == NUMBERED


def test_a_cable_longer_than_its_link_class_is_checked_and_noted_on_import(lab: Path) -> None:
    snap = snapshot_of(LAB)
    # every cable as long as its class says (recorded in whole metres), one of them longer
    metres = {(lk.a.device, lk.a.port): float(math.ceil(lk.cable_m)) for lk in LAB.links}
    longer = _replace(snap, cables=[c.model_copy(update={"length_m": 30.0 if (
        c.a_device, c.a_port) == ("leaf1", "swp51") else metres[(c.a_device, c.a_port)]})
        for c in snap.cables])
    cable = next(c for c in longer.cables if (c.a_device, c.a_port) == ("leaf1", "swp51"))
    link = next(lk for lk in LAB.links if (lk.a.device, lk.a.port) == ("leaf1", "swp51"))
    found = [str(d) for d in run_check(longer, lab, MAPPING)]
    assert found == [f"leaf1: {cable.ref}: cable length 30 m; the plan sizes headroom for "
                     f"{link.cable_m:g} m (link class {link.link_class})"]
    report = run_import(longer, lab, MAPPING, write=True)
    assert report.changed == [] and report.notes == [
        f"{cable.ref}: cable length 30 m; the plan sizes headroom for {link.cable_m:g} m (link "
        f"class {link.link_class}) (choose a link class that fits)"]
