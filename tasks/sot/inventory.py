"""Nornir hosts from Nautobot (nornir-nautobot's NautobotInventory), chosen in
`inventory/<fabric>/source.yaml` with `inventory: nautobot`.

Nautobot is authoritative for which devices exist, their management address (primary IPv4)
and their platform, mapped explicitly to flatfab's (`platforms:`). Everything Nautobot does
not hold for Nornir (user, connection options, per-host extras) comes from the inventory
folder's groups.yaml and defaults.yaml, and from hosts.yaml entries where they exist, as with
a file inventory. The API token is read from the environment and never stored or logged.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from nornir.core import Nornir
from nornir.core.inventory import (
    ConnectionOptions,
    Defaults,
    Group,
    Groups,
    Host,
    Hosts,
    Inventory,
    ParentGroups,
)
from nornir.core.plugins.connections import ConnectionPluginRegister
from nornir.plugins.runners import ThreadedRunner

from flatfab.errors import InputError, InputProblem
from flatfab.extras import require
from flatfab.intent.semantics import AddressSpace
from flatfab.model.state import FabricState
from flatfab.sot.source import FILE as SOURCE_FILE
from flatfab.sot.source import NautobotSource, load_source
from flatfab.workflows.devices import inventory as files
from flatfab.workflows.devices import inventory_checks
from flatfab.workflows.devices.credentials import Credentials
from flatfab.yamlio import load_yaml


def _file(directory: Path, name: str) -> dict[str, Any]:
    path = directory / name
    if not path.exists():
        return {}
    doc = load_yaml(path, display=str(path))
    if doc is not None and not isinstance(doc, dict):
        raise InputError.single(str(path), "", "top level must be a mapping")
    return doc or {}


def _options(raw: dict[str, Any]) -> dict[str, ConnectionOptions]:
    return {name: ConnectionOptions(**{k: v for k, v in (value or {}).items()
                                       if k in ("hostname", "port", "username", "platform",
                                                "extras")})
            for name, value in (raw or {}).items()}


def _defaults(raw: dict[str, Any]) -> Defaults:
    # a password in the folder's files is refused before this (folder_problems)
    return Defaults(hostname=raw.get("hostname"), username=raw.get("username"),
                    port=raw.get("port"), platform=raw.get("platform"),
                    data=raw.get("data") or {},
                    connection_options=_options(raw.get("connection_options") or {}))


def _groups(raw: dict[str, Any], defaults: Defaults) -> Groups:
    """groups.yaml as SimpleInventory reads it: user names, ports, platforms, connection
    options and parent groups, not only data."""
    groups = Groups({name: Group(name=name, hostname=(value or {}).get("hostname"),
                                 username=(value or {}).get("username"),
                                 port=(value or {}).get("port"),
                                 platform=(value or {}).get("platform"),
                                 data=(value or {}).get("data") or {},
                                 connection_options=_options(
                                     (value or {}).get("connection_options") or {}),
                                 defaults=defaults)
                     for name, value in raw.items()})
    for name, group in groups.items():
        group.groups = ParentGroups([groups[g] for g in (raw[name] or {}).get("groups") or []])
    return groups


def nautobot_hosts(source: NautobotSource, token: str, directory: Path,
                   wanted: set[str]) -> tuple[Hosts, Groups, Defaults]:
    """The planned devices (`wanted`) as Nornir hosts, read through NautobotInventory."""
    require("nautobot", f"{directory / 'source.yaml'} (inventory: nautobot)")
    from nornir_nautobot.plugins.inventory.nautobot import (  # noqa: PLC0415 (only here)
        NautobotInventory,
    )

    shown = str(directory / "source.yaml")
    try:
        loaded = NautobotInventory(nautobot_url=source.url, nautobot_token=token,
                                   filter_parameters=dict(source.filters) or None,
                                   pynautobot_dict=False).load()
    except SystemExit:  # nornir-nautobot exits on a filter the API refuses
        raise InputError.single(shown, "nautobot.filters", "refused by the API") from None
    except Exception as exc:  # noqa: BLE001 (the plugin raises requests', pynautobot's, ...)
        raise InputError.single(source.api_url, "dcim.devices", f"inventory: "
                                f"{type(exc).__name__}") from None
    return local_hosts(source, directory, {n: (h.hostname, h.platform)
                                           for n, h in loaded.hosts.items() if n in wanted})


def local_hosts(source: NautobotSource, directory: Path,
                found: dict[str, tuple[str | None, str | None]]) -> tuple[Hosts, Groups, Defaults]:
    """Nornir hosts of the devices Nautobot holds (name -> address, Nautobot platform),
    with everything else from the folder's files, as SimpleInventory would read them."""
    shown = str(directory / "source.yaml")
    defaults = _defaults(_file(directory, "defaults.yaml"))
    groups = _groups(_file(directory, "groups.yaml"), defaults)
    extras = _file(directory, "hosts.yaml")
    hosts = Hosts()
    for name, (address, driver) in found.items():
        platform = source.platforms.get(driver or "")
        if platform is None:
            raise InputError.single(source.api_url, f"dcim.device {name}", f"platform "
                                    f"{driver or 'none'!r} is not mapped in {shown}")
        local = extras.get(name) or {}
        hosts[name] = Host(
            name=name, hostname=address, platform=platform,
            username=local.get("username"), port=local.get("port"),
            data=local.get("data") or {},
            groups=ParentGroups([groups[g] for g in local.get("groups") or []]),
            connection_options=_options(local.get("connection_options") or {}),
            defaults=defaults)
    return hosts, groups, defaults


