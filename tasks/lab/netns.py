"""The embedded lab runtime: a containerlab topology realized with network namespaces.

Per node: a network namespace, a persistent mount + UTS namespace (so its daemons, sshd and
lldpd see the node's own folders, /etc/hosts and VRFs as a real box would), and an sshd on
the management network. What is a node's own, what starts it and what serves its telemetry
are its platform's (the data file's `lab.runtime`: the frr platform binds /etc/frr, /run/frr
and /var/log/frr and starts FRR). Switch VRFs are extra namespaces (FRR's netns VRF
backend); VRF subinterfaces are veth pairs between the VRF namespaces of both ends.
Everything the lab creates is under /run/flatfab/<prefix>/ or named <prefix>-*, so
`down --sweep` can find it without any state.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from flatfab import extras
from flatfab.atomic import write_atomic
from flatfab.lab import gnmi, hardware, procs
from flatfab.lab.system import LabError, ip_batch, require_commands, require_root, run
from flatfab.lab.topology import SWITCH_SYSCTLS, LabNode, LabSpec
from flatfab.platforms import lab_carrier
from flatfab.platforms.base import EmbeddedRuntime, Platform
from flatfab.platforms.registry import DEFAULT_HOST, DEFAULT_SWITCH, PLATFORMS

RUN_ROOT = Path("/run/flatfab")
# what the lab itself runs on every node (each platform's own: its lab.runtime.commands)
COMMANDS = ("ip", "unshare", "nsenter", "mount", "umount", "sysctl", "useradd", "userdel",
            "ssh-keygen", "/usr/sbin/sshd", "lldpd")
STATE_DIR = "/var/lib/flatfab"  # flatfab's own state on a node (a platform binds its own)


def platform_of(node: LabNode) -> Platform:
    """The node's platform (a topology without the label: the default one of its role)."""
    name = node.platform or (DEFAULT_HOST if node.role == "host" else DEFAULT_SWITCH)
    if name not in PLATFORMS:
        raise LabError(f"node {node.name} runs platform {name!r}, which is not installed "
                       f"({', '.join(PLATFORMS)})")
    return PLATFORMS[name]


def runtime_of(node: LabNode) -> EmbeddedRuntime:
    runtime = platform_of(node).facts.lab.runtime
    if runtime is None:
        raise LabError(f"node {node.name}: the embedded lab cannot run {node.platform}")
    return runtime


def node_folder(ndir: Path, target: str) -> Path:
    """The folder of a node's own that is bound over `target` inside it."""
    return ndir / target.strip("/").replace("/", "-")


@dataclass(frozen=True)
class LabPaths:
    """Every name and path one lab owns, derived from its prefix alone."""

    prefix: str

    @property
    def root(self) -> Path:
        return RUN_ROOT / self.prefix

    @property
    def ns_dir(self) -> Path:
        return self.root / "ns"

    @property
    def ssh_dir(self) -> Path:
        return self.root / "ssh"

    @property
    def state_file(self) -> Path:
        return self.root / "state.json"

    @property
    def client_key(self) -> Path:
        return self.ssh_dir / "id_ed25519"

    @property
    def known_hosts(self) -> Path:
        return self.ssh_dir / "known_hosts"

    @property
    def user(self) -> str:
        return f"{self.prefix}-admin"

    @property
    def sudoers(self) -> Path:
        return Path(f"/etc/sudoers.d/flatfab-{self.prefix}")

    @property
    def mgmt_ns(self) -> str:
        return f"{self.prefix}_mgmt"

    @property
    def mgmt_if(self) -> str:
        return f"{self.prefix}-mgmt0"

    def node_dir(self, node: str) -> Path:
        return self.root / "nodes" / node

    def netns(self, node: str) -> str:
        return f"{self.prefix}-{node}"

    def vrf_netns(self, node: str, vrf: str) -> str:
        return f"{self.prefix}-{node}_{vrf}"

    def mnt_file(self, node: str) -> Path:
        return self.ns_dir / f"{node}.mnt"

    def uts_file(self, node: str) -> Path:
        return self.ns_dir / f"{node}.uts"

    def lldp_socket(self, node: str) -> Path:
        return self.node_dir(node) / "lldpd.socket"

    def lldp_vrf_socket(self, node: str, vrf: str) -> Path:
        """A switch's tenant ports live in its VRF namespaces: one lldpd serves each."""
        return self.node_dir(node) / f"lldpd-{vrf}.socket"

    def owns_netns(self, name: str) -> bool:
        return name.startswith((f"{self.prefix}-", f"{self.prefix}_"))


