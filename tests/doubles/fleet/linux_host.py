"""A simulated GPU host of the fleet: what its shell prints for the linux_host driver.

The config it holds (`HostConfig`: NICs, addresses, routes, rules, per-NIC sysctls, the
virtual NIC's lossless settings) is printed in the shapes iproute2, nftables and /proc print
on the embedded lab's hosts (tests/fixtures/napalm/linux_host, captured there). Probes are
answered from the plan: a target answers when it is a NIC or gateway of the same tenant and
plane and the echo fits the smaller MTU of the two ends (with don't-fragment), which is what
a converged fabric does; faults make a device answer otherwise.
"""

from __future__ import annotations

import json
import re
import shlex
import zlib
from dataclasses import dataclass
from typing import Any

from flatfab.model.state import DEFAULT_VRF, DeviceState, FabricState, IfKind, Role
from flatfab.platforms.linux_host import config as cfg
from flatfab.platforms.linux_host import nccl_conf, nic_qos, rdma_state, rdma_sysfs
from flatfab.platforms.linux_host.driver import (
    IBV_DEVINFO_READ,
    RDMA_LINK_READ,
    RDMA_SYSFS_READ,
    ROUTE_READ,
    RULE_READ,
    SYSCTL_READ,
    LinuxHostDriver,
)
from flatfab.platforms.registry import get as get_platform
from tests.doubles.fleet.frr import mac
from tests.doubles.fleet.shell import STATE_DIR, Answer, Clock, ShellDevice
from tests.doubles.frr import Reply

MGMT_ADDRESS = "192.0.2.2/24"
ICMP_IP = 28  # IPv4 + ICMP headers
PROBE_LINE = re.compile(r'^python3 -c "\$ECHO_PROBE" (?P<mark>\S+) (?P<count>\d+) \S+ '
                        r"(?P<targets>.*)$", re.M)


@dataclass(frozen=True)
class Endpoint:
    """An address in the fabric a probe can reach: whose, in which tenant and plane, MTU."""

    device: str
    tenant: str
    plane: int | None
    mtu: int


def endpoints(fabric: FabricState) -> dict[str, Endpoint]:
    """Every host NIC and leaf gateway address of `fabric`; a NIC is in its leaf's plane."""
    found: dict[str, Endpoint] = {}
    for device in fabric.devices.values():
        for iface in device.interfaces.values():
            if device.role is Role.HOST and iface.kind is IfKind.NIC:
                tenant = device.tenant or DEFAULT_VRF
                leaf = fabric.devices.get(iface.peer.device) if iface.peer else None
                plane = leaf.plane if leaf is not None else None
            elif device.role is Role.LEAF and iface.kind in (IfKind.BRIDGE, IfKind.HOST_PORT):
                tenant, plane = iface.vrf, device.plane
            else:
                continue
            for address in iface.addresses:
                found[address.split("/")[0]] = Endpoint(device.name, tenant, plane,
                                                        iface.mtu or 1500)
    return found


