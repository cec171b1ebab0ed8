"""A DeviceDriver for Cumulus Linux 5.x over SSH (netmiko `cumulus_linux`), pushing NVUE.

Push (NVIDIA "NVUE CLI" and NVUE command reference, `nv config`):
- the candidate is flatfab's `set` document; before it goes an `unset` of every object
  flatfab owns (its ports, lo, SVIs and sub-interfaces, the bridge, BGP, tenant VRFs, qos,
  and the ECMP hashing `system forwarding ecmp-hash`/`hash-seed` where the candidate sets
  it), so the pending revision is the candidate exactly there and untouched elsewhere (eth0
  and VRF mgmt are never named); NVUE applies only the net difference. Packet trimming
  (`system forwarding packet-trim`) is flatfab's always: the plan's congestion profile says
  whether the switch trims, so a push to a switch that should not takes it away. Adaptive
  routing (`router adaptive-routing`, and each port's own) belongs with the hashing: a
  candidate that sets the hashing (a plan with `load_balancing`) states the way of
  balancing, so a hash plan takes adaptive routing away; a candidate without keeps the
  switch's, its ports' included (re-set after the candidate: the ports are flatfab's);
- `nv config detach` drops stray pending edits, `nv config patch <file>` loads the document;
- `nv config apply --confirm <minutes> -y` applies with NVUE's own rollback timer (whole
  minutes: revert_in is rounded up, never down); `--confirm-yes` keeps, `--confirm-no`
  drops it (the confirm flags' names come from NVIDIA's CLI help, not verified on a switch
  here); `nv config apply -y` applies for good (auto-save is on from 5.9).
- rollback after a confirmed commit re-applies the applied config saved before it
  (`nv config show -o yaml` into a file, `nv config replace`, apply).
Every command runs through `_run`, which refuses changes when opened read-only.
"""

from __future__ import annotations

import json
import math
import re
import shlex
import time
from collections.abc import Callable, Iterable
from typing import Any

from flatfab.errors import FlatfabError
from flatfab.platforms import cli_driver
from flatfab.platforms.base import ReadOnlyError
from flatfab.platforms.netmiko_shell import Shell, ShellCliDriver, base64_chunks
from flatfab.platforms.nvue.nvyaml import NvueYamlError, Tree, applied, load_ops
from flatfab.platforms.nvue.render import (
    ADAPTIVE,
    SECTIONS,
    TARGET,
    Release,
    canonical,
    text,
)

STATE_DIR = "/var/tmp/flatfab"
HASHING = ("ecmp-hash", "hash-seed")  # the keys of `system forwarding` flatfab renders
TRIMMING = "packet-trim"  # flatfab's too, whatever the plan: the profile says trim or not
_VERSION = re.compile(r"\b5\.(\d+)(\.\d+)*\b")


class NvueError(FlatfabError):
    """An NVUE command failed or answered something flatfab cannot read (one line)."""


def parse_json(output: str, what: str) -> Any:
    """The JSON document in a command's output (a warning line before it is skipped)."""
    return cli_driver.parse_json(output, what, NvueError)


def config_tree(value: Any) -> Tree:
    """`nv config show -o json`: a list of operations (header, set) or the tree itself."""
    if isinstance(value, list):
        try:
            return applied(value)
        except NvueYamlError as exc:
            raise NvueError(f"applied config: {exc}") from None
    if isinstance(value, dict):
        return value
    raise NvueError("applied config: expected a JSON object or a list of operations")


def owned(tree: Tree, management: Iterable[str] = ("eth0",)) -> Tree:
    """The part of an NVUE tree flatfab owns: what a push replaces and drift compares."""
    keep = set(management)
    out: Tree = {}
    system = tree.get("system")
    if isinstance(system, dict):
        mine: Tree = {"hostname": system["hostname"]} if "hostname" in system else {}
        forwarding = {**hashing_of(system), **trimming_of(system)}
        if forwarding:
            mine["forwarding"] = forwarding
        if mine:
            out["system"] = mine
    interfaces = {name: value for name, value in (tree.get("interface") or {}).items()
                  if name not in keep and re.match(r"^(swp|lo$|vlan)", name)}
    if interfaces:
        out["interface"] = interfaces
    for key in ("bridge", "qos"):
        if tree.get(key):
            out[key] = tree[key]
    router = tree.get("router") or {}
    mine_router = {key: router[key] for key in ("bgp", ADAPTIVE) if router.get(key)}
    if mine_router:
        out["router"] = mine_router
    vrfs = {name: value for name, value in (tree.get("vrf") or {}).items() if name != "mgmt"}
    if vrfs:
        out["vrf"] = vrfs
    return {key: out[key] for key in SECTIONS if key in out}


