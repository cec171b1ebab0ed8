"""A simulated Linux + FRR switch of the fleet: what its shell prints for the frr driver.

The config the device holds (`FrrState`: links, frr.conf, virtual ASIC and kernel queue rows)
is printed the way the embedded lab prints it (shapes of tests/fixtures/napalm/frr, captured
on the lab): `ip -j -d link show` per VRF namespace from the links, `show running-config`
from frr.conf, the virtual ASIC file and `tc` of each queued link from the qos section. What
runs (sessions, routes, LLDP, addresses) comes from the plan of a converged fabric
(tests/doubles/rib.py, tests/doubles/frr_json.py), whatever the config: the fleet models a
fabric that works, and its faults (tests/doubles/fleet/faults.py) break it on purpose.
"""

from __future__ import annotations

import json
import shlex
import zlib
from collections.abc import Callable
from functools import partial
from typing import Any

from flatfab.model.state import DEFAULT_VRF, DeviceState, IfKind
from flatfab.platforms import configdb
from flatfab.platforms.frr import ecmp, kernel_qos
from flatfab.platforms.frr import links as links_mod
from flatfab.platforms.frr.driver import ASIC_FILE, LLDPCLI, FrrDriver, FrrState
from flatfab.platforms.registry import get as get_platform
from tests.doubles.fleet.shell import STATE_DIR, Answer, Clock, ShellDevice
from tests.doubles.frr import Reply
from tests.doubles.frr_json import RouteText, bgp_summary
from tests.doubles.rib import FabricRib

FACTORY_FRR = ("frr defaults datacenter\nhostname {name}\nlog file /var/log/frr/frr.log "
               "informational\nservice integrated-vtysh-config\n!\nend\n")
# as the lab's switches boot (policy 1: the 5-tuple for IPv4) on Linux 6.1 (the fleet says
# `on Linux(6.1)`): no seed sysctl
FACTORY_HASHING = ecmp.Hashing(ecmp.Family(1), ecmp.Family(0), None)
HEADER = "Building configuration...\n\nCurrent configuration:\n!\nfrr version 8.4.4\n"
LLDP_AGE = "0 day, 00:10:02"


def mac(name: str, port: str) -> str:
    digest = sum(ord(c) * (i + 7) for i, c in enumerate(f"{name}/{port}"))
    return "02:" + ":".join(f"{(digest >> s) & 0xFF:02x}" for s in (32, 24, 16, 8, 0))


def _dump(data: Any) -> Reply:
    return Reply(json.dumps(data, separators=(",", ":")) + "\n")


