"""The lab's carrier watchers' logs read as link flaps (flatfab.platforms.lab_carrier) and served
by the lab reader in place of phy.json's modelled count (flatfab.platforms.lab_phy).

The logs (tests/fixtures/frr/carrier, see its README) were recorded on this project's lab
machine: a veth pair made and brought up, eth1 taken down and up, then swp1 moved into the
other namespace and brought up there.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

from flatfab.platforms import lab_carrier, lab_phy
from tests.support.paths import FIXTURES

LOGS = FIXTURES / "frr" / "carrier"
FIRST = (LOGS / "main.log").read_text(encoding="utf-8")
SECOND = (LOGS / "blue.log").read_text(encoding="utf-8")  # ends in a line being written


def _at(stamp: str) -> float:
    return datetime.fromisoformat(stamp).replace(tzinfo=UTC).timestamp()


def test_each_loss_of_carrier_is_a_flap_and_a_port_moved_to_another_namespace_is_one():
    seen = lab_carrier.history([FIRST, SECOND], cleared=None)
    # eth1: down when made (its first state), up, down (its own bounce), up, down (its peer
    # moved away), up
    assert seen["eth1"] == lab_carrier.Carrier(flaps=2, transitions=5,
                                               changed_at=_at("2026-11-30T01:56:04.176461"))
    # swp1: up, down (its peer went down), up, down (its own move), up in the other log;
    # an mtu change is no change of state, a partial last line is no line
    assert seen["swp1"] == lab_carrier.Carrier(flaps=2, transitions=4,
                                               changed_at=_at("2026-11-30T01:56:04.176579"))


def test_flaps_count_from_the_clear_and_the_last_change_does_not_reset():
    cleared = _at("2026-11-30T01:56:04.000000")
    seen = lab_carrier.history([SECOND, FIRST], cleared=cleared)  # log order does not matter
    assert seen["eth1"].flaps == 1 and seen["swp1"].flaps == 1
    assert seen["eth1"].transitions == 5
    assert seen["eth1"].changed_at == _at("2026-11-30T01:56:04.176461")


def test_a_ports_first_event_is_its_state_not_a_flap():
    seen = lab_carrier.history([FIRST.splitlines()[0]], cleared=None)
    assert seen["eth1"] == lab_carrier.Carrier(flaps=0, transitions=0, changed_at=None)
    assert lab_carrier.history(["", "no link line\n"], cleared=None) == {}


def test_a_clear_that_does_not_read_is_never_cleared():
    assert lab_carrier.parse_cleared("1764467764.25\n") == 1764467764.25
    assert lab_carrier.parse_cleared("") is None
    assert lab_carrier.parse_cleared("yesterday") is None


PHY = json.dumps({"ports": {
    "swp1": {"present": True, "flaps": 7, "changed_at": 1000.0, "speed_mbps": 100000,
             "lanes": 4},
    "eth1": {"present": True, "flaps": 0, "changed_at": 1000.0, "speed_mbps": 100000,
             "lanes": 4},
    "swp9": {"present": True, "flaps": 0, "changed_at": 1000.0}}})


def _driver_read(carrier: str) -> dict[str, dict[str, object]]:
    now = _at("2026-11-30T01:57:04.176579")

    def batch(commands: dict[str, str]) -> dict[str, str]:
        assert commands["carrier"] == lab_phy.carrier_read("/var/lib/flatfab/phy.json")
        return {"phy": PHY, "now": f"{now}\n", "carrier": carrier}
    return lab_phy.read_driver_file(batch, "/var/lib/flatfab/phy.json")


def test_where_the_watchers_run_the_reader_states_the_real_flaps_not_the_files():
    cleared = _at("2026-11-30T01:56:04.000000")
    ports = _driver_read(f"== carrier watched ==\n{cleared}\n\n{FIRST}{SECOND}")
    assert ports["swp1"]["flaps"] == 1  # the file's 7 was modelled; the link flapped once
    assert round(float(ports["swp1"]["last_change_s"]), 3) == 60.0  # type: ignore[arg-type]
    # a port its watcher never saw change: no flap, last changed when the lab came up
    assert ports["swp9"]["flaps"] == 0
    assert ports["swp9"]["last_change_s"] > 1e9  # type: ignore[operator]


def test_where_no_watcher_runs_the_file_is_read_as_it_states():
    ports = _driver_read("")
    assert ports["swp1"]["flaps"] == 7
    uncleared = _driver_read(f"== carrier watched ==\n\n{FIRST}{SECOND}")
    assert uncleared["swp1"]["flaps"] == 2  # never cleared: every flap since the lab came up