def hashing_of(system: Any) -> Tree:
    """The ECMP hashing part of a `system` tree (`forwarding` ecmp-hash and hash-seed); the
    rest of `system forwarding` (lag-hash, profiles, ...) is not flatfab's."""
    forwarding = system.get("forwarding") if isinstance(system, dict) else None
    if not isinstance(forwarding, dict):
        return {}
    return {key: forwarding[key] for key in HASHING if key in forwarding}


def trimming_of(system: Any) -> Tree:
    """The packet trimming part of a `system` tree (`forwarding packet-trim`)."""
    forwarding = system.get("forwarding") if isinstance(system, dict) else None
    if not isinstance(forwarding, dict) or TRIMMING not in forwarding:
        return {}
    return {TRIMMING: forwarding[TRIMMING]}


def adaptive_of(tree: Tree) -> Tree:
    """The adaptive routing part of a tree: `router adaptive-routing` and each interface's
    `router adaptive-routing` (empty: none stated)."""
    out: Tree = {}
    router = tree.get("router")
    if isinstance(router, dict) and isinstance(router.get(ADAPTIVE), dict):
        out["router"] = {ADAPTIVE: router[ADAPTIVE]}
    ports = {name: {"router": {ADAPTIVE: entry["router"][ADAPTIVE]}}
             for name, entry in (tree.get("interface") or {}).items()
             if isinstance(entry, dict) and isinstance(entry.get("router"), dict)
             and isinstance(entry["router"].get(ADAPTIVE), dict)}
    if ports:
        out["interface"] = ports
    return out


def without_adaptive(tree: Tree) -> Tree:
    """The tree with no adaptive routing (a copy where anything goes)."""
    out: Tree = {key: value for key, value in tree.items() if key not in ("router", "interface")}
    router = {k: v for k, v in (tree.get("router") or {}).items() if k != ADAPTIVE}
    if router:
        out["router"] = router
    if "interface" in tree:
        interfaces: Tree = {}
        for name, entry in tree["interface"].items():
            kept = entry
            if isinstance(entry, dict) and isinstance(entry.get("router"), dict):
                kept = {**entry, "router": {k: v for k, v in entry["router"].items()
                                             if k != ADAPTIVE}}
                if not kept["router"]:
                    del kept["router"]
            interfaces[name] = kept
        out["interface"] = interfaces
    return {key: out[key] for key in tree if key in out}


def kept_document(running: Tree, candidate: Tree) -> Tree:
    """What a candidate without hashing keeps of the switch's adaptive routing: the ports'
    `router adaptive-routing` on the ports the candidate sets (the unset of each owned port
    took it away; the global state is not unset then)."""
    if hashing_of(candidate.get("system")):
        return {}
    ports = adaptive_of(running).get("interface", {})
    kept = {name: value for name, value in ports.items()
            if name in (candidate.get("interface") or {})}
    return {"interface": kept} if kept else {}


def unset_document(running: Tree, candidate: Tree | None = None) -> Tree:
    """The `unset` that clears every owned object the running config has. The hashing only
    where the candidate sets it: a plan without `lb` leaves the switch's hashing alone, and
    one whose tier has no seed takes a seed set before away (switchd's own again). Packet
    trimming always: a switch the plan gives none stops trimming."""
    mine = owned(running)
    doc: Tree = {}
    gone = list(trimming_of(mine.get("system")))
    balances = candidate is not None and bool(hashing_of(candidate.get("system")))
    if balances:
        gone += list(hashing_of(mine.get("system")))
    if gone:
        doc["system"] = {"forwarding": {key: {} for key in sorted(gone)}}
    for key in ("interface", "vrf"):
        if key in mine:
            doc[key] = {name: {} for name in mine[key]}
    for key in ("bridge", "qos"):
        if key in mine:
            doc[key] = {}
    router = mine.get("router", {})
    # adaptive routing with the hashing: only where the candidate states how to balance
    router_gone: Tree = {key: {} for key in ("bgp", *([ADAPTIVE] if balances else []))
                         if key in router}
    if router_gone:
        doc["router"] = router_gone
    return doc


