"""Every required device's inventory entry (`required_devices`: every switch and every
managed host), checked as Nornir resolves it, before any connection or journal: its platform
(host, groups, defaults) is the intent's and its extra is installed; its address is an IP
address or a DNS name outside the fabric's pools, its port a TCP port; and, where the run
logs in, it has a user name, a way to log in (a password, a key file that exists, an agent
or a key of the user's own; HTTPS platforms: a password) and its host key in the
known_hosts file its plugin checks. Every problem is one line naming the file and key to
fix (the known_hosts file for host keys), all found in one pass.
"""

from __future__ import annotations

import ipaddress
import os
import re
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import paramiko
from nornir.core import Nornir
from nornir.core.inventory import Host

from flatfab.errors import InputProblem
from flatfab.extras import installed
from flatfab.intent.semantics import AddressSpace
from flatfab.model.state import DeviceState, FabricState
from flatfab.platforms.base import Login, Platform
from flatfab.platforms.registry import PLATFORMS
from flatfab.workflows.devices import nornir_origin
from flatfab.workflows.devices.credentials import (
    ENV,
    Account,
    Credentials,
    account_of,
    env_name,
)
from flatfab.workflows.devices.nornir_origin import DEFAULTS, Entry, Origin
from flatfab.yamlio import line_of

# the keys OpenSSH and paramiko try on their own (~/.ssh/<name>)
DEFAULT_KEYS = ("id_rsa", "id_ecdsa", "id_ecdsa_sk", "id_ed25519", "id_ed25519_sk", "id_dsa")
KEYSCAN_WARNING = ("ssh-keyscan trusts whatever answers: compare the fingerprints with the "
                   "device's console first")
_LABEL = re.compile(r"^(?!-)[A-Za-z0-9-]{1,63}(?<!-)$")


@dataclass(frozen=True)
class Sources:
    """Where the inventory entries are written (a file per kind of entry, and the files as
    read, for line numbers); `host_source`: where hosts' addresses and platforms come from
    when a source of truth holds them (Nautobot's API) rather than hosts.yaml."""

    hosts: str
    groups: str
    defaults: str
    docs: Mapping[str, Any] = field(default_factory=dict)  # "host" | "group" | "defaults"
    host_source: str | None = None

    def at(self, origin: Origin | None, host: str, keys: tuple[str, ...],
           reason: str) -> InputProblem:
        """A problem at the origin's key (None: where the host would set `keys`)."""
        entry, path = (origin.entry, origin.keys) if origin else (Entry("host", host), keys)
        if entry.kind == "host" and self.host_source and path[0] in ("hostname", "platform"):
            return InputProblem(self.host_source, f"{entry.name}.{path[0]}", reason)
        file = {"host": self.hosts, "group": self.groups, "defaults": self.defaults}[entry.kind]
        parts = path if entry.kind == "defaults" else (entry.name, *path)
        return InputProblem(file, ".".join(parts), reason,
                            line_of(self.docs.get(entry.kind), parts))


def address_problem(value: object) -> str | None:
    """Why a management address is neither an IP address nor a DNS name (RFC 1123)."""
    text = str(value)
    try:
        ipaddress.ip_address(text)
        return None
    except ValueError:
        pass
    name = text[:-1] if text.endswith(".") else text
    labels = name.split(".")
    if len(name) > 253 or not all(_LABEL.match(label) for label in labels):
        return f"{text!r} is neither an IP address nor a valid DNS name"
    if labels[-1].isdigit():
        return f"{text!r} is not a valid IP address"
    return None


def port_problem(value: object) -> str | None:
    if isinstance(value, bool) or not (isinstance(value, int) or str(value).isdigit()) \
            or not 1 <= int(str(value)) <= 65535:
        return f"{value!r} is not a TCP port (1-65535)"
    return None


def _inside(address: object, spaces: Sequence[AddressSpace]) -> str | None:
    """Which fabric pool a management address lies in (None: none, or a DNS name)."""
    try:
        ip = ipaddress.ip_address(str(address))
    except ValueError:
        return None
    for file, path, net in spaces:
        if ip.version == net.version and ip in net:
            return f"{file}.yaml {'.'.join(map(str, path))} {net}"
    return None


def _devices(names: Sequence[str]) -> str:
    """`leaf1` or `3 devices: a, b, c` (the first five of many)."""
    if len(names) == 1:
        return names[0]
    shown = ", ".join(names[:5]) + (", ..." if names[5:] else "")
    return f"{len(names)} devices: {shown}"


def _keyscan(address: str, port: int, file: Path) -> str:
    option = f"-p {port} " if port != 22 else ""
    return f"`ssh-keyscan -H {option}{address} >> {file}`"


