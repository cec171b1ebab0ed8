"""A stateful stand-in for an EOS switch behind eAPI: config sessions, commit timers, flash.

NAPALM's EOSDriver talks to `self.device.run_commands(...)` (a pyeapi Node); the tests put
this object there, so the real driver code runs. It keeps running/startup configs as line
lists (the driver strips indentation before sending, so no parser is needed), answers show
commands from `shows` (e.g. `healthy_shows` of a planned fabric) or a fixture folder (NAPALM
mocked-data naming), and a clock the test advances reverts a commit whose timer runs out
unconfirmed. Every command is logged.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pyeapi.eapilib import CommandError

from flatfab.model.state import DEFAULT_VRF, FabricState, IfKind
from tests.doubles import CollectCase
from tests.doubles.rib import Learned, connected, converged_rib, link_local, session_port

EOS_VERSION = "4.33.0F"


def sanitized(command: str) -> str:
    """NAPALM mocked-data file name of a command: non-alphanumerics become '_'."""
    return re.sub(r"[^a-zA-Z0-9]", "_", command)[:150]


@dataclass
class Session:
    lines: list[str]
    state: str = "pending"  # EOS: pending (open), pendingCommitTimer, completed


@dataclass
class EosDouble:
    running: list[str]
    fixtures: Path | None = None
    shows: dict[str, dict[str, Any]] = field(default_factory=dict)  # before fixtures
    startup: list[str] = field(default_factory=list)
    clock: float = 1000.0  # seconds since boot (EOS reports commit timers against uptime)
    flash: dict[str, list[str]] = field(default_factory=dict)
    sessions: dict[str, Session] = field(default_factory=dict)
    log: list[str] = field(default_factory=list)
    connection: None = None  # the driver's close() looks for a connection to close
    _timer: tuple[str, float, list[str]] | None = None  # session, expiry, config to revert to
    _open: str | None = None  # session the current command batch configures

    def __post_init__(self) -> None:
        if not self.startup:
            self.startup = list(self.running)

    # ---- the clock ------------------------------------------------------------------------

    def advance(self, seconds: float) -> None:
        self.clock += seconds
        if self._timer is not None and self.clock >= self._timer[1]:
            name, _, before = self._timer
            self.running = before  # the timer ran out unconfirmed: EOS rolls back
            self.sessions.pop(name, None)
            self._timer = None

    # ---- eAPI -------------------------------------------------------------------------------

    def run_commands(self, commands: list[Any], encoding: str = "json",
                     **_: Any) -> list[dict[str, Any]]:
        out = []
        for entry in commands:
            command = entry["cmd"] if isinstance(entry, dict) else str(entry)
            self.log.append(command)
            try:
                out.append(self._one(command, encoding))
            except CommandError as exc:
                # eAPI answers a failed command with what ran before it and the error (pyeapi
                # keeps that list as the error's `output`)
                exc.output = [*out, {"errors": [exc.error_text]}]
                raise
        self._open = None  # each eAPI request is its own CLI session
        return out

    def _one(self, command: str, encoding: str) -> dict[str, Any]:
        if self._open is not None and command != "end":
            return self._in_session(command)
        if command == "end":
            self._open = None
            return {}
        if m := re.fullmatch(r"configure session (\S+)", command):
            self.sessions.setdefault(m[1], Session(list(self.running)))
            self._open = m[1]
            return {}
        if m := re.fullmatch(r"configure session (\S+) commit timer (\d+):(\d+):(\d+)", command):
            seconds = int(m[2]) * 3600 + int(m[3]) * 60 + int(m[4])
            return self._commit(m[1], timer=seconds)
        if m := re.fullmatch(r"configure session (\S+) commit", command):
            return self._commit(m[1], timer=None)
        if m := re.fullmatch(r"configure session (\S+) abort", command):
            return self._abort(m[1])
        if m := re.fullmatch(r"copy (running|startup)-config flash:(\S+)", command):
            self.flash[m[2]] = list(self.running if m[1] == "running" else self.startup)
            return self._text("")
        if m := re.fullmatch(r"configure replace flash:(\S+)", command):
            if m[1] not in self.flash:
                raise CommandError(1002, f"flash:{m[1]} does not exist")
            self.running = list(self.flash[m[1]])
            return self._text("")
        if command in {"write memory", "copy running-config startup-config"}:
            self.startup = list(self.running)
            return self._text("")
        if command.startswith("show "):
            return self._show(command, encoding)
        raise CommandError(1002, f"invalid command: {command}")

    def _in_session(self, command: str) -> dict[str, Any]:
        assert self._open is not None
        session = self.sessions[self._open]
        if command == "rollback clean-config":
            session.lines = []
        elif command:
            session.lines.append(command)
        return {}

    def _commit(self, name: str, timer: int | None) -> dict[str, Any]:
        session = self.sessions.get(name)
        if session is None:
            raise CommandError(1002, f"no configuration session {name}")
        if self._timer is not None and self._timer[0] == name:
            self._timer = None  # confirming the pending commit keeps what is running
        else:
            before = list(self.running)
            self.running = list(session.lines)
            if timer is not None:
                self._timer = (name, self.clock + timer, before)
                session.state = "pendingCommitTimer"
                return self._text("")
        session.state = "completed"
        self.sessions.pop(name)
        return self._text("")

    def _abort(self, name: str) -> dict[str, Any]:
        if self._timer is not None and self._timer[0] == name:
            self.running = self._timer[2]
            self._timer = None
        self.sessions.pop(name, None)
        return self._text("")

    @staticmethod
    def _text(text: str) -> dict[str, Any]:
        return {"output": text}

    def _show(self, command: str, encoding: str) -> dict[str, Any]:
        if command in {"show running-config", "show startup-config"}:
            lines = self.running if "running" in command else self.startup
            return self._text("\n".join(lines) + "\n")
        if m := re.fullmatch(r"show session-config named (\S+) diffs", command):
            session = self.sessions.get(m[1])
            new = session.lines if session is not None else self.running
            diff = difflib.unified_diff(self.running, new, "system:/running-config",
                                        f"session:/{m[1]}-session-config", lineterm="")
            return self._text("\n".join(diff))
        if command == "show version":
            return {"version": EOS_VERSION, "uptime": self.clock, "modelName": "cEOSLab",
                    "serialNumber": "", "internalVersion": EOS_VERSION,
                    "bootupTimestamp": 0.0}
        if command.startswith("show configuration sessions"):
            return self._sessions(detail=command.endswith("detail"))
        return self._fixture(command, encoding)

    def _sessions(self, detail: bool) -> dict[str, Any]:
        out: dict[str, Any] = {"sessions": {n: {"state": s.state, "instances": {}}
                                            for n, s in sorted(self.sessions.items())}}
        if detail and self._timer is not None:
            # EOS 4.32+ reports the one pending commit timer at the top level
            out["commitTimerSessionName"] = self._timer[0]
            out["commitTimerExpireTime"] = self._timer[1]
        return out

    def _fixture(self, command: str, encoding: str) -> dict[str, Any]:
        if command in self.shows and encoding == "json":
            reply: dict[str, Any] = json.loads(json.dumps(self.shows[command]))  # a copy
            return reply
        if self.fixtures is not None:
            for suffix in (".json", ".text"):
                path = self.fixtures / f"{sanitized(command)}{suffix}"
                if path.exists():
                    text = path.read_text(encoding="utf-8")
                    if suffix == ".text" or encoding == "text":
                        return self._text(text)
                    data: dict[str, Any] = json.loads(text)
                    data.pop("_provenance", None)
                    return data
        raise CommandError(1002, f"invalid command: {command}")


# ---- a healthy switch of a planned fabric ----------------------------------------------------


def _short(name: str) -> str:
    """EOS's short interface name, as it scopes link-local peers (fe80::1%Et33)."""
    return name.replace("Ethernet", "Et", 1)


