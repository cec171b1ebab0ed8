"""A Nokia SR Linux box as napalm-srlinux sees it: its JSON-RPC server, stateful.

The real driver (napalm_srlinux.NokiaSRLinuxDriver and its SRLinuxDevice transport) talks
HTTP to this double through httpx.MockTransport, so every request the driver builds is
the one a box would get. What the double keeps, as SR Linux documents it (SR Linux
JSON-RPC guide: methods get/set/validate/diff/cli, datastores, `confirm-timeout`; SR Linux
configuration guide: checkpoints, `commit confirmed`, `tools system configuration
confirmed-accept|confirmed-reject`):

- running: the configuration tree (no module prefixes); `set` on the candidate datastore
  applies its commands as one transaction (all or nothing) and commits (paths: `/`, a
  top-level tree or list entry, a container below the root such as
  /system/load-balancing/hash-options);
- with `confirm-timeout` the commit is `unconfirmed` (/system/configuration/commit) until
  accepted; `expire()` is the timer running out: the box reverts to the config before;
- checkpoints (`generate-checkpoint name X`) and `load checkpoint` + `commit now` in a
  named private candidate (napalm-srlinux's rollback);
- read-only CLI (`info from state ...`, `show ...`): answered from recorded outputs;
- every request in `log` (method and a one-line summary).
"""

from __future__ import annotations

import copy
import difflib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from napalm_srlinux import NokiaSRLinuxDriver

from flatfab.model.state import DeviceState
from tests.doubles import CollectCase

Json = dict[str, Any]
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "srlinux"
LLDP_HEARD, CLOCK_NOW, LLDP_AGE = "2025-11-24T16:00:00.000Z", "2025-11-24T16:00:07.000Z", 7
_ENTRY_PATH = re.compile(r"^/([a-z-]+)(?:\[name=([^\]]+)\])?$")
_CONTAINER_PATH = re.compile(r"^(?:/[a-z-]+){2,}$")  # /system/load-balancing/hash-options


class RpcError(Exception):
    """Answered as a JSON-RPC error object (what the box does on a bad request)."""


@dataclass
class Commit:
    id: int
    status: str  # complete | unconfirmed | reverted | rejected
    before: Json


