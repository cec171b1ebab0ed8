"""Five fixed audit reports (clean, dirty, error, incomplete, and a clean one with unmanaged
hosts) the report renderers are tested on, and generated reports of big fabrics (classic and
AI) for the fabric picture."""

from __future__ import annotations

import dataclasses

from flatfab.checks import Finding, Severity
from flatfab.checks.base import not_judged, unmanaged_finding
from flatfab.reports.model import AuditReport, DeviceDrift, DeviceSummary, LinkSummary, SectionDrift

EPOCH = 1795424400.0  # 2026-11-23T09:00:00Z
CHECKS = ["interface.mtu", "lossless.ecn", "lossless.pfc", "tenancy.isolation", "underlay.bgp",
          "underlay.ecmp"]
DIRTY_STATUSES = {"spine1": "critical", "spine2": "unread", "leaf1": "warning",
                  "leaf2": "drift", "leaf1-h1": "error", "leaf1-h2": "clean",
                  "leaf2-h1": "info", "leaf2-h2": "clean"}
DIRTY_LINKS = {"leaf1:swp51--spine1:swp1": "critical", "leaf1:swp52--spine2:swp1": "warning",
               "leaf2:swp51--spine1:swp2": "ok", "leaf2:swp52--spine2:swp2": "ok",
               "leaf1-h1:eth1--leaf1:swp1": "error", "leaf1-h2:eth1--leaf1:swp2": "ok",
               "leaf2-h1:eth1--leaf2:swp1": "ok", "leaf2-h2:eth1--leaf2:swp2": "ok"}
MISSING = " neighbor swp52 interface remote-as external"
UNEXPECTED = " neighbor swp52 description <old> & spare"
FRR_DIFF = ("--- leaf2 running frr\n+++ leaf2 intended frr\n@@ -4,3 +4,3 @@\n"
            " router bgp 65102\n-" + UNEXPECTED + "\n+" + MISSING + "\n !\n")


def _devices(unreachable: str | None = None,
             unmanaged: tuple[str, ...] = ()) -> list[DeviceSummary]:
    names = [("spine1", "spine"), ("spine2", "spine"), ("leaf1", "leaf"), ("leaf2", "leaf")]
    names += [(f"leaf{i}-h{j}", "host") for i in (1, 2) for j in (1, 2)]
    return [DeviceSummary(n, role, "linux_host" if role == "host" else "frr",
                          reachable=n != unreachable, managed=n not in unmanaged)
            for n, role in names]


def _links() -> list[LinkSummary]:
    links = [LinkSummary(f"leaf{i}:swp5{s}--spine{s}:swp{i}", "fabric", f"leaf{i}",
                         f"swp5{s}", f"spine{s}", f"swp{i}") for i in (1, 2) for s in (1, 2)]
    links += [LinkSummary(f"leaf{i}-h{j}:eth1--leaf{i}:swp{j}", "host", f"leaf{i}-h{j}", "eth1",
                          f"leaf{i}", f"swp{j}") for i in (1, 2) for j in (1, 2)]
    return links


def clean_report() -> AuditReport:
    return AuditReport(fabric="lab", run_id="20261123T090000Z-clean",
                       started="2026-11-23T09:00:00Z", duration_s=8.25, devices=_devices(),
                       links=_links(), checks_run=list(CHECKS), findings=[], drift=[],
                       started_epoch=EPOCH, timings={"checks": 0.5, "collect": 6.0})


def _findings() -> list[Finding]:
    return [
        Finding("interface.mtu", Severity.CRITICAL, "spine1", "MTU differs across the link",
                port="swp1", link="leaf1:swp51--spine1:swp1", expected="9216", actual="1500"),
        Finding("lossless.pfc", Severity.ERROR, "leaf1-h1",
                'PFC priorities differ: <b>& "prio 3"', port="eth1", expected="3",
                actual="none"),
        Finding("lossless.ecn", Severity.WARNING, "leaf1", "ECN min|max thresholds inverted",
                port="swp52.100", vrf="blue", expected="min < max", actual="min|max = 2|1",
                virtual=True),
        Finding("underlay.ecmp", Severity.INFO, "leaf2-h1", "one path only to the far leaf",
                expected="2", actual="1"),
        Finding("tenancy.isolation", Severity.ERROR, None, "tenant blue reaches tenant red",
                vrf="blue"),
    ]


UNREAD_SPINE2 = "connection refused by 172.31.255.12:22"


def dirty_report() -> AuditReport:
    """Findings and drift, and spine2 not read (its session refused; its config read as an
    audit's DriftRead reports it: an error, which the report holds as unread, not drift)."""
    drift = [DeviceDrift("leaf2", (SectionDrift("frr", (MISSING,), (UNEXPECTED,), FRR_DIFF),)),
             DeviceDrift("spine2", error=UNREAD_SPINE2)]
    return AuditReport(fabric="lab", run_id="20261123T090000Z-dirty",
                       started="2026-11-23T09:00:00Z", duration_s=12.5,
                       devices=_devices(unreachable="spine2"), links=_links(),
                       checks_run=list(CHECKS), findings=_findings(), drift=drift,
                       started_epoch=EPOCH, unread={"spine2": UNREAD_SPINE2},
                       timings={"checks": 0.75, "collect": 9.5, "drift": 2.25})


UNREAD_HOST = "timed out after 10 s connecting to 172.31.255.18:22"
UNREAD_CONFIG = "running config not read: no answer within 60 s to `vtysh -c 'show running'`"


