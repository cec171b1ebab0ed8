"""Unread is never green: a lossless setting a device should state and did not makes verify
and audit incomplete (exit 3, never passed); what an OS never states (its platform's data
file declares it) is a limitation listed once per platform, and the run stays complete."""

from __future__ import annotations

import dataclasses
import time

from flatfab import exitcodes
from flatfab.checks.base import Severity
from flatfab.cli.output import findings_json, settings_note
from flatfab.model.state import FabricState
from flatfab.platforms.base import Capabilities, CommitConfirm, ReadOnlyGuard
from flatfab.platforms.readback import separate_limitations
from flatfab.platforms.registry import PLATFORMS
from flatfab.reports.model import AuditStatus
from flatfab.workflows.commands.verify import judge
from tests.support.checks import PLAN
from tests.support.lossless import collected, qos_of
from tests.support.reports import clean_report

NO_MAP = "PORT_QOS_MAP|swp1 binds no tc_to_pg_map"


def _with_unread_setting() -> FabricState:
    state = collected()
    qos_of(state, "leaf3", "swp1").unknown["tc_to_pg"] = NO_MAP
    return state


def test_a_setting_left_unread_makes_verify_incomplete_never_passed() -> None:
    report = judge(PLAN, _with_unread_setting(), None, collect_s=0.0, started=time.monotonic())
    [unread] = [f for f in report.findings if f.check == "state.unknown"]
    assert (unread.severity, unread.device, unread.port) == (Severity.NOT_JUDGED, "leaf3",
                                                             "swp1")
    assert unread.message == f"leaf3:swp1 tc_to_pg is not judged: {NO_MAP}"
    assert not report.failed and report.incomplete
    assert report.exit_code == exitcodes.INCOMPLETE
    assert findings_json(report.findings)["passed"] is False
    assert settings_note(report.findings) == " (1 of them leave the run incomplete)"


def test_the_clean_lab_as_collected_passes() -> None:
    report = judge(PLAN, collected(), None, collect_s=0.0, started=time.monotonic())
    assert report.exit_code == exitcodes.CLEAN
    assert findings_json(report.findings)["passed"] is True


def _capabilities(unreadable: dict[str, str]) -> Capabilities:
    return Capabilities(commit_confirm=CommitConfirm.NATIVE, read_only=ReadOnlyGuard.DRIVER,
                        unreadable=unreadable)


def test_a_declared_limitation_is_listed_once_per_platform_and_the_run_is_complete() -> None:
    state = collected()
    for leaf in ("leaf1", "leaf2", "leaf3"):
        for port in ("swp1", "swp51"):
            qos = qos_of(state, leaf, port)
            qos.unknown["cable_m"] = "the OS does not know the cable length"
            assert qos.watchdog is not None
            qos.watchdog.unknown["poll_ms"] = "no poll setting"
    caps = _capabilities({"cable_m": "the OS never states cable length",
                          "watchdog.poll_*": "the OS has no poll interval"})
    for leaf in ("leaf1", "leaf2", "leaf3"):
        separate_limitations(state.devices[leaf], caps.unreadable_match)
    assert state.devices["leaf1"].limitations == {
        "cable_m": "the OS never states cable length",
        "watchdog.poll_*": "the OS has no poll interval"}
    assert "cable_m" not in qos_of(state, "leaf1", "swp1").unknown
    report = judge(PLAN, state, None, collect_s=0.0, started=time.monotonic())
    found = sorted((f.severity, f.device, f.message) for f in report.findings
                   if f.check == "state.unknown")
    assert found == [
        (Severity.INFO, None, "frr never states cable_m: the OS never states cable length (a "
         "limitation of the platform, on leaf1, leaf2, leaf3)"),
        (Severity.INFO, None, "frr never states watchdog.poll_*: the OS has no poll interval "
         "(a limitation of the platform, on leaf1, leaf2, leaf3)")]
    assert report.exit_code == exitcodes.CLEAN


def test_what_a_platform_declares_does_not_hide_what_it_does_not() -> None:
    state = _with_unread_setting()
    separate_limitations(state.devices["leaf3"],
                         _capabilities({"cable_m": "never stated"}).unreadable_match)
    report = judge(PLAN, state, None, collect_s=0.0, started=time.monotonic())
    assert report.exit_code == exitcodes.INCOMPLETE
    assert state.devices["leaf3"].limitations == {}


def test_the_shipped_platforms_declare_only_what_their_os_never_states() -> None:
    caps = {name: p.facts.capabilities for name, p in PLATFORMS.items()}
    assert caps["srlinux"].unreadable_match("cable_m") is not None
    assert caps["srlinux"].unreadable_match("trust") is None  # a policy it states
    assert caps["nvue"].unreadable_match("pools.egress_lossless") is not None
    assert caps["nvue"].unreadable_match("pools.ingress_lossless.size") is None
    # the lab states every lossless setting it is asked; what Linux never states of a
    # switchdev port's physical layer is the only limitation
    assert {k for k in caps["frr"].unreadable if not k.startswith("phy.")} == set()
    assert caps["frr"].unreadable_match("phy.last_change_s") is not None


def test_an_audit_with_a_setting_left_unread_is_incomplete() -> None:
    findings = judge(PLAN, _with_unread_setting(), None, collect_s=0.0,
                     started=time.monotonic()).findings
    report = dataclasses.replace(clean_report(), findings=findings)
    assert report.status is AuditStatus.INCOMPLETE
    assert report.status.exit_code == exitcodes.INCOMPLETE


def test_a_family_without_buffer_knobs_states_no_buffers_as_a_limitation() -> None:
    """EOS on Tomahawk exposes no buffer profiles: its pools and PG profiles are the
    platform's limitation on that family, while a Trident's would be read."""
    eos = PLATFORMS["eos"].facts.capabilities
    assert eos.unreadable_match("pools.ingress_lossless.size", "tomahawk-4") == (
        "pools.*", "Tomahawk EOS switches expose no configurable buffer profiles")
    assert eos.unreadable_match("pgs.3", "tomahawk-4") is not None
    assert eos.unreadable_match("pgs.3", "trident-4") is None
    assert eos.unreadable_match("watchdog.action", "tomahawk-4") is None
