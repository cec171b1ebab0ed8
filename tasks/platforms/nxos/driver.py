"""A DeviceDriver for NX-OS over scrapli's `cisco_nxos` driver (SSH CLI).

Push (Cisco N9K System Management guide, "Performing Configuration Replace"):
1. `copy running-config bootflash:flatfab-rollback.cfg`: the config to return to later;
2. the full candidate (the running config's blocks flatfab does not own + the render)
   written to bootflash through tclsh, as NX-OS has no other file channel over the CLI;
3. `configure replace bootflash:flatfab-candidate.cfg [commit-timeout <s>]`: NX-OS diffs,
   applies the patch and restores the old config itself if the patch fails; with a timer it
   also restores it unless `configure replace commit` comes first (30-3600 s);
4. `copy running-config startup-config` once the change is final.
`rollback()` returns to the saved file with `rollback running-config file` (what NAPALM's
nxos driver runs too). Every command goes through `_send`, which refuses changes when the
driver was opened read-only.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Protocol

from flatfab.platforms import cli_driver
from flatfab.platforms.base import ReadOnlyError
from flatfab.platforms.cli_driver import CliDriver
from flatfab.platforms.nxos.sections import blocks, merge_into
from flatfab.transport import reasons

CANDIDATE = "bootflash:flatfab-candidate.cfg"
BACKUP = "bootflash:flatfab-rollback.cfg"
COMMIT_TIMEOUT = (30, 3600)  # seconds, `commit-timeout` range
REPLACE_OK = re.compile(r"configure replace completed successfully", re.I)
PENDING = re.compile(r"waiting for commit", re.I)
_TCL_UNSAFE = re.compile(r"[{}\\]")


class NxosError(Exception):
    """An NX-OS command failed or answered something flatfab cannot read (one line)."""


class Reply(Protocol):
    """What scrapli's Response gives back."""

    result: str
    failed: bool


class Channel(Protocol):
    """The part of scrapli's NXOSDriver the driver uses."""

    def send_command(self, command: str, **kwargs: Any) -> Any: ...
    def send_configs(self, configs: list[str], **kwargs: Any) -> Any: ...


