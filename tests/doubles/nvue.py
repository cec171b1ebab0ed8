"""A stateful double of a Cumulus Linux 5.x switch driven through NVUE over SSH.

It answers the command channel the way netmiko's `send_command` would (the driver appends
`; echo @@flatfab-rc=$?`) and keeps what NVUE keeps: the applied tree, a pending revision
(`nv config patch/replace`, dropped by `nv config detach`), revisions with their state, the
`apply --confirm` timer (advance() lets it expire: the revision rolls back to the tree before
it), files written on the switch, and a log of every command. `nv show` commands answer
from recorded outputs (tests/fixtures/nvue/<device>/, see the README there); `nv show system
forwarding` without one answers from the applied tree over NVUE's documented defaults
(tests/fixtures/nvue/variants/hash_defaults/), as NVUE states its applied values.
"""

from __future__ import annotations

import base64
import copy
import json
import re
from pathlib import Path
from typing import Any

import paramiko

from flatfab.model.state import DeviceState
from flatfab.platforms.nvue import PLATFORM
from flatfab.platforms.nvue.nvyaml import Tree, applied, load_ops, merge
from flatfab.platforms.nvue.render import tree
from tests.doubles import CollectCase

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "nvue"
RC = "; echo @@flatfab-rc=$?"
READ_PREFIXES = ("nv show ", "nv config show", "nv config revision", "nv config history",
                 "ls -1 ")
# `nv show system forwarding -o json` of a switch whose config sets no forwarding (derived
# from NVIDIA's documentation: tests/fixtures/nvue/README.md)
FORWARDING_DEFAULTS = FIXTURES / "variants" / "hash_defaults" / "nv_show_system_forwarding.json"


def factory_tree(hostname: str) -> Tree:
    """What a fresh switch's applied config holds: eth0 in VRF mgmt, its users."""
    users = {"user": {"cumulus": {"role": "system-admin"}}}
    return {"system": {"hostname": hostname, "aaa": users},
            "interface": {"eth0": {"type": "eth", "ipv4": {"dhcp-client": {"state": "enabled"}},
                                   "vrf": "mgmt"}},
            "vrf": {"mgmt": {}}}


def forwarding_shown(applied_tree: Tree) -> Tree:
    """What `nv show system forwarding -o json` states: the applied `system forwarding`
    (ecmp-hash fields, hash-seed) over NVUE's defaults."""
    shown: Tree = json.loads(FORWARDING_DEFAULTS.read_text(encoding="utf-8"))
    config = applied_tree.get("system", {}).get("forwarding", {})
    return merge(shown, {k: v for k, v in config.items() if k in ("ecmp-hash", "hash-seed")})


def recorded(device: str) -> dict[str, str]:
    """The device's recorded `nv show` outputs, keyed by command."""
    out: dict[str, str] = {}
    for path in sorted((FIXTURES / device).glob("*.json")):
        out[path.stem.replace("_", " ") + " -o json"] = path.read_text(encoding="utf-8")
    return out


