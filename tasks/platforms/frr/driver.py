"""A NAPALM driver for Linux + FRR switches, over SSH.

Config is two sections (see flatfab.platforms.frr.links): the Linux links state, applied with
iproute2, and frr.conf, applied with FRR's own frr-reload.py. Getters read vtysh JSON and
`ip -j`. Commit-confirm is a timed revert that runs on the switch itself (ShellDriver), so a
commit that cuts the management path still rolls back.

NAPALM getters (results in NAPALM's models only, checked by NAPALM's own getter tests):
get_facts, get_interfaces, get_interfaces_ip, get_network_instances, get_bgp_neighbors,
get_lldp_neighbors, get_config, is_alive; cli() runs vtysh show commands. flatfab's own
reads, not NAPALM getters: get_interface_links (VRF and bridge of each interface),
get_route_table (every VRF's RIB), get_lossless (virtual ASIC, kernel queues, counters).

optional_args: port, key_file, known_hosts, read_only, sudo, state_dir, lldp_socket,
mgmt_interfaces (list), timeout, qos_backend ("lab": tc queues and a virtual ASIC; "dcb":
dcb/tc/devlink on DCB-capable switchdev ports), devlink (the ASIC's devlink handle).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from flatfab import devicejson
from flatfab.asn import read_asn
from flatfab.platforms import configdb, lab_phy
from flatfab.platforms.frr import dcb, ecmp, kernel_qos
from flatfab.platforms.frr import links as links_mod
from flatfab.platforms.frr.collect import BGP_SUMMARY, lldp_neighbors
from flatfab.platforms.frr.ecmp import Hashing
from flatfab.platforms.linux_host import phy as host_phy
from flatfab.platforms.readback import (
    FrrTable,
    FrrTableError,
    frr_ipv4_unicast,
    frr_prefixes_received,
    frr_table,
)
from flatfab.platforms.shell_driver import CandidateError, DeviceCommandError, ShellDriver
from flatfab.transport.ssh import CommandResult

FRR_RELOAD = "/usr/lib/frr/frr-reload.py"
LLDPCLI = "/usr/sbin/lldpcli"
HEADER_RE = re.compile(r"^(Building configuration\.\.\.|Current configuration:|frr version .*)$")
READ_ONLY_VTYSH = re.compile(r"^show\s")


def normalize_frr(text: str) -> str:
    """FRR config text without the parts that differ between files and running config."""
    lines: list[str] = []
    for line in text.splitlines():
        if HEADER_RE.match(line) or line.startswith(" netns /run/netns/"):
            continue
        if not lines and line in {"", "!"}:
            continue
        lines.append(line.rstrip())
    return "\n".join(lines).strip("\n") + "\n"


ASIC_FILE = "asic/config_db.json"


def _kind(link: dict[str, Any]) -> str | None:
    info = link.get("linkinfo")
    kind = info.get("info_kind") if isinstance(info, dict) else None
    return kind if isinstance(kind, str) else None


def _int(value: Any, default: int) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return int(value) if isinstance(value, str) and value.isdigit() else default


def _address(addr: Any) -> tuple[str | None, int]:
    """(address, prefix length) of an `addr_info` entry; (None, 0) when it holds none."""
    if not isinstance(addr, dict) or addr.get("family") not in ("inet", "inet6"):
        return None, 0
    local, length = addr.get("local"), addr.get("prefixlen")
    if not isinstance(local, str) or not isinstance(length, int):
        return None, 0
    return local, length


def _vtysh(show: str) -> str:
    """One show as vtysh runs it alone (the read cache's key for it)."""
    return f"vtysh -c {shlex.quote(show)}"


def split_shows(text: str, count: int) -> tuple[list[str], str] | None:
    """`vtysh -c 'show ip route vrf A json' -c ... -c 'show bgp vrf all summary json'` ->
    the `count` route tables as vtysh prints each alone and the BGP summary (when it reads
    as a JSON object), or None where the output does not split so. vtysh pretty-prints
    each table: a nested line is indented, so a table ends at a line that is `}` (or `{}`:
    none) at its start; the summary of every VRF is not one table, it is all that follows.
    A summary that does not read (bgpd down, an error in a table before it) leaves the
    tables unsure too: then none is kept."""
    tables: list[str] = []
    start = 0
    for match in re.finditer(r"^(?:\{\}|\})$\n?", text, re.M):
        if len(tables) == count:
            break
        tables.append(text[start:match.end()])
        start = match.end()
    if len(tables) != count or any(not t.lstrip().startswith("{") for t in tables):
        return None
    rest = text[start:]
    try:
        summary = devicejson.loads(rest) if rest.strip() else None
    except ValueError:
        return None
    return (tables, rest) if isinstance(summary, dict) else None


@dataclass(frozen=True)
class FrrState:
    links: dict[str, links_mod.LinkSpec]
    frr: str
    merge_frr: str | None = None  # merge candidates are applied with `vtysh -f`
    qos: str | None = None  # canonical JSON: virtual ASIC tables + kernel queue rows
    ecmp: str | None = None  # the multipath hashing section (flatfab.platforms.frr.ecmp)
    # the hashing of each namespace (the section's values, and which kernel features exist)
    hashing: dict[str, Hashing] = field(default_factory=dict, compare=False)


def _qos_text(text: str) -> str | None:
    """Canonical qos JSON from a section; None for an empty section (no lossless state)."""
    db = configdb.load(text) if text.strip() else {}
    return configdb.dump(db) if db else None


class FrrDriver(ShellDriver[FrrState]):
    """NAPALM driver `frr` (module napalm_frr)."""

    platform = "frr"

    def __init__(self, hostname: str, username: str, password: str | None,
                 timeout: int = 60, optional_args: dict[str, Any] | None = None) -> None:
        super().__init__(hostname, username, password, timeout, optional_args)
        self.lldp_socket: str | None = self.optional_args.get("lldp_socket")
        # the embedded lab's tenant ports live in VRF namespaces, each with its own lldpd
        self.lldp_vrf_sockets: list[str] = list(self.optional_args.get("lldp_vrf_sockets", []))
        self.mgmt_interfaces: set[str] = set(self.optional_args.get("mgmt_interfaces",
                                                                    ["eth0"]))
        # "lab": tc queues + virtual ASIC; "dcb": DCB-capable switchdev ports (mlxsw)
        self.qos_backend: str = self.optional_args.get("qos_backend", "lab")
        self.devlink: str | None = self.optional_args.get("devlink")

    def _vtysh_json(self, command: str) -> Any:
        return self._json(_vtysh(command)) or {}

    def _vrf_namespaces(self) -> list[str]:
        out = self._run("ip netns list").stdout
        return sorted(line.split()[0] for line in out.splitlines() if line.strip())

    # ---- getters -----------------------------------------------------------------------

    def get_facts(self) -> dict[str, Any]:
        out = self._batch({"hostname": "hostname", "fqdn": "hostname -f 2>/dev/null || hostname",
                           "uptime": "cat /proc/uptime", "version": "vtysh -c 'show version'",
                           "serial": "cat /etc/machine-id 2>/dev/null || true",
                           "model": "uname -m"})
        # FRR 7.5 to 10.x: "FRRouting <release> (<host>)[ on Linux(<kernel>)]."
        version = next((line.strip() for line in out["version"].splitlines()
                        if line.strip().startswith("FRRouting")), "FRRouting")
        return {
            "hostname": out["hostname"].strip(),
            "fqdn": out["fqdn"].strip(),
            "vendor": "FRRouting",
            "model": f"Linux {out['model'].strip()}",
            "os_version": version,
            "serial_number": out["serial"].strip(),
            "uptime": float(out["uptime"].split()[0]) if out["uptime"].strip() else -1.0,
            "interface_list": sorted(self._ip_json("link")),
        }

    def _per_namespace(self, what: str) -> dict[str, str]:
        """`ip -j -d <what> show` in the default netns and every VRF netns, one round trip."""
        return self._batch(self._namespace_commands(what))

    def _namespace_commands(self, what: str) -> dict[str, str]:
        commands = {"default": f"ip -j -d {what} show"}
        commands.update({ns: f"ip -n {shlex.quote(ns)} -j -d {what} show"
                         for ns in self._vrf_namespaces()})
        return commands

    def _hashing_commands(self) -> dict[str, str]:
        return {ns: ecmp.readback_command(ns) for ns in ["default", *self._vrf_namespaces()]}

    def _route_commands(self) -> dict[str, str]:
        return {v: _vtysh(f"show ip route vrf {v} json")
                for v in ["default", *self._vrf_namespaces()]}

    def read_ahead(self) -> None:
        """Not a NAPALM getter: every namespace's links, addresses and routes in one round
        trip, for the getters a collect calls next to find under cached_reads(). Every VRF's
        route table and the BGP summary come from one vtysh (each vtysh costs a switch tens
        of ms of CPU), split into each as if read alone; output that does not split so is
        not kept, and route_tables and the BGP read run on their own."""
        routes = self._route_commands()
        bgp = _vtysh(BGP_SUMMARY)
        combined = "vtysh " + " ".join(c.removeprefix("vtysh ")
                                       for c in [*routes.values(), bgp])
        out = self._batch({"shows": combined,
                           **{f"{what} {key}": command
                              for what, commands in (("link", self._namespace_commands("link")),
                                                     ("addr", self._namespace_commands("addr")),
                                                     ("ecmp", self._hashing_commands()))
                              for key, command in commands.items()}})
        self._forget([combined])
        split = split_shows(out["shows"], len(routes))
        if split is None:
            return
        tables, summary = split
        if self._batched is not None:
            self._batched.update(zip(routes.values(), tables, strict=True))
        if self._ran is not None:
            self._ran[bgp] = CommandResult(bgp, summary, "", 0)

    def _ip_json(self, what: str) -> dict[str, dict[str, Any]]:
        """The items of `_per_namespace(what)` by interface name, each with its VRF."""
        result: dict[str, dict[str, Any]] = {}
        for vrf, text in self._per_namespace(what).items():
            try:
                items = devicejson.loads(text or "[]")
            except ValueError:
                raise DeviceCommandError(f"{self.hostname}: `ip -j {what}` of {vrf} is not "
                                         f"JSON: {text.strip()[:120]}") from None
            for item in items if isinstance(items, list) else []:
                name = item.get("ifname") if isinstance(item, dict) else None
                if not isinstance(name, str) or not name:
                    continue  # iproute2 always names a link; anything else is not one
                if vrf != "default" and name == "lo":
                    continue  # every VRF namespace has its own lo; the switch's is the default's
                result[name] = {**item, "vrf": vrf}
        return result

    def get_interfaces(self) -> dict[str, dict[str, Any]]:
        """NAPALM's InterfaceDict per interface (the switch's lo left out); VRF membership is
        in get_network_instances, VRF and bridge together in get_interface_links."""
        result = {}
        for name, link in self._ip_json("link").items():
            if name == "lo":
                continue
            flags = link.get("flags") or []
            # operstate UNKNOWN (lo, dummy, some virtual kinds): the carrier flag says
            result[name] = {
                "is_up": link.get("operstate") == "UP" or "LOWER_UP" in flags,
                "is_enabled": "UP" in flags,
                "description": str(link.get("ifalias", "")),
                "last_flapped": -1.0,
                "speed": float(_int(link.get("speed"), -1)),
                # NAPALM's model is an int: 0 when iproute2 prints none (get_interface_links
                # says so, and collect reads it as unknown)
                "mtu": _int(link.get("mtu"), 0),
                "mac_address": str(link.get("address", "")).upper(),
            }
        return result

    def get_interface_links(self) -> dict[str, dict[str, str]]:
        """Not a NAPALM getter: each interface's VRF ("" for the default) and the bridge it
        is a port of ("" for none), as flatfab's collect needs them (lo left out)."""
        links = self._ip_json("link")
        result: dict[str, dict[str, str]] = {}
        for name, link in links.items():
            if name == "lo":
                continue
            vrf = "" if link["vrf"] == "default" else link["vrf"]
            master = str(link.get("master", ""))
            if master and _kind(links.get(master, {})) == "vrf":
                vrf, master = master, ""  # an l3mdev VRF device (not the netns backend)
            entry = {"vrf": vrf, "master": master}
            # what iproute2 leaves out for this link, so that collect reads it as unknown
            unread = [f for f in ("mtu", "flags") if f not in link]
            if unread:
                entry["unread"] = ",".join(unread)
            result[name] = entry
        return result

    def get_network_instances(self, name: str = "") -> dict[str, dict[str, Any]]:
        """NAPALM's network instances: `default` and one L3VRF per VRF namespace, each with
        its interfaces (the switch's lo is the default's; route distinguishers: none)."""
        result: dict[str, dict[str, Any]] = {}
        for ifname, link in self._ip_json("link").items():
            vrf = link["vrf"]
            instance = result.setdefault(vrf, {
                "name": vrf, "type": "DEFAULT_INSTANCE" if vrf == "default" else "L3VRF",
                "state": {"route_distinguisher": ""}, "interfaces": {"interface": {}}})
            instance["interfaces"]["interface"][ifname] = {}
        if name:
            return {name: result[name]} if name in result else {}
        return result

    def get_interfaces_ip(self) -> dict[str, dict[str, Any]]:
        result: dict[str, dict[str, Any]] = {}
        for name, item in self._ip_json("addr").items():
            families: dict[str, Any] = {}
            for addr in item.get("addr_info") or []:
                local, length = _address(addr)
                if local is None:
                    continue  # iproute2 4.x printed lifetime-only `{}` entries; no address
                family = "ipv4" if addr["family"] == "inet" else "ipv6"
                families.setdefault(family, {})[local] = {"prefix_length": length}
            if families:
                result[name] = families
        return result

    def get_bgp_neighbors(self) -> dict[str, dict[str, Any]]:
        """Per VRF ('global' for the default); unnumbered peers are keyed by interface.

        NAPALM's PeerDict only: FRR's own peer state (Active, Connect, ...) is in
        `show bgp vrf all summary json`, which flatfab's collect reads through cli().
        """
        data = self._vtysh_json(BGP_SUMMARY)
        result: dict[str, dict[str, Any]] = {}
        for vrf_name, vrf in (data.items() if isinstance(data, dict) else []):
            unicast, _ = frr_ipv4_unicast(vrf)
            key = "global" if vrf_name == "default" else vrf_name
            peers = {}
            found = unicast.get("peers")
            for peer, info in (found.items() if isinstance(found, dict) else []):
                if not isinstance(info, dict):
                    continue
                state = str(info.get("state", ""))
                received = frr_prefixes_received(info)
                # NAPALM's model is an int; -1 (not 0) when FRR does not say
                count = -1 if received is None else received
                sent = info.get("pfxSnt")
                peers[peer] = {
                    "local_as": read_asn(unicast.get("as")) or 0,
                    "remote_as": read_asn(info.get("remoteAs")) or 0,
                    "remote_id": str(info.get("hostname", "")),
                    "is_up": state == "Established",
                    "is_enabled": "Admin" not in state,
                    "description": str(info.get("desc", "")),
                    "uptime": _int(info.get("peerUptimeMsec"), 0) // 1000,
                    "address_family": {"ipv4": {
                        "received_prefixes": count,
                        "accepted_prefixes": count,
                        "sent_prefixes": _int(sent, -1),
                    }},
                }
            result[key] = {"router_id": str(unicast.get("routerId", "")), "peers": peers}
        return result

    def get_lldp_neighbors(self) -> dict[str, list[dict[str, str]]]:
        return {port: [{"hostname": n["hostname"], "port": n["port"]} for n in found]
                for port, found in self.lldp_entries().items()}

    def lldp_entries(self) -> dict[str, list[dict[str, str]]]:
        """Not a NAPALM getter: get_lldp_neighbors with each entry's `ttl`, the hold time
        the neighbour sent (lldpd states no time of the last update, so this is how long a
        moved cable's entry can outlive it)."""
        socket = f" -u {shlex.quote(self.lldp_socket)}" if self.lldp_socket else ""
        # lldpd 1.0.x: one neighbour is an object, several a list; json0 lists everything
        found = lldp_neighbors(self._json(f"{LLDPCLI}{socket} -f json show neighbors") or {},
                               ttl=True)
        for path in self.lldp_vrf_sockets:
            more = self._json(f"{LLDPCLI} -u {shlex.quote(path)} -f json show neighbors")
            found.update(lldp_neighbors(more or {}, ttl=True))
        return found

    def get_route_table(self) -> dict[str, dict[str, Any]]:
        """Not a NAPALM getter: the IPv4 RIB of every VRF, one round trip.

        (FRR 8.4 prints `show ip route vrf all json` as several JSON documents, so each VRF
        is asked for on its own.)
        """
        result: dict[str, dict[str, Any]] = {}
        for vrf, text in self._route_texts():
            try:
                result[vrf] = devicejson.loads(text or "{}")
            except ValueError:
                raise self._not_a_table(vrf, f"not JSON: {text.strip()[:120]}") from None
        return result

    def route_tables(self) -> Iterator[tuple[str, FrrTable]]:
        """Not a NAPALM getter: get_route_table a VRF at a time, only the fields a collect
        reads, each decoded when reached and let go of after (a thousand-leaf fabric's RIB is
        megabytes a VRF; a collect of twenty switches at once would hold them all)."""
        for vrf, text in self._route_texts():
            try:
                yield vrf, frr_table(text)
            except FrrTableError as exc:
                raise self._not_a_table(vrf, f"not FRR's route table: {exc}") from None

    def _route_texts(self) -> Iterator[tuple[str, str]]:
        commands = self._route_commands()
        out = self._batch(commands)
        self._forget(commands.values())
        for vrf in list(out):
            yield vrf, out.pop(vrf)

    def _not_a_table(self, vrf: str, why: str) -> DeviceCommandError:
        return DeviceCommandError(f"{self.hostname}: route table of VRF {vrf} is {why}")

    def cli(self, commands: list[str], encoding: str = "text") -> dict[str, Any]:
        """vtysh `show` commands only: this entry point never changes the device."""
        result: dict[str, Any] = {}
        for command in commands:
            if not READ_ONLY_VTYSH.match(command) or any(c in command for c in "\n\r;"):
                raise DeviceCommandError(f"{self.hostname}: cli() runs vtysh show commands only: "
                               f"{command!r}")
            if encoding == "json":
                result[command] = self._vtysh_json(command)
            else:
                result[command] = self._run(_vtysh(command)).stdout
        return result

    # ---- configuration (ShellDriver hooks) ------------------------------------------

    def _read_state(self) -> FrrState:
        links = links_mod.from_ip_json(self._per_namespace("link"), self.mgmt_interfaces)
        frr = normalize_frr(self._run("vtysh -c 'show running-config'").stdout)
        db, _counters = self._read_qos(links)
        hashing = self.get_hashing()
        return FrrState(links=links, frr=frr, qos=configdb.dump(db) if db else None,
                        ecmp=ecmp.format_state(hashing), hashing=hashing)

    def get_hashing(self) -> dict[str, ecmp.Hashing]:
        """Not a NAPALM getter: the kernel's multipath hashing in the switch's namespace
        and each VRF's, in one round trip."""
        out = self._batch(self._hashing_commands())
        try:
            return {ns: ecmp.parse_readback(text, ns) for ns, text in out.items()}
        except ecmp.EcmpError as exc:
            raise DeviceCommandError(f"{self.hostname}: multipath hashing: {exc}") from None

    def _read_qos(self, links: dict[str, links_mod.LinkSpec]
                  ) -> tuple[configdb.ConfigDb, dict[str, dict[int, dict[str, int]]]]:
        """The virtual ASIC file with its kernel table replaced by what tc really holds."""
        path = shlex.quote(f"{self.state_dir}/{ASIC_FILE}")
        ports = ({name: spec.vrf for name, spec in links.items() if not spec.bridge}
                 if self.qos_backend == "lab" else {})  # the kernel rows are the lab's
        out = self._batch({"asic": f"cat {path} 2>/dev/null || true",
                           **kernel_qos.readback_commands(ports)})
        try:
            db = configdb.load(out["asic"]) if out["asic"].strip() else {}
            rows: dict[str, dict[str, str]] = {}
            counters: dict[str, dict[int, dict[str, int]]] = {}
            for name, vrf in sorted(ports.items()):
                row, seen = kernel_qos.parse_link(name, vrf, out[f"qdisc {name}"],
                                                  out[f"filter {name}"], out[f"class {name}"])
                if row is not None:
                    rows[name] = row
                    counters[name] = seen
        except (configdb.ConfigDbError, kernel_qos.KernelQosError) as exc:
            raise DeviceCommandError(f"{self.hostname}: lossless state: {exc}") from None
        db.pop(kernel_qos.KERNEL_TABLE, None)
        if rows:
            db[kernel_qos.KERNEL_TABLE] = rows
        return db, counters

    def get_lossless(self) -> dict[str, Any]:
        """Not a NAPALM getter: the virtual ASIC tables, kernel queue rows and counters; with
        `qos_backend: dcb` the stored tables and what each port's hardware holds (`dcb`)."""
        links = links_mod.from_ip_json(self._per_namespace("link"), self.mgmt_interfaces)
        if self.qos_backend == "dcb":
            return self._read_dcb(links)
        db, counters = self._read_qos(links)
        kernel = db.pop(kernel_qos.KERNEL_TABLE, {})
        return {"config_db": db, "kernel": kernel, "counters": counters}

    def get_physical(self) -> dict[str, Any]:
        """Not a NAPALM getter: port -> its physical layer (flatfab.model.physical, as JSON):
        with `qos_backend: dcb` (switchdev hardware), ethtool and sysfs for each front-panel
        port (linux_host/phy.py); in the lab, the modules the lab's phy.json states (virtual),
        {} where none is."""
        if self.qos_backend == "dcb":
            links = links_mod.from_ip_json(self._per_namespace("link"), self.mgmt_interfaces)
            return host_phy.read_nics(self._batch, [name for name, spec in links.items()
                                                    if not spec.bridge and "." not in name])
        return lab_phy.read_driver_file(self._batch, f"{self.state_dir}/{lab_phy.FILE}")

    def _read_dcb(self, links: dict[str, links_mod.LinkSpec]) -> dict[str, Any]:
        """The stored tables (what flatfab set) and each physical port's DCB, qdisc and pool
        state as the hardware reports it, in one round trip."""
        path = shlex.quote(f"{self.state_dir}/{ASIC_FILE}")
        ports = [name for name, spec in links.items() if not spec.bridge and "." not in name]
        out = self._batch({"asic": f"cat {path} 2>/dev/null || true",
                           **dcb.readback_commands(ports, self.devlink)})
        try:
            db = configdb.load(out["asic"]) if out["asic"].strip() else {}
        except configdb.ConfigDbError as exc:
            raise DeviceCommandError(f"{self.hostname}: lossless state: {exc}") from None
        db.pop(kernel_qos.KERNEL_TABLE, None)
        out.pop("asic")
        return {"config_db": db, "kernel": {}, "counters": {}, "dcb": out,
                "devlink": self.devlink}

    def _format(self, state: FrrState) -> str:
        frr = state.frr
        if state.merge_frr is not None:
            have = set(frr.splitlines())
            added = [line for line in state.merge_frr.splitlines()
                     if line not in have and line.strip() not in {"!", "end", ""}]
            frr = frr.replace("end\n", "".join(f"{line}\n" for line in added) + "end\n")
        # an empty qos section still says "no lossless state", so a backup taken from a
        # factory-fresh switch restores exactly (a missing section means "leave it alone")
        return links_mod.join_sections(links_mod.format_links(state.links), frr,
                                       state.qos or "", state.ecmp)

    def _check_candidate(self, candidate: str) -> None:
        try:
            links_text, frr_text = links_mod.split_sections(candidate)
            if links_text is not None:
                links_mod.parse_links(links_text)
            qos_text = links_mod.qos_section(candidate)
            if qos_text is not None and qos_text.strip():
                configdb.from_config_db(configdb.load(qos_text), virtual=True)
            ecmp_text = links_mod.ecmp_section(candidate)
            wanted = ecmp.parse_section(ecmp_text) if ecmp_text is not None else None
        except (links_mod.LinksError, ecmp.EcmpError) as exc:
            raise CandidateError(str(exc)) from None
        except configdb.ConfigDbError as exc:
            raise CandidateError(f"qos section: {exc}") from None
        if wanted is not None and ecmp.asks_a_seed(wanted):  # can this kernel take it?
            current = self.get_hashing()
            why = ecmp.unreachable(current, ecmp.desired(current, wanted))
            if why is not None:
                raise CandidateError(why)
        # vtysh -C: a dry run of FRR's parser on the device; nothing is applied
        check = self._run("f=$(mktemp) && cat > $f && vtysh -C -f $f; rc=$?; rm -f $f; "
                          "exit $rc", stdin=frr_text, check=False)
        if not check.ok:
            detail = (check.stdout + check.stderr).strip().splitlines()
            raise CandidateError(f"FRR rejects the candidate: "
                                 f"{detail[-1] if detail else 'syntax error'}")

    def _desired_state(self, current: FrrState, candidate: str, merge: bool) -> FrrState:
        try:
            links_text, frr_text = links_mod.split_sections(candidate)
            links = current.links if links_text is None else links_mod.parse_links(links_text)
            qos_section = links_mod.qos_section(candidate)
            # no qos section: the candidate does not manage the lossless plane, keep it
            qos = current.qos if qos_section is None else self._backend_qos(qos_section)
            ecmp_section = links_mod.ecmp_section(candidate)
            # nor, without an ecmp section, the hashing
            hashing = (current.hashing if ecmp_section is None else
                       ecmp.desired(current.hashing, ecmp.parse_section(ecmp_section)))
        except (links_mod.LinksError, ecmp.EcmpError) as exc:
            raise CandidateError(str(exc)) from None
        except configdb.ConfigDbError as exc:
            raise CandidateError(f"qos section: {exc}") from None
        why = ecmp.unreachable(current.hashing, hashing)
        if why is not None:
            raise CandidateError(why)
        text = ecmp.format_state(hashing) if hashing else None
        if merge:
            if qos_section is not None and current.qos is not None:
                merged = configdb.load(current.qos)
                for table, rows in configdb.load(qos or "{}").items():
                    merged.setdefault(table, {}).update(rows)
                qos = configdb.dump(merged)
            return FrrState(links={**current.links, **links}, frr=current.frr,
                            merge_frr=normalize_frr(frr_text), qos=qos, ecmp=text,
                            hashing=hashing)
        # ports the candidate leaves out are still there afterwards, unconfigured; saying
        # so keeps the way back (desired -> current) computable
        kept = {name: links_mod.LinkSpec(name=name) for name, spec in current.links.items()
                if not spec.bridge}
        return FrrState(links={**kept, **links}, frr=normalize_frr(frr_text), qos=qos,
                        ecmp=text, hashing=hashing)

    def _backend_qos(self, section: str) -> str | None:
        """The candidate's qos section as this backend holds it (dcb ports: no lab rows)."""
        text = _qos_text(section)
        if text is None or self.qos_backend == "lab":
            return text
        db = configdb.load(text)
        db.pop(kernel_qos.KERNEL_TABLE, None)
        if ecmp.MODE_TABLE in db:
            mode = db[ecmp.MODE_TABLE].get("GLOBAL", {}).get("mode", "?")
            raise CandidateError(f"qos_backend dcb: load balancing mode {mode} is the ASIC's "
                                 "and Linux offers no way to set it; plain hashing only")
        return configdb.dump(db) if db else None

    def _with_netns(self, frr_text: str) -> str:
        """Put back the `netns` lines FRR's netns VRF backend shows under each VRF."""
        namespaces = set(self._vrf_namespaces())
        lines = []
        for line in frr_text.splitlines():
            lines.append(line)
            match = re.match(r"^vrf (\S+)$", line)
            if match and match.group(1) in namespaces:
                lines.append(f" netns /run/netns/{match.group(1)}")
        return "\n".join(lines) + "\n"

    def _transition(self, current: FrrState, desired: FrrState, *, merge: bool,
                    tag: str) -> str:
        try:
            ops = links_mod.plan_ops(current.links, desired.links)
        except links_mod.LinksError as exc:
            raise CandidateError(str(exc)) from None
        frr_file = f"{self.state_dir}/{tag}-frr.conf"
        if desired.merge_frr is not None:
            text, apply = desired.merge_frr, f"vtysh -f {frr_file}"
        else:
            text = self._with_netns(desired.frr)
            # zebra learns of a namespace the link ops just made a moment later, and until
            # then refuses the VRF's `netns` line: the reload (idempotent) gets three tries,
            # and the last try's error reaches the caller
            apply = (f"for try in 1 2 3; do {FRR_RELOAD} --reload {frr_file} >/dev/null "
                     f"2>{frr_file}.log && break; if [ $try = 3 ]; then tail -n 3 "
                     f"{frr_file}.log >&2; exit 1; fi; sleep 1; done")
        # FRR cannot unconfigure an interface that is already gone: when links are deleted,
        # a first pass lets FRR drop their config while they exist (it may not finish
        # while other links are still missing; the pass after the links change must)
        first = ([f"{FRR_RELOAD} --reload {frr_file} >/dev/null 2>&1 || true"]
                 if desired.merge_frr is None and any(" link del " in op for op in ops)
                 else [])
        return "\n".join(["set -e", f"mkdir -p {self.state_dir}",
                          f"cat > {frr_file} <<'FLATFAB_FRR_EOF'", text.rstrip("\n"),
                          "FLATFAB_FRR_EOF", *first, *ops, apply,
                          *self._qos_ops(current, desired, relinked=bool(ops)),
                          *ecmp.ops(current.hashing, desired.hashing), ""])

    def _qos_ops(self, current: FrrState, desired: FrrState, *, relinked: bool) -> list[str]:
        """Write the virtual ASIC and rebuild the kernel queues when anything differs.

        A port that moved between namespaces lost its queues, so any links change also
        rebuilds them.
        """
        if current.qos == desired.qos and not relinked:
            return []
        path = f"{self.state_dir}/{ASIC_FILE}"
        want = configdb.load(desired.qos) if desired.qos else {}
        have = configdb.load(current.qos) if current.qos else {}
        rows = want.get(kernel_qos.KERNEL_TABLE, {})
        ops = [f"{kernel_qos.tc_cmd(row['vrf'])} qdisc del dev {shlex.quote(name)} root "
               "2>/dev/null || true"
               for name, row in have.get(kernel_qos.KERNEL_TABLE, {}).items() if name not in rows]
        if not want:
            return [*ops, f"rm -f {shlex.quote(path)}"]
        if self.qos_backend == "dcb":
            device, ports = configdb.from_config_db(want, virtual=False)
            enforce = dcb.device_commands(ports, device, self.devlink) if device else []
        else:
            enforce = kernel_qos.tc_ops(rows)
        return [*ops, f"mkdir -p {shlex.quote(path.rsplit('/', 1)[0])}",
                f"cat > {shlex.quote(path)} <<'FLATFAB_QOS_EOF'", configdb.dump(want).rstrip("\n"),
                "FLATFAB_QOS_EOF", *enforce]

    def _save_script(self, state: FrrState) -> str:
        return "vtysh -c 'write memory' >/dev/null\n"
