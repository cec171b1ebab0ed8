"""Platform `sonic`: community SONiC switches (CONFIG_DB via GCU, FRR in split mode)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from flatfab.model.physical import PortPhysical
from flatfab.model.state import DeviceState, Probe
from flatfab.platforms import configdb, netmiko_shell
from flatfab.platforms.base import DeviceDriver
from flatfab.platforms.sections import by_header
from flatfab.platforms.sonic import changes
from flatfab.platforms.sonic.collect import collect, pfc_counters, physical, queue_counters
from flatfab.platforms.sonic.driver import SonicDriver, SonicError
from flatfab.platforms.sonic.render import CONFIG_DB, render

# read-only commands: show, vtysh show, and read verbs of the Redis databases
# arguments of a database read: bare words, or single-quoted keys (a SONiC key's `|` only
# inside quotes: a bare one would pipe the read into another command)
_ARG = r"(?:'[A-Za-z0-9_:|.,*/ -]*'|[A-Za-z0-9_:.,*/-]+)"
_SAFE_ARGS = rf"{_ARG}(?: {_ARG})*"
_READS = (
    re.compile(r"^\s*show\s[^;|&`$<>]*$"),
    re.compile(r"^\s*vtysh -c '\s*show\s[^';|&`$<>]*'$"),
    re.compile(rf"^\s*sonic-db-cli [A-Z_]+ (HGETALL|HGET|HKEYS|KEYS|EXISTS) {_SAFE_ARGS}$"),
    re.compile(rf"^\s*redis-cli -n [0-9]+ (HGETALL|HGET|HKEYS|KEYS|EXISTS) {_SAFE_ARGS}$"),
)


def _config_db(text: str) -> configdb.ConfigDb:
    return configdb.load("\n".join(by_header(text).get(CONFIG_DB, [])) or "{}")


class SonicPlatform(netmiko_shell.NetmikoShellPlatform):
    def render(self, device: DeviceState) -> str:
        return render(device, self.names)

    def sections(self, config: str) -> dict[str, list[str]]:
        return by_header(config)

    def collect(self, driver: DeviceDriver, planned: DeviceState,
                probes: list[Probe]) -> DeviceState:
        return collect(driver, planned, probes, self.names)

    def collect_physical(self, driver: DeviceDriver,
                         planned: DeviceState) -> dict[str, PortPhysical]:
        return physical(driver, planned)

    def drift_texts(self, driver: DeviceDriver, intended: str) -> tuple[str, str]:
        """Running projected onto the rows and fields the intended config renders."""
        running = driver.get_config(retrieve="running")["running"]
        sections = by_header(running)
        db = changes.project(_config_db(running), _config_db(intended))
        return (f"!! {CONFIG_DB}\n{configdb.dump(db)}"
                + "".join(f"!! {name}\n" + "\n".join(lines) + "\n"
                          for name, lines in sections.items() if name != CONFIG_DB)), intended

    def change_notes(self, running: str, intended: str) -> list[str]:
        """Edits apply-patch refuses (or that act only after a reload)."""
        try:
            now, wanted = _config_db(running), _config_db(intended)
        except configdb.ConfigDbError as exc:
            return [f"config_db section unreadable: {exc}"]
        ops = changes.patch(changes.project(now, wanted),
                            changes.project(changes.target(now, wanted), wanted))
        return [str(r) for r in changes.refusals(ops)]





    def adapt(self, connection: Any, *, read_only: bool) -> DeviceDriver:
        return SonicDriver(netmiko_shell.strict_connection(connection, self.name, SonicError),
                           read_only=read_only, is_show=self.show_command)

    def show_command(self, command: str) -> bool:
        return any(pattern.match(command) for pattern in _READS)

    def class_counters(self, driver: DeviceDriver) -> dict[str, dict[int, dict[str, int]]]:
        return {port: {tc: {"packets": n} for tc, n in per.items()}
                for port, per in queue_counters(driver).items()}

    def pfc_counters(self, driver: DeviceDriver,
                     ports: list[str]) -> dict[str, dict[str, dict[int, int]]]:
        """PFC frames per port, direction and priority (COUNTERS_DB)."""
        return pfc_counters(driver, ports)


PLATFORM = SonicPlatform(Path(__file__).with_name("platform.yaml"))