def _first_line(text: str) -> str:
    """The last non-blank line of a reply, without its indentation."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:200] if lines else ""


def parse_json(text: str, what: str) -> Any:
    """The JSON document of a `| json` reply."""
    return cli_driver.parse_json(text, what, NxosError, tail=_first_line)


def normalize(config: str) -> str:
    """A config without comments, blank lines and the `version` line (NX-OS adds those)."""
    return "".join(f"{line}\n" for block in blocks(config) for line in block
                   if not (block[0].startswith("version ") and line is block[0]))


class NxosDriver(CliDriver[str]):
    """NAPALM-style driver; `conn` is the opened scrapli NXOSDriver."""

    error = NxosError

    def __init__(self, conn: Channel, *, read_only: bool, is_show: Callable[[str], bool],
                 management: tuple[str, ...] = ("mgmt0",), timeout: float = 600.0) -> None:
        super().__init__(read_only=read_only, is_show=is_show, timeout=timeout)
        self.conn = conn
        self.management = management

    # ---- commands -----------------------------------------------------------------------

    def _send(self, command: str, *, mutating: bool = False) -> str:
        if mutating and self.read_only:
            raise ReadOnlyError(f"read-only: refused command {command!r}")
        wait = self.wait_s(mutating=mutating)
        try:
            reply = self.conn.send_command(command, timeout_ops=wait)
        except Exception as exc:
            if reasons.kind(exc) != "timeout":
                raise
            raise NxosError(f"no answer within {wait:g} s to `{command}`") from exc
        text = str(getattr(reply, "result", reply))
        if getattr(reply, "failed", False):
            raise NxosError(f"`{command}` failed: {_first_line(text)}")
        return text

    def _configure(self, lines: list[str], *, privilege_level: str = "") -> None:
        if self.read_only:
            raise ReadOnlyError("read-only: configuration is refused")
        reply = self.conn.send_configs(lines, privilege_level=privilege_level,
                                       stop_on_failed=True, timeout_ops=self.timeout)
        if getattr(reply, "failed", False):
            failed = [r for r in reply if getattr(r, "failed", False)] \
                if isinstance(reply, list) else []
            where = failed[0] if failed else reply
            raise NxosError(f"`{getattr(where, 'channel_input', lines[0])}` failed: "
                            f"{_first_line(str(getattr(where, 'result', '')))}")

    def _write_file(self, path: str, text: str) -> None:
        """A file on bootflash through tclsh: one `puts` a line, braces quoting each."""
        unsafe = [line for line in text.splitlines() if _TCL_UNSAFE.search(line)]
        if unsafe:
            raise NxosError(f"cannot write {path}: line {unsafe[0][:80]!r} has a brace or "
                            "backslash, which tclsh would read as code")
        tcl_path = "/" + path.replace(":", "/", 1)
        lines = [f'set fl [open "{tcl_path}" w+]']
        lines += [f"puts -nonewline $fl {{{line}\n}}" for line in text.splitlines()]
        lines.append("close $fl")
        self._configure(lines, privilege_level="tclsh")

    # ---- reads --------------------------------------------------------------------------

    def running(self) -> str:
        return self._send("show running-config")

    def get_config(self, retrieve: str = "all", full: bool = False,
                   sanitized: bool = False, format: str = "text") -> dict[str, str]:
        running = self.running() if retrieve in ("all", "running") else ""
        startup = self._send("show startup-config") if retrieve in ("all", "startup") else ""
        return {"running": running, "startup": startup, "candidate": self._candidate or ""}

    def get_facts(self) -> dict[str, Any]:
        version = parse_json(self._send("show version | json"), "show version")
        rows = parse_json(self._send("show interface brief | json"), "show interface brief")
        table = rows.get("TABLE_interface", {}).get("ROW_interface", [])
        table = [table] if isinstance(table, dict) else table
        return {"hostname": str(version.get("host_name", "")),
                "fqdn": str(version.get("host_name", "")), "vendor": "Cisco",
                "model": str(version.get("chassis_id", "")),
                "os_version": str(version.get("nxos_ver_str", "")),
                "serial_number": str(version.get("proc_board_id", "")), "uptime": -1.0,
                "interface_list": [str(r.get("interface", "")) for r in table]}

    def cli(self, commands: list[str], encoding: str = "text") -> dict[str, Any]:
        out: dict[str, Any] = {}
        for command in commands:
            if encoding == "json":
                wanted = command if command.endswith("| json") else f"{command} | json"
                out[command] = parse_json(self._send(wanted, mutating=not self.is_show(wanted)),
                                          command)
            else:
                out[command] = self._send(command, mutating=not self.is_show(command))
        return out

    # ---- candidate ----------------------------------------------------------------------

    def _parse_candidate(self, config: str) -> str:
        touched = [b[0] for b in blocks(config)
                   if b[0].split()[:1] == ["interface"] and b[0].split()[-1] in self.management]
        if touched:
            raise NxosError(f"the candidate configures {touched[0]!r}, the management "
                            "interface: refused (flatfab never touches it)")
        return config

    def _full(self, running: str) -> str:
        """What the running config becomes once the candidate is committed."""
        assert self._candidate is not None
        if self._merge:
            return normalize(running) + normalize(self._candidate)
        return normalize(merge_into(running, self._candidate))

    def _compare_texts(self, candidate: str) -> tuple[str, str]:
        running = self.running()
        return normalize(running), self._full(running)

    # ---- commit -------------------------------------------------------------------------

    def commit_config(self, message: str = "", revert_in: int | None = None) -> None:
        candidate = self._committable()
        if self.has_pending_commit():
            raise NxosError("a configure replace is waiting for its commit: confirm or roll "
                            "it back first")
        if self._merge:
            if revert_in is not None:
                raise NxosError("a merge has no NX-OS commit timer: load a replace candidate "
                                "for commit-confirm")
            self._send(f"copy running-config {BACKUP}", mutating=True)
            self._configure(normalize(candidate).splitlines())
            self._send("copy running-config startup-config", mutating=True)
            self.discard_config()
            return
        command = f"configure replace {CANDIDATE}"
        if revert_in is not None:
            low, high = COMMIT_TIMEOUT
            if not low <= revert_in <= high:
                raise NxosError(f"revert_in {revert_in} s is outside NX-OS's commit-timeout "
                                f"range {low}-{high} s")
            command += f" commit-timeout {revert_in}"
        running = self.running()
        self._send(f"copy running-config {BACKUP}", mutating=True)
        self._write_file(CANDIDATE, merge_into(running, candidate))
        reply = self._send(command, mutating=True)
        if not REPLACE_OK.search(reply):
            # NX-OS restores the previous config itself when the patch fails
            raise NxosError(f"configure replace failed (NX-OS kept the previous config): "
                            f"{_first_line(reply)}")
        if revert_in is None:
            self._send("copy running-config startup-config", mutating=True)
        self.discard_config()

    def has_pending_commit(self) -> bool:
        return bool(PENDING.search(self._send("show config-replace status")))

    def confirm_commit(self) -> None:
        if not self.has_pending_commit():
            raise NxosError("no pending commit to confirm (the timer may have run out)")
        self._send("configure replace commit", mutating=True)
        self._send("copy running-config startup-config", mutating=True)

    def rollback(self) -> None:
        """Back to the config saved before the last commit (pending or confirmed)."""
        listing = self._send(f"dir {BACKUP}")
        if "No such file" in listing or BACKUP.split(":", 1)[1] not in listing:
            raise NxosError("nothing to roll back: no flatfab backup on bootflash")
        reply = self._send(f"rollback running-config file {BACKUP}", mutating=True)
        if re.search(r"fail", reply, re.I):
            raise NxosError(f"rollback failed: {_first_line(reply)}")
        self._send("copy running-config startup-config", mutating=True)