@dataclass
class SrlinuxDouble:
    running: Json = field(default_factory=dict)
    outputs: dict[str, Any] = field(default_factory=dict)  # read-only CLI -> JSON result
    # the box's own validation of a candidate (None: accept); returns violations
    validator: Callable[[Json], list[str]] | None = None
    log: list[str] = field(default_factory=list)
    commits: list[Commit] = field(default_factory=list)
    checkpoints: dict[str, Json] = field(default_factory=dict)
    _candidate: Json | None = None

    # ---- the driver, wired to this double ------------------------------------------------

    def driver(self, **optional: Any) -> NokiaSRLinuxDriver:
        driver = NokiaSRLinuxDriver("srl-double", "admin", "secret", timeout=5,
                                    optional_args={"insecure": True, **optional})
        driver.device.jsonrpc_client = httpx.Client(transport=httpx.MockTransport(self.handle))
        return driver

    def handle(self, request: httpx.Request) -> httpx.Response:
        if request.method == "HEAD":
            return httpx.Response(200)
        body = json.loads(request.content)
        method, params = body["method"], body["params"]
        try:
            result = getattr(self, f"_rpc_{method}")(params)
        except RpcError as exc:
            self.log.append(f"{method} ERROR {exc}")
            return httpx.Response(200, json={"jsonrpc": "2.0", "id": body["id"],
                                             "error": {"code": -1, "message": str(exc)}})
        return httpx.Response(200, json={"jsonrpc": "2.0", "id": body["id"],
                                         "result": result})

    # ---- timer ----------------------------------------------------------------------------

    @property
    def pending(self) -> Commit | None:
        return next((c for c in self.commits if c.status == "unconfirmed"), None)

    def expire(self) -> None:
        """The commit-confirmed timer runs out: the box reverts the unconfirmed commit."""
        pending = self.pending
        if pending is not None:
            self.running = pending.before
            pending.status = "reverted"
            self.log.append(f"timer expired: commit {pending.id} reverted")

    # ---- JSON-RPC methods -----------------------------------------------------------------

    def _rpc_get(self, params: Json) -> list[Any]:
        out = []
        for command in params["commands"]:
            path, store = command["path"], command.get("datastore", "running")
            self.log.append(f"get {store} {path}")
            if path == "/system/configuration/commit[id=*]":
                out.append({"commit": [{"id": c.id, "status": c.status}
                                       for c in self.commits]})
            elif path == "/" and store == "running":
                out.append(copy.deepcopy(self.running))
            else:
                raise RpcError(f"path {path} is not in this double")
        return out

    def _apply(self, commands: list[Json]) -> Json:
        tree = copy.deepcopy(self.running)
        for command in commands:
            action, path = command["action"], command["path"]
            if path == "/":
                if action == "replace":
                    tree = copy.deepcopy(command["value"])
                elif action == "update":
                    tree.update(copy.deepcopy(command["value"]))
                else:
                    raise RpcError("delete / is refused")
                continue
            found = _ENTRY_PATH.match(path)
            if found is None and _CONTAINER_PATH.match(path):
                _container(tree, path, action, command.get("value"))
                continue
            if found is None:
                raise RpcError(f"path {path} is not in this double")
            head, name = found.groups()
            if name is None:
                if action == "delete":
                    tree.pop(head, None)
                else:
                    tree[head] = copy.deepcopy(command["value"])
                continue
            entries = [e for e in tree.get(head, []) if e.get("name") != name]
            if action != "delete":
                entries.append({"name": name, **copy.deepcopy(command["value"])})
            tree[head] = sorted(entries, key=lambda e: str(e.get("name")))
        if self.validator is not None:
            violations = self.validator(tree)
            if violations:
                raise RpcError(f"validation failed: {violations[0]}")
        return tree

    def _rpc_validate(self, params: Json) -> list[Any]:
        self.log.append(f"validate {len(params['commands'])} command(s)")
        self._apply(params["commands"])
        return [{}]

    def _rpc_diff(self, params: Json) -> list[Any]:
        self.log.append(f"diff {len(params['commands'])} command(s)")
        after = self._apply(params["commands"])
        text = "".join(difflib.unified_diff(
            json.dumps(self.running, indent=2, sort_keys=True).splitlines(True),
            json.dumps(after, indent=2, sort_keys=True).splitlines(True), "running",
            "candidate"))
        return [text] if text else []

    def _rpc_set(self, params: Json) -> list[Any]:
        if params.get("datastore") != "candidate":
            raise RpcError("set only on the candidate datastore")
        if self.pending is not None:
            raise RpcError("a commit confirmed is pending")
        timeout = params.get("confirm-timeout")
        self.log.append(f"set {len(params['commands'])} command(s)"
                        + (f" confirm-timeout {timeout}" if timeout else ""))
        after = self._apply(params["commands"])
        self.commits.append(Commit(len(self.commits) + 1,
                                   "unconfirmed" if timeout else "complete",
                                   copy.deepcopy(self.running)))
        self.running = after
        return [{}]

    def _rpc_cli(self, params: Json) -> list[Any]:
        out: list[Any] = []
        for command in params["commands"]:
            self.log.append(f"cli {command}")
            out.append(self._cli(command.strip()))
        return out

    def _cli(self, command: str) -> Any:
        if command in self.outputs:
            return copy.deepcopy(self.outputs[command])
        words = command.split()
        if command.startswith("/tools system configuration generate-checkpoint name "):
            self.checkpoints[words[5]] = copy.deepcopy(self.running)
            return {}
        if command == "/tools system configuration confirmed-accept":
            pending = self.pending
            if pending is None:
                raise RpcError("no commit to accept")
            pending.status = "complete"
            return {}
        if command == "/tools system configuration confirmed-reject":
            pending = self.pending
            if pending is None:
                raise RpcError("no commit to reject")
            self.running, pending.status = pending.before, "rejected"
            return {}
        if command.startswith("enter candidate"):
            self._candidate = copy.deepcopy(self.running)
            return {}
        if command == "discard now":
            self._candidate = None
            return {}
        if command.startswith("load checkpoint name "):
            if self._candidate is None or words[3] not in self.checkpoints:
                raise RpcError(f"cannot {command}")
            self._candidate = copy.deepcopy(self.checkpoints[words[3]])
            return {}
        if command in ("commit now", "commit save", "commit stay"):
            if self._candidate is None:
                raise RpcError("not in a candidate")
            self.commits.append(Commit(len(self.commits) + 1, "complete",
                                       copy.deepcopy(self.running)))
            self.running, self._candidate = self._candidate, None
            return {}
        if command == "save startup":
            return {}
        raise RpcError(f"command {command!r} is not in this double's recordings")


