"""Where one Nautobot service lives (state dir, ports, venv, dump cache) and its config files.

Every path and port has a default that a `FLATFAB_NAUTOBOT_*` variable or a CLI option
overrides, so a test instance runs beside a demo one. Secrets are files in the state dir
(0600) that the generated configs read at start: nothing secret is written into a config,
an argument list or a log.
"""

from __future__ import annotations

import hashlib
import os
import re
import secrets
from dataclasses import dataclass, field
from pathlib import Path

from flatfab.sot.errors import SotError

NAUTOBOT_VERSION = "3.2.7"
ROOT = Path(__file__).resolve().parents[2]
# every package of the Nautobot venv, pinned (`make lock-nautobot` regenerates it)
CONSTRAINTS = ROOT / "constraints-nautobot.txt"
# bump when the generated config changes what `migrate` writes (apps, plugins)
CONFIG_SCHEMA = 1
ADMIN_USER = "admin"
DB_NAME = "nautobot"
DB_USER = "nautobot"
NAME_RE = re.compile(r"^[a-z][a-z0-9-]{0,31}$")


def _env_int(name: str, default: int) -> int:
    raw = os.environ.get(name, "")
    if not raw:
        return default
    if not raw.isdigit() or not 1024 <= int(raw) <= 65535:
        raise SotError(f"{name}={raw!r} is not a TCP port (1024-65535)")
    return int(raw)


def _env_seconds(name: str, default: float) -> float:
    raw = os.environ.get(name, "")
    try:
        return float(raw) if raw else default
    except ValueError:
        raise SotError(f"{name}={raw!r} is not a number of seconds") from None


def _cache_home() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "flatfab"


@dataclass(frozen=True)
class Settings:
    name: str = "default"
    state_root: Path = Path("/var/tmp/flatfab-nautobot")
    pg_port: int = 55432
    redis_port: int = 56379
    http_port: int = 58080
    venv: Path = ROOT / ".venv-nautobot"
    cache_dir: Path = field(default_factory=_cache_home)
    start_timeout: float = 120.0

    def __post_init__(self) -> None:
        if not NAME_RE.match(self.name):
            raise SotError(f"service name {self.name!r}: use 1-32 lowercase letters, digits, "
                           "'-', starting with a letter")
        ports = (self.pg_port, self.redis_port, self.http_port)
        if not all(1024 <= port <= 65535 for port in ports):
            raise SotError(f"ports must be 1024-65535: postgres {self.pg_port}, redis "
                           f"{self.redis_port}, http {self.http_port}")
        if len(set(ports)) != len(ports):
            raise SotError(f"ports must differ: postgres {self.pg_port}, redis "
                           f"{self.redis_port}, http {self.http_port}")

    @classmethod
    def from_env(cls, name: str | None = None, pg_port: int | None = None,
                 redis_port: int | None = None, http_port: int | None = None) -> Settings:
        """Defaults, then FLATFAB_NAUTOBOT_* variables, then explicit arguments."""
        env = os.environ.get
        return cls(
            name=name or env("FLATFAB_NAUTOBOT_NAME") or "default",
            state_root=Path(env("FLATFAB_NAUTOBOT_STATE_ROOT") or "/var/tmp/flatfab-nautobot"),
            pg_port=pg_port or _env_int("FLATFAB_NAUTOBOT_POSTGRES_PORT", 55432),
            redis_port=redis_port or _env_int("FLATFAB_NAUTOBOT_REDIS_PORT", 56379),
            http_port=http_port or _env_int("FLATFAB_NAUTOBOT_HTTP_PORT", 58080),
            venv=Path(env("FLATFAB_NAUTOBOT_VENV") or ROOT / ".venv-nautobot"),
            cache_dir=Path(env("FLATFAB_NAUTOBOT_CACHE") or _cache_home()),
            start_timeout=_env_seconds("FLATFAB_NAUTOBOT_START_TIMEOUT", 120.0),
        )

    @property
    def state_dir(self) -> Path:
        return self.state_root / self.name

    @property
    def pg_data(self) -> Path:
        return self.state_dir / "pgdata"

    @property
    def nautobot_root(self) -> Path:
        """NAUTOBOT_ROOT: media, static, git and jobs folders."""
        return self.state_dir / "nautobot"

    @property
    def config_file(self) -> Path:
        return self.state_dir / "nautobot_config.py"

    @property
    def redis_config(self) -> Path:
        return self.state_dir / "redis.conf"

    @property
    def pids_file(self) -> Path:
        return self.state_dir / "pids.json"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.http_port}"

    def log(self, component: str) -> Path:
        return self.state_dir / f"{component}.log"

    def secret(self, name: str) -> Path:
        return self.state_dir / "secrets" / name


def ensure_secret(path: Path, nbytes: int = 32) -> str:
    """The secret in `path`, generated on first use; only the owner may read it."""
    if path.exists():
        return path.read_text(encoding="utf-8").strip()
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    value = secrets.token_hex(nbytes)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(value + "\n")
    return value


def dump_key(pg_major: str) -> str:
    """What a migrated database depends on: Nautobot and its pins, PostgreSQL, our config."""
    digest = hashlib.sha256()
    for part in (NAUTOBOT_VERSION, pg_major, str(CONFIG_SCHEMA)):
        digest.update(part.encode() + b"\0")
    digest.update(CONSTRAINTS.read_bytes() if CONSTRAINTS.exists() else b"")
    return digest.hexdigest()[:16]


def nautobot_config(settings: Settings) -> str:
    """nautobot_config.py: reads its secrets from the state dir when Nautobot loads it."""
    return f'''\
# Generated by flatfab (labs/nautobot/settings.py) on every `up`; secrets live in ./secrets/.
from pathlib import Path

from nautobot.core.settings import *  # noqa: F403

_SECRETS = Path(__file__).resolve().parent / "secrets"


def _secret(name):
    return (_SECRETS / name).read_text(encoding="utf-8").strip()


SECRET_KEY = _secret("secret_key")
ALLOWED_HOSTS = ["localhost", "127.0.0.1"]
DEBUG = False
INSTALLATION_METRICS_ENABLED = False  # no outside network here
DATABASES = {{
    "default": {{
        "ENGINE": "django.db.backends.postgresql",
        "NAME": "{DB_NAME}",
        "USER": "{DB_USER}",
        "PASSWORD": _secret("db_password"),
        "HOST": "127.0.0.1",
        "PORT": "{settings.pg_port}",
        "CONN_MAX_AGE": 300,
    }}
}}
_REDIS = f"redis://:{{_secret('redis_password')}}@127.0.0.1:{settings.redis_port}"
CACHES["default"]["LOCATION"] = _REDIS + "/1"  # noqa: F405
CELERY_BROKER_URL = _REDIS + "/0"
'''


def redis_config(settings: Settings, password: str) -> str:
    """redis.conf (0600: it holds the password): loopback only, nothing written to disk."""
    return "\n".join([
        "# Generated by flatfab (labs/nautobot/settings.py) on every `up`.",
        "bind 127.0.0.1",
        f"port {settings.redis_port}",
        "protected-mode yes",
        'save ""',
        "appendonly no",
        "daemonize no",
        f"dir {settings.state_dir}",
        f"logfile {settings.log('redis')}",
        f"requirepass {password}",
        "",
    ])