@dataclass
class LabState:
    """What `up` made, saved as it goes so `down` can undo even a half-finished `up`."""

    name: str
    prefix: str
    topology: str
    mgmt_subnet: str
    controller: str
    nodes: dict[str, dict[str, Any]] = field(default_factory=dict)
    namespaces: list[str] = field(default_factory=list)
    created_dirs: list[str] = field(default_factory=list)
    started: float = 0.0

    def save(self, paths: LabPaths) -> None:
        paths.root.mkdir(parents=True, exist_ok=True)
        write_atomic(paths.state_file, json.dumps(asdict(self), indent=1))

    @classmethod
    def load(cls, paths: LabPaths) -> LabState | None:
        try:
            data = json.loads(paths.state_file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return cls(**data)


def _nsenter(paths: LabPaths, node: str, *, net: str | None = None) -> list[str]:
    return ["nsenter", f"--mount={paths.mnt_file(node)}", f"--uts={paths.uts_file(node)}",
            f"--net=/run/netns/{net or paths.netns(node)}"]


def nsenter_args(paths: LabPaths, node: str) -> list[str]:
    """The command prefix that enters a lab node's namespaces (for a process of its own)."""
    return _nsenter(paths, node)


def node_exec(paths: LabPaths, node: str, command: list[str], *, check: bool = True,
              timeout: float = 30) -> str:
    """Run a command inside a lab node as root (for the runtime and for fault injection)."""
    return run([*_nsenter(paths, node), *command], check=check, timeout=timeout).stdout


def _parallel(func: Callable[[LabNode], None], nodes: Iterable[LabNode]) -> None:
    with ThreadPoolExecutor(max_workers=8) as pool:
        for future in [pool.submit(func, n) for n in nodes]:
            future.result()


class NetnsRuntime:
    """`flatfab lab up/down/status` without Docker."""

    def __init__(self, spec: LabSpec, *, gnmi_mutual_tls: bool = False) -> None:
        self.spec = spec
        self.paths = LabPaths(spec.prefix)
        # the switches' gNMI targets also require a client certificate the lab CA signed
        self.gnmi_mutual_tls = gnmi_mutual_tls

    # ---- up ----------------------------------------------------------------------------

    def up(self, progress: Callable[[str], None] = lambda _: None) -> LabState:
        self._refuse_foreign_nodes()
        require_root("up")
        require_commands(self._commands())
        paths = self.paths
        existing = LabState.load(paths)
        if existing is not None:
            raise LabError(f"a lab with prefix {paths.prefix!r} is already up "
                           f"(topology {existing.topology}); run `flatfab lab down` first")
        leftovers = [n for n in _netns_list() if paths.owns_netns(n)]
        if leftovers:
            raise LabError(f"namespaces of prefix {paths.prefix!r} exist without lab state "
                           f"({leftovers[0]}, ...); run `flatfab lab down --sweep`")
        subnet = self.spec.mgmt_subnet
        state = LabState(name=self.spec.name, prefix=paths.prefix,
                         topology=str(self.spec.file.resolve()),
                         mgmt_subnet=str(subnet), controller=str(subnet[1]),
                         started=time.time())
        state.save(paths)
        try:
            progress("namespaces and links")
            self._namespaces(state)
            self._links()
            self._management(state)
            progress("users and keys")
            self._credentials(state)
            progress("node processes")
            _parallel(lambda n: self._start_node(n, state), self.spec.nodes.values())
            state.save(paths)
            # a core install has no gRPC: its switches are polled over SSH instead
            serves_gnmi = extras.installed("telemetry")
            if serves_gnmi:
                progress("gNMI targets")
                self._start_gnmi(state)
            progress("waiting for management SSH")
            self._wait_ssh()
            if serves_gnmi:
                gnmi.wait_listening(paths.root, self._switches(), _port_open)
        except BaseException:
            with contextlib.suppress(Exception):
                self.down(state)
            raise
        return state

    def _namespaces(self, state: LabState) -> None:
        paths = self.paths
        names = [paths.mgmt_ns]
        for node in self.spec.nodes.values():
            names.append(paths.netns(node.name))
            names += [paths.vrf_netns(node.name, v) for v in node.vrfs]
        state.namespaces = names
        state.save(paths)
        ip_batch([f"netns add {n}" for n in names])
        # Private propagation on the ns dir is what lets namespaces persist as files in it.
        paths.ns_dir.mkdir(parents=True, exist_ok=True)
        run(["mount", "--bind", str(paths.ns_dir), str(paths.ns_dir)])
        run(["mount", "--make-private", str(paths.ns_dir)])
        binds = [b for node in self.spec.nodes.values() for b in runtime_of(node).binds]
        for mountpoint in dict.fromkeys((STATE_DIR, *binds, "/run/sshd")):
            if not Path(mountpoint).exists():
                Path(mountpoint).mkdir(parents=True, mode=0o755)
                state.created_dirs.append(mountpoint)
        state.save(paths)

    def _links(self) -> None:
        """Create every veth: fabric and host links, and one pair per VRF both ends carry."""
        paths = self.paths
        nodes = self.spec.nodes
        lines = []
        for link in self.spec.links:
            (a_node, a_port), (b_node, b_port) = link.a, link.b
            lines.append(f"link add {a_port} netns {paths.netns(a_node)} type veth "
                         f"peer name {b_port} netns {paths.netns(b_node)}")
            # VRF-lite: one subinterface pair per VRF both ends carry
            common = set(nodes[a_node].vrfs) & set(nodes[b_node].vrfs)
            for vrf in sorted(common, key=nodes[a_node].vrfs.__getitem__):
                vid = nodes[a_node].vrfs[vrf]
                lines.append(f"link add {a_port}.{vid} netns {paths.vrf_netns(a_node, vrf)} "
                             f"type veth peer name {b_port}.{vid} "
                             f"netns {paths.vrf_netns(b_node, vrf)}")
        ip_batch(lines)

    def _management(self, state: LabState) -> None:
        paths = self.paths
        subnet = self.spec.mgmt_subnet
        lines = [f"link add {paths.mgmt_if} type veth peer name up0 netns {paths.mgmt_ns}"]
        for index, node in enumerate(self.spec.nodes.values()):
            lines.append(f"link add eth0 netns {paths.netns(node.name)} type veth "
                         f"peer name m{index} netns {paths.mgmt_ns}")
            state.nodes[node.name] = {"netns": paths.netns(node.name), "role": node.role,
                                      "platform": platform_of(node).name,
                                      "mgmt_ipv4": node.mgmt_ipv4, "mgmt_port": f"m{index}"}
        ip_batch(lines)
        ip_batch([f"addr add {state.controller}/{subnet.prefixlen} dev {paths.mgmt_if}",
                  f"link set {paths.mgmt_if} up"])
        mgmt = ["link add br0 type bridge", "link set br0 up", "link set lo up",
                "link set up0 master br0", "link set up0 up"]
        for info in state.nodes.values():
            mgmt += [f"link set {info['mgmt_port']} master br0", f"link set {info['mgmt_port']} up"]
        ip_batch(mgmt, netns=paths.mgmt_ns)
        for node in self.spec.nodes.values():
            ns = paths.netns(node.name)
            # data ports stay down, as on a box fresh from the factory: rollout configures them
            ip_batch(["link set lo up", f"addr add {node.mgmt_ipv4}/{subnet.prefixlen} dev eth0",
                      "link set eth0 up"], netns=ns)
            if node.role != "host":
                run(["ip", "netns", "exec", ns, "sysctl", "-q", "-w", *SWITCH_SYSCTLS])
            for vrf in node.vrfs:
                vns = paths.vrf_netns(node.name, vrf)
                ip_batch(["link set lo up"], netns=vns)
                run(["ip", "netns", "exec", vns, "sysctl", "-q", "-w", *SWITCH_SYSCTLS])

    def _commands(self) -> tuple[str, ...]:
        """The lab's own commands, then those of the platforms its nodes run."""
        own = [c for node in self.spec.nodes.values() for c in runtime_of(node).commands]
        return tuple(dict.fromkeys((*COMMANDS, *own)))

    def _refuse_foreign_nodes(self) -> None:
        """Only platforms whose data file says how the embedded lab runs them (Linux + FRR,
        Linux hosts) run in namespaces; the rest need their vendor image under
        containerlab."""
        for node in self.spec.nodes.values():
            if not node.platform or node.platform not in PLATFORMS:
                continue
            lab = PLATFORMS[node.platform].facts.lab
            if not lab.embedded:
                raise LabError(f"{self.spec.file}: node {node.name} runs {node.platform}, "
                               f"which the embedded lab cannot run; use `--runtime clab` "
                               f"with its image ({lab.kind}, {lab.image})")

    def _credentials(self, state: LabState) -> None:
        paths = self.paths
        paths.ssh_dir.mkdir(parents=True, exist_ok=True)
        for directory in (RUN_ROOT, paths.root, paths.ssh_dir):
            directory.chmod(0o755)  # sshd reads authorized_keys as the user
        run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", f"flatfab-{paths.prefix}",
             "-f", str(paths.client_key)])
        public = paths.client_key.with_suffix(".pub").read_text(encoding="utf-8")
        (paths.ssh_dir / "authorized_keys").write_text(public, encoding="utf-8")
        (paths.ssh_dir / "authorized_keys").chmod(0o644)
        if run(["id", paths.user], check=False).returncode != 0:
            wanted = [g for node in self.spec.nodes.values()
                      for g in runtime_of(node).user_groups]
            groups = ",".join(g for g in dict.fromkeys(wanted) if _group_exists(g))
            run(["useradd", "--create-home", "--shell", "/bin/bash", "--comment",
                 f"flatfab lab {paths.prefix}", *(["--groups", groups] if groups else []),
                 paths.user])
        paths.sudoers.write_text(f"{paths.user} ALL=(ALL) NOPASSWD:ALL\n", encoding="utf-8")
        paths.sudoers.chmod(0o440)
        known = []
        for node in self.spec.nodes.values():
            ndir = paths.node_dir(node.name)
            ndir.mkdir(parents=True, exist_ok=True)
            key = ndir / "ssh_host_ed25519_key"
            run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", node.name, "-f", str(key)])
            kind, blob = key.with_suffix(".pub").read_text(encoding="utf-8").split()[:2]
            known.append(f"{node.mgmt_ipv4} {kind} {blob}")
        paths.known_hosts.write_text("\n".join(known) + "\n", encoding="utf-8")
        state.save(paths)

    def _start_node(self, node: LabNode, state: LabState) -> None:
        paths = self.paths
        ndir = paths.node_dir(node.name)
        runtime = runtime_of(node)
        binds = runtime.binds
        for target in binds:
            node_folder(ndir, target).mkdir(parents=True, exist_ok=True)
        (ndir / "vrfns").mkdir(exist_ok=True)
        (ndir / "hosts").write_text(f"127.0.0.1 localhost\n127.0.1.1 {node.name}\n",
                                    encoding="utf-8")
        (ndir / "hostname").write_text(f"{node.name}\n", encoding="utf-8")
        for vrf in node.vrfs:
            stage = ndir / "vrfns" / vrf
            stage.touch()
            run(["mount", "--bind", f"/run/netns/{paths.vrf_netns(node.name, vrf)}", str(stage)])
        if runtime.config_dir is not None:
            self._prepare_config(node, ndir, runtime)
        self._install_modules(node, ndir, state)
        self._watch_carrier(node, ndir, state)
        for ns_file in (paths.mnt_file(node.name), paths.uts_file(node.name)):
            ns_file.touch()
        script = [f"hostname {node.name}",
                  # sysfs of the node's own network namespace, as `ip netns exec` would
                  "umount -l /sys", "mount -t sysfs sysfs /sys",
                  f"mount --bind {ndir}/hosts /etc/hosts",
                  f"mount --bind {ndir}/hostname /etc/hostname"]
        script += [f"mount --bind {node_folder(ndir, t)} {t}" for t in binds]
        if node.role != "host":
            script.append(f"mount --rbind {ndir}/vrfns /run/netns")
        # nsenter (unlike `ip netns exec`) keeps our mount namespace, so the namespace files
        # unshare binds stay visible to later nsenter calls.
        run(["nsenter", f"--net=/run/netns/{paths.netns(node.name)}", "unshare",
             f"--mount={paths.mnt_file(node.name)}", f"--uts={paths.uts_file(node.name)}",
             "--propagation", "slave", "sh", "-ec", " && ".join(script)])
        if runtime.start:
            node_exec(paths, node.name, list(runtime.start))
        # GPU servers run lldpd too (as real ones do): the leaves then see which server NIC
        # is on each host port, so a NIC cabled to another rail is named
        self._start_lldpd(node, ndir, state)
        self._start_sshd(node, ndir, state)

    def _switches(self) -> list[LabNode]:
        return [n for n in self.spec.nodes.values() if n.role != "host"]

    def _start_gnmi(self, state: LabState) -> None:
        """Every switch serves gNMI from its own namespaces (TLS, a password; with mutual
        TLS, a client certificate too)."""
        switches = self._switches()
        gnmi.prepare(self.paths.root, switches, mutual_tls=self.gnmi_mutual_tls)
        paths = self.paths
        pids = gnmi.start_all(paths.root, switches, lambda node: {
            "net": f"/run/netns/{paths.netns(node.name)}", "mnt": str(paths.mnt_file(node.name)),
            "uts": str(paths.uts_file(node.name))})
        for name, pid in pids.items():
            state.nodes[name]["gnmi_pid"] = pid
        state.save(self.paths)

    def _prepare_config(self, node: LabNode, ndir: Path, runtime: EmbeddedRuntime) -> None:
        """The node's day-0 files from the topology's binds, as its platform runs them here,
        and its folders given to the users its daemons run as."""
        assert runtime.config_dir is not None
        platform = platform_of(node)
        folder = node_folder(ndir, runtime.config_dir)
        for name in runtime.config_files:
            target = f"{runtime.config_dir}/{name}"
            source = node.binds.get(target)
            if source is None or not source.exists():
                raise LabError(f"{self.spec.file}: node {node.name} has no bind for "
                               f"{target} (regenerate with `flatfab lab generate`)")
            text = platform.embedded_config(name, source.read_text(encoding="utf-8"))
            (folder / name).write_text(text, encoding="utf-8")
        owners: dict[str, list[str]] = {}
        for target, owner in runtime.owners.items():
            owners.setdefault(owner, []).append(str(node_folder(ndir, target)))
        for owner, folders in owners.items():
            run(["chown", "-R", owner, *folders])

    @staticmethod
    def _install_modules(node: LabNode, ndir: Path, state: LabState) -> None:
        """The modules in the node's ports (the topology's phy.json), as of the lab's start."""
        source = node.binds.get(hardware.TARGET)
        if source is None or not source.exists():
            return  # a topology generated before the lab stated modules: none are read
        folder = node_folder(ndir, STATE_DIR)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / hardware.FILE).write_text(
            hardware.stamped(source.read_text(encoding="utf-8"), state.started),
            encoding="utf-8")

    def _watch_carrier(self, node: LabNode, ndir: Path, state: LabState) -> None:
        """A carrier watcher in each of the node's network namespaces (flatfab.platforms.
        lab_carrier): Linux keeps no time of a link's last change, its events do."""
        logs = node_folder(ndir, STATE_DIR) / lab_carrier.DIR
        logs.mkdir(parents=True, exist_ok=True)
        spaces = {"main": self.paths.netns(node.name)}
        if node.role != "host":
            spaces.update({vrf: self.paths.vrf_netns(node.name, vrf) for vrf in node.vrfs})
        pids = state.nodes[node.name].setdefault("carrier_pids", {})
        for name, netns in spaces.items():
            out = run(["nsenter", f"--net=/run/netns/{netns}", "sh", "-c",
                       f"TZ=UTC ip -ts -o monitor link >>{logs / name}.log 2>&1 </dev/null "
                       "& echo $!"]).stdout
            pids[name] = int(out.strip())

    def _start_lldpd(self, node: LabNode, ndir: Path, state: LabState) -> None:
        conf = ndir / "lldpd.conf"
        conf.write_text("configure lldp tx-interval 5\nconfigure lldp portidsubtype ifname\n",
                        encoding="utf-8")
        # data ports only: never the management port (eth0), where the lab's nodes meet; a
        # switch's, as its platform names them
        naming = platform_of(node).facts.naming
        physical = "" if naming is None else naming.physical.split("{", 1)[0]
        ports = "eth*,!eth0" if node.role == "host" else f"{physical}*"
        out = node_exec(self.paths, node.name, [
            "sh", "-c", f"lldpd -d -u {self.paths.lldp_socket(node.name)} -O {conf} "
            f"-I '{ports}' </dev/null >{ndir}/lldpd.log 2>&1 & echo $!"])
        state.nodes[node.name]["lldpd_pid"] = int(out.strip())
        # a real switch's one lldpd sees every port; here a tenant's host ports sit in the
        # VRF's namespace, so each gets an lldpd of its own (physical ports, no sub-ports)
        for vrf in node.vrfs if node.role != "host" else ():
            socket = self.paths.lldp_vrf_socket(node.name, vrf)
            out = run([*_nsenter(self.paths, node.name,
                                 net=self.paths.vrf_netns(node.name, vrf)),
                       "sh", "-c", f"lldpd -d -u {socket} -O {conf} -I '{ports},!{ports}.*' "
                       f"</dev/null >{ndir}/lldpd-{vrf}.log 2>&1 & echo $!"]).stdout
            state.nodes[node.name].setdefault("lldpd_vrf_pids", {})[vrf] = int(out.strip())

    def _start_sshd(self, node: LabNode, ndir: Path, state: LabState) -> None:
        paths = self.paths
        conf = ndir / "sshd_config"
        conf.write_text("\n".join([
            f"ListenAddress {node.mgmt_ipv4}",
            f"HostKey {ndir}/ssh_host_ed25519_key",
            f"PidFile {ndir}/sshd.pid",
            f"AuthorizedKeysFile {paths.ssh_dir}/authorized_keys",
            f"AllowUsers {paths.user}",
            "PermitRootLogin no",
            "PasswordAuthentication no",
            "KbdInteractiveAuthentication no",
            "UsePAM yes",
            "PrintMotd no",
            "MaxSessions 32",
            "MaxStartups 64:30:128",
            "Subsystem sftp /usr/lib/openssh/sftp-server",
            "",
        ]), encoding="utf-8")
        node_exec(paths, node.name, ["/usr/sbin/sshd", "-f", str(conf)])

    def _wait_ssh(self, timeout: float = 30) -> None:
        pending = {n.name: n.mgmt_ipv4 for n in self.spec.nodes.values()}
        deadline = time.monotonic() + timeout
        while pending and time.monotonic() < deadline:
            for name, address in list(pending.items()):
                if _port_open(address, 22):
                    del pending[name]
            if pending:
                time.sleep(0.1)
        if pending:
            raise LabError(f"sshd did not come up on {', '.join(sorted(pending))}")

    # ---- status ------------------------------------------------------------------------

    def status(self) -> list[dict[str, Any]]:
        return self.status_of(self.paths)

    @staticmethod
    def status_of(paths: LabPaths) -> list[dict[str, Any]]:
        """Per node: namespace, management address, processes alive, SSH answering."""
        state = LabState.load(paths)
        if state is None:
            return []
        namespaces = set(_netns_list())
        rows = []
        for name, info in state.nodes.items():
            ndir = paths.node_dir(name)
            processes = {"sshd": _pid_alive(_read_pid(ndir / "sshd.pid"))}
            platform = info.get("platform") or (DEFAULT_HOST if info["role"] == "host"
                                                else DEFAULT_SWITCH)
            runtime = PLATFORMS[platform].facts.lab.runtime if platform in PLATFORMS else None
            if runtime is not None and runtime.pid_dir is not None:
                for daemon in runtime.daemons:
                    processes[daemon] = _pid_alive(_read_pid(
                        node_folder(ndir, runtime.pid_dir) / f"{daemon}.pid"))
            processes["lldpd"] = _pid_alive(info.get("lldpd_pid"))
            watchers = info.get("carrier_pids") or {}
            if watchers:
                processes["carrier"] = all(_pid_alive(p) for p in watchers.values())
            ssh = _port_open(info["mgmt_ipv4"], 22, timeout=0.5)
            healthy = info["netns"] in namespaces and all(processes.values()) and ssh
            rows.append({"node": name, "role": info["role"], "netns": info["netns"],
                         "mgmt_ipv4": info["mgmt_ipv4"], "ssh": ssh, "processes": processes,
                         "healthy": healthy})
        return rows

    # ---- down --------------------------------------------------------------------------

    def down(self, state: LabState | None = None) -> None:
        teardown(self.paths, state or LabState.load(self.paths))