class _KnownHosts:
    """known_hosts files as paramiko reads them (hashed entries, [host]:port), each read
    once; a file that cannot be read is named once, with the devices that need it."""

    def __init__(self) -> None:
        self._read: dict[Path, paramiko.HostKeys | str] = {}
        self._unread: dict[Path, list[tuple[str, str, int]]] = {}

    def problem(self, file: Path, device: str, address: str, port: int) -> str | None:
        """Why the file holds no key for the device (None: it does, or the file itself
        is the problem, named once by `file_problems`)."""
        keys = self._read.get(file)
        if keys is None:
            keys = self._read[file] = self._load(file)
        if isinstance(keys, str):
            self._unread.setdefault(file, []).append((device, address, port))
            return None
        lookup = address if port == 22 else f"[{address}]:{port}"
        if keys.lookup(lookup) is None:
            return (f"no host key for {device} ({lookup}): add it, e.g. "
                    f"{_keyscan(address, port, file)} ({KEYSCAN_WARNING})")
        return None

    @staticmethod
    def _load(file: Path) -> paramiko.HostKeys | str:
        if not file.exists():
            return "known_hosts file not found"
        if not file.is_file():
            return "known_hosts is not a file"
        try:
            return paramiko.HostKeys(str(file))
        except OSError as exc:
            return f"cannot read the known_hosts file: {exc.strerror or exc}"
        except (paramiko.SSHException, ValueError) as exc:
            return f"not a known_hosts file: {exc}"

    def file_problems(self) -> list[InputProblem]:
        problems = []
        for file, devices in sorted(self._unread.items()):
            _, address, port = devices[0]
            why = self._read[file]
            problems.append(InputProblem(str(file), "", (
                f"{why} (host keys of {_devices([d for d, _, _ in devices])}); "
                f"add each device's key, e.g. {_keyscan(address, port, file)} "
                f"({KEYSCAN_WARNING})")))
        return problems