def release_line(version: str) -> str | None:
    """"5.14" for 5.0-5.14, "5.15" for 5.15 and later (None: not a 5.x version)."""
    found = _VERSION.search(version)
    if found is None:
        return None
    return "5.14" if int(found.group(1)) <= 14 else "5.15"


class NvueDriver(ShellCliDriver[Tree]):
    """NAPALM-style driver; `shell` is the opened netmiko connection."""

    error = NvueError

    def __init__(self, shell: Shell, *, read_only: bool, is_show: Callable[[str], bool],
                 management: Iterable[str] = ("eth0",), release: Release = TARGET,
                 timeout: float = 300.0, clock: Callable[[], float] = time.time) -> None:
        super().__init__(shell, read_only=read_only, is_show=is_show, timeout=timeout,
                         clock=clock)
        self.management = tuple(management)
        self.release = release

    # ---- commands -----------------------------------------------------------------------

    def _program(self, command: str) -> str:
        return str(command.split(maxsplit=2)[:2])

    def _write(self, path: str, content: str) -> None:
        """A file on the switch, written in base64 chunks (no quoting of its content)."""
        staging = shlex.quote(path + ".part")
        self._run(f"mkdir -p {STATE_DIR} && rm -f {staging}", mutating=True)
        for chunk in base64_chunks(content):
            self._run(f"echo {chunk} | base64 -d >> {staging}", mutating=True)
        self._run(f"mv {staging} {shlex.quote(path)}", mutating=True)

    # ---- reads --------------------------------------------------------------------------

    def applied_tree(self) -> Tree:
        return config_tree(parse_json(self._run("nv config show -o json"), "applied config"))

    def running_text(self) -> str:
        """The owned part of the applied config, in the rendered form (canonical order)."""
        return text(canonical(owned(self.applied_tree(), self.management)))

    def system(self) -> dict[str, Any]:
        value = parse_json(self._run("nv show system -o json"), "nv show system")
        if not isinstance(value, dict):
            raise NvueError("nv show system: expected a JSON object")
        return value

    def get_config(self, retrieve: str = "all", full: bool = False,
                   sanitized: bool = False, format: str = "text") -> dict[str, str]:
        running = self.running_text() if retrieve in ("all", "running") else ""
        candidate = text(self._candidate) if self._candidate is not None else ""
        return {"running": running, "startup": "", "candidate": candidate}

    def get_facts(self) -> dict[str, Any]:
        system = self.system()
        interfaces = sorted(name for name in (self.applied_tree().get("interface") or {}))
        version = str(system.get("build") or system.get("product-release") or "")
        return {"hostname": str(system.get("hostname", "")),
                "fqdn": str(system.get("hostname", "")), "vendor": "NVIDIA",
                "model": str(system.get("platform-name") or system.get("product-name") or ""),
                "os_version": version, "serial_number": "",
                "uptime": float(system.get("uptime", -1)) if str(
                    system.get("uptime", "")).isdigit() else -1.0,
                "interface_list": interfaces}

    # ---- candidate ----------------------------------------------------------------------

    def _parse_candidate(self, config: str) -> Tree:
        try:
            return applied(load_ops(config))
        except NvueYamlError as exc:
            raise NvueError(f"candidate: {exc}") from None

    def _desired(self, running: Tree) -> Tree:
        assert self._candidate is not None
        ops: list[Tree] = [{"set": running}]
        if not self._merge:
            ops.append({"unset": unset_document(running, self._candidate)})
        ops.append({"set": self._candidate})
        kept = {} if self._merge else kept_document(running, self._candidate)
        if kept:
            ops.append({"set": kept})
        return applied(ops)

    def _compare_texts(self, candidate: Tree) -> tuple[str, str]:
        running = self.applied_tree()
        before = text(canonical(owned(running, self.management)))
        after = text(canonical(owned(self._desired(running), self.management)))
        return before, after

    # ---- commit -------------------------------------------------------------------------

    def patch_document(self, running: Tree) -> str:
        """What `nv config patch` gets: unset of the owned objects, then the candidate, then
        the ports' adaptive routing a candidate without hashing keeps."""
        assert self._candidate is not None
        undo = {} if self._merge else unset_document(running, self._candidate)
        head = f"- unset: {json.dumps(undo, sort_keys=True)}\n" if undo else ""
        kept = {} if self._merge else kept_document(running, self._candidate)
        tail = f"- set: {json.dumps(kept, sort_keys=True)}\n" if kept else ""
        return head + text(self._candidate) + tail

    def _check_release(self) -> None:
        version = str(self.system().get("build") or self.system().get("product-release")
                      or "")
        line = release_line(version)
        if line != self.release.line:
            raise NvueError(f"the switch runs {version or 'an unknown release'}; the "
                            f"candidate is spelled for Cumulus Linux {self.release.line}"
                            f"{'+' if self.release.line == '5.15' else ' and earlier'}")

    def commit_config(self, message: str = "", revert_in: int | None = None) -> None:
        self._committable()
        if self.has_pending_commit():
            raise NvueError("a commit is still pending: confirm it or roll it back first")
        self._check_release()
        running = self.applied_tree()
        tag = time.strftime("%Y%m%d%H%M%S", time.gmtime(self.clock()))
        self._run(f"mkdir -p {STATE_DIR} && nv config show -o yaml > "
                  f"{STATE_DIR}/before-{tag}.yaml", mutating=True)
        patch = f"{STATE_DIR}/patch-{tag}.yaml"
        self._write(patch, self.patch_document(running))
        self._run("nv config detach", mutating=True)
        try:
            self._run(f"nv config patch {patch}", mutating=True)
            if revert_in is not None:
                minutes = max(1, math.ceil(revert_in / 60))
                self._run(f"nv config apply --confirm {minutes} -y", mutating=True)
            else:
                self._run("nv config apply -y", mutating=True)
        except NvueError as exc:
            self._run("nv config detach", mutating=True)
            raise NvueError(f"commit failed, nothing applied: {exc}") from None
        self.discard_config()

    # ---- commit-confirm and rollback ----------------------------------------------------

    def revisions(self) -> dict[str, Any]:
        value = parse_json(self._run("nv config revision -o json"), "nv config revision")
        if not isinstance(value, dict):
            raise NvueError("nv config revision: expected a JSON object")
        return value

    def has_pending_commit(self) -> bool:
        return any(isinstance(r, dict) and r.get("state") == "confirm"
                   for r in self.revisions().values())

    def confirm_commit(self) -> None:
        if self.read_only:
            raise ReadOnlyError("read-only: confirm_commit() is refused")
        if not self.has_pending_commit():
            raise NvueError("no pending commit to confirm (it may have been rolled back)")
        self._run("nv config apply --confirm-yes", mutating=True)

    def backups(self) -> list[str]:
        listing = self._run(f"ls -1 {STATE_DIR} 2>/dev/null || true")
        return sorted(n.strip() for n in listing.splitlines()
                      if re.fullmatch(r"before-\d{14}\.yaml", n.strip()))

    def rollback(self) -> None:
        """Undo the pending commit, or else re-apply the config saved before the last one."""
        if self.read_only:
            raise ReadOnlyError("read-only: rollback() is refused")
        if self.has_pending_commit():
            self._run("nv config apply --confirm-no", mutating=True)
            return
        done = self.backups()
        if not done:
            raise NvueError("nothing to roll back: no flatfab backup on the switch")
        self._run("nv config detach", mutating=True)
        self._run(f"nv config replace {STATE_DIR}/{done[-1]}", mutating=True)
        self._run("nv config apply -y", mutating=True)
        self._run(f"rm -f {STATE_DIR}/{done[-1]}", mutating=True)
