"""The audit against the source of truth: LLDP cabling and device reachability compared with
the source's cables and devices, every finding naming device, port and source object."""

from __future__ import annotations

from flatfab.model.state import Endpoint, FabricState
from flatfab.sot.audit import sot_findings
from flatfab.sot.snapshot import Snapshot, SotDevice
from tests.support.sot_snapshot import LAB, MAPPING, ref, snapshot_of


def _found(snapshot: Snapshot, observed: FabricState) -> list[tuple[str, str | None, str]]:
    return [(f.check, f.port, f"{f.severity.value} {f.device}: {f.message}")
            for f in sot_findings(snapshot, observed, MAPPING)]


def test_a_fabric_as_recorded_has_no_finding() -> None:
    assert _found(snapshot_of(LAB), LAB) == []


def test_a_cable_lldp_contradicts_is_named_with_the_source_cable() -> None:
    observed = LAB.model_copy(deep=True)
    observed.devices["leaf1"].interfaces["swp51"].peer = Endpoint(device="spine2", port="swp1")
    found = _found(snapshot_of(LAB), observed)
    assert found == [("sot.cabling", "swp51",
                      "error leaf1: leaf1:swp51: LLDP sees spine2:swp1; dcim.cable "
                      "leaf1:swp51-spine1:swp1 (id-leaf1:swp51-spine1:swp1) goes to spine1:swp1")]


def test_a_neighbour_without_a_cable_in_the_source_is_named() -> None:
    snap = snapshot_of(LAB)
    snap = snap.model_copy(update={"cables": [c for c in snap.cables
                                              if (c.a_device, c.a_port) != ("leaf3", "swp52")]})
    found = _found(snap, LAB)
    assert ("sot.cabling", "swp52", "error leaf3: leaf3:swp52: LLDP sees spine2:swp3, the "
            "source of truth has no cable on this port") in found
    assert ("sot.cabling", "swp3", "error spine2: spine2:swp3: LLDP sees leaf3:swp52, the "
            "source of truth has no cable on this port") in found


def test_a_switch_port_without_a_neighbour_is_a_warning_naming_the_cable() -> None:
    observed = LAB.model_copy(deep=True)
    observed.devices["spine1"].interfaces["swp4"].peer = None
    assert _found(snapshot_of(LAB), observed) == [
        ("sot.cabling", "swp4", "warning spine1: spine1:swp4: LLDP sees no neighbour; "
         "dcim.cable leaf4:swp51-spine1:swp4 (id-leaf4:swp51-spine1:swp4) goes to "
         "leaf4:swp51")]


def test_devices_unreachable_unknown_or_missing_are_named() -> None:
    observed = LAB.model_copy(deep=True)
    observed.devices["leaf2"].reachable = False
    snap = snapshot_of(LAB)
    devices = [d.model_copy(update={"primary_ip4": "192.0.2.14"}) if d.name == "leaf2" else d
               for d in snap.devices if d.name != "leaf4-h2"]
    devices.append(SotDevice(ref=ref("dcim.device", "leaf9"), name="leaf9", role="leaf",
                             platform="frr"))
    snap = snap.model_copy(update={"devices": devices})
    found = [f for f in _found(snap, observed) if f[0] == "sot.devices"]
    assert found == [
        ("sot.devices", None, "error leaf2: dcim.device leaf2 (id-leaf2) is unreachable at "
                              "192.0.2.14"),
        ("sot.devices", None, "warning leaf4-h2: leaf4-h2 answers, but the source of truth "
                              "has no such device (with a fabric role)"),
        ("sot.devices", None, "warning leaf9: dcim.device leaf9 (id-leaf9) is in the source "
                              "of truth, but not in the fabric flatfab manages")]


def test_an_unmanaged_host_is_not_judged_never_unknown_to_the_intent() -> None:
    """An unmanaged host is never read: absent from the observed state, it is neither a
    device unknown to the intent nor a missing LLDP neighbour behind its leaf's port."""
    planned = LAB.model_copy(deep=True)
    planned.devices["leaf1-h1"].managed = False
    observed = LAB.model_copy(deep=True)
    del observed.devices["leaf1-h1"]
    observed.devices["leaf1"].interfaces["swp1"].peer = None  # it sends no LLDP
    found = sot_findings(snapshot_of(LAB), observed, MAPPING, planned)
    assert [(f.check, f.device, f.severity.value, f.message) for f in found] == [
        ("sot.devices", "leaf1-h1", "not-judged",
         "leaf1-h1 is not judged: unmanaged: flatfab does not log in to it")]