def build(directory: Path, plan: FabricState, workers: int = 20,
          spaces: Sequence[AddressSpace] = (), *, credentials: Credentials | None = None,
          connects: bool = True) -> Nornir:
    """The fabric's Nornir: hosts from Nautobot where source.yaml says `inventory: nautobot`,
    else the inventory files (tasks/workflows/devices/inventory.py). Either way every planned
    device is checked before any connection and gets the run's password (`credentials`;
    `connects` false: the run reads the inventory only)."""
    if (directory / SOURCE_FILE).exists():
        source = load_source(directory)
        if source.inventory == "nautobot":
            return _from_nautobot(directory, source, plan, workers, spaces,
                                  credentials=credentials, connects=connects)
    return files.build(directory, plan, workers, spaces, credentials=credentials,
                       connects=connects)


def _from_nautobot(directory: Path, source: NautobotSource, plan: FabricState, workers: int,
                   spaces: Sequence[AddressSpace], *, credentials: Credentials | None,
                   connects: bool) -> Nornir:
    """Hosts from Nautobot (source.yaml `inventory: nautobot`), checked like a file's."""
    token = source.token(str(directory / SOURCE_FILE))
    found = files.folder_problems(directory)
    if any(isinstance(p, files.ShapeProblem) for p in found):
        raise InputError(found)
    hosts, groups, defaults = nautobot_hosts(source, token, directory,
                                             set(inventory_checks.required_devices(plan)))
    return checked(directory, source, plan, (hosts, groups, defaults), workers, spaces,
                   credentials=credentials, connects=connects, found=found)


def checked(directory: Path, source: NautobotSource, plan: FabricState,
            inventory: tuple[Hosts, Groups, Defaults], workers: int,
            spaces: Sequence[AddressSpace], *, credentials: Credentials | None,
            connects: bool, found: Sequence[InputProblem] = ()) -> Nornir:
    """Nornir over hosts read from Nautobot, each required device checked as a file
    inventory's is (addresses and platforms named at Nautobot's API), passwords set;
    `found`: the folder's problems, told with the devices'."""
    hosts, groups, defaults = inventory
    logins = (credentials or Credentials()) if connects else None
    ConnectionPluginRegister.auto_register()  # what InitNornir does: napalm, netmiko
    nornir = Nornir(inventory=Inventory(hosts=hosts, groups=groups, defaults=defaults),
                    runner=ThreadedRunner(num_workers=workers))

    def problems(lines: bool) -> list[InputProblem]:
        docs = {name: load_yaml(directory / name, display=str(directory / name), lines=lines)
                if (directory / name).exists() else None for name in files.FILES}
        where = replace(files.sources(directory, docs), host_source=source.api_url)
        return [*found, *inventory_checks.check(nornir, plan, where, spaces, logins)]

    if problems(lines=False):
        # read again with line numbers to name each problem's line
        raise InputError(problems(lines=True))
    if logins is not None:
        logins.apply(nornir)
    return nornir