class NvueDouble:
    # what netmiko keeps of `ssh_strict: true` (BaseConnection.key_policy)
    key_policy: paramiko.MissingHostKeyPolicy = paramiko.RejectPolicy()

    def __init__(self, applied_tree: Tree, outputs: dict[str, str] | None = None) -> None:
        self.applied = applied_tree
        self.pending: Tree | None = None
        self.outputs = dict(outputs or {})
        self.files: dict[str, str] = {}
        self.revisions: dict[str, dict[str, Any]] = {}
        self.timer: tuple[float, str, Tree] | None = None  # deadline, revision, tree before
        self.saved: Tree = copy.deepcopy(applied_tree)  # startup.yaml (auto-save, 5.9+)
        self.fail: dict[str, str] = {}  # command prefix -> error message
        self.now = 0.0
        self.log: list[str] = []

    # ---- what tests read ------------------------------------------------------------------

    @property
    def commands(self) -> list[str]:
        return [c for c in self.log if not c.startswith("[")]

    @property
    def mutating(self) -> list[str]:
        return [c for c in self.commands if not c.startswith(READ_PREFIXES)]

    def advance(self, seconds: float) -> None:
        self.now += seconds
        if self.timer is not None and self.now >= self.timer[0]:
            _, revision, before = self.timer
            self.log.append(f"[timer] confirm expired: revision {revision} rolled back")
            self.applied = before
            self.revisions[revision]["state"] = "rolled back"
            self.timer = None

    # ---- the command channel --------------------------------------------------------------

    def send_command(self, command_string: str, *args: Any, **kwargs: Any) -> str:
        command = command_string.removesuffix(RC)
        self.advance(0)
        self.log.append(command)
        for prefix, message in self.fail.items():
            if command.startswith(prefix):
                return f"Error: {message}\n@@flatfab-rc=1"
        try:
            output = self._answer(command)
        except KeyError as exc:
            return f"Error: {exc.args[0]}\n@@flatfab-rc=1"
        return f"{output}@@flatfab-rc=0" if command_string.endswith(RC) else output

    def _answer(self, command: str) -> str:
        if command in self.outputs:
            return self.outputs[command]
        if command == "nv config show -o json":
            return json.dumps([{"header": {"model": "SN5600", "nvue-api-version": "nvue_v1",
                                           "rev-id": 1.0, "version": "Cumulus Linux 5.15.0"}},
                               {"set": self.applied}], indent=1) + "\n"
        if command == "nv show system forwarding -o json":
            return json.dumps(forwarding_shown(self.applied), indent=1) + "\n"
        if command == "nv config revision -o json":
            return json.dumps(self.revisions, indent=1, sort_keys=True) + "\n"
        if (m := re.fullmatch(r"mkdir -p (\S+) && nv config show -o yaml > (\S+)", command)):
            self.files[m.group(2)] = "- set: " + json.dumps(self.applied, sort_keys=True) + "\n"
            return ""
        if (m := re.fullmatch(r"mkdir -p (\S+) && rm -f (\S+)", command)):
            self.files.pop(m.group(2), None)
            return ""
        if (m := re.fullmatch(r"echo (\S+) \| base64 -d >> (\S+)", command)):
            self.files[m.group(2)] = self.files.get(m.group(2), "") + base64.b64decode(
                m.group(1)).decode()
            return ""
        if (m := re.fullmatch(r"mv (\S+) (\S+)", command)):
            self.files[m.group(2)] = self.files.pop(m.group(1))
            return ""
        if (m := re.fullmatch(r"rm -f (\S+)", command)):
            self.files.pop(m.group(1), None)
            return ""
        if (m := re.fullmatch(r"ls -1 (\S+) 2>/dev/null \|\| true", command)):
            folder = m.group(1).rstrip("/") + "/"
            return "".join(f"{p[len(folder):]}\n" for p in sorted(self.files)
                           if p.startswith(folder))
        if command == "nv config detach":
            self.pending = None
            return ""
        if (m := re.fullmatch(r"nv config (patch|replace) (\S+)", command)):
            if m.group(2) not in self.files:
                raise KeyError(f"{m.group(2)}: no such file")
            ops = load_ops(self.files[m.group(2)])
            base = copy.deepcopy(self.pending if self.pending is not None else self.applied)
            self.pending = (applied([{"set": base}, *ops]) if m.group(1) == "patch"
                            else applied(ops))
            return ""
        if command == "nv config apply -y":
            self._apply(confirm_s=None)
            return "applied\n"
        if (m := re.fullmatch(r"nv config apply --confirm (\d+) -y", command)):
            self._apply(confirm_s=int(m.group(1)) * 60)
            return "applied [rev_id: pending confirm]\n"
        if command == "nv config apply --confirm-yes":
            if self.timer is None:
                raise KeyError("no configuration is waiting for confirmation")
            self.revisions[self.timer[1]]["state"] = "applied"
            self.timer = None
            self.saved = copy.deepcopy(self.applied)
            return "confirmed\n"
        if command == "nv config apply --confirm-no":
            if self.timer is None:
                raise KeyError("no configuration is waiting for confirmation")
            _, revision, before = self.timer
            self.applied = before
            self.revisions[revision]["state"] = "rolled back"
            self.timer = None
            return "rolled back\n"
        raise KeyError(f"the double does not know {command!r}")

    def _apply(self, confirm_s: int | None) -> None:
        if self.pending is None:
            raise KeyError("no pending configuration to apply")
        revision = str(len(self.revisions) + 1)
        before, self.applied, self.pending = self.applied, self.pending, None
        if confirm_s is None:
            self.revisions[revision] = {"state": "applied"}
            self.saved = copy.deepcopy(self.applied)
        else:
            self.revisions[revision] = {"state": "confirm"}
            self.timer = (self.now + confirm_s, revision, before)


