"""Every platform flatfab can render and collect, found through the Python entry-point group
`flatfab.platforms` (name -> `module:PLATFORM`, a `Platform` instance).

flatfab's own eight register the same way (pyproject.toml); a platform of its own package
registers in its package's metadata, and nothing in flatfab changes for it. A plugin that
cannot be loaded, is no Platform, names itself otherwise, or shares its name with another is
refused in one line naming the distribution and the entry point.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, MutableMapping
from dataclasses import dataclass
from importlib import metadata
from typing import Final

from flatfab.errors import FlatfabError, InputError
from flatfab.platforms.base import Platform

GROUP: Final = "flatfab.platforms"
# flatfab's own platforms, in the order they are listed wherever the order shows (the first
# ones are what the embedded lab runs); the rest follow by name
BUILTIN: Final = (
    "frr",
    "linux_host",
    "eos",
    "sonic",
    "nxos",
    "srlinux",
    "junos",
    "nvue",
)
# what an intent gets where it names no platform: the embedded lab's switch and host
DEFAULT_SWITCH: Final = "frr"
DEFAULT_HOST: Final = "linux_host"


class PlatformPluginError(FlatfabError):
    """A platform plugin that cannot be used (one line: distribution, entry point, why)."""


@dataclass(frozen=True)
class Plugin:
    """One entry point of the group, as its distribution declares it."""

    name: str
    value: str  # "module:attribute"
    distribution: str  # "flatfab-acme 0.1.0" ("" where the metadata names none)
    load: Callable[[], object]

    def __str__(self) -> str:
        owner = self.distribution or "an unnamed distribution"
        return f"entry point {self.name} = {self.value} of {owner}"


def _distribution(point: metadata.EntryPoint) -> str:
    dist = getattr(point, "dist", None)
    if dist is None:
        return ""
    return f"{dist.name} {dist.version}"


def installed() -> list[Plugin]:
    """Every entry point of the group in the installed distributions."""
    return [Plugin(p.name, p.value, _distribution(p), p.load)
            for p in metadata.entry_points(group=GROUP)]


def _ordered(names: Iterable[str]) -> list[str]:
    known = set(names)
    return [n for n in BUILTIN if n in known] + sorted(known - set(BUILTIN))


def discover(plugins: Iterable[Plugin]) -> dict[str, Plugin]:
    """Name -> plugin, flatfab's own first, or one line on what is wrong: two distributions
    registering one name, or flatfab's own platforms not registered at all (an install
    made before they were entry points, or a checkout never installed)."""
    found: dict[str, Plugin] = {}
    for plugin in plugins:
        other = found.get(plugin.name)
        if other is not None and (other.value, other.distribution) != (
                plugin.value, plugin.distribution):
            first, second = sorted((str(other), str(plugin)))
            raise PlatformPluginError(f"platform {plugin.name!r} is registered twice "
                                      f"({first}; {second}): uninstall one of them")
        found[plugin.name] = plugin
    missing = [n for n in BUILTIN if n not in found]
    if missing:
        raise PlatformPluginError(f"flatfab's own platforms are not registered ({GROUP} "
                                  f"entry points: {', '.join(missing)} missing): reinstall "
                                  "flatfab (`pip install flatfab`, or `make venv` in a "
                                  "checkout)")
    return {name: found[name] for name in _ordered(found)}


def load(plugin: Plugin) -> Platform:
    """The plugin's Platform, checked: a Platform instance whose data file names it as its
    entry point does. Never a traceback: whatever the import raises is one line."""
    try:
        platform = plugin.load()
    except Exception as exc:  # noqa: BLE001 - a plugin's import may raise anything
        why = "; ".join(line.strip() for line in str(exc).splitlines() if line.strip()
                        and not line.strip().startswith("For further information"))
        raise PlatformPluginError(f"platform plugin {plugin.name!r} ({plugin}) cannot be "
                                  f"loaded: {type(exc).__name__}: {why}") from None
    if not isinstance(platform, Platform):
        raise PlatformPluginError(f"platform plugin {plugin.name!r} ({plugin}) is a "
                                  f"{type(platform).__name__}, not a flatfab Platform")
    if platform.name != plugin.name:
        raise PlatformPluginError(f"platform plugin {plugin.name!r} ({plugin}) names itself "
                                  f"{platform.name!r} in its data file: the two must agree")
    return platform


class Platforms(MutableMapping[str, Platform]):
    """Every platform by name, each imported when first asked for: a run imports the
    platforms its fabric uses (a platform package pulls in its renderer, collector and
    vendor libraries), not all of them. The entry points are read once, at first use.
    Concurrent first lookups are safe: Python's import lock builds one PLATFORM, and both
    threads store that one. A platform set here (a test's) is known beside the registered
    ones until deleted."""

    def __init__(self, plugins: Callable[[], Iterable[Plugin]] = installed) -> None:
        self._plugins = plugins
        self._registered: dict[str, Plugin] | None = None
        self._known: dict[str, Platform] = {}

    @property
    def registered(self) -> dict[str, Plugin]:
        """Name -> entry point, read from the installed distributions at first use."""
        if self._registered is None:
            self._registered = discover(self._plugins())
        return self._registered

    def __getitem__(self, name: str) -> Platform:
        platform = self._known.get(name)
        if platform is None:
            plugin = self.registered.get(name)
            if plugin is None:
                raise KeyError(name)
            platform = self._known[name] = load(plugin)
        return platform

    def __setitem__(self, name: str, platform: Platform) -> None:
        self._known[name] = platform

    def __delitem__(self, name: str) -> None:
        del self._known[name]  # a registered one is loaded again when next asked for

    def __contains__(self, name: object) -> bool:
        return name in self.registered or name in self._known

    def __iter__(self) -> Iterator[str]:
        registered = self.registered
        return iter((*registered, *(n for n in self._known if n not in registered)))

    def __len__(self) -> int:
        return sum(1 for _ in self)


PLATFORMS: MutableMapping[str, Platform] = Platforms()


def get(name: str) -> Platform:
    try:
        return PLATFORMS[name]
    except KeyError:
        raise InputError.single("platform", name, f"unknown platform {name!r} "
                                f"({', '.join(sorted(PLATFORMS))})") from None


def network_drivers() -> dict[str, str]:
    """Source-of-truth network driver -> flatfab platform (each platform's data file)."""
    return {p.facts.source_of_truth.network_driver: p.name for p in PLATFORMS.values()}


def loopback_names() -> tuple[str, ...]:
    """Every switch platform's name of its loopback interface (the one holding the
    router id), sorted: how a source of truth's interfaces are told apart."""
    return tuple(sorted({p.facts.naming.loopback for p in PLATFORMS.values()
                         if p.facts.naming is not None}))
