"""The Grafana dashboard against a real Prometheus on the live lab.

Debian's Prometheus (/usr/bin/prometheus, apt package `prometheus`, installed by `make deps`)
runs with a config of the test's own (storage in a temp folder, listening on 127.0.0.1,
scraping every second) and scrapes `flatfab watch --prometheus 127.0.0.1:<port>` while a flood
of RoCEv2 packets congests leaf1's lossless class (its port to leaf1-h1 shaped to 10 Mbit/s, as
tests/live/test_telemetry.py does). Through Prometheus's HTTP API:
- every panel query of dashboards/flatfab-lossless.json, its variables substituted as Grafana
  does (All), returns series; the flooded port tops the pause panel with a rate above zero, its
  lossless queue's drops show, the drops finding is in the table; the physical layer's panels
  (FEC codewords, pre-FEC BER and its share of the plan's bound, link state changes) show
  every switch port of a physical link, from the nodes' phy.json;
- what the lab does not serve (pauses sent, a veth NIC's out-of-buffer drops) has no series,
  and the pause panel's former sum (`a + b`) is empty there: the case the dashboard survives;
- the variables list every device and every port with series (switch ports and host NICs);
- picking a port, a host or a switch leaves every panel that has data for it with data.
Everything is waited on by polling the API with a deadline. The lab is rolled out first (the
lossless config the flood congests) and after (the shaping undone).
"""

from __future__ import annotations

import re
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from flatfab.telemetry import conditions
from flatfab.telemetry.metrics import FINDING
from tests.support.dashboard import (
    BEFORE_WORST_PORTS,
    METRIC_NAME,
    PICKS,
    Choice,
    Query,
    label_values,
    queries,
    substitute,
    template_variables,
    variable_query,
)
from tests.support.flatfab import FLATFAB
from tests.support.lab import Lab
from tests.support.paths import ROOT
from tests.support.prometheus import Prometheus
from tests.support.telemetry_lab import flooding
from tests.support.waiting import wait_for

pytestmark = pytest.mark.live

LEAF, PORT, HOST, NIC = "leaf1", "swp1", "leaf1-h1", "eth1"  # leaf1's port to leaf1-h1
TARGET, SENDER = "10.100.1.11", "leaf2-h1"  # leaf1-h1's address; a host of the same VRF
FLOOD_S = 10  # a 4 s rate window and a finding raised within two ticks, with room to spare
SERVING = re.compile(r"serving metrics for Prometheus on http://(\S+?)/metrics")
Series = list[dict[str, Any]]


def _rollout(lab: Lab) -> None:
    result = lab.cli("rollout", "--format", "json")
    assert result.code == 0, result.stdout[-2000:] + result.stderr


def _congest(lab: Lab) -> None:
    """leaf1 swp1's lossless class (TC 3) at 10 Mbit/s with a 200 kB queue: a flood of
    3000 pps is held back (pauses, ECN marks, a watchdog storm) and overflows it (drops)."""
    lab.sh(LEAF, f"tc -n blue class change dev {PORT} parent 1:1 classid 1:13 htb rate 10mbit "
                 "ceil 10mbit burst 15k cburst 15k prio 1 quantum 60000")
    lab.sh(LEAF, f"tc -n blue qdisc change dev {PORT} parent 1:13 handle 13: bfifo "
                 "limit 200000")


@contextmanager
def _watch_serving(lab: Lab, work: Path) -> Iterator[str]:
    """`flatfab watch --interval 1 --prometheus 127.0.0.1:0` on the lab, as an operator runs
    it; yields the HOST:PORT it serves on (its own line says). Ctrl-C ends it."""
    args = [FLATFAB, "--fabric", lab.fabric, "--inventory", str(lab.inventory),
            "--state-dir", str(lab.state_dir), "watch", "--interval", "1",
            "--prometheus", "127.0.0.1:0"]
    lines: list[str] = []
    with (work / "watch.out").open("w") as out:
        proc = subprocess.Popen(args, cwd=ROOT, stdout=out, stderr=subprocess.PIPE, text=True)

    def read() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append(line)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        wait_for(lambda: proc.poll() is not None or any(SERVING.search(x) for x in lines),
                 "flatfab watch serving its metrics", timeout=60)
        served = next((m.group(1) for x in lines if (m := SERVING.search(x))), None)
        assert served is not None, "".join(lines)[-3000:]
        yield served
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)
        reader.join(10)


def _all_heard(prom: Prometheus) -> bool:
    up = prom.query("flatfab_telemetry_target_up")
    return bool(up) and all(s["value"][1] == "1" for s in up)


def _labelled(series: Series, value_above: float | None = None, **labels: str) -> bool:
    return any(all(s["metric"].get(k) == v for k, v in labels.items())
               and (value_above is None or float(s["value"][1]) > value_above)
               for s in series)


def _every_physical_port(series: Series) -> bool:
    """A series for each switch end of the lab's physical links."""
    return {(s["metric"].get("device"), s["metric"].get("port")) for s in series} >= {
        (LEAF, PORT), (LEAF, "swp51"), ("spine1", "swp1"), ("spine2", "swp4")}


def _healthy_share(series: Series) -> bool:
    """A healthy lab port's BER (1e-9) is 2e-4 of its bound (RS(528,514)'s 5e-5 over the
    default margin 10); the panel shows the ten worst ports."""
    return len(series) == 10 and all(abs(float(s["value"][1]) - 2e-4) < 1e-9 for s in series)


