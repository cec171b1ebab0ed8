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

from flatfab.errors import InputError
from flatfab.extras import require
from flatfab.intent.semantics import AddressSpace
from flatfab.model.state import FabricState
from flatfab.sot.source import FILE as SOURCE_FILE
from flatfab.sot.source import NautobotSource, load_source
from flatfab.workflows import inventory as files
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
                                       if k in ("hostname", "port", "username", "password",
                                                "platform", "extras")})
            for name, value in (raw or {}).items()}


def _defaults(raw: dict[str, Any]) -> Defaults:
    return Defaults(username=raw.get("username"), password=raw.get("password"),
                    port=raw.get("port"), data=raw.get("data") or {},
                    connection_options=_options(raw.get("connection_options") or {}))


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
    defaults = _defaults(_file(directory, "defaults.yaml"))
    groups = Groups({name: Group(name=name, data=(value or {}).get("data") or {},
                                 defaults=defaults)
                     for name, value in _file(directory, "groups.yaml").items()})
    extras = _file(directory, "hosts.yaml")
    hosts = Hosts()
    for name, found in loaded.hosts.items():
        if name not in wanted:
            continue
        driver = found.platform or ""
        platform = source.platforms.get(driver)
        if platform is None:
            raise InputError.single(source.api_url, f"dcim.device {name}", f"platform "
                                    f"{driver or 'none'!r} is not mapped in {shown}")
        local = extras.get(name) or {}
        hosts[name] = Host(
            name=name, hostname=found.hostname, platform=platform,
            username=local.get("username"), password=local.get("password"),
            port=local.get("port"), data=local.get("data") or {},
            groups=ParentGroups([groups[g] for g in local.get("groups") or [] if g in groups]),
            connection_options=_options(local.get("connection_options") or {}),
            defaults=defaults)
    return hosts, groups, defaults


def build(directory: Path, plan: FabricState, workers: int = 20,
          spaces: Sequence[AddressSpace] = ()) -> Nornir:
    """The fabric's Nornir: hosts from Nautobot where source.yaml says `inventory: nautobot`,
    else the inventory files (tasks/workflows/inventory.py)."""
    if (directory / SOURCE_FILE).exists():
        source = load_source(directory)
        if source.inventory == "nautobot":
            return _from_nautobot(directory, source, plan, workers, spaces)
    return files.build(directory, plan, workers, spaces)


def _from_nautobot(directory: Path, source: NautobotSource, plan: FabricState, workers: int,
                   spaces: Sequence[AddressSpace]) -> Nornir:
    """Hosts from Nautobot (source.yaml `inventory: nautobot`), checked like a file's."""
    token = source.token(str(directory / SOURCE_FILE))
    files.check_folder_options(directory)
    hosts, groups, defaults = nautobot_hosts(source, token, directory,
                                             set(files.required_devices(plan)))
    files.check_hosts(source.api_url, {n: {"hostname": h.hostname, "platform": h.platform}
                                 for n, h in hosts.items()}, plan, spaces)
    ConnectionPluginRegister.auto_register()  # what InitNornir does: napalm, netmiko
    return Nornir(inventory=Inventory(hosts=hosts, groups=groups, defaults=defaults),
                  runner=ThreadedRunner(num_workers=workers))