def synthesized(device: DeviceState) -> dict[str, str]:
    """`nv show` outputs made from the plan, in the recorded files' shapes, for a device
    with no recorded outputs: every port up, every planned session established."""
    names = PLATFORM.names
    interfaces: dict[str, Any] = {}
    for name, iface in device.interfaces.items():
        link: dict[str, Any] = {"mtu": iface.mtu or 9216, "state": {"up": {}},
                                "oper-status": "up"}
        if iface.speed_mbps and iface.parent is None and iface.kind.value != "bridge":
            link["speed"] = f"{iface.speed_mbps // 1000}G"
        interfaces[name] = {"link": link}
    out = {"nv show interface -o json": json.dumps(interfaces, sort_keys=True),
           "nv show system -o json": json.dumps({"build": "Cumulus Linux 5.15.0",
                                                 "hostname": device.name})}
    for vrf, instance in device.bgp.items():
        vrf_name = vrf if vrf == "default" else names.vrf(vrf)
        out[f"nv show vrf {vrf_name} router bgp neighbor -o json"] = json.dumps({
            key: {"remote-as": peer.remote_asn, "state": "established"}
            for key, peer in instance.peers.items()}, sort_keys=True)
    for name, iface in device.interfaces.items():
        if iface.qos is not None and iface.parent is None:
            out[f"nv show interface {name} counters qos -o json"] = json.dumps({
                "pfc-stats": {str(p): {"rx-pause-frames": 0, "tx-pause-frames": 0}
                              for p in range(8)},
                "egress-queue-stats": {str(t): {"tx-frames": 0, "ecn-marked-frames": 0}
                                       for t in range(8)}}, sort_keys=True)
        if iface.peer is not None and iface.parent is None:
            out[f"nv show interface {name} lldp -o json"] = json.dumps({"neighbor": {
                iface.peer.device: {"chassis": {"system-name": iface.peer.device},
                                    "port": {"name": iface.peer.port}}}}, sort_keys=True)
    return out


def pushed(device: DeviceState) -> Tree:
    """The applied tree after a successful push of the plan onto a factory switch."""
    return merge(factory_tree(device.name), tree(device, PLATFORM.names))


def double_for(device: DeviceState, *, push: bool = True,
               outputs: dict[str, str] | None = None) -> NvueDouble:
    """The device after a push of its plan (or factory-fresh), answering `nv show` from its
    recorded outputs (or the given ones)."""
    start = pushed(device) if push else factory_tree(device.name)
    return NvueDouble(start, recorded(device.name) if outputs is None else outputs)


def collect_cases() -> list[CollectCase]:
    from tests.support.nvue import fabric  # noqa: PLC0415 - plans on demand

    leaf1 = fabric("lab").devices["leaf1"]
    double = double_for(leaf1)
    return [CollectCase(
        name="nvue-lab-leaf1", driver=PLATFORM.adapt(double, read_only=True),
        planned=leaf1, commands=lambda: list(double.commands),
        source="derived from NVIDIA's Cumulus Linux 5.15 documentation of the `nv show -o "
               "json` shapes (tests/fixtures/nvue/README.md); the applied tree is the "
               "double's state after pushing the plan (its ECMP hashing included)")]
