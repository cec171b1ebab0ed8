"""Where the broker is and how shards are delivered, from the environment only.

FLATFAB_BROKER_URL        redis://[:password@]host:port/db (rediss:// with TLS). It holds a
                          password: never printed or logged (`describe` shows it without).
                          Nautobot's Celery uses DBs 0 and 1 of its Redis: give flatfab
                          another DB (e.g. /2) and its own queue.
FLATFAB_RESULT_BACKEND    Celery's result backend (beat's chords need one); default: the
                          broker URL.
FLATFAB_QUEUE             the queue shard tasks go to and workers consume (default flatfab).
FLATFAB_VISIBILITY_TIMEOUT  seconds (default 300). Redis has no acknowledgements: a task
                          a worker took stays "unacked" until it finishes, and the Redis
                          transport hands it to another worker only after this long, so a
                          dead worker's shard waits that long. Too short and a shard still
                          running is handed out again (the first result stored still wins,
                          but the second delivery counts as a retry): keep it above the
                          longest shard.
FLATFAB_RESULT_TTL        seconds shard results, delivery counters and a run's spec stay in
                          Redis when nobody collects them (default 7200).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from flatfab.errors import FlatfabError
from flatfab.intent.names import fabric_problem

BROKER_ENV = "FLATFAB_BROKER_URL"
SCHEMES = ("redis", "rediss")


class ConfigError(FlatfabError):
    """A distributed setting missing or malformed (one line, never the URL's password)."""


def describe(url: str) -> str:
    """The URL without user and password: what errors and logs may show."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return "the broker URL"
    return f"{parts.scheme}://{host}{port}{parts.path}"


def _seconds(env: Mapping[str, str], name: str, default: float, low: float) -> float:
    text = env.get(name, "").strip()
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        raise ConfigError(f"{name}: {text!r} is not a number of seconds") from None
    if value < low:
        raise ConfigError(f"{name}: {text} is below {low:g} seconds")
    return value


@dataclass(frozen=True)
class Config:
    broker_url: str
    result_backend: str
    queue: str = "flatfab"
    visibility_timeout: float = 300.0
    result_ttl: int = 7200

    @property
    def broker(self) -> str:
        return describe(self.broker_url)

    @property
    def restore_interval(self) -> float:
        """How often a worker looks for dead workers' unacked tasks: kombu's default (every
        100 s in effect) would dwarf a short visibility timeout."""
        return max(1.0, min(10.0, self.visibility_timeout / 4))


def _redis_url(name: str, url: str) -> None:
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises on a port that is not a number
    except ValueError:
        raise ConfigError(f"{name}: not a URL like redis://:password@host:6379/2") from None
    if parts.scheme not in SCHEMES or not parts.hostname:
        raise ConfigError(f"{name}: {describe(url)} is not a redis:// or rediss:// URL with a "
                          "host (shard results and delivery counters live in Redis)")
    db = parts.path.strip("/")
    if db and not db.isdigit():
        raise ConfigError(f"{name}: database {db!r} in {describe(url)} is not a number")


def from_env(env: Mapping[str, str] | None = None) -> Config:
    """The distributed settings of this process's environment; one clear error if unusable."""
    env = os.environ if env is None else env
    url = env.get(BROKER_ENV, "").strip()
    if not url:
        raise ConfigError(f"{BROKER_ENV} is not set: a distributed run needs the Redis broker "
                          "its workers consume, e.g. redis://:password@127.0.0.1:6379/2 (see "
                          "runbooks/distributed.md)")
    _redis_url(BROKER_ENV, url)
    backend = env.get("FLATFAB_RESULT_BACKEND", "").strip() or url
    _redis_url("FLATFAB_RESULT_BACKEND", backend)
    queue = env.get("FLATFAB_QUEUE", "").strip() or "flatfab"
    if fabric_problem(queue) is not None:  # the same safe-name rule as fabric names
        raise ConfigError(f"FLATFAB_QUEUE: {queue!r} is not a plain name (lowercase "
                          "letters, digits, '-', '_')")
    return Config(broker_url=url, result_backend=backend, queue=queue,
                  visibility_timeout=_seconds(env, "FLATFAB_VISIBILITY_TIMEOUT", 300.0, 1.0),
                  result_ttl=int(_seconds(env, "FLATFAB_RESULT_TTL", 7200.0, 60.0)))