def healthy_shows(fabric: FabricState, name: str, *,
                  rib: dict[str, dict[str, Learned]] | None = None) -> dict[str, dict[str, Any]]:
    """command -> JSON reply of EOS switch `name` once the whole fabric runs its plan: every
    port up and cabled as planned, every session Established, every route learned
    (tests.doubles.sonic.converged_rib), no pause frame and no ECN mark. The shapes are
    those of the recorded replies (tests/fixtures/eos/leaf1/, from Arista's EOS command
    reference); the values come from the plan, so any switch of any example fabric (a
    super-spine, a pod spine) can be collected."""
    device = fabric.devices[name]
    interfaces: dict[str, Any] = {}
    for iface in device.interfaces.values():
        v4 = [a for a in iface.addresses if ":" not in a]
        speed = iface.speed_mbps or (device.interfaces[iface.parent].speed_mbps
                                     if iface.parent in device.interfaces else None)
        interfaces[iface.name] = {
            "name": iface.name,
            "lineProtocolStatus": "down" if iface.up is False else "up",
            "interfaceStatus": "disabled" if iface.up is False else "connected",
            "mtu": iface.mtu or 1500, "bandwidth": (speed or 0) * 1_000_000,
            "description": f"{iface.peer.device}:{iface.peer.port}" if iface.peer else "",
            "interfaceAddress": [{
                "primaryIp": {"address": v4[0].split("/")[0], "maskLen": int(v4[0].split("/")[1])},
                "secondaryIpsOrderedList": [
                    {"address": a.split("/")[0], "maskLen": int(a.split("/")[1])} for a in v4[1:]],
            }] if v4 else []}
    neighbors = [{"port": i.name, "neighborDevice": i.peer.device, "neighborPort": i.peer.port,
                  "ttl": 120}
                 for i in device.interfaces.values()
                 if i.peer is not None and i.parent is None and i.kind is not IfKind.BRIDGE]
    rib = converged_rib(fabric, name) if rib is None else rib
    summary: dict[str, Any] = {}
    for vrf, instance in device.bgp.items():
        peers = {}
        for peer in instance.peers.values():
            key = peer.address or f"{link_local(peer.key)}%{_short(peer.interface or '')}"
            port = session_port(device, peer)
            received = sum(1 for r in rib.get(vrf, {}).values() if port in r.ports)
            peers[key] = {"version": 4, "msgReceived": 120, "msgSent": 118, "inMsgQueue": 0,
                          "outMsgQueue": 0, "asn": str(peer.remote_asn),
                          "prefixAccepted": received, "prefixReceived": received,
                          "upDownTime": 1700000000.0, "underMaintenance": False,
                          "peerState": "Established"}
            if peer.address is not None:  # flatfab describes numbered neighbours only
                peers[key]["description"] = peer.peer_device
        summary[vrf] = {"routerId": instance.router_id, "vrf": vrf,
                        "asn": str(instance.asn), "peers": peers}
    routes: dict[str, Any] = {}
    for vrf in sorted({DEFAULT_VRF, *device.vrfs}):
        table: dict[str, Any] = {}
        for prefix, port in sorted(connected(device).get(vrf, {}).items()):
            table[prefix] = {"routeType": "connected", "kernelProgrammed": True,
                             "hardwareProgrammed": True, "routeAction": "forward",
                             "preference": 0, "metric": 1, "directlyConnected": True,
                             "vias": [{"nexthopAddr": "", "interface": port}]}
        for prefix, learned in sorted(rib.get(vrf, {}).items()):
            table.setdefault(prefix, {
                "routeType": "eBGP", "kernelProgrammed": True, "hardwareProgrammed": True,
                "routeAction": "forward", "preference": 200, "metric": 0,
                "vias": [{"nexthopAddr": link_local(port), "interface": port}
                         for port in learned.ports]})
        routes[vrf] = {"routes": table, "allRoutesProgrammedHardware": True,
                       "allRoutesProgrammedKernel": True, "defaultRouteState": "notSet"}
    lossless = {i.name: i.qos for i in device.interfaces.values()
                if i.qos is not None and i.parent is None}
    return {
        "show interfaces": {"interfaces": interfaces},
        "show lldp neighbors": {"tablesLastChangeTime": 1700000000.0, "tablesAgeOuts": 0,
                                "tablesInserts": len(neighbors), "tablesDeletes": 0,
                                "tablesDrops": 0, "lldpNeighbors": neighbors},
        "show ip bgp summary vrf all": {"vrfs": summary},
        "show ip route vrf all": {"vrfs": routes},
        "show priority-flow-control counters": {"interfaceCounters": {
            port: {"rxFrames": 0, "txFrames": 0} for port in lossless}},
        "show qos interfaces ecn counters queue": {"intfQueueCounters": {
            port: {"queueCounters": {str(q): "0" if q in qos.queues and qos.queues[q].ecn
                                     else "-" for q in range(8)}}
            for port, qos in lossless.items()}},
    }


