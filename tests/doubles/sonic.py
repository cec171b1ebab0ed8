"""A stateful stand-in for a SONiC switch's shell, reached the way netmiko reaches it.

It holds CONFIG_DB (running and saved), the running FRR config and files, and implements
what flatfab's SONiC driver runs: GCU checkpoints, apply-patch, rollback and save; systemd
timers on a clock the test advances; `sh` scripts; FRR reloads in the bgp container. Of
orchagent it keeps the packet trimming the ASIC holds: SwitchOrch takes a change to
`SWITCH_TRIMMING|GLOBAL` and refuses a removal (SONiC's packet-trimming design), so after
one CONFIG_DB and `asic_trimming` differ and `orchagent_errors` says so. Show
commands it cannot compute come from recorded outputs (tests/fixtures/sonic/<device>/) or
from `healthy_outputs` (what any switch of a planned fabric prints once the fabric runs).
Every command is logged, with whether it changed anything.
"""

from __future__ import annotations

import base64
import copy
import json
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

import paramiko

from flatfab.model.state import DEFAULT_VRF, FabricState, IfKind
from tests.doubles import CollectCase
from tests.doubles.frr_json import Rib, bgp_summary, route_tables
from tests.doubles.rib import converged_rib
from tests.support.paths import FIXTURES as TEST_FIXTURES

FIXTURES = TEST_FIXTURES / "sonic"
RC_MARK = "; echo @@flatfab-rc=$?"
FRR_CONF = "/etc/sonic/frr/frr.conf"
ConfigDb = dict[str, dict[str, dict[str, str]]]
FACTORY_FRR = "frr defaults traditional\nhostname sonic\nlog syslog informational\n!\nend\n"
TRIMMING = "SWITCH_TRIMMING"


def recorded(device: str) -> dict[str, str]:
    """command -> output, from the device's fixture files."""
    out: dict[str, str] = {}
    for path in sorted((FIXTURES / device).glob("*.json")):
        data = json.loads(path.read_text())
        assert "derived from documentation" in data["source"], path
        output = data["output"]
        out[data["command"]] = output if isinstance(output, str) else json.dumps(output, indent=2)
    return out


def factory_config_db(hostname: str, ports: int = 64, step: int = 8) -> ConfigDb:
    """What a freshly installed switch has: hardware ports, its metadata, no flatfab rows."""
    return {
        "DEVICE_METADATA": {"localhost": {
            "hostname": hostname, "hwsku": "Mellanox-SN5600-V256", "mac": "1c:34:da:00:00:01",
            "platform": "x86_64-nvidia_sn5600-r0", "type": "LeafRouter",
            "docker_routing_config_mode": "separated"}},
        "PORT": {f"Ethernet{i * step}": {
            "lanes": ",".join(str(i * step + lane) for lane in range(step)),
            "alias": f"etp{i + 1}", "index": str(i + 1), "speed": "800000", "mtu": "9100",
            "admin_status": "down"} for i in range(ports)},
        "LOOPBACK_INTERFACE": {"Loopback0": {}},
        "BUFFER_POOL": {"ingress_lossless_pool": {"mode": "dynamic", "size": "60000000",
                                                  "type": "ingress"}},
    }


@dataclass
class Logged:
    command: str
    mutating: bool
    status: int


class _FailedError(Exception):
    def __init__(self, message: str, status: int = 1) -> None:
        super().__init__(message)
        self.status = status


def _unpointer(path: str) -> list[str]:
    return [p.replace("~1", "/").replace("~0", "~") for p in path.split("/")[1:]]


def apply_patch(db: ConfigDb, ops: list[dict[str, Any]]) -> ConfigDb:
    """RFC 6902 add/remove/replace on CONFIG_DB (tables, rows, fields)."""
    out = copy.deepcopy(db)
    for op in ops:
        parts = _unpointer(op["path"])
        parent: Any = out
        for part in parts[:-1]:
            if part not in parent:
                raise _FailedError(f"Error: path {op['path']} does not exist")
            parent = parent[part]
        last = parts[-1]
        if op["op"] == "remove":
            if last not in parent:
                raise _FailedError(f"Error: cannot remove {op['path']}: no such node")
            del parent[last]
        elif op["op"] == "replace" and last not in parent:
            raise _FailedError(f"Error: cannot replace {op['path']}: no such node")
        elif op["op"] in ("add", "replace"):
            parent[last] = copy.deepcopy(op["value"])
        else:
            raise _FailedError(f"Error: unsupported operation {op['op']}")
    return out


