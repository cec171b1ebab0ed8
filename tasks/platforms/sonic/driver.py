"""A DeviceDriver for community SONiC over an SSH command channel (netmiko `linux`).

Push: `config checkpoint`, then `config apply-patch` with the RFC 6902 patch of flatfab's
CONFIG_DB tables, then frr.conf through frr-reload.py in the bgp container (split mode).
GCU has no commit timer, so commit-confirm is a systemd timer on the switch that runs a
revert script (config rollback + the previous frr.conf) unless confirm_commit stops it;
confirm saves with `config save -y`. Every command runs through `_run`, which refuses
changes when the driver was opened read-only.
"""

from __future__ import annotations

import json
import re
import shlex
import time
from typing import Any

from flatfab.platforms import cli_driver, configdb
from flatfab.platforms.configdb import ConfigDb
from flatfab.platforms.netmiko_shell import ShellCliDriver, base64_chunks
from flatfab.platforms.sections import by_header
from flatfab.platforms.sonic import changes
from flatfab.platforms.sonic.render import CONFIG_DB, FRR, join

STATE_DIR = "/etc/sonic/flatfab"
FRR_DIR = "/etc/sonic/frr"  # split mode: the operator's frr.conf, /etc/frr in the container
FRR_RELOAD = "docker exec bgp /usr/lib/frr/frr-reload.py --reload /etc/frr/frr.conf"
CHECKPOINT = "flatfab-"
TIMER = "flatfab-revert-"
_HEADER = re.compile(r"^(Building configuration\.\.\.|Current configuration:|frr version .*)$")
_TIMER_UNIT = re.compile(rf"\b{TIMER}(\d{{14}})\.timer\b")


def read_running_db(text: str) -> ConfigDb:
    """`show runningconfiguration all` as CONFIG_DB: what flatfab does not read (the
    `bgpraw` text of 202405 on, list fields) is tolerated (configdb.normalize)."""
    try:
        return configdb.normalize(parse_json(text, "CONFIG_DB"))[0]
    except configdb.ConfigDbError as exc:
        raise SonicError(f"CONFIG_DB: {exc}") from None


class SonicError(Exception):
    """A SONiC command failed or answered something flatfab cannot read (one line)."""


class CommitRefusedError(SonicError):
    """The change needs more than apply-patch (a disruptive reload)."""


def normalize_frr(text: str) -> str:
    """FRR config without the lines that differ between frr.conf and running config."""
    lines: list[str] = []
    for line in text.splitlines():
        if _HEADER.match(line) or (not lines and line in {"", "!"}):
            continue
        lines.append(line.rstrip())
    return "\n".join(lines).strip("\n") + "\n"


def parse_json(text: str, what: str) -> Any:
    """The JSON document in a command's output (warnings before it are skipped)."""
    return cli_driver.parse_json(text, what, SonicError)


def _sudo(command: str) -> str:
    return f"sudo -n {command}"  # -n: fail at once instead of waiting at a password prompt


