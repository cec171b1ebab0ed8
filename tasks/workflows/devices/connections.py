"""Open a device's driver from a Nornir task, read-only or read-write, within the run's
timeouts; a session that cannot be opened is one short line (ConnectError)."""

from __future__ import annotations

import logging
import socket

from nornir.core import Nornir
from nornir.core.configuration import Config
from nornir.core.inventory import ConnectionOptions, Host
from nornir.core.task import Task

from flatfab.extras import require
from flatfab.platforms.base import DEFAULT_TIMEOUTS, DeviceDriver, Endpoint, Platform, Timeouts
from flatfab.platforms.cli_driver import CliDriver
from flatfab.platforms.registry import get as get_platform
from flatfab.transport import reasons

_log = logging.getLogger(__name__)
# where a run's timeouts ride along with its Nornir (filtered copies share the config)
_TIMEOUTS = "flatfab.timeouts"


class ConnectError(Exception):
    """A device's session could not be opened; the message is the reason, one line. Once
    raised, the rest of the device's part of a run does not try again."""


def with_timeouts(nornir: Nornir, timeouts: Timeouts) -> Nornir:
    """The run's connect and command timeouts, for every driver this Nornir opens."""
    nornir.config.user_defined[_TIMEOUTS] = timeouts
    return nornir


def timeouts_of(nornir: Nornir | None) -> Timeouts:
    """The run's timeouts (flatfab's defaults for a Nornir that was given none)."""
    config = getattr(nornir, "config", None)
    found = getattr(config, "user_defined", {}).get(_TIMEOUTS)
    return found if isinstance(found, Timeouts) else DEFAULT_TIMEOUTS


def driver(task: Task, *, read_only: bool) -> DeviceDriver:
    """The host's driver, opened once per run with the mode of the workflow.

    Connection options are the ones any Nornir script gets: Nornir resolves
    connection_options (host, then groups, then defaults; `extras` whole from the first
    level that has it) and flatfab only adds `read_only` and, where the inventory sets none,
    the run's timeouts (Platform.connection_extras). (Driver options in a host's `data` are
    refused when the inventory is validated.) The password is the one the run set on the
    host (tasks/workflows/devices/credentials.py: a prompt or the environment; never the
    inventory's). Read-only is enforced by the platform: in the driver's transport, or by a
    guard that refuses every config method and every non-show command.
    """
    host = task.host
    platform = get_platform(str(host.platform))
    plugin = platform.facts.connection.plugin
    if platform.facts.connection.extra is not None:
        require(platform.facts.connection.extra, f"platform {platform.name}")
    timeouts = timeouts_of(getattr(task, "nornir", None))
    if plugin not in host.connections:
        params = host.get_connection_parameters(plugin)
        extras = platform.connection_extras(dict(params.extras or {}), read_only=read_only,
                                            timeouts=timeouts)
        _open(host, task.nornir.config, platform, params, extras, timeouts)
    opened = platform.adapt(host.connections[plugin].connection, read_only=read_only)
    if isinstance(opened, CliDriver):
        opened.read_timeout = timeouts.command
    return platform.read_only(opened) if read_only else opened


def _open(host: Host, config: Config, platform: Platform, params: ConnectionOptions,
          extras: dict[str, object], timeouts: Timeouts) -> None:
    """Open the platform's connection, or raise ConnectError with why it did not open."""
    where = platform.endpoint(str(params.hostname), params.port, params.username, extras)
    allowed = platform.open_timeout(timeouts)
    try:
        if platform.tries_port_first:
            _try_port(where, timeouts.connect)
        host.open_connection(platform.facts.connection.plugin, config,
                             platform=platform.facts.connection.driver, extras=extras,
                             password=params.password)
    except ConnectError:
        raise
    except Exception as exc:
        raise ConnectError(reasons.connecting(exc, where, allowed)) from exc


def _try_port(where: Endpoint, timeout: float) -> None:
    """A TCP connection to the device's port within `timeout`, closed at once."""
    try:
        with socket.create_connection((where.host, where.port), timeout=timeout):
            pass
    except OSError as exc:
        raise ConnectError(reasons.connecting(exc, where, timeout)) from exc


def unread_reason(exc: BaseException, task: Task) -> str:
    """Why the task's device could not be read, one line: why its session did not open, or
    how a command failed (a command's timeout named as such)."""
    reason = (str(exc) if isinstance(exc, ConnectError)
              else reasons.commanding(exc, timeouts_of(getattr(task, "nornir", None)).command))
    # the traceback goes to the log (--debug, --log-file), never to the console
    _log.warning("%s: not read: %s", task.host.name, reason, exc_info=exc)
    return reason


def release(task: Task) -> None:
    """Close the host's connection now that its part of the run is done: a fleet's run then
    holds as many sessions (and, with paramiko, transport threads) as it has workers, not
    one per device until the end. A session that fails to close (the device went away)
    is logged, never the device's failure: what was read stands."""
    for name in list(task.host.connections):
        try:
            task.host.close_connection(name)
        except Exception:  # noqa: BLE001 - logged with its traceback (--debug, --log-file)
            _log.warning("%s: closing its %s session failed", task.host.name, name,
                         exc_info=True)
            task.host.connections.pop(name, None)
