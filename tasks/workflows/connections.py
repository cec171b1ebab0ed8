"""Open a device's NAPALM driver from a Nornir task, read-only or read-write."""

from __future__ import annotations

from typing import Any

from nornir.core.task import Task

from tasks.platforms.registry import get as get_platform

CONNECTION = "napalm"


def driver(task: Task, *, read_only: bool) -> Any:
    """The host's NAPALM driver, opened once per run with the mode of the workflow.

    optional_args come from the inventory (host, groups, defaults) plus the host's
    `data.optional_args`; read-only is enforced by the driver's transport.
    """
    host = task.host
    if CONNECTION in host.connections:
        return host.connections[CONNECTION].connection
    params = host.get_connection_parameters(CONNECTION)
    extras: dict[str, Any] = dict(params.extras or {})
    optional = dict(extras.get("optional_args", {}))
    optional.update(host.data.get("optional_args", {}))
    optional["read_only"] = read_only
    extras["optional_args"] = optional
    platform = get_platform(str(host.platform))
    host.open_connection(CONNECTION, task.nornir.config, platform=platform.napalm_driver,
                         extras=extras)
    return host.connections[CONNECTION].connection
