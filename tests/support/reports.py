"""Four fixed audit reports (clean, dirty, error, and a clean one with unmanaged hosts) the
report renderers are tested on."""

from __future__ import annotations

from flatfab.checks import Finding, Severity
from flatfab.checks.base import not_judged, unmanaged_finding
from flatfab.reports.model import AuditReport, DeviceDrift, DeviceSummary, LinkSummary, SectionDrift

EPOCH = 1795424400.0  # 2026-11-23T09:00:00Z
CHECKS = ["interface.mtu", "lossless.ecn", "lossless.pfc", "tenancy.isolation", "underlay.bgp",
          "underlay.ecmp"]
DIRTY_STATUSES = {"spine1": "critical", "spine2": "unreachable", "leaf1": "warning",
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


def dirty_report() -> AuditReport:
    drift = [DeviceDrift("leaf2", (SectionDrift("frr", (MISSING,), (UNEXPECTED,), FRR_DIFF),)),
             DeviceDrift("spine2", error="ssh: connect to host 172.31.255.12 port 22: "
                                         "Connection refused")]
    return AuditReport(fabric="lab", run_id="20261123T090000Z-dirty",
                       started="2026-11-23T09:00:00Z", duration_s=12.5,
                       devices=_devices(unreachable="spine2"), links=_links(),
                       checks_run=list(CHECKS), findings=_findings(), drift=drift,
                       started_epoch=EPOCH,
                       timings={"checks": 0.75, "collect": 9.5, "drift": 2.25})


def error_report() -> AuditReport:
    return AuditReport(fabric="lab", run_id="20261123T090000Z-error",
                       started="2026-11-23T09:00:00Z", duration_s=0.25, devices=[], links=[],
                       checks_run=[], findings=[], drift=[], started_epoch=EPOCH,
                       error="no inventory for fabric lab: inventory/lab/hosts.yaml not found")


UNMANAGED_HOSTS = ("leaf2-h1", "leaf2-h2")
HOST_SIDE = ("device.reachable", "host.intent", "interface.up")


def unmanaged_report() -> AuditReport:
    """The switches audited clean; two hosts unmanaged (every host-side check not judged on
    them) and one setting a switch does not state (not judged either)."""
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
           "unmanaged": unmanaged_report}
