"""Where the gNMI targets are (a plain Nornir connection option, host > groups > defaults),
refused inventory entries in one line naming file and key; and the pieces of the watch that
need no network: class counters as samples, which devices are polled, the view's order."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from rich.console import Console

from flatfab.checks.base import Finding, Severity
from flatfab.errors import InputError
from flatfab.telemetry import view
from flatfab.telemetry.rates import Listing, Rates
from flatfab.telemetry.samples import Metric, Sample
from flatfab.telemetry.targets import gnmi_targets
from flatfab.telemetry.view import PortCounts, render
from flatfab.workflows.commands.watch import counter_samples, pollable
from flatfab.workflows.devices import inventory as files
from tests.support.inventory import login_defaults
from tests.support.telemetry_streams import lab_plan


def _inventory(where: Path, hosts: dict[str, dict[str, Any]] | None = None,
               groups: dict[str, Any] | None = None,
               defaults: dict[str, Any] | None = None) -> Path:
    entries: dict[str, Any] = {}
    for n, (name, device) in enumerate(lab_plan().devices.items()):
        entries[name] = {"hostname": f"192.0.2.{n + 1}", "platform": device.platform,
                         "groups": [f"{device.role.value}s"]}
        entries[name].update((hosts or {}).get(name, {}))
    roles = {f"{d.role.value}s" for d in lab_plan().devices.values()}
    group_doc = {g: {"data": {}} for g in roles} | (groups or {})
    (where / "hosts.yaml").write_text(yaml.safe_dump(entries))
    (where / "groups.yaml").write_text(yaml.safe_dump(group_doc))
    logins = login_defaults(where, (e["hostname"] for e in entries.values()))
    options = {**logins["connection_options"], **(defaults or {}).get("connection_options", {})}
    (where / "defaults.yaml").write_text(yaml.safe_dump(
        {**logins, **(defaults or {}), "connection_options": options}))
    return where


def _targets(where: Path) -> dict[str, Any]:
    return gnmi_targets(files.build(where, lab_plan()), where)


def test_no_gnmi_options_means_no_targets(tmp_path: Path) -> None:
    assert _targets(_inventory(tmp_path)) == {}


def test_host_group_and_defaults_levels_resolve_like_nornir(tmp_path: Path) -> None:
    gnmi = {"port": 57400, "extras": {"ca_file": "pki/ca.pem", "tls_server_name": "lab"}}
    own = {"hostname": "198.51.100.7", "port": 6030,
           "extras": {"ca_file": "/etc/own-ca.pem", "username_env": "MY_USER",
                      "password_env": "MY_PASS"}}
    found = _targets(_inventory(tmp_path, hosts={"leaf1": {"connection_options":
                                                           {"gnmi": own}}},
                                groups={"spines": {"connection_options": {"gnmi": gnmi}}}))
    assert sorted(found) == ["leaf1", "spine1", "spine2"]
    leaf1, spine1 = found["leaf1"], found["spine1"]
    assert (leaf1.host, leaf1.port, leaf1.ca_file) == ("198.51.100.7", 6030,
                                                       Path("/etc/own-ca.pem"))
    assert (leaf1.username_env, leaf1.password_env) == ("MY_USER", "MY_PASS")
    # the group's: the host's own address, a CA path taken from the inventory folder
    assert spine1.host.startswith("192.0.2.") and spine1.port == 57400
    assert spine1.ca_file == tmp_path / "pki" / "ca.pem"
    assert spine1.tls_server_name == "lab"
    assert spine1.username_env == "FLATFAB_GNMI_USERNAME"


@pytest.mark.parametrize(("gnmi", "key", "why"), [
    ({"extras": {"ca_file": "ca.pem"}}, "leaf2.connection_options.gnmi.port", "gNMI port"),
    ({"port": "x", "extras": {"ca_file": "ca.pem"}}, "gnmi.port", "integer"),
    ({"port": 57400}, "gnmi.extras.ca_file", "CA file"),
    ({"port": 57400, "extras": {"ca_file": "c", "pasword_env": "X"}},
     "gnmi.extras.pasword_env", "unknown key"),
    ({"port": 57400, "password": "hunter2", "extras": {"ca_file": "c"}}, "gnmi.password",
     "secrets never go in the inventory"),
    ({"port": 57400, "extras": {"ca_file": "c", "insecure": "yes"}}, "gnmi.extras.insecure",
     "true or false"),
])
def test_a_bad_target_entry_is_one_line_naming_file_and_key(
        tmp_path: Path, gnmi: dict[str, Any], key: str, why: str) -> None:
    where = _inventory(tmp_path, hosts={"leaf2": {"connection_options": {"gnmi": gnmi}}})
    with pytest.raises(InputError) as caught:
        _targets(where)
    assert len(caught.value.problems) == 1
    line = str(caught.value)
    assert "\n" not in line and "hosts.yaml" in line and key in line and why in line
    assert "hunter2" not in line


def test_insecure_needs_no_ca(tmp_path: Path) -> None:
    found = _targets(_inventory(tmp_path, defaults={"connection_options": {"gnmi": {
        "port": 57400, "extras": {"insecure": True}}}}))
    assert len(found) == len(lab_plan().devices)
    assert found["leaf1"].insecure and found["leaf1"].ca_file is None


def test_class_counters_become_queue_samples() -> None:
    counters = {"swp1": {3: {"packets": 10, "drops": 2, "bytes": 999}, 0: {"packets": 5}},
                "swp51.100": {3: {"packets": 1, "drops": 0}}}
    samples = counter_samples(lab_plan(), "leaf1", counters, 100.0)
    assert sorted(samples, key=lambda s: (s.metric, s.key or 0)) == sorted([
        Sample("leaf1", "swp1", Metric.QUEUE_TX, 3, 10, 100.0),
        Sample("leaf1", "swp1", Metric.QUEUE_DROPS, 3, 2, 100.0),
        Sample("leaf1", "swp1", Metric.QUEUE_TX, 0, 5, 100.0),
    ], key=lambda s: (s.metric, s.key or 0))  # no drops kept for TC 0: none invented


def test_switches_with_class_counters_and_hosts_with_nic_counters_are_polled() -> None:
    plan = lab_plan()
    polled, blind = pollable(plan, plan.devices)
    assert polled == sorted(plan.devices)  # frr switches (class), linux_host hosts (NIC)
    assert not blind


def test_the_view_puts_the_worst_port_first() -> None:
    counts, rates = PortCounts(), Rates()

    def tick(drops: int, pauses: int, at: float) -> None:
        rates.add_all([Sample("leaf1", "swp1", Metric.QUEUE_DROPS, 0, drops, at),
                       Sample("leaf2", "swp2", Metric.PFC_RX, 3, pauses, at),
                       Sample("leaf3", "swp1", Metric.QUEUE_TX, 3, 5 * int(at), at)])
        counts.update(rates.drain())  # the engine's windows of the tick
    tick(0, 0, 1.0)
    tick(50, 10, 2.0)  # leaf1 drops on a lossy queue (no finding), leaf2 pauses
    finding = Finding(check="telemetry.pause_storm", severity=Severity.ERROR, device="leaf2",
                      port="swp2", message="leaf2 swp2 [storm]")
    order = [(row.device, row.port) for row, _ in counts.worst([finding])]
    assert order == [("leaf2", "swp2"), ("leaf1", "swp1"), ("leaf3", "swp1")]
    assert counts.rows[("leaf1", "swp1")].drops == 50
    shown = Console(record=True, width=160)
    shown.print(render("worst ports", counts, [finding], ["leaf9 127.0.0.1:1: refused"]))
    text = shown.export_text()
    assert text.index("leaf2") < text.index("leaf1") < text.index("leaf3")
    assert "[storm]" in text and "refused" in text  # device text is never read as markup


def test_a_large_tick_ranks_ports_by_the_windows_the_drain_lists(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # past WALK_ALL windows the view walks only what moved of drops, pauses and ECN marks
    monkeypatch.setattr(view, "WALK_ALL", 2)
    rates, counts = Rates(), PortCounts()
    for at in (1.0, 2.0):
        rates.add_all([Sample("leaf1", "swp1", Metric.QUEUE_DROPS, 3, 7 * int(at), at),
                       Sample("leaf2", "swp2", Metric.QUEUE_TX, 0, 100 * int(at), at),
                       Sample("leaf3", "swp3", Metric.QUEUE_ECN, 3, 0, at)])
    counts.update(rates.drain(Listing(moved=frozenset({Metric.QUEUE_DROPS,
                                                       Metric.QUEUE_ECN}))))
    assert list(counts.rows) == [("leaf1", "swp1")] and counts.rows[("leaf1", "swp1")].drops == 7