class SonicDouble:
    """What `ConnectHandler(device_type="linux", ...)` gives the driver: send_command."""

    # what netmiko keeps of `ssh_strict: true` (BaseConnection.key_policy)
    key_policy: paramiko.MissingHostKeyPolicy = paramiko.RejectPolicy()

    def __init__(self, config_db: ConfigDb, frr: str = FACTORY_FRR,
                 outputs: dict[str, str] | None = None) -> None:
        self.config_db = copy.deepcopy(config_db)
        self.saved = copy.deepcopy(config_db)
        self.frr = frr
        self.files: dict[str, str] = {FRR_CONF: frr}
        self.checkpoints: dict[str, ConfigDb] = {}
        self.timers: dict[str, tuple[float, str]] = {}  # unit -> (fires at, command)
        self.outputs = dict(outputs or {})
        self.now = 0.0
        self.log: list[Logged] = []
        self.broken: dict[str, str] = {}  # command -> output that replaces the real one
        self.fail: dict[str, str] = {}  # command prefix -> error: the command fails
        # SWITCH_TRIMMING|GLOBAL as orchagent programmed it into the ASIC
        self.asic_trimming: dict[str, str] = dict(config_db.get(TRIMMING, {}).get("GLOBAL", {}))
        self.orchagent_errors: list[str] = []

    # ---- the netmiko surface -------------------------------------------------------------

    def send_command(self, command_string: str, *args: Any, **kwargs: Any) -> str:
        if not command_string.endswith(RC_MARK):
            raise AssertionError(f"driver sent a command without its exit status: "
                                 f"{command_string!r}")
        command = command_string.removesuffix(RC_MARK)
        try:
            output, mutating, status = *self._run(command), 0
        except _FailedError as exc:
            output, mutating, status = str(exc) + "\n", True, exc.status
        self.log.append(Logged(command, mutating, status))
        return f"{output}@@flatfab-rc={status}\n"

    # ---- the test's side ---------------------------------------------------------------------

    def advance(self, seconds: float) -> None:
        """The clock moves on; timers that come due run their command as root."""
        self.now += seconds
        for unit, (due, command) in sorted(self.timers.items()):
            if due <= self.now:
                del self.timers[unit]
                self._run(command)
                self.log.append(Logged(f"[timer {unit}] {command}", True, 0))

    @property
    def commands(self) -> list[str]:
        return [entry.command for entry in self.log]

    @property
    def mutating(self) -> list[str]:
        return [entry.command for entry in self.log if entry.mutating]

    # ---- the shell ---------------------------------------------------------------------

    def _run(self, command: str) -> tuple[str, bool]:
        if command in self.broken:
            return self.broken[command], False
        command = command.removeprefix("sudo -n ")
        for prefix, message in self.fail.items():
            if command.startswith(prefix):
                raise _FailedError(message)
        write = re.fullmatch(r"echo (\S*) \| base64 -d \| sudo -n tee -a (\S+) >/dev/null",
                             command)
        if write:
            path = write.group(2)
            self.files[path] = self.files.get(path, "") + base64.b64decode(
                write.group(1)).decode()
            return "", True
        if command.endswith(" || true"):
            try:
                return self._run(command.removesuffix(" || true"))
            except _FailedError:
                return "", True
        words = shlex.split(command)
        handler = self._READS.get(command)
        if handler is not None:
            return handler(self), False
        if command in self.outputs:
            return self.outputs[command], False
        return self._change(words)

    def _running_config(self) -> str:
        return json.dumps(self.config_db, indent=4, sort_keys=True) + "\n"

    def _running_frr(self) -> str:
        return "Building configuration...\n\nCurrent configuration:\n!\nfrr version 8.5.4\n" \
            + self.frr

    def _list_checkpoints(self) -> str:
        return json.dumps(sorted(self.checkpoints), indent=4) + "\n"

    def _list_timers(self) -> str:
        return "".join(f"n/a n/a n/a n/a {unit}.timer {unit}.service\n"
                       for unit in sorted(self.timers))

    _READS = {
        "show runningconfiguration all": _running_config,
        "vtysh -c 'show running-config'": _running_frr,
        "config list-checkpoints": _list_checkpoints,
        "systemctl list-timers --no-legend --plain 'flatfab-revert-*'": _list_timers,
    }

    def _change(self, words: list[str]) -> tuple[str, bool]:
        match words:
            case ["mkdir", "-p", _]:
                return "", True
            case ["rm", "-f", path]:
                self.files.pop(path, None)
                return "", True
            case ["mv", source, dest]:
                self.files[dest] = self._file(source)
                del self.files[source]
                return "", True
            case ["cp", source, dest]:
                self.files[dest] = self._file(source)
                return "", True
            case ["config", "checkpoint", name]:
                self.checkpoints[name] = copy.deepcopy(self.config_db)
                return f"Checkpoint {name} created successfully.\n", True
            case ["config", "apply-patch", path]:
                self.config_db = apply_patch(self.config_db, json.loads(self._file(path)))
                self._orchagent()
                return "Patch applied successfully.\n", True
            case ["config", "rollback", name]:
                if name not in self.checkpoints:
                    raise _FailedError(f"Error: checkpoint {name} does not exist")
                self.config_db = copy.deepcopy(self.checkpoints[name])
                self._orchagent()
                return "Config rolled back successfully.\n", True
            case ["config", "delete-checkpoint", name]:
                self.checkpoints.pop(name)
                return "", True
            case ["config", "save", "-y"]:
                self.saved = copy.deepcopy(self.config_db)
                return "", True
            case ["systemd-run", unit, delay, *command] if unit.startswith("--unit=") and \
                    delay.startswith("--on-active="):
                name = unit.removeprefix("--unit=")
                seconds = float(delay.removeprefix("--on-active="))
                self.timers[name] = (self.now + seconds, shlex.join(command))
                return f"Running timer as unit: {name}.timer\n", True
            case ["systemctl", "stop", unit] if unit.endswith(".timer"):
                if self.timers.pop(unit.removesuffix(".timer"), None) is None:
                    raise _FailedError(f"Failed to stop {unit}: Unit {unit} not loaded.", 5)
                return "", True
            case ["/bin/sh" | "sh", path]:
                for line in self._file(path).splitlines():
                    if line.strip() and not line.startswith("#"):
                        self._run(line)
                return "", True
            case ["docker", "exec", "bgp", "/usr/lib/frr/frr-reload.py", "--reload",
                  "/etc/frr/frr.conf"]:
                self.frr = self._file(FRR_CONF)
                return "", True
            case ["docker", "exec", "bgp", "vtysh", "-f", path]:
                self.frr += self._file(path.replace("/etc/frr/", "/etc/sonic/frr/", 1))
                return "", True
            case ["docker", "exec", "bgp", "vtysh", "-c", "write memory"]:
                self.files[FRR_CONF] = self.frr
                return "", True
        raise _FailedError(f"sh: {words[0] if words else ''}: command not found", 127)

    def _orchagent(self) -> None:
        """SwitchOrch after a CONFIG_DB change: it sets what SWITCH_TRIMMING|GLOBAL states and
        keeps what it no longer states (it refuses the removal of trimming or a field of it),
        logging an error; the switch then trims as CONFIG_DB no longer says."""
        row = self.config_db.get(TRIMMING, {}).get("GLOBAL", {})
        gone = sorted(set(self.asic_trimming) - set(row))
        if gone:
            self.orchagent_errors.append(f"switch trimming: removal of {', '.join(gone)} "
                                         "refused: the ASIC and CONFIG_DB differ")
        self.asic_trimming = {**self.asic_trimming, **row}

    def _file(self, path: str) -> str:
        if path not in self.files:
            raise _FailedError(f"{path}: No such file or directory")
        return self.files[path]


