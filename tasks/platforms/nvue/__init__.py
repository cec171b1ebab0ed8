"""Platform `nvue`: NVIDIA Cumulus Linux 5.x configured through NVUE, on Spectrum switches."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from flatfab.model.physical import PortPhysical
from flatfab.model.state import DeviceState, Probe
from flatfab.platforms import netmiko_shell
from flatfab.platforms.base import DeviceDriver
from flatfab.platforms.nvue.collect import (
    APPLIED,
    class_packets,
    collect,
    counters_command,
    physical,
)
from flatfab.platforms.nvue.driver import (
    NvueDriver,
    NvueError,
    adaptive_of,
    config_tree,
    hashing_of,
    parse_json,
    trimming_of,
    without_adaptive,
)
from flatfab.platforms.nvue.nvyaml import NvueYamlError, applied, load_ops
from flatfab.platforms.nvue.render import canonical, render, sections, text

# reads only: nv show (JSON or not), the applied/pending config and revision listings,
# and the confirm timer's status; no shell metacharacters anywhere
_SAFE = r"[A-Za-z0-9_:.,/= -]*"
_READS = (
    re.compile(rf"^\s*nv show\s{_SAFE}$"),
    re.compile(r"^\s*nv config (show|diff|history|revision)( -o (json|yaml))?$"),
    re.compile(r"^\s*nv config apply --confirm-status$"),
    re.compile(r"^\s*cat /etc/lsb-release$"),
)


class NvuePlatform(netmiko_shell.NetmikoShellPlatform):
    def render(self, device: DeviceState) -> str:
        return render(device, self.names)

    def sections(self, config: str) -> dict[str, list[str]]:
        return sections(config)

    def collect(self, driver: DeviceDriver, planned: DeviceState,
                probes: list[Probe]) -> DeviceState:
        return collect(driver, planned, probes, self.names)

    def collect_physical(self, driver: DeviceDriver,
                         planned: DeviceState) -> dict[str, PortPhysical]:
        return physical(driver, planned)





    def adapt(self, connection: Any, *, read_only: bool) -> DeviceDriver:
        return NvueDriver(netmiko_shell.strict_connection(connection, self.name, NvueError),
                          read_only=read_only, is_show=self.show_command,
                          management=self.facts.management_interfaces)

    def drift_texts(self, driver: DeviceDriver, intended: str) -> tuple[str, str]:
        """Running (owned part) and intended, both in canonical key order. A plan that
        renders no hashing leaves the switch's own: its ECMP hash and adaptive routing are no
        drift (its packet trimming is: flatfab owns that whatever the plan)."""
        running = driver.get_config(retrieve="running")["running"]
        try:
            wanted_tree = applied(load_ops(intended))
            wanted = text(canonical(wanted_tree))
            if not hashing_of(wanted_tree.get("system")):
                now = applied(load_ops(running))
                hashing = hashing_of(now.get("system"))
                if hashing:
                    forwarding = now["system"]["forwarding"]
                    for key in hashing:
                        del forwarding[key]
                    if not forwarding:
                        del now["system"]["forwarding"]
                if hashing or adaptive_of(now):
                    running = text(canonical(without_adaptive(now)))
        except NvueYamlError as exc:
            raise NvueError(f"intended config: {exc}") from None
        return running, wanted

    def change_notes(self, running: str, intended: str) -> list[str]:
        """Buffer changes: NVUE has switchd re-read its buffer configuration, which can
        drop traffic on every port of the switch (Cumulus "Quality of Service": buffer and
        traffic-pool changes take effect through a switchd reload). A hash seed change
        restarts switchd (Cumulus "Equal Cost Multipath Load Sharing", Unique Hash Seed).
        Packet trimming switched on takes a service port (the last one unless `service-port`
        names another) to recirculate trimmed packets (Cumulus "Packet Trimming"). Adaptive
        routing switched on or off, globally or on a port, reloads switchd (NVUE reference,
        "Adaptive Routing": 5.13 and later; earlier releases restart it)."""
        try:
            trees = [applied(load_ops(t)) for t in (running, intended)]
        except NvueYamlError as exc:
            return [f"config unreadable: {exc}"]
        now, wanted = (t.get("qos", {}) for t in trees)
        notes: list[str] = []
        seeds = ["switchd's own" if seed is None else seed
                 for seed in (hashing_of(t.get("system")).get("hash-seed") for t in trees)]
        if seeds[0] != seeds[1]:
            notes.append(f"system forwarding hash-seed {seeds[0]} -> {seeds[1]}: NVUE "
                         "restarts switchd, every port resets and traffic stops meanwhile")
        trims = [bool(trimming_of(t.get("system"))) for t in trees]
        if trims[0] != trims[1]:
            notes.append("system forwarding packet-trim " + (
                "enabled: NVUE recirculates trimmed packets through a service port (the last "
                "one by default), which must carry no other configuration" if trims[1] else
                "removed: the RoCE queue drops what it cannot admit again"))
        steering = [adaptive_of(t) for t in trees]
        if steering[0] != steering[1]:
            ports = [sorted(s.get("interface", {})) for s in steering]
            states = [" ".join(f"{k} {v}" for k, v in s.get("router", {}).get(
                "adaptive-routing", {}).items()) for s in steering]
            what = "router adaptive-routing " + (
                f"{states[0] or 'unset'} -> {states[1] or 'unset'}" if states[0] != states[1]
                else f"ports {', '.join(ports[0]) or 'none'} -> {', '.join(ports[1]) or 'none'}")
            notes.append(f"{what}: NVUE reloads switchd (traffic on every port may drop "
                         "during the reload)")
        if now.get("traffic-pool") != wanted.get("traffic-pool"):
            notes.append("qos traffic-pool changes: switchd reloads its buffer configuration "
                         "(traffic on every port may drop during the reload)")
        buffers = ("port-buffer", "xoff-threshold", "xon-threshold", "cable-length")
        for name, profile in sorted(wanted.get("pfc", {}).items()):
            before = now.get("pfc", {}).get(name, {})
            changed = [k for k in buffers if before and before.get(k) != profile.get(k)]
            if changed:
                notes.append(f"qos pfc {name}: {', '.join(changed)} change the port headroom; "
                             "switchd reloads its buffer configuration")
        return notes

    def class_counters(self, driver: DeviceDriver) -> dict[str, dict[int, dict[str, int]]]:
        """Frames sent per port and traffic class (`egress-queue-stats`), for every swp
        port of the applied config."""
        applied = config_tree(parse_json(str(driver.cli([APPLIED])[APPLIED]), "applied config"))
        ports = sorted(n for n, e in (applied.get("interface") or {}).items()
                       if isinstance(e, dict) and e.get("type") == "swp"
                       and self.names.is_port(n))
        out: dict[str, dict[int, dict[str, int]]] = {}
        for port in ports:
            command = counters_command(port)
            packets = class_packets(parse_json(str(driver.cli([command])[command]), command))
            if packets:
                out[port] = {tc: {"packets": n} for tc, n in sorted(packets.items())}
        return out

    def show_command(self, command: str) -> bool:
        return any(pattern.match(command) for pattern in _READS)


PLATFORM = NvuePlatform(Path(__file__).with_name("platform.yaml"))
