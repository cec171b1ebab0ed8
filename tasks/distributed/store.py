"""The Redis client of a distributed run, and its failures as one-line errors."""

from __future__ import annotations

import redis

from flatfab.distributed.config import Config
from flatfab.errors import FlatfabError
from flatfab.workflows.devices.results import first_line

# what redis-py raises when the server is not there or goes away
LOST = (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError)


def text(value: bytes | str) -> str:
    """A reply as text (the client returns bytes; redis-py types it either)."""
    return value.decode() if isinstance(value, bytes) else value


def blob(value: bytes | str) -> bytes:
    return value if isinstance(value, bytes) else value.encode()


class BrokerError(FlatfabError):
    """The broker cannot be reached, refuses us, or went away."""


def client(config: Config, *, socket_timeout: float = 30.0) -> redis.Redis:
    """A client on the broker's Redis (the URL's database and password). Bytes in, bytes out.
    `socket_timeout` outlasts any blocking read the caller makes (BLPOP of 1 s)."""
    return redis.Redis.from_url(config.broker_url, socket_timeout=socket_timeout,
                                socket_connect_timeout=5.0, health_check_interval=15)


def reachable(config: Config, store: redis.Redis) -> None:
    """Fail with one line, naming the broker without its password, unless it answers."""
    try:
        store.ping()
    except redis.exceptions.AuthenticationError:
        raise BrokerError(f"broker {config.broker} refused the password of "
                          "FLATFAB_BROKER_URL") from None
    except redis.exceptions.ResponseError as exc:
        raise BrokerError(f"broker {config.broker}: {first_line(exc)}") from None
    except LOST as exc:
        raise BrokerError(f"broker {config.broker} is unreachable: {first_line(exc)}") from None