class HostDevice(ShellDevice[cfg.HostConfig]):
    """One Linux host of the fleet (module docstring)."""

    def __init__(self, planned: DeviceState, reach: dict[str, Endpoint], clock: Clock) -> None:
        driver = LinuxHostDriver(planned.name, "fleet", None,
                                 optional_args={"mgmt_interfaces": ["eth0"]})
        super().__init__(planned.name, driver, get_platform("linux_host").render(planned),
                         "", clock)
        self.planned, self.reach = planned, reach
        self.nics = sorted(n for n, i in planned.interfaces.items() if i.kind is IfKind.NIC)

    def factory_state(self) -> cfg.HostConfig:
        # every per-NIC sysctl at the kernel's default, 0, before flatfab sets any
        values = {cfg.sysctl_key(nic, key): "0" for nic in self.nics for key in cfg.NIC_SYSCTLS}
        return cfg.HostConfig(nics={n: cfg.Nic(name=n) for n in self.nics},
                              sysctl_values=values)

    def emit(self, state: cfg.HostConfig) -> dict[str, Answer]:
        links = [_link(1, "lo", 65536, True, loopback=True),
                 _link(2, "eth0", 1500, True, address=mac(self.name, "eth0")),
                 *(_link(i, nic.name, nic.mtu, nic.up, address=mac(self.name, nic.name))
                   for i, nic in enumerate(state.nics.values(), 3))]
        addresses = {"lo": ["127.0.0.1/8"], "eth0": [MGMT_ADDRESS],
                     **{n: list(nic.addresses) for n, nic in state.nics.items()}}
        addrs = [link | {"addr_info": [
            {"family": "inet", "local": a.split("/")[0], "prefixlen": int(a.split("/")[1]),
             "scope": "host" if a.startswith("127.") else "global", "label": link["ifname"]}
            for a in addresses.get(link["ifname"], [])]} for link in links]
        qos_file = "".join(state.qos[n].line(n) + "\n" for n in sorted(state.qos))
        values = {**state.sysctl_values, **state.sysctls}
        listing = "".join(
            f"/proc/sys/net/ipv4/conf/{nic}/{key}:{values.get(cfg.sysctl_key(nic, key), '0')}\n"
            for key in cfg.NIC_SYSCTLS for nic in sorted({"all", "default", "lo", "eth0",
                                                          *self.nics}))
        link_json = _json(links)
        return {
            "ip -j -d link show": link_json, "ip -j link show": link_json,
            "ip -j addr show": _json(addrs), "ip -j route show": _json([]),
            ROUTE_READ: _json(_routes(state)), RULE_READ: _json(_rules(state)),
            f"cat {STATE_DIR}/nic/qos.conf 2>/dev/null || true": Reply(qos_file),
            f"nft -j list table inet {nic_qos.NFT_TABLE} 2>/dev/null || true":
                Reply(json.dumps(nft_table(state.qos)) + "\n" if state.qos else ""),
            SYSCTL_READ: Reply(listing),
            f"cat {STATE_DIR}/nic/sysctl.conf 2>/dev/null || true":
                Reply(cfg.format_managed(state.sysctl_before)),
            # flatfab's nccl.conf where the plan manages one (the lab backend's path); no RDMA
            # device, as on the lab's hosts
            rdma_state.file_command(f"{STATE_DIR}/nccl.conf"): Reply(
                nccl_conf.file_text(state.nccl, {}) if state.nccl is not None
                else rdma_state.NO_FILE + "\n"),
            RDMA_SYSFS_READ: Reply(json.dumps(rdma_sysfs.main("/nonexistent/infiniband")) + "\n"),
            RDMA_LINK_READ: Reply("[]\n"),
            IBV_DEVINFO_READ: Reply(rdma_state.MISSING + "\n"),
            "hostname": Reply(f"{self.name}\n"),
            "cat /proc/uptime": Reply("86400.00 170000.00\n"),
            "uname -sr": Reply("Linux 6.1.0-fleet\n"), "uname -m": Reply("x86_64\n"),
            "cat /etc/machine-id 2>/dev/null || true":
                Reply(f"{zlib.crc32(self.name.encode()):032x}\n"),
        }

    def script(self, script: str) -> Reply | None:
        found = PROBE_LINE.search(script) if script.startswith("ECHO_PROBE=") else None
        return None if found is None else self._probe(found["mark"], int(found["count"]),
                                                      shlex.split(found["targets"]))

    def _probe(self, mark: str, count: int, targets: list[str]) -> Reply:
        """echo_probe.py's lines: every target answers as the converged fabric would."""
        lines = []
        for index, target in enumerate(targets):
            address, payload, df, *source = target.split("/")
            # with a source the echo leaves by that NIC (its rule); else by the main table's
            # default route, the first NIC's
            here = self.reach.get(source[0]) if source else None
            if here is None and self.nics:
                first = self.planned.interfaces[self.nics[0]].addresses
                here = self.reach.get(first[0].split("/")[0]) if first else None
            far = self.reach.get(address)
            answered = here is not None and far is not None and \
                (far.tenant, far.plane) == (here.tenant, here.plane) and \
                (df != "1" or int(payload) + ICMP_IP <= min(here.mtu, far.mtu))
            got = count if answered else 0
            nic = self._nic_of(source[0]) if source else ""
            lines.append(f"{mark} {index} {0 if answered else 1} {count} packets transmitted, "
                         f"{got} received, {100 - 100 * got // count}% packet loss, "
                         f"{int(payload) + ICMP_IP} B {'DF' if df == '1' else 'no DF'}"
                         + (f", dev {nic}" if source else ""))
        return Reply("\n".join(lines) + "\n")

    def _nic_of(self, address: str) -> str:
        return next((n for n, i in self.planned.interfaces.items()
                     if any(a.split("/")[0] == address for a in i.addresses)), "eth0")


def _json(data: Any) -> Reply:
    return Reply(json.dumps(data, separators=(",", ":")) + "\n")