def clear_counters(paths: LabPaths, state: LabState, nodes: Iterable[str] = ()) -> list[str]:
    """Clear the link-flap counts of the named nodes (every node when none is named), as an
    operator clears a switch's counters after turn-up: flaps count from now on. The nodes
    cleared; LabError naming a node the lab does not have."""
    require_root("clear-counters")
    names = list(nodes) or list(state.nodes)
    unknown = [n for n in names if n not in state.nodes]
    if unknown:
        raise LabError(f"lab {paths.prefix!r} has no node {unknown[0]!r} "
                       f"(it has {', '.join(sorted(state.nodes))})")
    now = f"{time.time():.6f}\n"
    for name in names:
        logs = node_folder(paths.node_dir(name), STATE_DIR) / lab_carrier.DIR
        if logs.is_dir():  # a lab brought up before the watchers: nothing counts flaps
            write_atomic(logs / lab_carrier.CLEARED, now)
            (logs / lab_carrier.CLEARED).chmod(0o644)  # the node's login user reads it
    return names


def teardown(paths: LabPaths, state: LabState | None, *, term_grace: float = 5.0,
             kill_grace: float = 3.0) -> None:
    """Remove everything a lab of this prefix made; with no state, find it by name (sweep).

    Returns only when every process of the lab has exited (SIGTERM, then SIGKILL after
    term_grace) and its namespaces, mounts and directories are gone; raises LabError naming
    whatever is still there after the deadline instead of waiting forever.
    """
    require_root("down")
    namespaces = [n for n in _netns_list() if paths.owns_netns(n)]
    if state is not None:
        namespaces = sorted(set(namespaces) | {n for n in state.namespaces
                                               if Path(f"/run/netns/{n}").exists()})
    ns_ids = _namespace_ids(paths, namespaces)
    me = procs.read_proc(os.getpid())
    if me is not None and me.namespaces & ns_ids:
        raise LabError(f"flatfab lab down runs inside lab {paths.prefix!r} (a node shell?); "
                       "run it from the machine's own shell")
    spared = procs.ancestors(os.getpid())
    home = _net_of(me)
    seen: dict[int, str] = {}

    def find() -> dict[int, str]:
        found = procs.members(procs.scan(), ns_ids, f"{paths.root}/", spared, home)
        seen.update(found)
        return found

    running = procs.stop(find, term_grace=term_grace, kill_grace=kill_grace)
    # only now, with nobody inside, can mounts and namespaces really go
    for mountpoint in _lab_mounts(paths):
        if not mountpoint.startswith("/run/netns/"):  # those are `ip netns del`'s below
            run(["umount", "-l", mountpoint], check=False, timeout=10)
    # the kernel tears namespaces down asynchronously: remove the root-side veth ourselves
    run(["ip", "link", "del", paths.mgmt_if], check=False, timeout=10)
    ip_batch([f"netns del {n}" for n in namespaces], force=True)
    if run(["id", paths.user], check=False).returncode == 0:
        run(["userdel", "--remove", paths.user], check=False, timeout=30)
    paths.sudoers.unlink(missing_ok=True)
    shutil.rmtree(paths.root, ignore_errors=True)
    others = list(RUN_ROOT.iterdir()) if RUN_ROOT.exists() else []
    if not others:
        with contextlib.suppress(OSError):
            RUN_ROOT.rmdir()
        for directory in (state.created_dirs if state else []):
            with contextlib.suppress(OSError):
                Path(directory).rmdir()
    # exited daemons are init's zombies until it reaps them: wait so `pgrep` agrees with us
    procs.wait_reaped(seen, timeout=3.0)
    left = _leftovers(paths, running)
    if left:
        more = f" and {len(left) - 6} more" if len(left) > 6 else ""
        raise LabError(f"lab {paths.prefix!r} is not fully down after "
                       f"{term_grace + kill_grace:.0f} s; still there: {', '.join(left[:6])}"
                       f"{more} (retry `flatfab lab down --sweep --prefix {paths.prefix}`)")


