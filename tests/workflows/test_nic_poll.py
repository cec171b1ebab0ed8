"""`flatfab watch` polls GPU hosts for their NIC counters (no gNMI on a host): the counters
become samples, the poller reads hosts and switches in one Nornir run, and a host whose
DCQCN does not react to the CNPs its leaf delivers is named by telemetry.dcqcn_idle."""

from __future__ import annotations

import json
from typing import Any

from nornir.core import Nornir
from nornir.core.inventory import Host, Hosts, Inventory
from nornir.plugins.runners import SerialRunner

from flatfab.platforms.linux_host import PLATFORM
from flatfab.telemetry.health import HealthEngine
from flatfab.telemetry.samples import Metric, Sample
from flatfab.telemetry.thresholds import Thresholds
from flatfab.workflows.commands.watch import NornirPoller, nic_samples, pollable
from tests.doubles.frr import Reply, leaf1_driver
from tests.doubles.linux_host import NFT_READ, counting_host_driver, variant_output
from tests.support.telemetry_streams import Stream, lab_plan

LIMITS = Thresholds()


def test_nic_counters_become_samples_per_nic() -> None:
    counters = {"eth1": {"cnp_sent": 5, "cnp_handled": 7, "cnp_ignored": 1, "ecn_marked_rx": 9,
                         "out_of_buffer": 2, "pfc_rx.3": 11, "pfc_tx.3": 4}}
    assert sorted(nic_samples("h1", counters, 1.0), key=lambda s: (s.metric, s.key or 0)) == \
        sorted([Sample("h1", "eth1", Metric.NIC_CNP_SENT, None, 5, 1.0),
                Sample("h1", "eth1", Metric.NIC_CNP_HANDLED, None, 7, 1.0),
                Sample("h1", "eth1", Metric.NIC_ECN_MARKED_RX, None, 9, 1.0),
                Sample("h1", "eth1", Metric.NIC_OUT_OF_BUFFER, None, 2, 1.0),
                Sample("h1", "eth1", Metric.PFC_RX, 3, 11, 1.0),
                Sample("h1", "eth1", Metric.PFC_TX, 3, 4, 1.0)],
               key=lambda s: (s.metric, s.key or 0))  # cnp_ignored has no metric: left out
    assert nic_samples("h1", {"eth1": {}}, 1.0) == []  # nothing kept, nothing invented


class _Opened:
    """An opened Nornir connection holding a driver double."""

    def __init__(self, driver: Any) -> None:
        self.connection = driver

    def close(self) -> None:
        self.closed = True  # the poller reopens a failed host's session on the next poll


def _nornir(drivers: dict[str, tuple[str, Any]]) -> Nornir:
    hosts = {}
    for name, (platform, driver) in drivers.items():
        host = Host(name, hostname="192.0.2.1", platform=platform)
        host.connections["napalm"] = _Opened(driver)  # type: ignore[assignment]
        hosts[name] = host
    return Nornir(inventory=Inventory(hosts=Hosts(hosts)), runner=SerialRunner())


def test_hosts_and_switches_are_polled_in_one_run() -> None:
    plan = lab_plan()
    host, host_shell = counting_host_driver("lab")
    switch, _ = leaf1_driver(read_only=True)
    polled, blind = pollable(plan, ["leaf1-h1", "leaf1"])
    assert polled == ["leaf1", "leaf1-h1"] and blind == []
    poller = NornirPoller(_nornir({"leaf1-h1": ("linux_host", host), "leaf1": ("frr", switch)}),
                          plan, polled)
    samples, errors = poller.poll()
    assert errors == {}
    mine = {(s.port, s.metric): s.value for s in samples if s.device == "leaf1-h1"}
    assert mine == {("eth1", Metric.NIC_CNP_SENT): 2, ("eth1", Metric.NIC_CNP_HANDLED): 4,
                    ("eth1", Metric.NIC_ECN_MARKED_RX): 7}
    assert [e.mutating for e in host_shell.log] == [False]  # read-only, one round trip


def test_a_host_whose_counters_cannot_be_read_is_one_error_line() -> None:
    plan = lab_plan()
    host, shell = counting_host_driver("lab")
    shell.answers[NFT_READ] = Reply("garbage")
    poller = NornirPoller(_nornir({"leaf1-h1": ("linux_host", host)}), plan, ["leaf1-h1"])
    samples, errors = poller.poll()
    assert samples == []
    assert "NIC counters" in errors["leaf1-h1"] and "did not print JSON" in errors["leaf1-h1"]


def _nft_with(cnp_rx: int, ce_rx: int, cnp_tx: int) -> str:
    """The captured counter table with other packet counts (as the kernel would print)."""
    data = json.loads(variant_output("nft_nic_counters.json"))
    counts = {"eth1 cnp_rx": cnp_rx, "eth1 ecn_ce_rx": ce_rx, "eth1 cnp_tx": cnp_tx}
    for item in data["nftables"]:
        rule = item.get("rule")
        if rule and rule.get("comment") in counts:
            for statement in rule["expr"]:
                if "counter" in statement:
                    statement["counter"]["packets"] = counts[rule["comment"]]
    return json.dumps(data)


def test_a_lab_host_with_dcqcn_off_is_named_by_dcqcn_idle() -> None:
    """leaf1-h1's NIC counters come from its driver (nftables counts rising by the CNPs its
    leaf delivers), the rest of the fabric from a healthy stream; DCQCN off on the virtual
    NIC leaves cnp_handled flat while leaf1 swp1's CNP queue keeps sending."""
    plan = lab_plan()
    engine, stream = HealthEngine(plan, LIMITS), Stream(plan, LIMITS.interval_s)
    stream.muted.add("leaf1-h1")  # its NIC counters are the poller's below
    on, on_shell = counting_host_driver("lab", dcqcn=True)
    off, off_shell = counting_host_driver("lab", dcqcn=False)
    raised = []
    for tick in range(8):
        driver, shell = (on, on_shell) if tick < 3 else (off, off_shell)
        # the kernel counts every CNP the leaf delivers (20 per interval), CE and CNPs sent
        shell.answers[NFT_READ] = Reply(_nft_with(1000 + 20 * tick, 500 + 30 * tick,
                                                  200 + 15 * tick))
        engine.feed(stream.step())
        engine.feed(nic_samples("leaf1-h1", PLATFORM.nic_counters(PLATFORM.read_only(driver)),
                                stream.time))
        changes = engine.tick(stream.time)
        raised += changes.raised
        if tick < 3:
            assert not changes.raised, changes.raised  # handled rises with the CNPs
    assert [(f.check, f.device, f.port) for f in raised] == [
        ("telemetry.dcqcn_idle", "leaf1-h1", "eth1")]
    assert "reaction" in raised[0].message and "leaf1 swp1 queue 6" in raised[0].message


def test_a_host_without_lossless_nics_has_nothing_to_poll() -> None:
    plan = lab_plan().model_copy(deep=True)
    for iface in plan.devices["leaf1-h1"].interfaces.values():
        iface.nic = None
    polled, blind = pollable(plan, ["leaf1-h1", "leaf1-h2"])
    assert (polled, blind) == (["leaf1-h2"], ["leaf1-h1"])
