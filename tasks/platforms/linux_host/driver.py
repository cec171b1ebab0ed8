"""A NAPALM driver for Linux GPU hosts over SSH: data NICs, addresses, routes (per-NIC tables
and rules of multi-NIC servers), per-NIC sysctls, pings.

optional_args: port, key_file, known_hosts, read_only, sudo, state_dir,
mgmt_interfaces (list), timeout, nic_backend ("lab": nftables marking and a virtual NIC
state; "connectx": mlnx_qos, sysfs ECN and RDMA-CM settings), rdma_devices (NIC -> mlx5_N),
nccl_conf (the nccl.conf flatfab writes: /etc/nccl.conf with connectx; with the lab backend
<state_dir>/nccl.conf, so the embedded lab, whose hosts share the test machine's /etc, never
writes the machine's own).
"""

from __future__ import annotations

import ipaddress
import re
import shlex
from collections.abc import Sequence
from importlib import resources
from typing import Any

from flatfab import devicejson
from flatfab.platforms import lab_phy
from flatfab.platforms.linux_host import config as cfg
from flatfab.platforms.linux_host import nccl_conf, nic_counters, nic_qos, phy, rdma_state
from flatfab.platforms.linux_host.collect import ProbeTarget
from flatfab.platforms.shell_driver import CandidateError, DeviceCommandError, ShellDriver

PROBE_MARK = "@@probe"
LEFT_BY = re.compile(r", dev (?P<dev>[^\s;,]+)")  # echo_probe.py's summary, with a source
# the running routing state: every table (`-4`: `table all` prints IPv6 routes too) and the
# policy rules (ip-route(8), ip-rule(8))
ROUTE_READ = "ip -4 -j route show table all"
RULE_READ = "ip -j rule show"
# every NIC's values of the per-NIC keys flatfab configures, one `<path>:<value>` line each
SYSCTL_READ = ("grep -H . " + " ".join(f"/proc/sys/net/ipv4/conf/*/{name}"
                                       for name in cfg.NIC_SYSCTLS) + " 2>/dev/null || true")
# sent to the host as a script: python3's standard library only
ECHO_PROBE_SOURCE = resources.files("flatfab.platforms.linux_host").joinpath(
    "echo_probe.py").read_text(encoding="utf-8")
# the GID tables under /sys/class/infiniband as JSON, read by a script sent to the host
RDMA_SYSFS_SOURCE = resources.files("flatfab.platforms.linux_host").joinpath(
    "rdma_sysfs.py").read_text(encoding="utf-8")
RDMA_SYSFS_READ = "python3 - /sys/class/infiniband"
RDMA_LINK_READ = rdma_state.tool_command("rdma", "rdma -j link show")
IBV_DEVINFO_READ = rdma_state.tool_command("ibv_devinfo", "ibv_devinfo")