def _net_of(proc: procs.Proc | None) -> frozenset[str]:
    """The network namespace of proc (ours: where an operator's lab tools run)."""
    return frozenset(n for n in proc.namespaces if n.startswith("net:")) if proc else frozenset()


def _namespace_ids(paths: LabPaths, namespaces: Iterable[str]) -> frozenset[str]:
    """Kernel ids of the lab's namespaces: its network ones and the nodes' mount/UTS ones."""
    files = [("net", Path(f"/run/netns/{n}")) for n in namespaces]
    with contextlib.suppress(OSError):
        for ns_file in paths.ns_dir.iterdir():
            kind = {".mnt": "mnt", ".uts": "uts"}.get(ns_file.suffix)
            if kind:
                files.append((kind, ns_file))
    return procs.namespace_ids(files)


def _lab_mounts(paths: LabPaths) -> list[str]:
    """The lab's mount points in this mount namespace (its tree, its /run/netns files),
    deepest first."""
    try:
        text = Path("/proc/self/mountinfo").read_text(encoding="utf-8")
    except OSError:
        return []
    return [p for p in procs.mounts_matching(text, [str(paths.root), "/run/netns"])
            if not p.startswith("/run/netns") or paths.owns_netns(Path(p).name)]


def _leftovers(paths: LabPaths, running: dict[int, str]) -> list[str]:
    """What a finished teardown must not leave: each named so the error says what."""
    left = [f"process {pid} ({comm})" for pid, comm in sorted(running.items())
            if (p := procs.read_proc(pid)) is not None and not p.exited]
    left += [f"netns {n}" for n in _netns_list() if paths.owns_netns(n)]
    left += [f"mount {m}" for m in _lab_mounts(paths)]
    if paths.root.exists():
        left.append(f"directory {paths.root}")
    return left


def _netns_list() -> list[str]:
    return [line.split()[0] for line in run(["ip", "netns", "list"], check=False).stdout
            .splitlines() if line.strip()]


def _group_exists(group: str) -> bool:
    return run(["getent", "group", group], check=False).returncode == 0


def _read_pid(path: Path) -> int | None:
    with contextlib.suppress(OSError, ValueError):
        return int(path.read_text(encoding="utf-8").split()[0])
    return None


def _pid_alive(pid: int | None) -> bool:
    if not pid:
        return False
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8")
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"  # a zombie is not alive


def _port_open(address: str, port: int, timeout: float = 0.3) -> bool:
    with contextlib.suppress(OSError), socket.create_connection((address, port), timeout):
        return True
    return False


def lab_nodes_processes(paths: LabPaths) -> Iterator[int]:
    """PIDs of this lab still running (used by tests to prove `down` leaves nothing)."""
    ns_ids = _namespace_ids(paths, [n for n in _netns_list() if paths.owns_netns(n)])
    me = procs.read_proc(os.getpid())
    found = procs.members(procs.scan(), ns_ids, f"{paths.root}/", procs.ancestors(os.getpid()),
                          _net_of(me))
    yield from sorted(found)