class SonicDriver(ShellCliDriver[tuple[ConfigDb, str]]):
    """NAPALM-style driver; `shell` is the opened netmiko connection."""

    error = SonicError

    # ---- commands -----------------------------------------------------------------------

    def _write(self, path: str, text: str) -> None:
        """A file on the switch, written in base64 chunks (no quoting of its content)."""
        staging = shlex.quote(path + ".part")
        self._run(_sudo(f"rm -f {staging}"), mutating=True)
        for chunk in base64_chunks(text):
            self._run(f"echo {chunk} | base64 -d | {_sudo('tee -a')} {staging} >/dev/null",
                      mutating=True)
        self._run(_sudo(f"mv {staging} {shlex.quote(path)}"), mutating=True)

    # ---- reads --------------------------------------------------------------------------

    def running_db(self) -> ConfigDb:
        return read_running_db(self._run("show runningconfiguration all"))

    def running_frr(self) -> str:
        return normalize_frr(self._run("vtysh -c 'show running-config'"))

    def running_text(self, reference: ConfigDb | None = None) -> str:
        """Running config in the rendered form: flatfab's CONFIG_DB part and frr.conf."""
        db = changes.project(self.running_db(), reference)
        return join(configdb.dump(db), self.running_frr())

    def get_config(self, retrieve: str = "all", full: bool = False,
                   sanitized: bool = False, format: str = "text") -> dict[str, str]:
        reference = self._candidate[0] if self._candidate else None
        running = self.running_text(reference) if retrieve in ("all", "running") else ""
        return {"running": running, "startup": "", "candidate": self._candidate_text()}

    def get_facts(self) -> dict[str, Any]:
        db = self.running_db()
        meta = db.get("DEVICE_METADATA", {}).get("localhost", {})
        version = re.search(r"SONiC Software Version:\s*(\S+)", self._run("show version"))
        return {"hostname": meta.get("hostname", ""), "fqdn": meta.get("hostname", ""),
                "vendor": "SONiC", "model": meta.get("hwsku", ""),
                "os_version": version.group(1) if version else "", "serial_number": "",
                "uptime": -1.0, "interface_list": sorted(db.get("PORT", {}))}

    # ---- candidate ----------------------------------------------------------------------

    def _parse_candidate(self, config: str) -> tuple[ConfigDb, str]:
        sections = by_header(config)
        try:
            db = configdb.load("\n".join(sections.get(CONFIG_DB, [])) or "{}")
        except configdb.ConfigDbError as exc:
            raise SonicError(f"candidate {CONFIG_DB} section: {exc}") from None
        frr = "\n".join(sections.get(FRR, []))
        return db, normalize_frr(frr) if frr else ""

    def _candidate_text(self) -> str:
        if self._candidate is None:
            return ""
        return join(configdb.dump(self._candidate[0]), self._candidate[1])

    def _compare_texts(self, candidate: tuple[ConfigDb, str]) -> tuple[str, str]:
        db, frr = candidate
        running_db = self.running_db()
        running_frr = self.running_frr()
        desired = changes.target(running_db, db, merge=self._merge)
        if self._merge:  # FRR merges by its own rules: show what is added
            frr = running_frr + frr if frr else running_frr
        running = join(configdb.dump(changes.project(running_db, db)), running_frr)
        intended = join(configdb.dump(changes.project(desired, db)), frr)
        return running, intended

    # ---- commit -------------------------------------------------------------------------

    def plan_patch(self, running: ConfigDb) -> list[dict[str, Any]]:
        """The JSON Patch the loaded candidate needs; refused edits raise CommitRefusedError."""
        if self._candidate is None:
            raise SonicError("no candidate loaded")
        desired = changes.target(running, self._candidate[0], merge=self._merge)
        ops = changes.patch(running, desired)
        refused = [r for r in changes.refusals(ops) if r.blocking]
        if refused:
            raise CommitRefusedError("apply-patch cannot make this change: "
                                + "; ".join(str(r) for r in refused))
        return ops

    def commit_config(self, message: str = "", revert_in: int | None = None) -> None:
        candidate = self._committable()
        if self.pending_tags():
            raise SonicError("a commit is still pending: confirm or roll it back first")
        running = self.running_db()
        ops = self.plan_patch(running)
        old_frr = self.running_frr()
        new_frr = candidate[1]
        tag = time.strftime("%Y%m%d%H%M%S", time.gmtime(self.clock()))
        self._run(_sudo(f"mkdir -p {STATE_DIR}"), mutating=True)
        self._run(_sudo(f"config checkpoint {CHECKPOINT}{tag}"), mutating=True)
        self._write(f"{STATE_DIR}/frr-{tag}.conf", old_frr)
        self._write(f"{STATE_DIR}/revert-{tag}.sh", self._revert_script(tag))
        if revert_in is not None:
            # armed before anything changes: a change that cuts flatfab off still reverts
            self._run(_sudo(f"systemd-run --unit={TIMER}{tag} --on-active={int(revert_in)} "
                            f"/bin/sh {STATE_DIR}/revert-{tag}.sh"), mutating=True)
        try:
            if ops:
                path = f"{STATE_DIR}/patch-{tag}.json"
                self._write(path, json.dumps(ops, indent=1, sort_keys=True) + "\n")
                self._run(_sudo(f"config apply-patch {path}"), mutating=True)
            if new_frr and (self._merge or new_frr != old_frr):
                self._apply_frr(tag, new_frr)
        except SonicError as exc:
            self._revert(tag)
            raise SonicError(f"commit failed and was rolled back: {exc}") from None
        if revert_in is None:
            self._run(_sudo("config save -y"), mutating=True)
        self.discard_config()

    def _apply_frr(self, tag: str, text: str) -> None:
        # /etc/sonic/frr is /etc/frr inside the bgp container, where FRR reads it
        name = f"flatfab-{tag}.conf"
        self._write(f"{FRR_DIR}/{name}", text)
        if self._merge:  # a merge adds to the running FRR config, then persists it
            self._run(_sudo(f"docker exec bgp vtysh -f /etc/frr/{name}"), mutating=True)
            self._run(_sudo("docker exec bgp vtysh -c 'write memory'"), mutating=True)
        else:
            self._run(_sudo(f"cp {FRR_DIR}/{name} {FRR_DIR}/frr.conf"), mutating=True)
            self._run(_sudo(FRR_RELOAD), mutating=True)
        self._run(_sudo(f"rm -f {FRR_DIR}/{name}"), mutating=True)

    def _revert_script(self, tag: str) -> str:
        return (f"#!/bin/sh\n# flatfab: undo commit {tag}\n"
                f"config rollback {CHECKPOINT}{tag}\n"
                f"cp {STATE_DIR}/frr-{tag}.conf {FRR_DIR}/frr.conf\n"
                f"{FRR_RELOAD}\n")

    def _revert(self, tag: str) -> None:
        self._run(_sudo(f"systemctl stop {TIMER}{tag}.timer || true"), mutating=True)
        self._run(_sudo(f"sh {STATE_DIR}/revert-{tag}.sh"), mutating=True)

    # ---- commit-confirm and rollback ----------------------------------------------------

    def pending_tags(self) -> list[str]:
        listing = self._run(f"systemctl list-timers --no-legend --plain '{TIMER}*'")
        return sorted(set(_TIMER_UNIT.findall(listing)))

    def has_pending_commit(self) -> bool:
        return bool(self.pending_tags())

    def confirm_commit(self) -> None:
        tags = self.pending_tags()
        if not tags:
            raise SonicError("no pending commit to confirm")
        for tag in tags:
            self._run(_sudo(f"systemctl stop {TIMER}{tag}.timer"), mutating=True)
        self._run(_sudo("config save -y"), mutating=True)

    def checkpoints(self) -> list[str]:
        names = parse_json(self._run(_sudo("config list-checkpoints")), "list-checkpoints")
        if not isinstance(names, list):
            raise SonicError("list-checkpoints: expected a JSON list")
        return sorted(str(n) for n in names if str(n).startswith(CHECKPOINT))

    def rollback(self) -> None:
        """Undo the pending commit, or else the last confirmed one (and save that)."""
        pending = self.pending_tags()
        if pending:
            self._revert(pending[-1])
            return
        done = self.checkpoints()
        if not done:
            raise SonicError("nothing to roll back: no flatfab checkpoint on the switch")
        self._run(_sudo(f"sh {STATE_DIR}/revert-{done[-1].removeprefix(CHECKPOINT)}.sh"),
                  mutating=True)
        self._run(_sudo(f"config delete-checkpoint {done[-1]}"), mutating=True)
        self._run(_sudo("config save -y"), mutating=True)
