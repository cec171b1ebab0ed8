"""Which inventory entry gave a Nornir host a value: the host itself, one of its groups, or
the defaults, walked in Nornir's own order, so an error can name the file and key to fix
and a device's credentials can be told apart by the entry that names its user."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from nornir.core.inventory import ConnectionOptions, Defaults, Group, Host

Kind = Literal["host", "group", "defaults"]


@dataclass(frozen=True, order=True)
class Entry:
    """An inventory entry: a host, a group (by name) or the defaults (name "")."""

    kind: Kind
    name: str = ""


@dataclass(frozen=True)
class Origin:
    """Where a value is written: the entry and the key path inside it."""

    entry: Entry
    keys: tuple[str, ...]


DEFAULTS = Entry("defaults")


def _entry(element: Host) -> Entry:
    return Entry("group" if isinstance(element, Group) else "host", element.name)


def _raw(element: Host | Defaults, attribute: str) -> object:
    """The element's own value, without Nornir's inheritance."""
    return object.__getattribute__(element, attribute)


def attribute(host: Host, name: str) -> Origin | None:
    """Where the host's `name` (hostname, port, username, platform) comes from as Nornir
    resolves `host.<name>`: the host, its groups depth first, then the defaults."""
    if _raw(host, name) is not None:
        return Origin(_entry(host), (name,))
    for group in host.extended_groups():
        if _raw(group, name) is not None:
            return Origin(Entry("group", group.name), (name,))
    if _raw(host.defaults, name) is not None:
        return Origin(DEFAULTS, (name,))
    return None


def _options(element: Host, plugin: str, field: str) -> Origin | None:
    """Nornir's _get_connection_options_recursively, asking for one field: the element's
    own options, each of its groups' in turn (each ending with the defaults'), then the
    defaults'."""
    own = element.connection_options.get(plugin)
    if own is not None and getattr(own, field) is not None:
        return Origin(_entry(element), ("connection_options", plugin, field))
    for group in element.groups:
        found = _options(group, plugin, field)
        if found is not None:
            return found
    shared: ConnectionOptions | None = element.defaults.connection_options.get(plugin)
    if shared is not None and getattr(shared, field) is not None:
        return Origin(DEFAULTS, ("connection_options", plugin, field))
    return None


def parameter(host: Host, plugin: str, name: str) -> Origin | None:
    """Where the value `host.get_connection_parameters(plugin)` holds for `name` comes
    from: the plugin's connection_options first (wherever they are), then the attribute.
    `extras` come whole from the first entry that has them."""
    found = _options(host, plugin, name)
    if found is not None or name == "extras":
        return found
    return attribute(host, name)