# ---- a healthy switch of a planned fabric ----------------------------------------------------
#
# Show outputs the switch would print once the whole fabric runs its plan: every port up and
# cabled as planned, every session Established, every route learned. The shapes are those of
# the recorded outputs (tests/fixtures/sonic/leaf1/); the values are computed from the plan,
# so any switch of any example fabric (a super-spine, a pod spine) can be collected.


def lldp_table(rows: list[tuple[str, ...]]) -> list[str]:
    """`show lldp table`'s body as SONiC's lldpshow prints it (tabulate's simple format: the
    header, dashes as wide as each column, columns two spaces apart), header first."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]

    def line(cells: tuple[str, ...]) -> str:
        return "  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip()

    return [line(rows[0]), "  ".join("-" * w for w in widths), *(line(r) for r in rows[1:])]


def healthy_outputs(fabric: FabricState, name: str, vrf_name: Callable[[str], str], *,
                    rib: Rib | None = None) -> dict[str, str]:
    """command -> output of SONiC switch `name` in a healthy fabric (see above): FRR's
    interfaces, BGP summary and routes, the LLDP table, zeroed COUNTERS_DB hashes and
    queue counters of every lossless port. `rib`: the switch's converged routes where the
    caller has them already (a fleet converges its fabric once)."""
    device = fabric.devices[name]

    def frr_vrf(vrf: str) -> str:
        return vrf if vrf == DEFAULT_VRF else vrf_name(vrf)

    interfaces = {n: {"administrativeStatus": "down" if i.up is False else "up",
                      "operationalStatus": "down" if i.up is False else "up",
                      "vrfName": frr_vrf(i.vrf),
                      "mtu": i.mtu or (65536 if i.kind is IfKind.LOOPBACK else 9100),
                      "linkDetection": True}
                  for n, i in device.interfaces.items()}
    cabled = [i for i in device.interfaces.values()
              if i.peer is not None and i.parent is None and i.kind is not IfKind.BRIDGE]
    table = [("LocalPort", "RemoteDevice", "RemotePortID", "Capability", "RemotePortDescr")]
    for iface in cabled:
        assert iface.peer is not None
        capability = "O" if iface.kind is IfKind.HOST_PORT else "BR"
        table.append((iface.name, iface.peer.device, iface.peer.port, capability,
                      iface.peer.port))
    lldp = ["Capability codes: (R) Router, (B) Bridge, (O) Other", *lldp_table(table),
            "-" * 50, f"Total entries displayed:  {len(cabled)}"]
    rib = converged_rib(fabric, name) if rib is None else rib
    summary = bgp_summary(device, rib, frr_vrf)
    routes = route_tables(device, rib, frr_vrf)
    lossless = [n for n, i in device.interfaces.items() if i.qos is not None and i.parent is None]
    port_oids = {p: f"oid:0x{0x1000000000000 + i + 2:x}" for i, p in enumerate(lossless)}
    queue_oids = {f"{p}:{q}": f"oid:0x{0x15000000000000 + (i + 1) * 16 + q:x}"
                  for i, p in enumerate(lossless) for q in range(8)}
    out = {"vtysh -c 'show interface vrf all json'": json.dumps(interfaces, indent=1),
           "vtysh -c 'show bgp vrf all summary json'": json.dumps(summary, indent=1),
           "vtysh -c 'show ip route vrf all json'": json.dumps(routes, indent=1),
           "show lldp table": "\n".join(lldp) + "\n",
           "sonic-db-cli COUNTERS_DB HGETALL COUNTERS_PORT_NAME_MAP": repr(port_oids) + "\n",
           "sonic-db-cli COUNTERS_DB HGETALL COUNTERS_QUEUE_NAME_MAP": repr(queue_oids) + "\n",
           "show queue counters --json": json.dumps({
               port: {f"UC{q}": {"totalpacket": "0", "totalbytes": "0", "droppacket": "0",
                                 "dropbytes": "0"} for q in range(8)}
               for port in lossless}, indent=1)}
    for oid in port_oids.values():
        out[f"sonic-db-cli COUNTERS_DB HGETALL COUNTERS:{oid}"] = repr(
            {f"SAI_PORT_STAT_PFC_{p}_{d}_PKTS": "0" for p in range(8) for d in ("RX", "TX")})
    for oid in queue_oids.values():
        out[f"sonic-db-cli COUNTERS_DB HGETALL COUNTERS:{oid}"] = repr(
            {"SAI_QUEUE_STAT_PACKETS": "0", "SAI_QUEUE_STAT_WRED_ECN_MARKED_PACKETS": "0"})
    return out


# ---- the conformance suite's collect test (tests/conformance/test_platforms.py) --------


def collect_cases() -> list[CollectCase]:
    """leaf1 of the lab on sonic after a push of its plan, read through the driver's guard.

    CONFIG_DB and frr.conf are the double's state after the push (tests/support/sonic.py
    `sonic_double(pushed=True)`), the lab's 5-tuple ECMP hash in `SWITCH_HASH|GLOBAL`
    `ecmp_hash` among it. The show outputs are `healthy_outputs`, not
    tests/fixtures/sonic/leaf1/: those record a fault on purpose (red's session on
    Ethernet408.200 Active, Ethernet8 down) for the platform suite, so they cannot read back
    as planned."""
    from flatfab.platforms.sonic import PLATFORM  # noqa: PLC0415
    from tests.support.sonic import fabric, sonic_double, sonic_driver  # noqa: PLC0415

    with TemporaryDirectory() as tmp:
        lab = fabric("lab", Path(tmp))
    planned = lab.devices["leaf1"]
    double = sonic_double(planned, pushed=True)
    double.outputs = healthy_outputs(lab, "leaf1", PLATFORM.names.vrf)
    return [CollectCase(
        name="sonic-lab-leaf1", driver=sonic_driver(double, read_only=True), planned=planned,
        commands=lambda: double.commands,
        source="derived from the SONiC Command Reference and FRR user guide (the output "
               "formats of tests/fixtures/sonic/leaf1, filled by healthy_outputs from the lab "
               "plan on sonic); CONFIG_DB and frr.conf are the double's state after a push "
               "(SWITCH_HASH|GLOBAL ecmp_hash as SONiC's Generic Hash HLD and the sonic-hash "
               "and sonic-types YANG models give it, a JSON list as the switch prints it); "
               "never captured from a switch")]