class LinuxHostDriver(ShellDriver[cfg.HostConfig]):
    """NAPALM driver `linux_host` (module napalm_linux_host)."""

    platform = "linux_host"

    def __init__(self, hostname: str, username: str, password: str | None,
                 timeout: int = 60, optional_args: dict[str, Any] | None = None) -> None:
        super().__init__(hostname, username, password, timeout, optional_args)
        self.mgmt_interfaces: set[str] = set(self.optional_args.get("mgmt_interfaces",
                                                                    ["eth0"]))
        self.nic_backend: str = self.optional_args.get("nic_backend", "lab")
        self.rdma_devices: dict[str, str] = dict(self.optional_args.get("rdma_devices", {}))
        self.nccl_path: str = str(self.optional_args.get("nccl_conf") or (
            nccl_conf.DEFAULT_PATH if self.nic_backend == "connectx"
            else f"{self.state_dir}/nccl.conf"))

    # ---- getters -----------------------------------------------------------------------

    def _ip(self) -> dict[str, str]:
        return self._batch({"link": "ip -j -d link show", "addr": "ip -j addr show",
                            "route": "ip -j route show"})

    def get_facts(self) -> dict[str, Any]:
        out = self._batch({"hostname": "hostname", "uptime": "cat /proc/uptime",
                           "kernel": "uname -sr", "model": "uname -m",
                           "serial": "cat /etc/machine-id 2>/dev/null || true",
                           "links": "ip -j link show"})
        links = self._json_text(out["links"])
        return {
            "hostname": out["hostname"].strip(), "fqdn": out["hostname"].strip(),
            "vendor": "Linux", "model": out["model"].strip(), "os_version": out["kernel"].strip(),
            "serial_number": out["serial"].strip(),
            "uptime": float(out["uptime"].split()[0]) if out["uptime"].strip() else -1.0,
            "interface_list": sorted(link["ifname"] for link in links
                                     if isinstance(link, dict)
                                     and isinstance(link.get("ifname"), str)),
        }

    @staticmethod
    def _json_text(text: str) -> Any:
        return devicejson.loads(text or "[]")

    def get_interfaces(self) -> dict[str, dict[str, Any]]:
        result = {}
        for link in self._json_text(self._ip()["link"]):
            name = link.get("ifname") if isinstance(link, dict) else None
            if not isinstance(name, str) or name == "lo":
                continue
            flags = link.get("flags") or []
            mtu = link.get("mtu")
            result[name] = {
                "is_up": "LOWER_UP" in flags, "is_enabled": "UP" in flags,
                "description": str(link.get("ifalias", "")), "last_flapped": -1.0,
                # NAPALM's model is an int: 0 when iproute2 prints none (collect, which
                # reads read_host_state, reports such a NIC as unread)
                "speed": -1.0, "mtu": mtu if isinstance(mtu, int) else 0,
                "mac_address": str(link.get("address", "")).upper(),
            }
        return result

    def get_interfaces_ip(self) -> dict[str, dict[str, Any]]:
        result: dict[str, dict[str, Any]] = {}
        for item in self._json_text(self._ip()["addr"]):
            if not isinstance(item, dict) or not isinstance(item.get("ifname"), str):
                continue
            for addr in item.get("addr_info") or []:
                # iproute2 4.x printed lifetime-only `{}` entries: no address in them
                if (not isinstance(addr, dict) or addr.get("family") not in ("inet", "inet6")
                        or not isinstance(addr.get("local"), str)
                        or not isinstance(addr.get("prefixlen"), int)):
                    continue
                family = "ipv4" if addr["family"] == "inet" else "ipv6"
                result.setdefault(item["ifname"], {}).setdefault(family, {})[addr["local"]] = {
                    "prefix_length": addr["prefixlen"]}
        return result

    def probe(self, targets: Sequence[ProbeTarget], count: int = 2,
              wait: float = 1.0) -> list[dict[str, Any]]:
        """Send ICMP echoes to many (address, payload size, don't-fragment[, source]) targets
        at once; with a source (a multi-NIC server's NIC address) the echo takes the route
        the host's traffic from that address takes, and the result's `left_by` names the
        NIC it left through.

        Not a NAPALM getter; verify uses it for reachability, MTU, isolation and per-NIC
        routing.
        """
        # one prober (echo_probe.py) runs every probe at once and prints one PROBE_MARK line
        # each. It judges the path as it is now: it resolves the next hop itself and ignores
        # the path-MTU cache, so a repaired fault verifies clean at once.
        sources = [str(ipaddress.IPv4Address(t[3])) if len(t) > 3 and t[3] else None
                   for t in targets]
        listed = " ".join(shlex.quote(f"{t[0]}/{int(t[1])}/{int(t[2])}"
                                      + (f"/{source}" if source else ""))
                          for t, source in zip(targets, sources, strict=True))
        lines = [f"ECHO_PROBE={shlex.quote(ECHO_PROBE_SOURCE)}",
                 f'python3 -c "$ECHO_PROBE" {PROBE_MARK} {count} {wait:g} {listed}']
        out = self._run("sh -s", stdin="\n".join([*lines, ""]),
                        timeout=30 + wait * count).stdout
        results: dict[int, dict[str, Any]] = {}
        for line in out.splitlines():
            parts = line.split(" ", 3)
            if len(parts) >= 3 and parts[0] == PROBE_MARK and parts[1].isdigit():
                results[int(parts[1])] = {"replied": parts[2] == "0",
                                          "detail": parts[3].strip() if len(parts) > 3 else ""}
        found = [results.get(i, {"replied": False, "detail": "no result"})
                 for i in range(len(targets))]
        for result, source in zip(found, sources, strict=True):
            if source is not None:  # the prober names the device it sent through
                left = LEFT_BY.search(result["detail"])
                result["left_by"] = left["dev"] if left else None
        return found

    def send_roce(self, address: str, sport_base: int, flows: int, data_packets: int,
                  size: int = 1024, source: str | None = None) -> int:
        """Send RoCEv2-shaped UDP flows: per source port `data_packets` data packets and one
        CNP (BTH opcode 0x81). The host's own marking (nftables in the lab, the NIC on real
        hosts) sets their DSCP. `source`: the address they are sent from (a multi-NIC
        server's NIC k address: its rule routes them by NIC k's table, out of NIC k). Not a
        NAPALM getter; returns the datagrams sent."""
        bind = str(ipaddress.IPv4Address(source)) if source is not None else ""
        script = (
            "import socket\n"
            f"dst, base, flows, n, size = {address!r}, {int(sport_base)}, {int(flows)}, "
            f"{int(data_packets)}, {int(size)}\n"
            "sent = 0\n"
            "for i in range(flows):\n"
            "    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
            f"    s.bind(({bind!r}, base + i))\n"
            "    for _ in range(n):\n"
            "        sent += s.sendto(bytes([0x04]) + bytes(size - 1), (dst, 4791)) > 0\n"
            "    sent += s.sendto(bytes([0x81]) + bytes(63), (dst, 4791)) > 0\n"
            "    s.close()\n"
            "print(sent)\n")
        out = self._run("python3 -", stdin=script).stdout.strip()
        if not out.isdigit():
            raise CandidateError(f"{self.hostname}: traffic sender failed: {out[-120:]}")
        return int(out)

    # ---- configuration (ShellDriver hooks) ------------------------------------------

    def _read_state(self) -> cfg.HostConfig:
        out = self._batch({"link": "ip -j -d link show", "addr": "ip -j addr show",
                           "route": ROUTE_READ, "rule": RULE_READ,
                           "qos": f"cat {shlex.quote(self._qos_file)} 2>/dev/null || true",
                           "nft": f"nft -j list table inet {nic_qos.NFT_TABLE} 2>/dev/null "
                                  "|| true",
                           "sysctl": SYSCTL_READ,
                           "managed": f"cat {shlex.quote(self._sysctl_file)} 2>/dev/null "
                                      "|| true",
                           "nccl": rdma_state.file_command(self.nccl_path)})
        try:
            state = cfg.from_ip_json(out["link"], out["addr"], out["route"],
                                     self.mgmt_interfaces, rules=out["rule"])
            virtual = dict(nic_qos.parse_line(line, number)
                           for number, line in enumerate(out["qos"].splitlines(), 1)
                           if line.strip())
            before = cfg.parse_managed(out["managed"])
        except (cfg.HostConfigError, nic_qos.NicQosError) as exc:
            raise CandidateError(f"reading the host: {exc}") from None
        unread = dict(state.unread)
        # only NICs that exist; in the lab ToS and CNP DSCP as the kernel really marks them
        if self.nic_backend == "lab":
            marks, problems = nic_qos.read_marks(out["nft"])
            # a NIC whose marking nft shows in a shape flatfab cannot read keeps its stored
            # settings in the config text; collect reports its lossless state as unread
            unread.update({f"qos {nic}": problems.get(nic) or problems["*"]
                           for nic in virtual if nic in problems or "*" in problems})
            virtual = nic_qos.with_marks(virtual, marks, keep=set(problems))
        qos = {n: s for n, s in virtual.items() if n in state.nics}
        # sysctls: the keys flatfab manages (its record) at the values the kernel has now; a
        # managed key the kernel shows no value for is named, never given a default
        values = cfg.sysctls_from_proc(out["sysctl"], set(state.nics))
        sysctls = {key: values[key] for key in before if key in values}
        unread.update({f"sysctl {key}": "no value under /proc/sys/net/ipv4/conf (no such NIC?)"
                       for key in before if key not in values})
        nccl, owner = self._nccl_read(out["nccl"], unread)
        return cfg.HostConfig(nics=state.nics, routes=state.routes, qos=qos, rules=state.rules,
                              sysctls=sysctls, unread=unread, sysctl_values=values,
                              sysctl_before=before, mgmt_addresses=state.mgmt_addresses,
                              nccl=nccl, nccl_owner=owner)

    def _nccl_read(self, output: str, unread: dict[str, str]
                   ) -> tuple[nccl_conf.NcclConfig | None, str]:
        """flatfab's nccl.conf back as config, and whose the file is: another's file is
        never read as flatfab's (a host where flatfab manages none shows no `nccl` lines)."""
        text = rdma_state.file_text(output)
        if text is None:
            return None, ""
        if not nccl_conf.owned(text):
            return None, "other"
        try:
            return nccl_conf.read_file(text, self.nccl_path, self.rdma_devices), "flatfab"
        except nccl_conf.NcclConfError as exc:
            unread[f"nccl {self.nccl_path}"] = str(exc)
            return None, "flatfab"

    @property
    def _sysctl_file(self) -> str:
        """flatfab's record of the sysctl keys it manages and each one's value before."""
        return f"{self.state_dir}/nic/sysctl.conf"

    @property
    def _qos_file(self) -> str:
        return f"{self.state_dir}/nic/qos.conf"

    @property
    def _nccl_before(self) -> str:
        """The nccl.conf that was there before flatfab first wrote its own (put back when
        flatfab no longer manages the file)."""
        return f"{self.state_dir}/nic/nccl.conf.before"

    def read_rdma(self) -> rdma_state.RdmaReads:
        """Not a NAPALM getter (read-only): the nccl.conf in use and the RDMA devices' state:
        the GID tables in sysfs, `rdma -j link show`, `ibv_devinfo`."""
        out = self._batch({"nccl": rdma_state.file_command(self.nccl_path),
                           "link": RDMA_LINK_READ, "ibv": IBV_DEVINFO_READ})
        sysfs = self._run(RDMA_SYSFS_READ, stdin=RDMA_SYSFS_SOURCE, check=False)
        error = None if sysfs.ok else (
            f"the GID tables' reader (python3) exited {sysfs.exit_status}: "
            f"{(sysfs.stderr or sysfs.stdout).strip()[-200:]}")
        return rdma_state.RdmaReads(
            nccl_path=self.nccl_path, nccl=rdma_state.file_text(out["nccl"]),
            sysfs=sysfs.stdout, rdma_link=out["link"], ibv_devinfo=out["ibv"],
            sysfs_error=error)

    def read_connectx(self) -> tuple[dict[str, Any], dict[str, str]]:
        """Not a NAPALM getter (`nic_backend: connectx`): each NIC flatfab configures as the
        hardware holds it (mlnx_qos, sysfs ECN and CNP, RDMA-CM ToS, ethtool), and the NICs
        that cannot be read, with the reason."""
        stored = self._read_state().qos
        commands: dict[str, str] = {}
        for nic in sorted(stored):
            commands |= nic_qos.connectx_read_commands(
                shlex.quote(nic), self.rdma_devices.get(nic, "mlx5_0"))
        out = self._batch(commands) if commands else {}
        seen: dict[str, Any] = {}
        unread: dict[str, str] = {}
        for nic, settings in sorted(stored.items()):
            model, why = nic_qos.read_connectx(shlex.quote(nic), settings, out)
            if model is None:
                unread[f"qos {nic}"] = why or "not read"
            else:
                seen[nic] = model
        return seen, unread

    def read_nic_counters(self) -> dict[str, dict[str, int]]:
        """Not a NAPALM getter: NIC -> congestion counters (nic_counters.py), read-only, every
        NIC of the host's qos state in one round trip: ethtool and RDMA hw_counters on
        ConnectX, the virtual NIC's nftables counters in the lab."""
        if self.nic_backend == "connectx":
            out = self._batch({"counters": nic_counters.connectx_command(
                shlex.quote(self._qos_file))})
        else:
            out = self._batch({"qos": f"cat {shlex.quote(self._qos_file)} 2>/dev/null || true",
                               "nft": f"nft -j list table inet {nic_qos.NFT_TABLE} 2>/dev/null "
                                      "|| true"})
        try:
            if self.nic_backend == "connectx":
                found = nic_counters.read_connectx(out["counters"])
            else:
                qos = dict(nic_qos.parse_line(line, number)
                           for number, line in enumerate(out["qos"].splitlines(), 1)
                           if line.strip())
                found = nic_counters.read_lab(out["nft"], qos)
        except (nic_counters.NicCounterError, nic_qos.NicQosError) as exc:
            raise DeviceCommandError(f"{self.hostname}: NIC counters: {exc}") from None
        if not found:  # said, so a watch does not call the host merely silent
            raise DeviceCommandError(f"{self.hostname}: NIC counters: no NIC in flatfab's qos "
                                     f"state ({self._qos_file}): not rolled out yet?")
        return found

    def get_physical(self) -> dict[str, Any]:
        """Not a NAPALM getter: NIC -> its physical layer (flatfab.model.physical, as JSON):
        on ConnectX, ethtool and sysfs for each data NIC (linux_host/phy.py); in the lab, the
        modules the lab's phy.json states (virtual), {} where none is."""
        if self.nic_backend == "connectx":
            return phy.read_nics(self._batch, self._read_state().nics)
        return lab_phy.read_driver_file(self._batch, f"{self.state_dir}/{lab_phy.FILE}")

    def get_lossless(self) -> dict[str, Any]:
        """Not a NAPALM getter: NIC -> lossless settings (virtual in the lab but ToS/CNP)."""
        return {nic: nic_qos.to_model(s, virtual=True)
                for nic, s in self._read_state().qos.items()}

    def _format(self, state: cfg.HostConfig) -> str:
        return cfg.format_config(state)

    def _check_candidate(self, candidate: str) -> None:
        try:
            parsed = cfg.parse_config(candidate)
        except cfg.HostConfigError as exc:
            raise CandidateError(str(exc)) from None
        if parsed.nccl is not None and set(parsed.nccl.hca) & self.mgmt_interfaces:
            raise CandidateError("refusing NCCL_IB_HCA over a management NIC: NCCL's RDMA "
                                 "traffic belongs on the fabric NICs")
        for key in parsed.sysctls:
            found = cfg.sysctl_nic(key)
            if found is not None and found[0] in self.mgmt_interfaces:
                raise CandidateError(f"refusing sysctl {key}: {found[0]} is the management NIC")
        touched = set(parsed.nics) & self.mgmt_interfaces
        if touched:
            raise CandidateError(f"refusing to manage the management NIC {sorted(touched)[0]}")

    def _desired_state(self, current: cfg.HostConfig, candidate: str,
                       merge: bool) -> cfg.HostConfig:
        try:
            wanted = cfg.parse_config(candidate)
        except cfg.HostConfigError as exc:
            raise CandidateError(str(exc)) from None
        if not merge:
            # NICs the candidate leaves out are still there afterwards, unconfigured
            kept = {name: cfg.Nic(name=name) for name in current.nics}
            nics, routes, rules = {**kept, **wanted.nics}, wanted.routes, wanted.rules
            qos, sysctls, nccl = wanted.qos, wanted.sysctls, wanted.nccl
        else:
            nics = {**current.nics, **wanted.nics}
            routes = tuple(dict.fromkeys((*current.routes, *wanted.routes)))
            rules = tuple(dict.fromkeys((*current.rules, *wanted.rules)))
            qos, sysctls = {**current.qos, **wanted.qos}, {**current.sysctls, **wanted.sysctls}
            nccl = wanted.nccl if wanted.nccl is not None else current.nccl
        for rule in wanted.rules:
            if rule.source in current.mgmt_addresses:
                raise CandidateError(f"refusing rule {rule.spec}: {rule.source} is a management "
                                     "NIC's address")
        try:
            values, before = cfg.sysctls_after(current, sysctls)
        except cfg.HostConfigError as exc:
            raise CandidateError(str(exc)) from None
        return cfg.HostConfig(nics=nics, routes=routes, qos=qos, rules=rules, sysctls=sysctls,
                              sysctl_values=values, sysctl_before=before, nccl=nccl)

    def _transition(self, current: cfg.HostConfig, desired: cfg.HostConfig, *, merge: bool,
                    tag: str) -> str:
        try:
            ops = cfg.transition(current, desired)
        except cfg.HostConfigError as exc:
            raise CandidateError(str(exc)) from None
        # the record of managed sysctls holds every key the script may set before it sets one
        # (so one that fails halfway leaves their values before on record, for the revert),
        # and only the desired ones once it is done
        during = {**current.sysctl_before, **desired.sysctl_before}
        return "\n".join(["set -e", *self._sysctl_record_ops(current.sysctl_before, during),
                          *ops, *self._qos_ops(current, desired),
                          *self._nccl_ops(current, desired),
                          *self._sysctl_record_ops(during, desired.sysctl_before), ""])

    def _revert_now(self) -> None:
        """Back to the backup at once: from the host as it is now, not by the revert script,
        which was written for the state a whole commit reaches (after an apply that failed
        halfway its first `ip rule del` or `ip route del` of something never added would
        stop it). Without a backup, or one that no longer applies, the revert script runs."""
        pid = self._pending_pid()
        if pid is not None:
            self._cancel_timer(pid)
        d = shlex.quote(self.state_dir)
        backup = self._run(f"cat {d}/rollback.conf", check=False)
        script = None
        if backup.ok:
            try:
                current = self._read_state()
                desired = self._desired_state(current, backup.stdout, merge=False)
                script = self._transition(current, desired, merge=False, tag="rollback")
            except CandidateError:
                script = None
        if script is None:
            self._run(f"sh {d}/revert.sh", mutating=True, timeout=120)
        else:
            self._run("sh -s", stdin=script, mutating=True, timeout=120)

    def _sysctl_record_ops(self, current: dict[str, str], desired: dict[str, str]) -> list[str]:
        """Rewrite the record of managed sysctl keys (and their values before flatfab)."""
        if current == desired:
            return []
        path = shlex.quote(self._sysctl_file)
        if not desired:
            return [f"rm -f {path}"]
        return [f"mkdir -p {shlex.quote(self.state_dir)}/nic",
                f"cat > {path} <<'FLATFAB_SYSCTL_EOF'", cfg.format_managed(desired).rstrip("\n"),
                "FLATFAB_SYSCTL_EOF"]

    def _qos_ops(self, current: cfg.HostConfig, desired: cfg.HostConfig) -> list[str]:
        """The virtual NIC state file, and nftables marking that replaces flatfab's table."""
        if current.qos == desired.qos:
            return []
        path = shlex.quote(self._qos_file)
        lines = "".join(desired.qos[n].line(n) + "\n" for n in sorted(desired.qos))
        store = ([f"mkdir -p {shlex.quote(self.state_dir)}/nic",
                  f"cat > {path} <<'FLATFAB_QOS_EOF'", lines.rstrip("\n"), "FLATFAB_QOS_EOF"]
                 if desired.qos else [f"rm -f {path}"])
        if self.nic_backend == "connectx":
            return [*store, *(cmd for nic in sorted(desired.qos) for cmd in
                              nic_qos.connectx_commands(nic, desired.qos[nic],
                                                        self.rdma_devices.get(nic, "mlx5_0")))]
        return [*store, "nft -f - <<'FLATFAB_NFT_EOF'",
                nic_qos.nft_ruleset(desired.qos).rstrip("\n"), "FLATFAB_NFT_EOF"]

    def _nccl_ops(self, current: cfg.HostConfig, desired: cfg.HostConfig) -> list[str]:
        """Write flatfab's nccl.conf (first keeping a copy of another's file there), or, once
        flatfab no longer manages it, put that copy back (else remove flatfab's file). The
        shell tests the file itself, so the revert script is right whatever ran before it;
        another's file is never deleted."""
        if current.nccl == desired.nccl:
            return []
        path, before = shlex.quote(self.nccl_path), shlex.quote(self._nccl_before)
        ours = f'[ "$(head -n 1 {path} 2>/dev/null)" = {shlex.quote(nccl_conf.MARKER)} ]'
        if desired.nccl is None:
            return [f"if {ours}; then if [ -e {before} ]; then mv -f {before} {path}; "
                    f"else rm -f {path}; fi; fi"]
        parent = shlex.quote(self.nccl_path.rsplit("/", 1)[0] or "/")
        temporary = shlex.quote(f"{self.nccl_path}.flatfab-new")
        text = nccl_conf.file_text(desired.nccl, self.rdma_devices)
        return [f"if [ -e {path} ] && ! {ours} && [ ! -e {before} ]; then mkdir -p "
                f"{shlex.quote(self.state_dir)}/nic; cp -p {path} {before}; fi",
                f"mkdir -p {parent}",
                f"cat > {temporary} <<'FLATFAB_NCCL_EOF'", text.rstrip("\n"),
                "FLATFAB_NCCL_EOF", f"chmod 0644 {temporary}", f"mv -f {temporary} {path}"]

    def _save_script(self, state: cfg.HostConfig) -> str:
        return ""

    def read_host_state(self) -> cfg.HostConfig:
        """Not a NAPALM getter: the managed NIC state in one round trip."""
        return self._read_state()
