"""Open a device's driver from a Nornir task, read-only or read-write."""

from __future__ import annotations

from nornir.core.task import Task

from flatfab.extras import require
from flatfab.platforms.base import DeviceDriver
from flatfab.platforms.registry import get as get_platform


def driver(task: Task, *, read_only: bool) -> DeviceDriver:
    """The host's driver, opened once per run with the mode of the workflow.

    Connection options are the ones any Nornir script gets: Nornir resolves
    connection_options (host, then groups, then defaults; `extras` whole from the first
    level that has it) and flatfab only adds `read_only` to the optional_args. (Driver
    options in a host's `data` are refused when the inventory is validated.) The password
    is the one the run set on the host (tasks/workflows/credentials.py: a prompt or the
    environment; never the inventory's). Read-only is enforced by the platform: in the
    driver's transport, or by a guard that refuses every config method and every non-show
    command.
    """
    host = task.host
    platform = get_platform(str(host.platform))
    plugin = platform.facts.connection.plugin
    if platform.facts.connection.extra is not None:
        require(platform.facts.connection.extra, f"platform {platform.name}")
    if plugin not in host.connections:
        params = host.get_connection_parameters(plugin)
        extras = platform.connection_extras(dict(params.extras or {}), read_only=read_only)
        host.open_connection(plugin, task.nornir.config,
                             platform=platform.facts.connection.driver, extras=extras,
                             password=params.password)
    opened = platform.adapt(host.connections[plugin].connection, read_only=read_only)
    return platform.read_only(opened) if read_only else opened


def release(task: Task) -> None:
    """Close the host's connection now that its part of the run is done: a fleet's run then
    holds as many sessions (and, with paramiko, transport threads) as it has workers, not
    one per device until the end."""
    task.host.close_connections()