def _member(node: Json, step: str) -> str:
    """The member of a tree node that `step` names, with or without its module prefix (a
    new member: unprefixed)."""
    return next((k for k in node if k.split(":", 1)[-1] == step), step)


def _container(tree: Json, path: str, action: str, value: Any) -> None:
    """A replace, update or delete of a container below the root (`/system/...`): only
    that container changes, its siblings stay."""
    *parents, last = path.strip("/").split("/")
    node = tree
    for step in parents:
        node = node.setdefault(_member(node, step), {})
    key = _member(node, last)
    if action == "delete":
        node.pop(key, None)
    elif action == "update" and isinstance(node.get(key), dict):
        node[key].update(copy.deepcopy(value))
    else:
        node[key] = copy.deepcopy(value)


# ---- recorded outputs and the shared collect case ------------------------------------------


def recorded(name: str) -> dict[str, Any]:
    """tests/fixtures/srlinux/<name>.json: {command: JSON-RPC cli result}."""
    loaded: dict[str, Any] = json.loads((FIXTURES / f"{name}.json").read_text())
    return loaded["outputs"]


def collect_cases() -> list[CollectCase]:

    planned = DeviceState.model_validate_json((FIXTURES / "leaf1.planned.json").read_text())
    double = SrlinuxDouble(running=json.loads((FIXTURES / "leaf1.running.json").read_text()),
                           outputs=recorded("leaf1"))
    driver = double.driver()
    driver.open()
    return [CollectCase(
        name="srlinux-leaf1", driver=driver, planned=planned,
        commands=lambda: [entry.split(" ", 1)[1] for entry in double.log
                          if entry.startswith("cli ")],
        source=("derived from Nokia's SR Linux YANG models v25.3.1 (state trees of "
                "srl_nokia-interfaces, -network-instance, -bgp, -lldp, -qos; the running "
                "configuration's srl_nokia-load-balancing hash-options) and the SR Linux "
                "JSON-RPC guide; no box was available (tests/fixtures/srlinux/README.md)"))]




# ---- outputs in the shape of SR Linux's YANG state trees, for any planned device --------------


def running_of(tree: Json) -> Json:
    """A rendered tree as the box returns `/` from running: module prefixes where modules
    change, identities qualified (RFC 7951), mgmt0 and /system present (with the rendered
    load-balancing hash options, srl_nokia-load-balancing's augment of /system)."""
    out = copy.deepcopy(tree)
    for ni in out.get("network-instance", []):
        ni["type"] = f"srl_nokia-network-instance:{ni['type']}"
        if "protocols" in ni:
            bgp = ni["protocols"].pop("bgp")
            for family in bgp.get("afi-safi", []):
                family["afi-safi-name"] = f"srl_nokia-common:{family['afi-safi-name']}"
            ni["protocols"]["srl_nokia-bgp:bgp"] = bgp
    interfaces = [*out.get("interface", []),
                  {"name": "mgmt0", "admin-state": "enable",
                   "subinterface": [{"index": 0, "ipv4": {"dhcp-client": {}}}]}]
    system: Json = {"srl_nokia-lldp:lldp": {"admin-state": "enable"}}
    balancing = (out.get("system") or {}).get("load-balancing")
    if balancing is not None:
        system["srl_nokia-load-balancing:load-balancing"] = balancing
    return {"srl_nokia-interfaces:interface": interfaces,
            "srl_nokia-network-instance:network-instance": out.get("network-instance", []),
            "srl_nokia-routing-policy:routing-policy": out.get("routing-policy", {}),
            "srl_nokia-qos:qos": out.get("qos", {}),
            "srl_nokia-system:system": system}


def _native_members(tree: Json, irb: str) -> list[str]:
    """The other members of the mac-vrf holding an irb subinterface."""
    for ni in tree.get("network-instance", []):
        listed = [str(i["name"]) for i in ni.get("interface", [])]
        if ni.get("type") == "mac-vrf" and irb in listed:
            return [n for n in listed if n != irb]
    return []