class FrrDevice(ShellDevice[FrrState]):
    """One frr switch of the fleet (module docstring)."""

    def __init__(self, planned: DeviceState, rib: FabricRib, clock: Clock,
                 texts: RouteText | None = None) -> None:
        driver = FrrDriver(planned.name, "fleet", None, optional_args={
            "mgmt_interfaces": ["eth0"], "read_only": False})
        super().__init__(planned.name, driver, get_platform("frr").render(planned),
                         FACTORY_FRR.format(name=planned.name), clock)
        self.planned, self.rib = planned, rib
        self.texts = texts or RouteText()  # the fleet shares one: entries written once
        # the ports the device has whatever its config: every planned link but bridges
        self.ports = [n for n, i in planned.interfaces.items()
                      if i.kind not in (IfKind.BRIDGE, IfKind.LOOPBACK)]

    def factory_state(self) -> FrrState:
        hashing = dict.fromkeys([DEFAULT_VRF, *sorted(self.planned.vrfs)], FACTORY_HASHING)
        return FrrState(links={n: links_mod.LinkSpec(name=n) for n in self.ports},
                        frr=FACTORY_FRR.format(name=self.name),
                        ecmp=ecmp.format_state(hashing), hashing=hashing)

    # ---- what the device prints --------------------------------------------------------

    def emit(self, state: FrrState) -> dict[str, Answer]:
        planned = self.planned
        namespaces = sorted(planned.vrfs)
        out: dict[str, Answer] = {
            "ip netns list": Reply("".join(f"{ns} (id: {i})\n"
                                           for i, ns in enumerate(reversed(namespaces), 1))),
            "vtysh -c 'show running-config'": Reply(HEADER + state.frr),
            "vtysh -c 'show version'": Reply(f"FRRouting 8.4.4 ({self.name}) on Linux(6.1).\n"),
            "hostname": Reply(f"{self.name}\n"),
            "hostname -f 2>/dev/null || hostname": Reply(f"{self.name}\n"),
            "cat /proc/uptime": Reply("86400.00 170000.00\n"),
            "cat /etc/machine-id 2>/dev/null || true":
                Reply(f"{zlib.crc32(self.name.encode()):032x}\n"),
            "uname -m": Reply("x86_64\n"),
            # FRR's own dry-run parser accepts what the plan renders
            "f=$(mktemp) && cat > $f && vtysh -C -f $f; rc=$?; rm -f $f; exit $rc": Reply(),
            "vtysh -c 'show bgp vrf all summary json'":
                partial(self._bgp_summary),
            f"{LLDPCLI} -f json show neighbors": partial(self._lldp),
        }
        links = self._links(state)
        for ns in [DEFAULT_VRF, *namespaces]:
            ip = "ip" if ns == DEFAULT_VRF else f"ip -n {ns}"
            out[f"{ip} -j -d link show"] = _dump(links.get(ns, []))
            out[f"{ip} -j -d addr show"] = _dump(self._addresses(links.get(ns, [])))
            out[f"vtysh -c {shlex.quote(f'show ip route vrf {ns} json')}"] = partial(
                self._routes, ns)
        # every VRF's table and the BGP summary from one vtysh, as the driver's read_ahead asks
        every = [DEFAULT_VRF, *namespaces]
        out["vtysh " + " ".join(f"-c {shlex.quote(f'show ip route vrf {ns} json')}"
                                for ns in every)
            + " -c 'show bgp vrf all summary json'"] = partial(self._all_routes, every)
        out.update(self._qos(state))
        for ns in every:
            out[ecmp.readback_command(ns)] = Reply(_hashing_text(
                state.hashing.get(ns, FACTORY_HASHING)))
        return out

    def _links(self, state: FrrState) -> dict[str, list[dict[str, Any]]]:
        """Namespace -> `ip -j -d link show` items."""
        per_ns: dict[str, list[dict[str, Any]]] = {DEFAULT_VRF: [
            {"ifindex": 2, "ifname": "eth0", "flags": ["BROADCAST", "MULTICAST", "UP",
                                                       "LOWER_UP"], "mtu": 1500,
             "operstate": "UP", "linkinfo": {"info_kind": "veth"},
             "address": mac(self.name, "eth0")}]}
        kernel = (configdb.load(state.qos) if state.qos else {}).get(kernel_qos.KERNEL_TABLE,
                                                                    {})
        specs = {n: state.links.get(n, links_mod.LinkSpec(name=n)) for n in self.ports}
        specs.update({n: s for n, s in state.links.items() if s.bridge})
        for index, spec in enumerate(specs.values(), 3):
            flags = ["BROADCAST", "MULTICAST", *(["UP", "LOWER_UP"] if spec.up else [])]
            item: dict[str, Any] = {
                "ifindex": index, "ifname": spec.name, "flags": flags, "mtu": spec.mtu,
                "qdisc": "htb" if spec.name in kernel else "noqueue",
                "operstate": "UP" if spec.up else "DOWN",
                "linkinfo": {"info_kind": "bridge" if spec.bridge else "veth"},
                "address": mac(self.name, spec.name)}
            if spec.master:
                item["master"] = spec.master
            per_ns.setdefault(spec.vrf, []).append(item)
        for ns, items in per_ns.items():
            addresses = [self.planned.loopback] if ns == DEFAULT_VRF and \
                self.planned.loopback else []
            items.insert(0, {"ifindex": 1, "ifname": "lo", "flags": ["LOOPBACK", "UP",
                                                                      "LOWER_UP"],
                             "mtu": 65536, "operstate": "UNKNOWN",
                             "address": "00:00:00:00:00:00", "_lo": addresses})
        return per_ns

    def _addresses(self, links: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """`ip -j -d addr show` of one namespace: the plan's addresses (FRR sets them)."""
        items = []
        for link in links:
            name = link["ifname"]
            if name == "lo":
                found = ["127.0.0.1/8", *link["_lo"]]
            elif name == "eth0":
                found = ["192.0.2.1/24"]
            else:
                iface = self.planned.interfaces.get(name)
                found = list(iface.addresses) if iface is not None else []
            info = [{"family": "inet", "local": a.split("/")[0], "prefixlen": int(a.split("/")[1]),
                     "scope": "host" if a.startswith("127.") else "global"} for a in found]
            items.append({k: v for k, v in link.items() if k != "_lo"} | {"addr_info": info})
        return items

    def _bgp_summary(self) -> Reply:
        return _dump(bgp_summary(self.planned, self.rib.of(self.name)))

    def _routes(self, vrf: str) -> Reply:
        return Reply(self.texts.table(self.planned, self.rib.of(self.name), vrf))

    def _all_routes(self, vrfs: list[str]) -> Reply:
        # the summary as the device answers it alone: with its faults (a session down)
        summary = self.answer("vtysh -c 'show bgp vrf all summary json'").stdout
        return Reply("".join(self._routes(vrf).stdout for vrf in vrfs) + summary)

    def _lldp(self) -> Reply:
        entries = []
        for iface in self.planned.interfaces.values():
            if iface.peer is None or iface.parent is not None or iface.kind is IfKind.BRIDGE:
                continue
            entries.append({iface.name: {
                "via": "LLDP", "rid": "1", "age": LLDP_AGE,
                "chassis": {iface.peer.device: {
                    "id": {"type": "mac", "value": mac(iface.peer.device, "eth0")},
                    "descr": "Debian GNU/Linux 12 (bookworm)"}},
                "port": {"id": {"type": "ifname", "value": iface.peer.port},
                         "descr": iface.peer.port}}})
        return _dump({"lldp": {"interface": entries}} if entries else {"lldp": {}})

    def _qos(self, state: FrrState) -> dict[str, Answer]:
        """The virtual ASIC file and every link's `tc` (what the driver's qos reads ask)."""
        db = configdb.load(state.qos) if state.qos else {}
        rows = db.pop(kernel_qos.KERNEL_TABLE, {})
        out: dict[str, Answer] = {
            f"cat {shlex.quote(f'{STATE_DIR}/{ASIC_FILE}')} 2>/dev/null || true":
                Reply(configdb.dump(db) if db else "")}
        links = {n: state.links.get(n, links_mod.LinkSpec(name=n)) for n in self.ports}
        ports = {name: spec.vrf for name, spec in links.items() if not spec.bridge}
        commands = kernel_qos.readback_commands(ports)
        for name in sorted(ports):
            qdisc, filters, classes = tc_show(rows.get(name))
            out[commands[f"qdisc {name}"]] = Reply(qdisc)
            out[commands[f"filter {name}"]] = Reply(filters)
            out[commands[f"class {name}"]] = Reply(classes)
        return out


def _hashing_text(hashing: ecmp.Hashing) -> str:
    """What the readback prints for a namespace hashing so (fields print 7 unless policy 3)."""
    lines = []
    for family in ecmp.FAMILIES:
        fam: ecmp.Family = getattr(hashing, family)
        lines += [f"{family}/fib_multipath_hash_policy:{fam.policy}",
                  f"{family}/fib_multipath_hash_fields:"
                  f"{fam.fields if fam.policy == ecmp.CUSTOM else 7}"]
    if hashing.seed is not None:
        lines.append(f"ipv4/fib_multipath_hash_seed:{hashing.seed}")
    return "".join(f"{line}\n" for line in lines)


def tc_show(row: dict[str, str] | None,
            counters: Callable[[int], dict[str, int]] | None = None) -> tuple[str, str, str]:
    """(`tc -j -s qdisc show`, `tc -j filter show`, `tc class show`) of a link whose kernel
    queues are `row` (the qos section's FLATFAB_KERNEL row; None: no flatfab queues), as
    kernel_qos.tc_ops builds them. Counters are zero unless `counters` gives a class's."""
    if row is None:
        return ('[{"kind":"noqueue","handle":"0:","root":true,"refcnt":2,"options":{},'
                '"bytes":0,"packets":0,"drops":0,"overlimits":0,"requeues":0,"backlog":0,'
                '"qlen":0}]\n', "[]\n", "")
    speed = int(row["speed_mbps"]) or 100_000
    strict = {int(t) for t in row["strict"].split(",") if t}
    weights = _pairs(row["weights"])
    limits = _pairs(row["queue_bytes"])
    qdiscs: list[dict[str, Any]] = [{
        "kind": "htb", "handle": "1:", "root": True, "refcnt": 3,
        "options": {"r2q": 1000000, "default": f"0x1{row['default_tc']}",
                    "direct_packets_stat": 0, "direct_qlen": 1000},
        "bytes": 0, "packets": 0, "drops": 0, "overlimits": 0, "requeues": 0, "backlog": 0,
        "qlen": 0}]
    lines = [f"class htb 1:1 root rate {speed}Mbit ceil {speed}Mbit burst 1Mb cburst 1Mb "]
    for tc in kernel_qos.TRAFFIC_CLASSES:
        seen = counters(tc) if counters else {}
        qdiscs.append({"kind": "bfifo", "handle": f"1{tc}:", "parent": f"1:1{tc}",
                       "options": {"limit": limits.get(tc, 1_000_000)},
                       "bytes": seen.get("bytes", 0), "packets": seen.get("packets", 0),
                       "drops": seen.get("drops", 0), "overlimits": 0, "requeues": 0,
                       "backlog": 0, "qlen": 0})
        rate = 1 if tc in strict else max(speed * weights.get(tc, 0) // 100, 1)
        lines.append(f"class htb 1:1{tc} parent 1:1 leaf 1{tc}: prio {0 if tc in strict else 1} "
                     f"rate {rate}Mbit ceil {speed}Mbit burst 1Mb cburst 1Mb ")
    filters: list[dict[str, Any]] = [{"parent": "1:", "protocol": "ip", "pref": 1,
                                      "kind": "u32", "chain": 0}]
    for order, (dscp, tc) in enumerate(sorted(_pairs(row["dscp_to_tc"]).items())):
        filters.append({"parent": "1:", "protocol": "ip", "pref": 1, "kind": "u32", "chain": 0,
                        "options": {"fh": f"800::{0x800 + order:x}", "order": 2048 + order,
                                    "key_ht": "800", "bkt": "0", "flowid": f"1:1{tc}",
                                    "not_in_hw": True,
                                    "match": {"value": f"{dscp << 18:x}", "mask": "fc0000",
                                              "offmask": "", "off": 0}}})
    dump = partial(json.dumps, separators=(",", ":"))
    return dump(qdiscs) + "\n", dump(filters) + "\n", "\n".join(lines) + "\n"


def _pairs(text: str) -> dict[int, int]:
    return {int(k): int(v) for k, _, v in (p.partition(":") for p in text.split(",") if p)}