def incomplete_report() -> AuditReport:
    """Nothing read is wrong, but leaf1-h2 was not read at all and spine1's running config
    was not: status incomplete, exit 3, never clean and never drift."""
    reachable = Finding("device.reachable", Severity.CRITICAL, "leaf1-h2",
                        f"leaf1-h2 could not be read: {UNREAD_HOST}", expected="reachable",
                        actual=UNREAD_HOST)
    return AuditReport(fabric="lab", run_id="20261123T090000Z-incomplete",
                       started="2026-11-23T09:00:00Z", duration_s=18.0,
                       devices=_devices(unreachable="leaf1-h2"), links=_links(),
                       checks_run=sorted([*CHECKS, "device.reachable"]), findings=[reachable],
                       drift=[DeviceDrift("spine1", error=UNREAD_CONFIG.split(": ", 1)[1])],
                       started_epoch=EPOCH, unread={"leaf1-h2": UNREAD_HOST},
                       timings={"checks": 0.5, "collect": 17.0})


def error_report() -> AuditReport:
    return AuditReport(fabric="lab", run_id="20261123T090000Z-error",
                       started="2026-11-23T09:00:00Z", duration_s=0.25, devices=[], links=[],
                       checks_run=[], findings=[], drift=[], started_epoch=EPOCH,
                       error="no inventory for fabric lab: inventory/lab/hosts.yaml not found")


UNMANAGED_HOSTS = ("leaf2-h1", "leaf2-h2")
HOST_SIDE = ("device.reachable", "host.intent", "interface.up")


def unmanaged_report() -> AuditReport:
    """The switches audited clean but for one setting a switch does not state (not judged:
    the audit is incomplete); two hosts unmanaged (every host-side check not judged on them,
    which leaves an audit complete)."""
    findings = [unmanaged_finding(check, host) for host in UNMANAGED_HOSTS
                for check in HOST_SIDE]
    findings.append(not_judged("state.unknown", "leaf1", "PFC_WD|swp1 has no action",
                               port="swp1", what="leaf1:swp1 watchdog.action", virtual=True))
    return AuditReport(fabric="lab", run_id="20261123T090000Z-unmanaged",
                       started="2026-11-23T09:00:00Z", duration_s=6.5,
                       devices=_devices(unmanaged=UNMANAGED_HOSTS), links=_links(),
                       checks_run=sorted({*CHECKS, *HOST_SIDE, "state.unknown"}),
                       findings=findings, drift=[], started_epoch=EPOCH,
                       timings={"checks": 0.5, "collect": 5.0})


REPORTS = {"clean": clean_report, "dirty": dirty_report, "error": error_report,
           "incomplete": incomplete_report, "unmanaged": unmanaged_report}


def classic_report(leaves: int, spines: int, hosts: int) -> AuditReport:
    """A clean report of a leaf-spine of `leaves` leaves (leaf1...), each linked to every
    spine and with `hosts` one-NIC hosts (leaf1-h1...)."""
    devices = [DeviceSummary(f"spine{s}", "spine", "frr", True) for s in range(1, spines + 1)]
    links = []
    for i in range(1, leaves + 1):
        leaf = f"leaf{i}"
        devices.append(DeviceSummary(leaf, "leaf", "frr", True))
        links += [LinkSummary(f"{leaf}:swp{s}--spine{s}:swp{i}", "fabric", leaf, f"swp{s}",
                              f"spine{s}", f"swp{i}") for s in range(1, spines + 1)]
        for j in range(1, hosts + 1):
            devices.append(DeviceSummary(f"{leaf}-h{j}", "host", "linux_host", True))
            links.append(LinkSummary(f"{leaf}-h{j}:eth1--{leaf}:swp{100 + j}", "host",
                                     f"{leaf}-h{j}", "eth1", leaf, f"swp{100 + j}"))
    return dataclasses.replace(clean_report(), fabric="big", devices=devices, links=links)


def ai_report(pods: int, sus: int, rails: int, servers: int) -> AuditReport:
    """Two planes (odd rails, even rails), `pods` pods of `sus` SUs, 4 pod spines per pod
    and plane, 16 super-spines per plane."""
    devices, links = [], []
    for plane in (1, 2):
        devices += [DeviceSummary(f"p{plane}-ss{k}", "superspine", "frr", True, plane=plane)
                    for k in range(1, 17)]
    for pod in range(1, pods + 1):
        for plane in (1, 2):
            for k in range(1, 5):
                spine = f"p{plane}-pod{pod}-spine{k}"
                devices.append(DeviceSummary(spine, "spine", "frr", True, plane=plane, pod=pod))
                links += [LinkSummary(f"{spine}:up{t}--p{plane}-ss{t}:d{pod}", "fabric", spine,
                                      f"up{t}", f"p{plane}-ss{t}", f"d{pod}")
                          for t in range(1, 17)]
        for su in range((pod - 1) * sus + 1, pod * sus + 1):
            for rail in range(1, rails + 1):
                leaf, plane = f"su{su}-leaf{rail}", 2 - rail % 2
                devices.append(DeviceSummary(leaf, "leaf", "frr", True, plane=plane, pod=pod,
                                             su=su, rail=rail))
                links += [LinkSummary(f"{leaf}:up{k}--p{plane}-pod{pod}-spine{k}:d{su}{rail}",
                                      "fabric", leaf, f"up{k}", f"p{plane}-pod{pod}-spine{k}",
                                      f"d{su}{rail}") for k in range(1, 5)]
            for s in range(1, servers + 1):
                server = f"su{su}-s{s}"
                devices.append(DeviceSummary(server, "host", "linux_host", True, pod=pod, su=su))
                links += [LinkSummary(f"{server}:eth{r}--su{su}-leaf{r}:p{s}", "host", server,
                                      f"eth{r}", f"su{su}-leaf{r}", f"p{s}")
                          for r in range(1, rails + 1)]
    return dataclasses.replace(clean_report(), fabric="bigai", devices=devices, links=links)