def state_outputs(device: DeviceState, tree: Json, speed: str = "100G") -> dict[str, Any]:
    """`info from state` of /interface, /network-instance and /system lldp for a device
    whose running config is `tree`: everything up, every planned session established."""
    interfaces = copy.deepcopy(tree.get("interface", []))
    for iface in interfaces:
        iface["oper-state"] = "up"
        if str(iface["name"]).startswith("ethernet"):
            iface["ethernet"] = {"port-speed": speed}
        for sub in iface.get("subinterface", []):
            sub["oper-state"] = "up"
    lldp: list[Json] = []
    for name, planned in sorted(device.interfaces.items()):
        if planned.peer is not None and planned.parent is None and "." not in name \
                and not name.startswith(("irb", "system")):
            chassis = f"1A:2B:3C:00:00:{len(lldp):02X}"
            lldp.append({"name": name, "oper-state": "up", "neighbor": [{
                "id": chassis, "first-message": "2025-11-24T15:00:00.000Z",
                "last-update": LLDP_HEARD, "system-name": planned.peer.device,
                "chassis-id": chassis, "chassis-id-type": "MAC_ADDRESS",
                "port-id": planned.peer.port, "port-id-type": "INTERFACE_NAME",
                "port-description": planned.peer.port}]})
    instances = []
    for ni in copy.deepcopy(tree.get("network-instance", [])):
        ni["oper-state"] = "up"
        bgp = (ni.get("protocols") or {}).get("bgp")
        if bgp is not None:
            planned_bgp = device.bgp[ni["name"]]
            neighbors = []
            dynamic = {str(d["interface-name"]) for d in (bgp.get("dynamic-neighbors") or {})
                       .get("interface", [])}
            for number, (_, peer) in enumerate(sorted(planned_bgp.peers.items()), 1):
                where = str(peer.interface)
                # the subinterface the session runs on, as the render put it in dynamic-neighbors
                scope = next((d for d in sorted(dynamic) if d in (where, f"{where}.0")),
                             None) or next(
                    (d for d in sorted(dynamic) if d.startswith("irb1.")
                     and f"{where}.0" in _native_members(tree, d)), f"{where}.0")
                address = peer.address or f"fe80::1a2b:3cff:fe00:{number:x}%{scope}"
                neighbors.append({
                    "peer-address": address, "peer-as": peer.remote_asn,
                    "session-state": "established", "peer-group": "ff-fabric",
                    **({"description": peer.peer_device} if peer.address else {}),
                    "afi-safi": [{"afi-safi-name": "srl_nokia-common:ipv4-unicast",
                                  "received-routes": 3, "active-routes": 3}]})
            bgp["neighbor"] = neighbors
            bgp.pop("dynamic-neighbors", None)
            ni["protocols"] = {"srl_nokia-bgp:bgp": bgp}
            ni["route-table"] = {"ipv4-unicast": {"route": []}}
        ni["type"] = f"srl_nokia-network-instance:{ni['type']}"
        instances.append(ni)
    # the factory's management instance, holding mgmt0.0: never a tenant's VRF
    instances.append({"name": "mgmt", "type": "srl_nokia-network-instance:ip-vrf",
                      "admin-state": "enable", "oper-state": "up",
                      "interface": [{"name": "mgmt0.0"}],
                      "route-table": {"ipv4-unicast": {"route": [
                          {"ipv4-prefix": "0.0.0.0/0", "id": 0,
                           "route-type": "srl_nokia-common:static", "active": True}]}}})
    bindings = []
    for binding in copy.deepcopy((tree.get("qos") or {}).get("interfaces", {}).get("interface",
                                                                                   [])):
        if "pfc" in binding:
            binding["pfc"]["statistics"] = {"total-pfc-pause-frames-received": 0,
                                            "total-pfc-pause-frames-generated": 0}
        for queue in (binding.get("output") or {}).get("queues", {}).get("queue", []):
            queue["queue-statistics"] = {"aggregate-statistics": {"ecn-marked-packets": 0}}
        bindings.append(binding)
    return {"info from state /interface": {"srl_nokia-interfaces:interface": interfaces},
            "info from state /qos interfaces": {"srl_nokia-qos:qos": {
                "interfaces": {"interface": bindings}}},
            "info from state /network-instance": {
                "srl_nokia-network-instance:network-instance": instances},
            "info from state /system lldp": {"system": {"lldp": {"interface": lldp}}},
            # the box's clock: every neighbour was last heard LLDP_AGE seconds before it
            "info from state /system information": {"srl_nokia-system:system": {
                "srl_nokia-system-info:information": {
                    "description": "SRLinux-v25.3.1-128-g4e5c4a6 leaf1 7220 IXR-H4",
                    "current-datetime": CLOCK_NOW, "last-booted": "2025-11-20T08:00:00.000Z",
                    "version": "v25.3.1-128-g4e5c4a6"}}}}