def _link(index: int, name: str, mtu: int, up: bool, *, address: str = "00:00:00:00:00:00",
          loopback: bool = False) -> dict[str, Any]:
    kind = ["LOOPBACK"] if loopback else ["BROADCAST", "MULTICAST"]
    return {"ifindex": index, "ifname": name,
            "flags": [*kind, *(["UP", "LOWER_UP"] if up else [])], "mtu": mtu,
            "operstate": ("UNKNOWN" if loopback else "UP") if up else "DOWN",
            "link_type": "loopback" if loopback else "ether", "address": address}


def _routes(state: cfg.HostConfig) -> list[dict[str, Any]]:
    """`ip -4 -j route show table all`: flatfab's routes, and the kernel's connected ones."""
    items: list[dict[str, Any]] = []
    for route in state.routes:
        item: dict[str, Any] = {"dst": "default" if route.prefix == "0.0.0.0/0" else
                                route.prefix}
        if route.via is not None:
            item["gateway"] = route.via
        item["dev"] = route.nic
        if route.table is not None:
            item["table"] = str(route.table)
        if route.via is None:
            item["scope"] = "link"
        if route.source is not None:
            item["prefsrc"] = route.source
        items.append(item | {"flags": []})
    for nic in state.nics.values():
        for address in nic.addresses:
            network = str(cfg._subnet(address))
            items.append({"dst": network, "dev": nic.name, "protocol": "kernel",
                          "scope": "link", "prefsrc": address.split("/")[0], "flags": []})
    return items


def _rules(state: cfg.HostConfig) -> list[dict[str, Any]]:
    rules: list[dict[str, Any]] = [{"priority": 0, "src": "all", "table": "local"}]
    rules += [{"priority": r.priority, "src": r.source, "table": str(r.table)}
              for r in sorted(state.rules)]
    return [*rules, {"priority": 32766, "src": "all", "table": "main"},
            {"priority": 32767, "src": "all", "table": "default"}]


def _match(left: dict[str, Any], right: Any) -> dict[str, Any]:
    return {"match": {"op": "==", "left": left, "right": right}}


def nft_table(qos: dict[str, nic_qos.NicSettings]) -> dict[str, Any]:
    """`nft -j list table inet flatfab` once nic_qos.nft_ruleset(qos) is loaded (counters 0)."""
    udp = _match({"payload": {"protocol": "udp", "field": "dport"}}, nic_qos.ROCE_PORT)
    cnp = _match({"payload": {"base": "th", "offset": 64, "len": 8}}, nic_qos.CNP_OPCODE)

    def mangle(field: str, value: int) -> dict[str, Any]:
        return {"mangle": {"key": {"payload": {"protocol": "ip", "field": field}},
                           "value": value}}

    def rule(chain: str, handle: int, expr: list[dict[str, Any]],
             comment: str | None = None) -> dict[str, Any]:
        body = {"family": "inet", "table": nic_qos.NFT_TABLE, "chain": chain, "handle": handle}
        return {"rule": body | ({"comment": comment} if comment else {}) | {"expr": expr}}

    items: list[dict[str, Any]] = [
        {"metainfo": {"version": "1.0.6", "release_name": "Lester Gooch #5",
                      "json_schema_version": 1}},
        {"table": {"family": "inet", "name": nic_qos.NFT_TABLE, "handle": 2}}]
    handle = 10
    zero = {"counter": {"packets": 0, "bytes": 0}}
    for nic, s in sorted(qos.items()):
        out = _match({"meta": {"key": "oifname"}}, nic)
        into = _match({"meta": {"key": "iifname"}}, nic)
        items += [
            rule(nic_qos.NFT_CHAIN, handle, [out, udp, cnp, mangle("dscp", s.cnp_dscp),
                                             {"accept": None}]),
            rule(nic_qos.NFT_CHAIN, handle + 1, [out, udp, mangle("dscp", s.tos >> 2),
                                                 mangle("ecn", s.tos & 3)]),
            rule(nic_qos.NFT_COUNT_IN, handle + 2, [into, udp, cnp, zero],
                 f"{nic} {nic_qos.COUNT_CNP_RX}"),
            rule(nic_qos.NFT_COUNT_IN, handle + 3,
                 [into, udp, _match({"payload": {"protocol": "ip", "field": "ecn"}}, "ce"), zero],
                 f"{nic} {nic_qos.COUNT_CE_RX}"),
            rule(nic_qos.NFT_COUNT_OUT, handle + 4, [out, udp, cnp, zero],
                 f"{nic} {nic_qos.COUNT_CNP_TX}")]
        handle += 5
    return {"nftables": items}
