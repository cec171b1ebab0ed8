"""A stateful stand-in for a Junos QFX switch under NAPALM's real JunOSDriver.

NAPALM's driver talks to a PyEZ `Device` (`self.device`: open, cli, rpc.*, facts) and its
`Config` utility (`self.device.cu`: lock, load, diff, commit, rollback). The tests put a
`JunosDevice` there, so NAPALM's own code runs: its format detection, its
`commit(confirm=minutes)`, its reading of the commit history for has_pending_commit.

The device keeps the committed configuration and the candidate as curly-brace statement
trees, with the commit history (newest first). `load` honours the load action PyEZ sends:
`replace` (statements tagged `replace:` replace, the rest merge), `override` (the whole
config) and `merge`. A `commit confirmed N` that is not confirmed within N minutes of the
test's clock is rolled back by the switch, as Junos does (it commits rollback 1). Every
operation lands in `log`; show commands answer from recorded outputs (`shows`).

Limits: statements are keyed by their text (a leaf whose value changes outside a
`replace:` subtree is added, not replaced: Junos knows from its schema which statements
are single-valued); `diff` is a unified diff of the printed trees, not `show | compare`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from ipaddress import ip_interface
from pathlib import Path
from typing import Any

from jnpr.junos.exception import ConfigLoadError, RpcError
from lxml import etree
from napalm.junos.junos import JunOSDriver

from flatfab.model.state import DEFAULT_VRF, DeviceState, FabricState, IfKind
from flatfab.platforms.junos import PLATFORM
from flatfab.platforms.junos import collect as junos_collect
from flatfab.platforms.junos.render import configuration
from flatfab.platforms.junos.verified import FlatfabJunosDriver
from tests.doubles import CollectCase
from tests.doubles.rib import connected, converged_rib, link_local, session_port
from tests.support.on_platform import fabric_on, switches_on

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "junos"
FAMILY = "tomahawk-5"  # QFX5240-64OD
VERSION = "24.4R1.9-EVO"
LLDP_TTL, LLDP_AGE = 120, 7  # seconds: the hold time every neighbour sends, heard 7 s ago
MANAGEMENT_ADDRESS = "198.51.100.11/24"  # re0:mgmt-0 (documentation range, RFC 5737)
SOURCE = ("derived from Juniper's documentation of the JSON output shapes (no Junos device "
          "available); see tests/fixtures/junos/README.md")


# ---- planned fabrics with switches on junos -----------------------------------------------


def junos_fabric(name: str, family: str = FAMILY) -> FabricState:
    """An example intent (lab, numbered, mixed, rail) planned with its switches on junos."""
    return fabric_on(name, "junos", family)


def junos_switches(state: FabricState) -> list[DeviceState]:
    return switches_on(state, "junos")



# ---- the configuration as statements ------------------------------------------------------


@dataclass
class Node:
    head: str
    children: list[Node] | None = None  # None: a leaf statement (`mtu 9216;`)
    replace: bool = False


def parse(text: str) -> list[Node]:
    """Curly-brace text, one statement a line (as flatfab and `show configuration` print)."""
    root: list[Node] = []
    stack: list[list[Node]] = [root]
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", "/*")):
            continue
        if line == "}":
            if len(stack) == 1:
                raise ConfigLoadError(_rpc_error("syntax error: unbalanced }"))
            stack.pop()
            continue
        tag = line.startswith("replace: ")
        line = line.removeprefix("replace: ")
        if line.endswith("{"):
            node = Node(line[:-1].strip(), [], tag)
            stack[-1].append(node)
            assert node.children is not None
            stack.append(node.children)
        elif line.endswith(";"):
            stack[-1].append(Node(line[:-1].strip(), None, tag))
        else:
            raise ConfigLoadError(_rpc_error(f"syntax error: {line}"))
    if len(stack) != 1:
        raise ConfigLoadError(_rpc_error("syntax error: missing }"))
    return root


def merge(base: list[Node], new: list[Node]) -> list[Node]:
    out = [Node(n.head, None if n.children is None else merge([], n.children)) for n in base]
    for node in new:
        found = next((i for i, n in enumerate(out) if n.head == node.head
                      and (n.children is None) == (node.children is None)), None)
        fresh = Node(node.head, None if node.children is None else merge([], node.children))
        if found is None:
            out.append(fresh)
        elif node.replace or node.children is None:
            out[found] = fresh
        else:
            existing = out[found].children or []
            out[found] = Node(node.head, merge(existing, node.children or []))
    return out


def dump(nodes: list[Node], depth: int = 0) -> str:
    lines = []
    for node in nodes:
        pad = "    " * depth
        if node.children is None:
            lines.append(f"{pad}{node.head};\n")
        else:
            lines.append(f"{pad}{node.head} {{\n{dump(node.children, depth + 1)}{pad}}}\n")
    return "".join(lines)


def _rpc_error(message: str) -> etree._Element:
    reply = etree.Element("rpc-error")
    etree.SubElement(reply, "error-severity").text = "error"
    etree.SubElement(reply, "error-message").text = message
    return reply


# ---- PyEZ's Device and Config --------------------------------------------------------------


@dataclass
class Commit:
    config: list[Node]
    at: int
    comment: str | None


class _Transport:
    def set_keepalive(self, interval: int) -> None:
        pass

    def is_active(self) -> bool:
        return True


class _Session:
    transport = _Transport()


class _Conn:
    _session = _Session()


class JunosConfig:
    """`dev.cu`: PyEZ's Config utility over the device's candidate."""

    def __init__(self, device: JunosDevice) -> None:
        self.device = device

    def lock(self) -> bool:
        self.device.record("lock")
        return True

    def unlock(self) -> bool:
        self.device.record("unlock")
        return True

    def load(self, *vargs: Any, **kvargs: Any) -> etree._Element:
        text = str(vargs[0] if vargs else kvargs.get("path", ""))
        fmt = kvargs.get("format", "text")
        action = ("override" if kvargs.get("overwrite") else "merge" if kvargs.get("merge")
                  else "update" if kvargs.get("update") else "replace")
        self.device.record(f"load {action} format={fmt}")
        if fmt != "text":
            raise ConfigLoadError(_rpc_error(f"the double loads text only, not {fmt}"))
        loaded = parse(text)
        device = self.device
        if action == "override":
            device.candidate = merge([], loaded)
        elif action == "replace":
            device.candidate = merge(device.candidate, loaded)
        else:
            device.candidate = merge(device.candidate, [_untagged(n) for n in loaded])
        return etree.Element("load-configuration-results")

    def diff(self, rb_id: int = 0, ignore_warning: bool = False) -> str | None:
        self.device.record("show | compare")
        import difflib  # noqa: PLC0415

        before, after = dump(self.device.running), dump(self.device.candidate)
        if before == after:
            return None
        return "".join(difflib.unified_diff(before.splitlines(True), after.splitlines(True),
                                            "running", "candidate"))

    def commit(self, **kvargs: Any) -> bool:
        self.device.commit(kvargs.get("confirm"), kvargs.get("comment"))
        return True

    def commit_check(self) -> bool:
        self.device.record("commit check")
        return True

    def rollback(self, rb_id: int = 0, ignore_warning: bool = False) -> bool:
        self.device.record(f"rollback {rb_id}")
        device = self.device
        device.expire()
        if rb_id >= len(device.history):
            raise RpcError(rsp=_rpc_error(f"rollback {rb_id} does not exist"))
        device.candidate = merge([], device.history[rb_id].config)
        return True


def _untagged(node: Node) -> Node:
    return Node(node.head, None if node.children is None else
                [_untagged(n) for n in node.children])


class _Rpc:
    def __init__(self, device: JunosDevice) -> None:
        self.device = device

    def get_commit_revision_information(self, detail: bool = False) -> etree._Element:
        self.device.record("show system commit revision detail")
        self.device.expire()
        newest = self.device.history[0]
        root = etree.Element("commit-revision-information")
        etree.SubElement(root, "date-time", seconds=str(newest.at)).text = str(newest.at)
        etree.SubElement(root, "revision").text = f"re0-{newest.at}-{len(self.device.history)}"
        if newest.comment is not None:
            etree.SubElement(root, "comment").text = newest.comment
        return root

    def get_system_uptime_information(self) -> etree._Element:
        self.device.record("show system uptime")
        root = etree.Element("system-uptime-information")
        current = etree.SubElement(root, "current-time")
        etree.SubElement(current, "date-time", seconds=str(self.device.clock))
        return root

    def get_config(self, filter_xml: Any = None, options: dict[str, str] | None = None
                   ) -> etree._Element:
        options = options or {}
        database = options.get("database", "committed")
        self.device.record(f"show configuration ({database})")
        self.device.expire()
        nodes = self.device.candidate if database == "candidate" else self.device.running
        root = etree.Element("configuration-text")
        root.text = dump(nodes)
        return root

    def open_configuration(self, **kvargs: Any) -> bool:
        self.device.record("configure private")
        return True

    def close_configuration(self) -> bool:
        self.device.record("exit configuration-mode")
        return True


@dataclass
class JunosDevice:
    """PyEZ's `Device` as NAPALM's JunOSDriver uses it."""

    running_text: str = ""
    shows: dict[str, str] = field(default_factory=dict)
    clock: int = 1_764_000_000  # seconds (epoch): commit times and uptime's current-time
    log: list[str] = field(default_factory=list)
    facts: dict[str, Any] = field(default_factory=lambda: {
        "hostname": "qfx", "model": "QFX5240-64OD", "version": VERSION, "serialnumber": "X",
        "switch_style": "VLAN_L2NG", "fqdn": "qfx", "domain": None, "RE0": {"up_time": "1"},
        "vc_capable": False, "personality": "SWITCH"})
    connected: bool = False
    timeout: int = 60
    uptime: int = 1
    _conn: _Conn = field(default_factory=_Conn)

    def __post_init__(self) -> None:
        initial = parse(self.running_text)
        self.history: list[Commit] = [Commit(initial, self.clock - 3600, None)]
        self.candidate: list[Node] = merge([], initial)
        self.pending: tuple[int, list[Node]] | None = None  # deadline, config to go back to
        self.rpc = _Rpc(self)
        self.cu: JunosConfig | None = None

    @property
    def running(self) -> list[Node]:
        return self.history[0].config

    # ---- what NAPALM calls --------------------------------------------------------------

    def open(self, auto_probe: int = 0) -> JunosDevice:
        self.record("open")
        self.connected = True
        return self

    def close(self) -> None:
        self.record("close")
        self.connected = False

    def bind(self, **kvargs: Any) -> None:
        self.cu = JunosConfig(self)  # NAPALM binds PyEZ's Config class as `cu`

    def cli(self, command: str, format: str = "text", warning: bool = True) -> str:
        command = " ".join(command.split())  # NAPALM re-joins pipes with two spaces
        self.record(f"cli {command}")
        self.expire()
        if command not in self.shows:
            raise RpcError(rsp=_rpc_error(f"syntax error, expecting <command>: {command}"))
        return self.shows[command]

    # ---- the commit mechanism ------------------------------------------------------------

    def record(self, entry: str) -> None:
        self.log.append(entry)

    def advance(self, seconds: int) -> None:
        self.clock += seconds
        self.expire()

    def expire(self) -> None:
        """An unconfirmed `commit confirmed` past its time: Junos commits rollback 1."""
        if self.pending is not None and self.clock >= self.pending[0]:
            _, back = self.pending
            self.pending = None
            self.history.insert(0, Commit(back, self.clock,
                                          "automatic rollback: commit confirmed expired"))
            self.candidate = merge([], back)
            self.record("rollback: commit confirmed expired")

    def commit(self, confirm: int | None, comment: str | None) -> None:
        self.expire()
        label = f"commit confirmed {confirm}" if confirm else "commit"
        self.record(label + (f' comment "{comment}"' if comment else ""))
        previous = self.running
        if confirm:
            if self.pending is None:
                self.pending = (self.clock + 60 * int(confirm), previous)
            else:  # a second commit confirmed restarts the timer, back to the same config
                self.pending = (self.clock + 60 * int(confirm), self.pending[1])
            text = f"commit confirmed, rollback in {int(confirm)}mins"
            self.history.insert(0, Commit(merge([], self.candidate), self.clock,
                                          f"{comment} {text}" if comment else text))
            return
        self.pending = None  # a plain commit confirms
        self.history.insert(0, Commit(merge([], self.candidate), self.clock, comment))

    @property
    def commands(self) -> list[str]:
        return [e.removeprefix("cli ") for e in self.log if e.startswith("cli ")]


def napalm_driver(device: JunosDevice) -> JunOSDriver:
    """NAPALM's real JunOSDriver (flatfab's, host keys checked) with the double as its PyEZ
    device, opened."""
    driver = FlatfabJunosDriver("qfx.example.net", "flatfab", "secret")
    driver.device = device
    driver.open()
    return driver


# ---- recorded outputs of a healthy fabric ---------------------------------------------------


def _d(value: Any) -> list[dict[str, str]]:
    return [{"data": str(value)}]


def without_attributes(tree: Any) -> Any:
    """The tree as `show configuration | display json` prints it (no load attributes)."""
    if isinstance(tree, dict):
        return {k: without_attributes(v) for k, v in tree.items() if k != "@"}
    if isinstance(tree, list):
        return [without_attributes(v) for v in tree]
    return tree


def _gbps(mbps: int | None) -> str:
    return f"{(mbps or 100_000) // 1000}Gbps"


def _destination(address: str) -> dict[str, Any]:
    interface = ip_interface(address)
    out: dict[str, Any] = {"ifa-local": _d(interface.ip)}
    if interface.network.prefixlen < 32:
        out["ifa-destination"] = _d(str(interface.network))
    return out


def healthy_outputs(fabric: FabricState, name: str) -> dict[str, str]:
    """command -> `| display json` output of junos switch `name` in a converged fabric."""
    device = fabric.devices[name]
    names = PLATFORM.names
    config = {"configuration": {"@": {"junos:changed-seconds": "1764000000",
                                      "junos:changed-localtime": "2025-11-24 16:00:00 UTC"},
                                "version": VERSION,
                                **without_attributes(
                                    configuration(device, names)["configuration"])}}
    physical: dict[str, dict[str, Any]] = {}
    lldp = []
    for iface in device.interfaces.values():
        if iface.kind is IfKind.LOOPBACK:
            phys = physical.setdefault(iface.name, {"name": _d(iface.name),
                                                    "oper-status": _d("up"),
                                                    "mtu": _d("Unlimited"),
                                                    "logical-interface": []})
            phys["logical-interface"] += [
                {"name": _d(f"{iface.name}.0"), "address-family": [
                    {"address-family-name": _d("inet"),
                     "interface-address": [_destination(a) for a in iface.addresses]}]},
                {"name": _d(f"{iface.name}.16384"), "address-family": [
                    {"address-family-name": _d("inet"),
                     "interface-address": [{"ifa-local": _d("127.0.0.1")}]}]},
                {"name": _d(f"{iface.name}.16385"), "address-family": [
                    {"address-family-name": _d("inet")}]}]
            continue
        if iface.kind is IfKind.BRIDGE:
            phys = physical.setdefault("irb", {"name": _d("irb"), "oper-status": _d("up"),
                                               "mtu": _d("1514"), "speed": _d("Unlimited"),
                                               "logical-interface": []})
            phys["logical-interface"].append({"name": _d(iface.name), "address-family": [
                {"address-family-name": _d("inet"), "mtu": _d(iface.mtu),
                 "interface-address": [_destination(a) for a in iface.addresses]}]})
            continue
        port = iface.parent or iface.name
        phys = physical.setdefault(port, {"name": _d(port), "oper-status": _d("up"),
                                          "logical-interface": []})
        if iface.parent is None:
            phys["mtu"] = _d(iface.mtu)
            phys["speed"] = _d(_gbps(iface.speed_mbps))
            if iface.peer is not None:
                # `show lldp neighbors detail`: the local port by name and by ifIndex, the
                # neighbour's hold time and how long ago it was heard
                index = len(lldp) + 1
                lldp.append({"lldp-index": _d(index), "lldp-ttl": _d(LLDP_TTL),
                             "lldp-timemark": _d("Mon Nov 24 16:00:00 2025"),
                             "lldp-age": _d(LLDP_AGE),
                             "lldp-local-interface": _d(port),
                             "lldp-local-parent-interface-name": _d("-"),
                             "lldp-local-port-id": _d(500 + index),
                             "lldp-local-port-ageout-count": _d(0),
                             "lldp-remote-chassis-id-subtype": _d("Mac address"),
                             "lldp-remote-chassis-id": _d("50:00:00:00:00:01"),
                             "lldp-remote-port-id-subtype": _d("Interface name"),
                             "lldp-remote-port-id": _d(iface.peer.port),
                             "lldp-remote-port-description": _d(iface.peer.port),
                             "lldp-remote-system-name": _d(iface.peer.device)})
        unit = iface.name if iface.parent else f"{iface.name}.0"
        families: list[dict[str, Any]]
        if iface.kind is IfKind.HOST_PORT and iface.bridge is not None:
            families = [{"address-family-name": _d("eth-switch")}]
        else:
            families = [{"address-family-name": _d("inet"), "mtu": _d((iface.mtu or 0) - 18),
                         "interface-address": [_destination(a) for a in iface.addresses
                                               if ":" not in a]},
                        {"address-family-name": _d("inet6"), "interface-address": [
                            {"ifa-local": _d("fe80::5200:ff:fe01:1"),
                             "ifa-destination": _d("fe80::/64")}]}]
        phys["logical-interface"].append({"name": _d(unit), "address-family": families})
    for port_name, phys in physical.items():
        if len(phys["logical-interface"]) > 1 and port_name not in ("irb", names.loopback):
            # a vlan-tagging port's untagged control unit, which Junos makes itself
            phys["logical-interface"].append({"name": _d(f"{port_name}.32767")})
        phys["logical-interface"].sort(key=lambda u: u["name"][0]["data"])
    # Junos's own interfaces, and the management port (named by collect, not modelled)
    physical.update({
        "dsc": {"name": _d("dsc"), "oper-status": _d("up"), "mtu": _d("Unlimited")},
        "esi": {"name": _d("esi"), "oper-status": _d("up"), "mtu": _d("Unlimited")},
        "pfe-0/0/0": {"name": _d("pfe-0/0/0"), "oper-status": _d("up"), "logical-interface": [
            {"name": _d("pfe-0/0/0.16383"), "address-family": [
                {"address-family-name": _d("inet")}, {"address-family-name": _d("inet6")}]}]},
        "re0:mgmt-0": {"name": _d("re0:mgmt-0"), "oper-status": _d("up"), "mtu": _d("1514"),
                       "speed": _d("1000mbps"), "logical-interface": [
            {"name": _d("re0:mgmt-0.0"), "address-family": [
                {"address-family-name": _d("inet"), "interface-address": [
                    _destination(MANAGEMENT_ADDRESS)]}]}]}})
    interfaces = {"interface-information": [{"physical-interface": [
        physical[k] for k in sorted(physical)]}]}
    peers = []
    rib = converged_rib(fabric, name)
    for vrf, instance in sorted(device.bgp.items()):
        rti = "master" if vrf == DEFAULT_VRF else names.vrf(vrf)
        table = "inet.0" if vrf == DEFAULT_VRF else f"{rti}.inet.0"
        for peer in instance.peers.values():
            local = session_port(device, peer)
            unnumbered = peer.address is None
            count = sum(1 for r in rib.get(vrf, {}).values() if local in r.ports)
            entry: dict[str, Any] = {
                "peer-address": _d(f"{link_local(local or '')}%{_unit(local or '')}+179"
                                   if unnumbered else f"{peer.address}+179"),
                "local-address": _d(f"fe80::5200:ff:fe01:1%{_unit(local or '')}+50001"
                                    if unnumbered else f"{_own(device, local)}+179"),
                "peer-group": _d("fabric-auto" if unnumbered else "fabric"),
                "peer-cfg-rti": _d(rti), "peer-type": _d("External"),
                "peer-state": _d("Established"), "peer-as": _d(peer.remote_asn),
                "local-as": _d(instance.asn), "local-id": _d(instance.router_id),
                "bgp-rib": [{"name": _d(table), "received-prefix-count": _d(count)}]}
            if unnumbered:
                entry["local-interface-name"] = _d(_unit(local or ""))
            elif peer.peer_device:
                entry["description"] = _d(peer.peer_device)
            peers.append(entry)
    bgp = {"bgp-information": [{"bgp-peer": peers}]}
    tables = []
    own = connected(device)
    for vrf in sorted(set(own) | set(rib) | set(device.bgp)):
        rows = []
        for prefix, via in sorted(own.get(vrf, {}).items()):
            rows.append({"rt-destination": _d(prefix), "rt-entry": [
                {"active-tag": _d("*"), "protocol-name": _d("Direct"),
                 "nh": [{"via": _d(_unit(via) if via != names.loopback else "lo0.0")}]}]})
        for prefix, learned in sorted(rib.get(vrf, {}).items()):
            if prefix in own.get(vrf, {}):
                continue
            rows.append({"rt-destination": _d(prefix), "rt-entry": [
                {"active-tag": _d("*"), "protocol-name": _d("BGP"),
                 "nh": [{"to": _d(link_local(p)), "via": _d(_unit(p))}
                        for p in learned.ports]}]})
        rti = "inet.0" if vrf == DEFAULT_VRF else f"{names.vrf(vrf)}.inet.0"
        tables.append({"table-name": _d(rti), "rt": rows})
    routes = {"route-information": [{"route-table": tables}]}
    neighbors = {"lldp-neighbors-information": [{"lldp-neighbor-information": lldp}]}
    return {junos_collect.CONFIG: _json(config), junos_collect.INTERFACES: _json(interfaces),
            junos_collect.LLDP: _json(neighbors), junos_collect.BGP: _json(bgp),
            junos_collect.ROUTES: _json(routes)}


def _own(device: DeviceState, port: str | None) -> str:
    """The device's own address on a numbered session's port."""
    iface = device.interfaces.get(port or "")
    return str(ip_interface(iface.addresses[0]).ip) if iface and iface.addresses else "0.0.0.0"


def _unit(port: str) -> str:
    return port if "." in port else f"{port}.0"


def _json(value: Any) -> str:
    return json.dumps(value, indent=2) + "\n"


def fixture_name(command: str) -> str:
    """NAPALM mocked-data naming: non-alphanumerics become '_'."""
    return re.sub(r"[^a-zA-Z0-9]", "_", command) + ".json"


def recorded(folder: Path) -> dict[str, str]:
    """command -> output, from a fixture folder (one file per command)."""
    return {c: (folder / fixture_name(c)).read_text(encoding="utf-8")
            for c in junos_collect.COMMANDS if (folder / fixture_name(c)).exists()}


# the recorded devices: (fabric, device) -> fixture folder
RECORDED = (("lab", "leaf1"), ("lab", "spine1"), ("mixed", "leaf1"), ("numbered", "lf-a"))


def fixture_folder(fabric: str, device: str) -> Path:
    return FIXTURES / fabric / device


def collect_cases() -> list[CollectCase]:
    """Each recorded junos switch, answering from its fixtures through NAPALM's driver."""
    cases = []
    for fabric, name in RECORDED:
        double = JunosDevice(shows=recorded(fixture_folder(fabric, name)))
        driver = PLATFORM.adapt(napalm_driver(double), read_only=True)
        cases.append(CollectCase(name=f"junos {fabric}/{name}", driver=driver,
                                 planned=junos_fabric(fabric).devices[name],
                                 commands=lambda d=double: d.commands,  # type: ignore[misc]
                                 source=SOURCE))
    return cases