# What the flood must show beyond "some series", by panel title (and the physical layer's
# panels, every switch port of a physical link: the lab states each one in its phy.json)
FLOODED: dict[str, Callable[[Series], bool]] = {
    "Worst ports by PFC pause rate":
        lambda r: _labelled(r, 0.0, device=LEAF, port=PORT),
    "Lossless queue drops":
        lambda r: _labelled(r, 0.0, device=LEAF, port=PORT, queue="3"),
    "Active findings":
        lambda r: _labelled(r, check=conditions.LOSSLESS_DROPS, device=LEAF, port=PORT),
    "Pre-FEC BER as a share of its bound": _healthy_share,
    "FEC codewords corrected and uncorrectable": lambda r: _labelled(
        r, device=LEAF, port=PORT, counter="uncorrectable"),
    "Link state changes": _every_physical_port,
}
PHYSICAL_PANELS = ("FEC codewords corrected and uncorrectable", "Pre-FEC BER",
                   "Pre-FEC BER as a share of its bound", "Link state changes")


def _some(series: Series) -> bool:
    return bool(series)


def _every_panel(prom: Prometheus, deadline: float) -> dict[str, Series]:
    """Poll every panel query (variables at All) until each shows what it must; what did not
    by the deadline, with its last result."""
    assert set(FLOODED) <= {q.panel for q in queries()}, "a panel this test reads was renamed"
    pending = {q.name: q for q in queries()}
    last: dict[str, Series] = {}
    while pending and time.monotonic() < deadline:
        for name, query in sorted(pending.items()):
            last[name] = prom.query(substitute(query.expr))
            if FLOODED.get(query.panel, _some)(last[name]):
                del pending[name]
        time.sleep(0.2)
    return {name: last.get(name, []) for name in pending}


def _has_data(prom: Prometheus, query: Query, choice: Choice) -> bool:
    """Does a metric the query reads have a series now for the choice (of the variables the
    query uses)?"""
    used = [var for var in ("device", "port") if query.uses(var)]
    matchers = ", ".join(f'{var}=~"${var}"' for var in used)
    return any(prom.query(substitute(f"{name}{{{matchers}}}", choice))
               for name in sorted(set(METRIC_NAME.findall(query.expr))))


def _pick(prom: Prometheus, choice: Choice, timeout: float = 10.0) -> tuple[set[str], list[str]]:
    """Every panel query the choice changes: shown (it has series), or with no data for the
    choice at all. Returns the panels shown and the problems (data but an empty panel)."""
    shown: set[str] = set()
    problems: list[str] = []
    for query in queries():
        if not any(query.uses(var) for var in choice):
            continue
        deadline = time.monotonic() + timeout
        while True:
            if prom.query(substitute(query.expr, choice)):
                shown.add(query.panel)
                break
            if not _has_data(prom, query, choice):
                break  # nothing for this choice: an empty panel is the truth
            if time.monotonic() > deadline:
                problems.append(f"{dict(choice)}: {query.name} empty, its metrics have data")
                break
            time.sleep(0.2)
    return shown, problems


def _check_variables(prom: Prometheus) -> None:
    variables = template_variables()
    every = prom.series('{__name__=~"flatfab_.+"}')
    dev_selector, dev_label = label_values(variable_query(variables["device"]))
    devices = set(prom.label_values(dev_label, substitute(dev_selector)))
    assert {s["device"] for s in every if s.get("device")} <= devices
    assert {LEAF, "spine1", HOST} <= devices
    port_selector, port_label = label_values(variable_query(variables["port"]))
    ports = set(prom.label_values(port_label, substitute(port_selector)))
    with_series = {s["port"] for s in every if s.get("port") and s["__name__"] != FINDING}
    assert ports == with_series and {PORT, NIC} <= ports, sorted(ports ^ with_series)
    # a GPU host chosen: its NIC alone
    assert prom.label_values(port_label, substitute(port_selector, {"device": [HOST]})) == [NIC]


def test_every_panel_query_returns_series_from_prometheus_scraping_the_watch_in_a_flood(
        lab: Lab, tmp_path: Path) -> None:
    _rollout(lab)  # the lossless config the flood congests
    try:
        with _watch_serving(lab, tmp_path) as served, \
                Prometheus(tmp_path / "prometheus", [served]) as prom:
            wait_for(lambda: _all_heard(prom), "every watched device heard, in Prometheus",
                     timeout=60)
            _congest(lab)
            # RoCEv2 (UDP 4791): the host marks it into the lossless class itself
            with flooding(lab, SENDER, TARGET, port=4791, tos=26 << 2, pps=3000,
                          seconds=FLOOD_S) as began:
                empty = _every_panel(prom, deadline=began + FLOOD_S + 3)
                assert not empty, empty
                # what the lab does not serve is absent, and the former sum empty with it
                assert prom.query("flatfab_pfc_pause_frames_sent_total") == []
                assert prom.query("flatfab_nic_out_of_buffer_dropped_packets_total") == []
                assert prom.query(substitute(BEFORE_WORST_PORTS)) == []
                _check_variables(prom)
                shown: dict[str, set[str]] = {}
                problems: list[str] = []
                for choice in PICKS:
                    shown[str(dict(choice))], found = _pick(prom, choice)
                    problems += found
                assert problems == []
            assert {"NIC CNP sent vs handled", "NIC ECN-marked received and out-of-buffer drops"
                    } <= shown[str({"port": [NIC]})]
            assert {"Worst ports by PFC pause rate", "Lossless queue drops",
                    "ECN marks per queue", "PFC watchdog storms", "Port oper state",
                    *PHYSICAL_PANELS} <= shown[str({"port": [PORT]})]
            # a host NIC streams no physical layer: those panels have no data for it
            assert not set(PHYSICAL_PANELS) & shown[str({"port": [NIC]})]
            assert {"Target up / silent", "NIC CNP sent vs handled"} <= shown[
                str({"device": [HOST]})]
    finally:
        _rollout(lab)
