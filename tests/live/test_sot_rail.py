"""The rail lab against a real Nautobot: `sot sync --create` records the running rail fabric
(super-spines, pods, planes, a cable per server NIC), `sot check` and `audit --sot` agree
with it; two NICs of a server swapped between rails in Nautobot are named by `sot check` with
server, NIC, leaf, port and rails, and by `audit --sot` from what LLDP on the rail leaves sees
(the lab's servers run lldpd); a sync puts the planned cables back and the audit agrees again.

It uses the session's rail lab (tests/live/conftest.py) and its own Nautobot location."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

from flatfab.sot.client import Nautobot
from tests.support.lab import Lab
from tests.support.nautobot_service import Service

pytestmark = [pytest.mark.live, pytest.mark.nautobot]
LOCATION = "rail-live"
SERVER = "su1-s1"
TOKEN_ENV = "FFSR_NAUTOBOT_TOKEN"


def _id(value: Any) -> str:
    return str(value["id"] if isinstance(value, dict) else value)


def _one(api: Nautobot, path: str, **params: Any) -> dict[str, Any]:
    found = api.fetch(path, **params)
    assert len(found) == 1, (path, params, found)
    return found[0]


def _clear(api: Nautobot, location: str) -> None:
    """The devices (with their ports and cables) of the test's location, and the location."""
    cables = api.fetch("dcim/cables/", location_id=location)
    if cables:
        api.request("DELETE", "dcim/cables/", [{"id": c["id"]} for c in cables])
    devices = api.fetch("dcim/devices/", location=location)
    if devices:
        api.request("DELETE", "dcim/devices/", [{"id": d["id"]} for d in devices])
    api.request("DELETE", f"dcim/locations/{location}/")


@pytest.fixture(scope="module")
def recorded(rail: Lab, nautobot: Service) -> Iterator[Lab]:
    """Nautobot holding the rail fabric as `sot sync --create` writes it."""
    with Nautobot(nautobot.url, nautobot.token) as api:
        for stale in api.fetch("dcim/locations/", name=LOCATION):
            _clear(api, stale["id"])
        active = _one(api, "extras/statuses/", name="Active")["id"]
        kinds = api.fetch("dcim/location-types/", name="Site")
        kind = kinds[0] if kinds else api.request("POST", "dcim/location-types/", body={
            "name": "Site", "content_types": ["dcim.device"]})
        location = api.request("POST", "dcim/locations/", body={
            "name": LOCATION, "location_type": kind["id"], "status": active})
    os.environ[TOKEN_ENV] = nautobot.token  # what the CLI reads (never on a command line)
    source = rail.inventory / "source.yaml"
    source.write_text(f"nautobot:\n  url: {nautobot.url}\n  token_env: {TOKEN_ENV}\n"
                      f"  filters: {{location: {LOCATION}}}\n")
    try:
        wrote = rail.cli("sot", "sync", "--create", "--write", "--format", "json")
        assert wrote.code == 0, wrote.stderr
        yield rail
    finally:
        source.unlink(missing_ok=True)
        os.environ.pop(TOKEN_ENV, None)
        with Nautobot(nautobot.url, nautobot.token) as api:
            _clear(api, location["id"])


def _audit(lab: Lab) -> list[tuple[str, str | None, str]]:
    run = lab.cli("audit", "--sot", "--no-probes", "--no-lossless", "--format", "json")
    assert run.code in (0, 1), run.stderr
    data = run.json()
    assert {"sot.cabling", "sot.devices"} <= set(data["checks_run"])
    return sorted((f["device"], f["port"], f["message"]) for f in data["findings"]
                  if f["check"].startswith("sot."))


def test_the_rail_lab_agrees_with_nautobot(recorded: Lab) -> None:
    check = recorded.cli("sot", "check", "--format", "json")
    assert check.code == 0 and check.json()["agree"] is True, check.stdout + check.stderr
    assert _audit(recorded) == []


def test_two_nics_swapped_between_rails_in_nautobot_are_named(recorded: Lab,
                                                              nautobot: Service) -> None:
    lab = recorded
    with Nautobot(nautobot.url, nautobot.token) as api:
        location = _one(api, "dcim/locations/", name=LOCATION)["id"]
        device = _one(api, "dcim/devices/", name=SERVER, location=location)["id"]
        nic = {n: _one(api, "dcim/interfaces/", device_id=device, name=n) for n in
               ("eth1", "eth2")}
        leaves = {name: _one(api, "dcim/devices/", name=name, location=location)["id"]
                  for name in ("su1-leaf1", "su1-leaf2")}
        port = {name: _one(api, "dcim/interfaces/", device_id=dev, name="swp1")
                for name, dev in leaves.items()}
        for n in nic.values():
            api.request("DELETE", f"dcim/cables/{_id(n['cable'])}/")
        connected = _one(api, "extras/statuses/", name="Connected")["id"]
        swapped = [api.request("POST", "dcim/cables/", body={
            "termination_a_type": "dcim.interface", "termination_a_id": nic[a]["id"],
            "termination_b_type": "dcim.interface", "termination_b_id": port[b]["id"],
            "status": connected})["id"] for a, b in (("eth1", "su1-leaf2"),
                                                     ("eth2", "su1-leaf1"))]
    try:
        check = lab.cli("sot", "check", "--format", "json")
        assert check.code == 1, check.stderr
        named = {(d["device"], d["message"]) for d in check.json()["disagreements"]}
        assert {("su1-s1", "server su1-s1 NIC eth1 is cabled to su1-leaf2:swp1 (rail 2); the "
                 "plan puts it on rail 1, su1-leaf1:swp1 and plans su1-leaf2:swp1 for su1-s1 "
                 "NIC eth2"),
                ("su1-s1", "server su1-s1 NIC eth2 is cabled to su1-leaf1:swp1 (rail 1); the "
                 "plan puts it on rail 2, su1-leaf2:swp1 and plans su1-leaf1:swp1 for su1-s1 "
                 "NIC eth1")} <= named, named
        # what LLDP shows on the rail leaves: the server's NICs (its lldpd)
        expected = {
            ("su1-leaf1", "swp1", "su1-leaf1:swp1 (rail 1): LLDP sees server su1-s1 NIC eth1, "
             "which the source of truth cables to su1-leaf2:swp1 (rail 2); dcim.cable "
             f"su1-s1:eth2 - su1-leaf1:swp1 ({swapped[1]}) cables server su1-s1 NIC eth2 "
             "here"),
            ("su1-leaf2", "swp1", "su1-leaf2:swp1 (rail 2): LLDP sees server su1-s1 NIC eth2, "
             "which the source of truth cables to su1-leaf1:swp1 (rail 1); dcim.cable "
             f"su1-s1:eth1 - su1-leaf2:swp1 ({swapped[0]}) cables server su1-s1 NIC eth1 "
             "here")}
        found = set(_audit(lab))
        assert found == expected, found
    finally:
        with Nautobot(nautobot.url, nautobot.token) as api:
            for cable in swapped:
                api.request("DELETE", f"dcim/cables/{cable}/")
    back = lab.cli("sot", "sync", "--create", "--write", "--format", "json")
    assert back.code == 0 and sorted(back.json()["changes"]) == [
        "create cables: su1-s1:eth1--su1-leaf1:swp1",
        "create cables: su1-s1:eth2--su1-leaf2:swp1"], back.stdout + back.stderr
    assert lab.cli("sot", "check").code == 0
    assert _audit(lab) == []