# ---- the conformance suite's collect test (tests/conformance/test_platforms.py) --------


def collect_cases() -> list[CollectCase]:
    """leaf1 of the lab on eos after a push, through NAPALM's real EOSDriver, read-only.

    The running config is flatfab's render (what the switch holds after a push). The show
    replies are `healthy_shows`, not tests/fixtures/eos/leaf1/: those record a fault on
    purpose (red's session on Ethernet52.200 Active, Ethernet2 down) for the platform suite,
    so they cannot read back as planned."""
    from napalm.eos.eos import EOSDriver  # noqa: PLC0415

    from flatfab.platforms.eos import PLATFORM  # noqa: PLC0415
    from tests.support.eos import eos_fabric  # noqa: PLC0415 - it imports this module

    fabric = eos_fabric("lab")
    planned = fabric.devices["leaf1"]
    double = EosDouble(running=PLATFORM.render(planned).splitlines(),
                       shows=healthy_shows(fabric, "leaf1"))
    eos = EOSDriver("leaf1", "admin", "admin", optional_args={"transport": "https"})
    eos.device = double  # the pyeapi node: every eAPI request lands in the double
    eos.open()
    return [CollectCase(
        name="eos-lab-leaf1", driver=eos, planned=planned,
        commands=lambda: list(double.log),
        source="derived from Arista's EOS command reference (eAPI JSON shapes of "
               "tests/fixtures/eos/leaf1, filled by healthy_shows from the lab plan on eos, "
               f"EOS {EOS_VERSION}); the running config is flatfab's render; never captured "
               "from a switch")]
