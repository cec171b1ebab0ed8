"""Who logs in to each device, and with which password.

A device's user name is Nornir's own `username` (the host, else its groups in Nornir's order,
else the defaults; a `username` in the plugin's connection_options wins, as Nornir resolves
it). The inventory entry that gives the user name is the device's *credential set*. A set's
password, first found: what the operator typed at the `--ask-pass` prompt (once per set,
before any connection), the environment variable FLATFAB_PASSWORD_<SET>, then
FLATFAB_PASSWORD (the defaults' variable, and every set's fallback). Without one, a device
logs in with SSH keys or the agent.

Passwords are never read from a file and never written anywhere: they are set on Nornir's
in-memory hosts for the run, and this module's objects never print them.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from nornir.core import Nornir
from nornir.core.inventory import Host

from flatfab.platforms.registry import get as get_platform
from flatfab.workflows.devices import nornir_origin
from flatfab.workflows.devices.nornir_origin import Entry

ENV = "FLATFAB_PASSWORD"
ASK_PASS = "--ask-pass"
Ask = Callable[[str], str]  # shows a prompt, returns what was typed (not echoed)


def variable_of(name: str) -> str:
    """FLATFAB_PASSWORD_<NAME> of a group or host: its name upper-cased, every character
    but A-Z and 0-9 turned into `_`."""
    return f"{ENV}_{re.sub(r'[^A-Z0-9]', '_', name.upper())}"


def env_name(entry: Entry) -> str:
    """The environment variable of a credential set (FLATFAB_PASSWORD: the defaults')."""
    return ENV if entry.kind == "defaults" else variable_of(entry.name)


def describe(entry: Entry) -> str:
    return "the defaults" if entry.kind == "defaults" else f"{entry.kind} {entry.name}"


@dataclass(frozen=True)
class Account:
    """A device's user name and its credential set."""

    username: str
    set: Entry


def plugin_of(host: Host, platform: str | None = None) -> str:
    """The connection plugin the device is reached through (its platform's, else the
    host's platform as Nornir resolves it)."""
    return get_platform(platform or str(host.platform)).facts.connection.plugin


def account_of(host: Host, plugin: str) -> Account | None:
    """The user name the plugin gets for `host` and the entry that gives it."""
    origin = nornir_origin.parameter(host, plugin, "username")
    username = host.get_connection_parameters(plugin).username
    if origin is None or username is None or str(username) == "":
        return None
    return Account(str(username), origin.entry)


class Credentials:
    """Where this run's device passwords come from: what was typed at the prompts (kept in
    memory for the process) and the environment (`environ`: os.environ when not given)."""

    def __init__(self, *, ask: Ask | None = None,
                 environ: Mapping[str, str] | None = None) -> None:
        self._ask = ask
        self._environ = environ
        self._typed: dict[Entry, str] = {}

    def __repr__(self) -> str:
        typed = ", ".join(describe(e) for e in sorted(self._typed))
        return f"Credentials(asking={self.asking}, typed for: {typed or 'none'})"

    @property
    def environ(self) -> Mapping[str, str]:
        return os.environ if self._environ is None else self._environ

    @property
    def asking(self) -> bool:
        """--ask-pass: every set's password is typed (no set is prompted twice)."""
        return self._ask is not None

    def settled(self) -> Credentials:
        """These credentials, asking no more (a worker's pool processes, which have no
        terminal: sets typed at start keep their passwords, others use the environment)."""
        copy = Credentials(environ=self._environ)
        copy._typed = dict(self._typed)
        return copy

    def source(self, entry: Entry) -> str | None:
        """Where the set's password comes from (None: nowhere, keys only)."""
        if entry in self._typed or self.asking:
            return ASK_PASS
        for name in dict.fromkeys((env_name(entry), ENV)):
            if self.environ.get(name):
                return name
        return None

    def password(self, entry: Entry) -> str | None:
        if entry in self._typed:
            return self._typed[entry]
        for name in (env_name(entry), ENV):
            if self.environ.get(name):
                return self.environ[name]
        return None

    def prompt(self, sets: Mapping[Entry, tuple[set[str], int]]) -> None:
        """Ask once for each set not typed yet: `sets` maps it to its user names and how
        many devices use it. Nothing is asked without --ask-pass."""
        if self._ask is None:
            return
        for entry in sorted(sets):
            if entry in self._typed:
                continue
            users, devices = sets[entry]
            who = f"user{'s' if len(users) > 1 else ''} {', '.join(sorted(users))}"
            count = f"{devices} device{'s' if devices != 1 else ''}"
            self._typed[entry] = self._ask(f"password for {who} ({describe(entry)}, "
                                           f"{count}): ")

    def apply(self, nornir: Nornir) -> None:
        """Prompt where asked to, then set every host's password for the run (in memory:
        Nornir's host objects; a set with none leaves its hosts to keys and the agent)."""
        accounts = {name: account_of(host, plugin_of(host))
                    for name, host in nornir.inventory.hosts.items()}
        sets: dict[Entry, tuple[set[str], int]] = {}
        for account in accounts.values():
            if account is not None:
                users, count = sets.get(account.set, (set(), 0))
                sets[account.set] = (users | {account.username}, count + 1)
        self.prompt(sets)
        for name, account in accounts.items():
            if account is not None:
                password = self.password(account.set)
                if password:
                    nornir.inventory.hosts[name].password = password