@dataclass
class _Pass:
    """One pass over the planned devices: what is found per device, and what is said
    once for many (a wrong platform set in a group, a missing extra)."""

    sources: Sources
    spaces: Sequence[AddressSpace]
    credentials: Credentials | None
    problems: list[InputProblem] = field(default_factory=list)
    known: _KnownHosts = field(default_factory=_KnownHosts)
    # one problem of many devices, at one key (a group's platform, the defaults' user):
    # (where, why) -> the devices
    shared: dict[tuple[Origin, str], list[str]] = field(default_factory=dict)
    extras: dict[str, tuple[Origin | None, list[str]]] = field(default_factory=dict)

    @property
    def home(self) -> Path:
        environ = self.credentials.environ if self.credentials else os.environ
        return Path(environ.get("HOME") or Path.home())

    def expand(self, path: str) -> Path:
        return self.home / path[2:] if path == "~" or path.startswith("~/") else Path(path)

    def add(self, problem: InputProblem) -> None:
        self.problems.append(problem)

    def device(self, host: Host, device: DeviceState) -> None:
        name = host.name
        platform = PLATFORMS[device.platform]
        plugin = platform.facts.connection.plugin
        self._platform(host, device)
        params = host.get_connection_parameters(plugin)
        address = params.hostname
        if not address:
            self.add(self.sources.at(None, name, ("hostname",), "needs a management address"))
        else:
            where = nornir_origin.parameter(host, plugin, "hostname")
            why = address_problem(address)
            pool = _inside(address, self.spaces)
            if why is not None:
                self.add(self.sources.at(where, name, ("hostname",), why))
            elif pool is not None:
                self.add(self.sources.at(where, name, ("hostname",), f"management address "
                                         f"{address} lies in the fabric's {pool}"))
        extras = params.extras if isinstance(params.extras, Mapping) else {}
        options = nornir_origin.parameter(host, plugin, "extras")
        login = platform.login(extras)
        port = self._port(host, plugin, login, options, platform)
        if self.credentials is None:
            return  # this run reads the inventory only: it logs in nowhere
        account = account_of(host, plugin)
        if account is None:
            self.share(Origin(DEFAULTS, ("username",)), name, "no user name: set username "
                       "here, or on the devices' groups or hosts")
        self._login(host, platform, login, options, account)
        if login.transport == "ssh" and login.reads_known_hosts and address \
                and not address_problem(address) and port is not None:
            file = self.expand(login.known_hosts) if login.known_hosts else \
                self.home / ".ssh" / "known_hosts"
            why = self.known.problem(file, name, str(address), port)
            if why is not None:
                self.add(InputProblem(str(file), "", why))

    def _platform(self, host: Host, device: DeviceState) -> None:
        origin = nornir_origin.attribute(host, "platform")
        found = host.platform
        if origin is None or found is None:
            self.add(self.sources.at(None, host.name, ("platform",), f"no platform for "
                                     f"{host.name} (the intent's is {device.platform!r}): "
                                     "set platform on the host, one of its groups, or in the "
                                     "defaults"))
        elif str(found) != device.platform:
            self.share(origin, host.name, f"{str(found)!r} differs from the intent's "
                       f"{device.platform!r}")
        extra = PLATFORMS[device.platform].facts.connection.extra
        # only reaching a device needs its platform's extra (a run that logs in nowhere,
        # such as `init` checking the inventory it writes, does not)
        if extra is not None and self.credentials is not None and not installed(extra):
            self.extras.setdefault(device.platform, (origin, []))[1].append(host.name)

    def _port(self, host: Host, plugin: str, login: Login, options: Origin | None,
              platform: Platform) -> int | None:
        """The port the plugin connects to (None: not a valid one, named)."""
        if login.port is not None:
            value: object = login.port
            where, keys = self._option(options, plugin, login.port_key)
        else:
            value = host.get_connection_parameters(plugin).port
            where, keys = nornir_origin.parameter(host, plugin, "port"), ("port",)
        if value is None:
            return platform.facts.connection.port
        why = port_problem(value)
        if why is not None:
            self.add(self.sources.at(where, host.name, keys, why))
            return None
        return int(str(value))

    @staticmethod
    def _option(options: Origin | None, plugin: str,
                key: str) -> tuple[Origin | None, tuple[str, ...]]:
        """Where an option of the plugin's is (`key` below its entry: extras.key_file):
        in the entry its extras come from, else (none has any) in the host's."""
        keys = ("connection_options", plugin, *key.split("."))
        if options is None:
            return None, keys
        return Origin(options.entry, (*options.keys[:-1], *key.split("."))), keys

    def _login(self, host: Host, platform: Platform, login: Login, options: Origin | None,
               account: Account | None) -> None:
        name, plugin = host.name, platform.facts.connection.plugin
        for key, why in login.problems:
            where, keys = self._option(options, plugin, key)
            self.add(self.sources.at(where, name, keys, why))
        key_ok = False
        if login.key_file is not None:
            path = self.expand(login.key_file)
            if path.is_file():
                key_ok = True
            else:
                where, keys = self._option(options, plugin, login.key_file_key)
                self.add(self.sources.at(where, name, keys, f"key file {path} not found"))
        if account is None or self.credentials is None:
            return
        if self.credentials.source(account.set) is not None:
            return
        variables = f"{env_name(account.set)} or {ENV}" if account.set.kind != "defaults" \
            else ENV
        where = nornir_origin.parameter(host, plugin, "username")  # the set's entry
        if where is None:
            return
        if login.transport == "https":
            self.share(where, name, f"{platform.name} logs in as {account.username} over "
                       f"HTTPS, with a password only: export {variables}, or pass --ask-pass")
            return
        if key_ok or login.key_file is not None:
            return  # a key file is the way in (a missing one is named above)
        if login.agent and self._agent():
            return
        if login.default_keys and any((self.home / ".ssh" / k).is_file()
                                      for k in DEFAULT_KEYS):
            return
        ways = [f"no password ({variables}, or --ask-pass)",
                f"no key file (connection_options.{plugin}.{login.key_file_key})"]
        if login.agent:
            ways.append("no SSH agent (SSH_AUTH_SOCK)")
        if login.default_keys:
            ways.append(f"no key of your own in {self.home / '.ssh'}")
        self.share(where, name, f"no way to log in as {account.username}: " + ", ".join(ways))

    def share(self, origin: Origin, device: str, reason: str) -> None:
        """A problem of the key at `origin` that may hold for many devices: one line."""
        self.shared.setdefault((origin, reason), []).append(device)

    def _agent(self) -> bool:
        environ = self.credentials.environ if self.credentials else os.environ
        socket = environ.get("SSH_AUTH_SOCK")
        if not socket:
            return False
        try:
            return stat.S_ISSOCK(Path(socket).stat().st_mode)
        except OSError:
            return False

    def finish(self) -> list[InputProblem]:
        for (origin, reason), names in self.shared.items():
            self.add(self.sources.at(origin, names[0], origin.keys, f"{reason} "
                                     f"({_devices(names)})"))
        for platform, (first, names) in sorted(self.extras.items()):
            extra = PLATFORMS[platform].facts.connection.extra
            self.add(self.sources.at(first, names[0], ("platform",), f"platform {platform} "
                                     f"needs flatfab's {extra} extra, which is not installed: "
                                     f"pip install 'flatfab[{extra}]' ({_devices(names)})"))
        # one option shared by many devices (the defaults' key_file) is one problem
        return list(dict.fromkeys([*self.problems, *self.known.file_problems()]))


def required_devices(plan: FabricState) -> dict[str, DeviceState]:
    """The planned devices the inventory must hold, the only ones flatfab connects to: every
    switch and every managed host, in plan order. An unmanaged host (hosts.yaml `managed:
    false`) need not be listed, and an entry for one is never checked."""
    return plan.managed()


def check(nornir: Nornir, plan: FabricState, sources: Sources,
          spaces: Sequence[AddressSpace] = (),
          credentials: Credentials | None = None) -> list[InputProblem]:
    """Every problem of every required device's entry. `credentials`: where this run's
    passwords come from (None: the run logs in nowhere, and logins are not checked)."""
    found = _Pass(sources, spaces, credentials)
    hosts = nornir.inventory.hosts
    for name, device in required_devices(plan).items():  # which devices are checked
        host = hosts.get(name)
        if host is None:
            found.add(InputProblem(sources.host_source or sources.hosts, name,
                                   f"planned device {name!r} is not in the inventory",
                                   None if sources.host_source
                                   else line_of(sources.docs.get("host"), ())))
            continue
        found.device(host, device)
    return found.finish()
