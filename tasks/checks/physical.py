"""The physical layer (`verify --physical`): what is plugged in, how it reads, how FEC fares.

Each check walks the plan's physical links (never a VRF sub-link) and judges both ends as
observed: the module against the link class, the headroom against the cable actually
installed, FEC mode and counters, optical power and temperature against the module's own
thresholds, flaps, and the speed and lanes the port trained at. Every finding names the
device, the port, the lane where one is concerned, and both ends of the link. A fact an OS
did not state is never judged as zero: `phy.unread` names it (the run is incomplete, exit 3).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from flatfab.checks.base import (
    Check,
    CheckContext,
    Finding,
    Scope,
    Severity,
    Stage,
    check,
    not_judged,
)
from flatfab.checks.lossless.common import physical_links
from flatfab.checks.lossless.unread import limitations
from flatfab.model.physical import (
    CORRECTION_LIMIT,
    LANE_MEASURES,
    LinkExpectation,
    PhysicalThresholds,
    PortPhysical,
    Thresholds,
    has_diagnostics,
    reach_m,
)
from flatfab.model.state import DeviceState, Interface, Link
from flatfab.qos import headroom as hr
from flatfab.qos.headroom import ASICS, required_headroom

# what an operator does about each kind of finding (the catalog's Fix: says more)
CLEAN = "clean both connector ends and reseat the module"
REPLACE = "replace the module or cable"


@dataclass(frozen=True)
class End:
    """One end of a physical link as observed: its device, port and physical layer."""

    device: DeviceState
    iface: Interface
    phy: PortPhysical
    link: Link
    far: str  # the other end, device:port

    @property
    def name(self) -> str:
        return f"{self.device.name}:{self.iface.name}"

    @property
    def where(self) -> str:
        return f"link {self.name} -- {self.far}"


def _ends(ctx: CheckContext) -> list[tuple[End | None, End | None, Link]]:
    """Both ends of every physical link (None: not read, or no physical layer stated)."""
    found: list[tuple[End | None, End | None, Link]] | None = ctx.memo.get("phy_ends")
    if found is None:
        found = ctx.memo["phy_ends"] = []
        for link in physical_links(ctx):
            a = _end(ctx, link, link.a.device, link.a.port, str(link.b))
            b = _end(ctx, link, link.b.device, link.b.port, str(link.a))
            found.append((a, b, link))
    return found


def _end(ctx: CheckContext, link: Link, device_name: str, port: str, far: str) -> End | None:
    device = ctx.readable.get(device_name)
    iface = device.interfaces.get(port) if device is not None else None
    if device is None or iface is None or iface.phy is None:
        return None
    return End(device, iface, iface.phy, link, far)


def _each_end(ctx: CheckContext) -> Iterator[End]:
    for a, b, _link in _ends(ctx):
        yield from (end for end in (a, b) if end is not None)


def _expect(ctx: CheckContext, link: Link) -> LinkExpectation | None:
    policy = ctx.plan.physical
    return policy.classes.get(link.link_class) if policy is not None else None


def _thresholds(ctx: CheckContext) -> PhysicalThresholds | None:
    return ctx.plan.physical.thresholds if ctx.plan.physical is not None else None


def _finding(item: Check, end: End, message: str, *, expected: str, actual: str,
             severity: Severity | None = None) -> Finding:
    return item.finding(end.device.name, f"{end.name} {message} ({end.where})",
                        port=end.iface.name, link=end.link.id, expected=expected,
                        actual=actual, virtual=end.phy.virtual,
                        severity=severity or item.severity)


def _speed(mbps: int) -> str:
    return f"{mbps // 1000}G"


@check("phy.unread", "Every physical-layer fact a check judges was read from the device",
       scope=Scope.DEVICE, severity=Severity.NOT_JUDGED, stages=[Stage.LIVE])
def physical_unread(item: Check, ctx: CheckContext) -> Iterator[Finding]:
    """Reads: live, the physical layer collect left on both ends of every physical link, and the
    facts it could not read (`unknown`), with why.
    Expects: every end of every physical link states its module, FEC, counters, flaps, speed and
    lanes.
    Fails when: never: an end whose physical layer was not read, or a fact it does not state, is a
    not-judged finding with the reason, and the run is incomplete (exit 3). What a platform never
    states (its data file declares it) is listed once per platform instead.
    Fix: Nothing is known to be wrong: the fact was not read, so no check judged it. Read it on the
    device by hand where it matters (the module's EEPROM, the FEC counters).
    """
    yield from limitations(item, ctx, lambda pattern: pattern.startswith("phy."))
    silent: dict[str, list[str]] = {}
    for link in physical_links(ctx):
        for end in (link.a, link.b):
            device = ctx.readable.get(end.device)
            if device is None or not device.managed:
                continue  # unread devices and unmanaged hosts are named where they belong
            iface = device.interfaces.get(end.port)
            if iface is None:
                continue  # a missing port is interfaces' finding
            if iface.phy is None:
                silent.setdefault(device.name, []).append(end.port)
                continue
            for fact, why in sorted(iface.phy.unknown.items()):
                if fact == "diagnostics" and not has_diagnostics(iface.phy.module):
                    continue  # a passive copper cable has none to state
                yield not_judged(item.id, device.name, why, port=end.port,
                                 what=f"{device.name}:{end.port} {fact}",
                                 virtual=iface.phy.virtual)
    for name, ports in silent.items():
        device = ctx.readable[name]
        yield not_judged(item.id, name, f"flatfab reads no physical layer on {device.platform} "
                         f"({len(ports)} ports: {', '.join(ports[:4])}"
                         f"{' ...' if len(ports) > 4 else ''})", what=f"{name} physical layer")


@check("phy.media", "The module in each port is the link class's media and cable",
       scope=Scope.LINK, severity=Severity.ERROR, stages=[Stage.LIVE])
def installed_module(item: Check, ctx: CheckContext) -> Iterator[Finding]:
    """Reads: live, the module each end of a physical link holds (its media, stated cable length)
    and whether a module is present; the link class's `media` and `cable_m`.
    Expects: a module in every port; of the link class's media where it names one; a cable
    assembly no longer than the class's `cable_m` (headroom is sized for it).
    Fails when: a cage is empty, the media differs from the class's, or the module states a
    cable longer than planned (a warning: `phy.headroom` judges what that costs).
    Fix: Install the planned media (a DAC where a DAC is planned), or change the link class's
    `media`/`cable_m` to what is installed and roll out the headroom it sizes.
    """
    for end in _each_end(ctx):
        expect = _expect(ctx, end.link)
        if end.phy.present is False:
            yield _finding(item, end, "has no module", expected="a module",
                           actual="empty cage")
            continue
        module = end.phy.module
        if module is None:
            continue
        if expect is not None and expect.media is not None and module.media is not None \
                and module.media is not expect.media:
            yield _finding(item, end, f"holds {module.media} ({module.compliance or 'module'}) "
                           f"where the link class plans {expect.media}; {REPLACE}",
                           expected=str(expect.media), actual=str(module.media))
        if module.cable_m is not None and module.cable_m > end.link.cable_m:
            yield _finding(item, end, f"cable is {module.cable_m:g} m, planned "
                           f"{end.link.cable_m:g} m", expected=f"<= {end.link.cable_m:g} m",
                           actual=f"{module.cable_m:g} m", severity=Severity.WARNING)


@check("phy.headroom", "Each lossless port's headroom covers the cable actually installed",
       scope=Scope.LINK, severity=Severity.ERROR, stages=[Stage.LIVE])
def installed_headroom(item: Check, ctx: CheckContext) -> Iterator[Finding]:
    """Reads: live, each lossless switch port's PG profiles (xoff) and ASIC, and the cable its
    module states (else the reach of its media at the port's speed), with the far end's MTU.
    Expects: every lossless PG's xoff at least the headroom the installed cable needs (the same
    formula `buffer.headroom` uses for the planned cable).
    Fails when: the installed cable is longer than planned and the xoff is short: an error where
    the module states its length, a warning where only its media's reach bounds it.
    Fix: Set the link class's `cable_m` (and `media`) to what is installed and roll out the
    headroom it sizes, or install the planned cable.
    """
    for end in _each_end(ctx):
        qos, dev = end.iface.qos, end.device.qos
        if qos is None or dev is None or dev.asic.family not in ASICS:
            continue
        length, stated = _installed_length(end, qos.speed_mbps)
        if length is None or length <= end.link.cable_m:
            continue
        try:
            need = required_headroom(hr.model_asic(dev.asic), qos.speed_mbps, length, qos.mtu,
                                     end.link.mtu)
        except ValueError:
            continue  # an unknown speed: buffer.headroom names it
        for pg, name in sorted(qos.pgs.items()):
            profile = dev.profiles.get(name)
            if profile is None or profile.xoff <= 0 or profile.xoff >= need.xoff:
                continue
            how = "states" if stated else "may be up to (its media's reach)"
            yield _finding(item, end, f"PG {pg} headroom {profile.xoff} B ({name}) is sized "
                           f"for {end.link.cable_m:g} m; the installed cable {how} {length:g} "
                           f"m and needs {need.xoff} B, {need.xoff - profile.xoff} B more",
                           expected=f">= {need.xoff}", actual=str(profile.xoff),
                           severity=Severity.ERROR if stated else Severity.WARNING)


def _installed_length(end: End, speed_mbps: int) -> tuple[float | None, bool]:
    """(metres, stated by the module) of the cable in a port; (None, False): unknown."""
    module = end.phy.module
    if module is None:
        return None, False
    if module.cable_m is not None:
        return module.cable_m, True
    if module.media is None:
        return None, False
    return reach_m(module.media, _speed(speed_mbps)), False


@check("phy.fec", "Both ends of every link run the FEC its speed and lanes need",
       scope=Scope.LINK, severity=Severity.ERROR, stages=[Stage.LIVE])
def fec_mode(item: Check, ctx: CheckContext) -> Iterator[Finding]:
    """Reads: live, the FEC mode in use at both ends of each physical link; the link class's
    `fec` (default: IEEE 802.3's for its lane rate).
    Expects: both ends run the planned FEC.
    Fails when: an end runs another FEC, or the two ends differ (the link trains badly or not at
    all, and a mismatch that does come up drops frames).
    Fix: Set both ends' FEC to the link class's on the switches (flatfab does not render FEC: the
    OS's default for the optic is what runs), or correct the link class's `fec` to what the
    optics need.
    """
    for a, b, link in _ends(ctx):
        expect = _expect(ctx, link)
        for end in (a, b):
            if end is None or end.phy.fec is None or expect is None:
                continue
            if end.phy.fec is not expect.fec:
                yield _finding(item, end, f"runs FEC {end.phy.fec}, planned {expect.fec}",
                               expected=str(expect.fec), actual=str(end.phy.fec))
        if a is not None and b is not None and a.phy.fec is not None \
                and b.phy.fec is not None and a.phy.fec is not b.phy.fec and expect is None:
            yield _finding(item, a, f"runs FEC {a.phy.fec}, the far end {b.phy.fec}",
                           expected=str(b.phy.fec), actual=str(a.phy.fec))


@check("phy.ber", "Pre-FEC BER and uncorrectable codewords stay under their thresholds",
       scope=Scope.LINK, severity=Severity.ERROR, stages=[Stage.LIVE])
def fec_health(item: Check, ctx: CheckContext) -> Iterator[Finding]:
    """Reads: live, each end's FEC mode and counters (pre-FEC BER where the OS computes it,
    uncorrectable codewords); the fabric's `physical.ber_margin` and `uncorrectable`.
    Expects: pre-FEC BER at most the FEC's correction limit (RS(544,514) 2.4e-4, RS(528,514)
    5e-5) divided by `ber_margin`; uncorrectable codewords at most `uncorrectable`.
    Fails when: either is above: the optic or cable is degrading (a BER that rises after a flap
    is the usual first sign of a failing optic).
    Fix: Clean and reseat both ends, then replace the module or cable that keeps the BER up;
    `verify --burn-in` confirms it under load.
    """
    limits = _thresholds(ctx)
    if limits is None:
        return
    for end in _each_end(ctx):
        counters, mode = end.phy.fec_counters, end.phy.fec
        if counters is None:
            continue
        if counters.pre_fec_ber is not None and mode is not None:
            bound = CORRECTION_LIMIT[mode] / limits.ber_margin
            if counters.pre_fec_ber > bound:
                yield _finding(item, end, f"pre-FEC BER {counters.pre_fec_ber:.2e} is above "
                               f"{bound:.2e} ({mode} corrects to {CORRECTION_LIMIT[mode]:.1e}, "
                               f"margin {limits.ber_margin:g}x); {CLEAN}, else {REPLACE}",
                               expected=f"<= {bound:.2e}", actual=f"{counters.pre_fec_ber:.2e}")
        if counters.uncorrectable is not None and counters.uncorrectable > limits.uncorrectable:
            yield _finding(item, end, f"{counters.uncorrectable} uncorrectable FEC codewords "
                           f"(frames lost on the wire); {CLEAN}, else {REPLACE}",
                           expected=f"<= {limits.uncorrectable}",
                           actual=str(counters.uncorrectable))


@check("phy.optics", "Optical power, bias and temperature stay inside the module's thresholds",
       scope=Scope.LINK, severity=Severity.ERROR, stages=[Stage.LIVE])
def module_diagnostics(item: Check, ctx: CheckContext) -> Iterator[Finding]:
    """Reads: live, each module's diagnostics per lane (rx and tx power, bias) and its
    temperature, with the module's own alarm and warning thresholds; the fabric's
    `physical.power_margin_db` and `temperature_margin_c`.
    Expects: each value inside the module's alarm thresholds by the margin, and inside its
    warning thresholds.
    Fails when: a value is past an alarm threshold (error), or past a warning threshold or within
    the margin of an alarm (warning). Low rx power on one lane is the usual sign of a dirty
    connector or a failing far-end laser.
    Fix: Clean both connector ends and reseat; replace the module (or the far end's, for low rx
    power) when it stays out.
    """
    limits = _thresholds(ctx)
    if limits is None:
        return
    for end in _each_end(ctx):
        diag = end.phy.diagnostics
        if diag is None:
            continue
        for lane_no, lane in enumerate(diag.lanes, 1):
            for measure in LANE_MEASURES:
                value = getattr(lane, measure)
                bounds = diag.thresholds.get(measure)
                if value is None or bounds is None:
                    continue
                margin = limits.power_margin_db if measure.endswith("_dbm") else 0.0
                found = _outside(value, bounds, margin)
                if found is not None:
                    severity, why = found
                    yield _finding(item, end, f"lane {lane_no} {_label(measure)} {value:g} "
                                   f"{why}; {CLEAN}, else {REPLACE}", expected=why,
                                   actual=f"{value:g}", severity=severity)
        bounds = diag.thresholds.get("temperature_c")
        if diag.temperature_c is not None and bounds is not None:
            high = Thresholds(high_warning=bounds.high_warning, high_alarm=bounds.high_alarm)
            found = _outside(diag.temperature_c, high, limits.temperature_margin_c)
            if found is not None:
                severity, why = found
                yield _finding(item, end, f"module temperature {diag.temperature_c:g} C {why}; "
                               "check the airflow, else replace the module", expected=why,
                               actual=f"{diag.temperature_c:g} C", severity=severity)


_LABELS = {"rx_power_dbm": "rx power (dBm)", "tx_power_dbm": "tx power (dBm)",
           "bias_ma": "bias (mA)"}


def _label(measure: str) -> str:
    return _LABELS.get(measure, measure)


def _outside(value: float, bounds: Thresholds, margin: float) -> tuple[Severity, str] | None:
    """How `value` breaks the module's thresholds (None: it does not)."""
    if bounds.low_alarm is not None and value < bounds.low_alarm:
        return Severity.ERROR, f"is below the module's low alarm {bounds.low_alarm:g}"
    if bounds.high_alarm is not None and value > bounds.high_alarm:
        return Severity.ERROR, f"is above the module's high alarm {bounds.high_alarm:g}"
    if bounds.low_warning is not None and value < bounds.low_warning:
        return Severity.WARNING, f"is below the module's low warning {bounds.low_warning:g}"
    if bounds.high_warning is not None and value > bounds.high_warning:
        return Severity.WARNING, f"is above the module's high warning {bounds.high_warning:g}"
    if margin and bounds.low_alarm is not None and value < bounds.low_alarm + margin:
        return Severity.WARNING, (f"is within {margin:g} of the module's low alarm "
                                  f"{bounds.low_alarm:g}")
    if margin and bounds.high_alarm is not None and value > bounds.high_alarm - margin:
        return Severity.WARNING, (f"is within {margin:g} of the module's high alarm "
                                  f"{bounds.high_alarm:g}")
    return None


@check("phy.flaps", "No link flapped within the flap window",
       scope=Scope.LINK, severity=Severity.WARNING, stages=[Stage.LIVE])
def link_flaps(item: Check, ctx: CheckContext) -> Iterator[Finding]:
    """Reads: live, when each end's link last changed state and how often it has, where the OS
    states them; the fabric's `physical.flaps` and `flap_window_s`.
    Expects: no more than `flaps` changes within the window (default: none in the last hour).
    Fails when: a link changed state within the window: each flap stalls every collective
    crossing it, and a flapping optic is often degrading.
    Fix: Look at both ends' BER and optical power (`phy.ber`, `phy.optics`); clean and reseat,
    replace the module or cable that keeps flapping.
    """
    limits = _thresholds(ctx)
    if limits is None:
        return
    for end in _each_end(ctx):
        since = end.phy.last_change_s
        if since is None or since > limits.flap_window_s:
            continue
        count = end.phy.flaps  # since boot or clear: the last of them is in the window
        if (count if count is not None else 1) <= limits.flaps:
            continue  # as many as the window allows (an OS without a count: at least one)
        told = f"{count} changes so far, " if count is not None else ""
        yield _finding(item, end, f"link changed state {since:.0f} s ago ({told}window "
                       f"{limits.flap_window_s} s)", expected=f"<= {limits.flaps} flaps in "
                       f"{limits.flap_window_s} s", actual=f"changed {since:.0f} s ago")


@check("phy.speed", "Every port trained at the planned speed and lane count",
       scope=Scope.LINK, severity=Severity.ERROR, stages=[Stage.LIVE])
def trained_speed(item: Check, ctx: CheckContext) -> Iterator[Finding]:
    """Reads: live, the speed and lane count each end of a physical link trained at; the link
    class's `speed` and `lanes`.
    Expects: both as planned at both ends.
    Fails when: a port runs slower or on fewer lanes (a lane that failed to train halves a
    400G port silently; ECMP still sends it a full share).
    Fix: Reseat or replace the module or cable; check the port's speed configuration.
    """
    for end in _each_end(ctx):
        expect = _expect(ctx, end.link)
        if expect is None:
            continue
        trained = end.phy.speed_mbps
        if trained is not None and trained != expect.speed_mbps:
            yield _finding(item, end, f"trained at {_speed(trained)}, planned "
                           f"{_speed(expect.speed_mbps)}", expected=_speed(expect.speed_mbps),
                           actual=_speed(trained))
        if end.phy.lanes is not None and end.phy.lanes != expect.lanes:
            yield _finding(item, end, f"runs {end.phy.lanes} lanes, planned {expect.lanes}",
                           expected=str(expect.lanes), actual=str(end.phy.lanes))
