"""A local Nautobot for tests and demos: `python -m labs.nautobot.server up|down|status|token`.

`up` installs Nautobot (pinned, in its own venv) if missing, creates a private PostgreSQL
cluster and a Redis on 127.0.0.1, loads the migrated schema, creates the `admin` superuser and
an API token, starts the web server and waits until `/api/status/` answers. Migrating an
empty database takes minutes, so the first `up` dumps the migrated database into a cache
outside the repository and every later `up` restores that dump in about a second.

The service is throwaway: `up` always starts from the migrated, empty database and `down`
stops every daemon by its recorded pid, waits until each has exited and discards the data
(secrets and logs stay in the state dir). A failed `up` brings down what it had started.

The web server is Django's threaded `runserver` (`--noreload --insecure`): one process to
stop, HTTP/1.1 keep-alive without uWSGI's HTTP router (which drops kept-alive sessions
unless told otherwise), static files served without a collectstatic step, ready in ~5 s.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import fcntl
import hashlib
import http.client
import json
import os
import shutil
import signal
import socket
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from flatfab.errors import FlatfabError
from flatfab.lab.procs import wait_reaped
from flatfab.sot.errors import SotError
from labs.nautobot.postgres import Cluster
from labs.nautobot.processes import Daemon, read_pids, run, running, spawn, stop, write_pids
from labs.nautobot.settings import (
    ADMIN_USER,
    CONSTRAINTS,
    NAUTOBOT_VERSION,
    Settings,
    dump_key,
    ensure_secret,
    nautobot_config,
    redis_config,
)

TOKEN_DESCRIPTION = "flatfab"
PBKDF2_ITERATIONS = 1_000_000  # Django 5.2's default: no re-hash at first login


def say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


@dataclass
class Timings:
    steps: list[tuple[str, float]] = field(default_factory=list)
    start: float = field(default_factory=time.monotonic)

    @contextlib.contextmanager
    def step(self, name: str) -> Iterator[None]:
        began = time.monotonic()
        yield
        self.steps.append((name, time.monotonic() - began))

    def line(self) -> str:
        parts = [f"{name} {seconds:.1f} s" for name, seconds in self.steps]
        return "; ".join([*parts, f"total {time.monotonic() - self.start:.1f} s"])


# --- secrets --------------------------------------------------------------------------------


def _secrets(settings: Settings) -> dict[str, str]:
    names = {"secret_key": 32, "db_password": 24, "redis_password": 24, "admin_password": 12}
    values = {name: ensure_secret(settings.secret(name), size) for name, size in names.items()}
    values["api_token"] = ensure_secret(settings.secret("api_token"), 20)  # 40 hex, as Nautobot
    return values


def password_hash(password: str, salt: str, iterations: int = PBKDF2_ITERATIONS) -> str:
    """Django's pbkdf2_sha256 format: what `auth_user.password` holds."""
    digest = hashlib.pbkdf2_hmac("sha256", password.encode(), salt.encode(), iterations)
    return f"pbkdf2_sha256${iterations}${salt}${base64.b64encode(digest).decode()}"


def _admin_hash(settings: Settings, password: str) -> str:
    # hashing takes ~0.4 s: once per state dir
    path = settings.secret("admin_password_hash")
    if path.exists():
        return path.read_text(encoding="utf-8").strip()
    salt = ensure_secret(settings.secret("admin_password_salt"), 11)
    value = password_hash(password, salt)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(value + "\n")
    return value


def _bootstrap_sql(admin_hash: str, token: str) -> str:
    """The superuser and its API token, straight into the restored database (a
    `nautobot-server` command would cost ~5 s of start-up for two rows)."""
    if not all(c.isalnum() or c in "$+/=_" for c in admin_hash) or not token.isalnum():
        raise SotError("bootstrap: unexpected characters in a generated secret")
    return f"""
INSERT INTO auth_user (id, password, is_superuser, username, first_name, last_name, email,
                       is_staff, is_active, date_joined, config_data)
VALUES (gen_random_uuid(), '{admin_hash}', true, '{ADMIN_USER}', '', '', '', true, true,
        now(), '{{}}')
ON CONFLICT (username) DO UPDATE SET password = EXCLUDED.password, is_superuser = true,
    is_staff = true, is_active = true;
DELETE FROM users_token WHERE description = '{TOKEN_DESCRIPTION}';
INSERT INTO users_token (id, user_id, created, key, write_enabled, description)
SELECT gen_random_uuid(), id, now(), '{token}', true, '{TOKEN_DESCRIPTION}'
FROM auth_user WHERE username = '{ADMIN_USER}';
"""


# --- Nautobot's venv ------------------------------------------------------------------------


def _install_stamp() -> str:
    pins = CONSTRAINTS.read_bytes() if CONSTRAINTS.exists() else b""
    return f"nautobot=={NAUTOBOT_VERSION} {hashlib.sha256(pins).hexdigest()[:16]}"


def nautobot_server(settings: Settings) -> Path:
    return settings.venv / "bin" / "nautobot-server"


def ensure_venv(settings: Settings) -> bool:
    """Install the pinned Nautobot into its own venv unless it is there; True if installed."""
    stamp = settings.venv / ".flatfab-installed"
    with contextlib.suppress(OSError):
        if stamp.read_text(encoding="utf-8").strip() == _install_stamp() \
                and nautobot_server(settings).exists():
            return False
    if not CONSTRAINTS.exists():
        raise SotError(f"{CONSTRAINTS} is missing (run `make lock-nautobot`)")
    say(f"installing Nautobot {NAUTOBOT_VERSION} into {settings.venv} (about 40 s)")
    base = getattr(sys, "_base_executable", sys.executable)  # not this venv's python
    run([base, "-m", "venv", "--clear", str(settings.venv)],
        what="creating Nautobot's venv", timeout=120)
    settings.state_dir.mkdir(parents=True, exist_ok=True)
    run([str(settings.venv / "bin" / "pip"), "install", "-q", "--disable-pip-version-check",
         "-c", str(CONSTRAINTS), f"nautobot=={NAUTOBOT_VERSION}"],
        what=f"installing Nautobot {NAUTOBOT_VERSION}", timeout=1200,
        log=settings.log("pip"))
    stamp.write_text(_install_stamp() + "\n", encoding="utf-8")
    return True


def _nautobot_env(settings: Settings) -> dict[str, str]:
    return {"NAUTOBOT_ROOT": str(settings.nautobot_root), "PYTHONUNBUFFERED": "1"}


# --- readiness ------------------------------------------------------------------------------


def port_open(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(0.5)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def api_status(settings: Settings, token: str, timeout: float = 5) -> dict[str, object] | None:
    """The JSON of /api/status/, or None while the server does not answer it."""
    conn = http.client.HTTPConnection("127.0.0.1", settings.http_port, timeout=timeout)
    try:
        conn.request("GET", "/api/status/", headers={"Authorization": f"Token {token}",
                                                     "Accept": "application/json"})
        response = conn.getresponse()
        body = response.read()
        if response.status != 200:
            return None
        doc = json.loads(body)
        return doc if isinstance(doc, dict) else None
    except (OSError, http.client.HTTPException, ValueError):
        return None
    finally:
        conn.close()


def _last_log_line(path: Path) -> str:
    with contextlib.suppress(OSError):
        lines = [x.strip() for x in path.read_text(errors="replace").splitlines() if x.strip()]
        if lines:
            return lines[-1][:300]
    return "no output"


def wait_until(ready: Callable[[], bool], daemon: Daemon, *, what: str, log: Path,
               timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not ready():
        if not running(daemon):
            raise SotError(f"{what} exited during start: {_last_log_line(log)} (see {log})")
        if time.monotonic() >= deadline:
            raise SotError(f"{what} not ready after {timeout:.0f} s (see {log})")
        time.sleep(0.2)


# --- up / down ------------------------------------------------------------------------------


@contextlib.contextmanager
def service_lock(settings: Settings) -> Iterator[None]:
    """One up/down of a service at a time."""
    settings.state_dir.mkdir(mode=0o755, parents=True, exist_ok=True)
    with (settings.state_dir / ".lock").open("a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise SotError(f"another up/down of service {settings.name!r} is running"
                           ) from None
        yield


def _record(settings: Settings, pids: dict[str, Daemon], name: str, daemon: Daemon) -> None:
    pids[name] = daemon
    write_pids(settings.pids_file, pids)  # before waiting: a failed start must be stoppable


def _start_database(settings: Settings, cluster: Cluster, pids: dict[str, Daemon],
                    timings: Timings) -> None:
    with timings.step("postgres initdb+start"):
        cluster.init()
        _record(settings, pids, "postgres", cluster.start())
        cluster.create_database()


def _load_schema(settings: Settings, cluster: Cluster, timings: Timings) -> str:
    """Restore the cached migrated dump, or migrate and cache it; says which."""
    dump = settings.cache_dir / f"nautobot-{NAUTOBOT_VERSION}-{dump_key(cluster.major)}.dump"
    if dump.exists():
        with timings.step("restore cached dump"):
            cluster.restore(dump)
        return f"schema from {dump}"
    say(f"migrating an empty database (about 4-5 minutes, once; cached in {dump})")
    with timings.step("migrate"):
        run([str(nautobot_server(settings)), "--config", str(settings.config_file), "migrate",
             "--no-input"], what="migrating Nautobot's database", env=_nautobot_env(settings),
            timeout=1800, log=settings.log("migrate"))
    with timings.step("dump"):
        cluster.dump(dump)
    return f"migrated; dump cached in {dump}"


def up(settings: Settings) -> str:
    """Start the service; the summary line (URL, timings)."""
    with service_lock(settings):
        pids = read_pids(settings.pids_file)
        status = _live_status(settings, pids)
        if status is not None:
            return f"already up: {settings.url} (Nautobot {status})"
        _down(settings, quiet=True)  # leftovers of a crash
        try:
            return _up(settings)
        except BaseException as exc:
            with contextlib.suppress(FlatfabError):
                _down(settings, quiet=True)
            if isinstance(exc, KeyboardInterrupt):
                raise SotError("interrupted; what had started is stopped again") from None
            raise


def _up(settings: Settings) -> str:
    timings = Timings()
    for port, what in ((settings.pg_port, "postgres"), (settings.redis_port, "redis"),
                       (settings.http_port, "http")):
        if port_open(port):
            raise SotError(f"port {port} ({what}) is in use by another program: choose "
                           f"another with --{what}-port or FLATFAB_NAUTOBOT_{what.upper()}_PORT")
    began = time.monotonic()
    if ensure_venv(settings):
        timings.steps.append(("install", time.monotonic() - began))
    keys = _secrets(settings)
    admin_hash = _admin_hash(settings, keys["admin_password"])
    settings.nautobot_root.mkdir(parents=True, exist_ok=True)
    settings.config_file.write_text(nautobot_config(settings), encoding="utf-8")
    fd = os.open(settings.redis_config, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(redis_config(settings, keys["redis_password"]))

    pids: dict[str, Daemon] = {}
    redis_bin = shutil.which("redis-server")
    if redis_bin is None:
        raise SotError("redis-server not found (run `make nautobot-deps` as root)")
    redis = spawn([redis_bin, str(settings.redis_config)], log=settings.log("redis-stdout"))
    _record(settings, pids, "redis", redis)
    cluster = Cluster(settings, keys["db_password"])
    _start_database(settings, cluster, pids, timings)
    wait_until(lambda: port_open(settings.redis_port), redis, what="redis",
               log=settings.log("redis"), timeout=10)
    source = _load_schema(settings, cluster, timings)
    cluster.sql(_bootstrap_sql(admin_hash, keys["api_token"]), what="creating the API token")

    with timings.step("web server ready"):
        web = spawn([str(nautobot_server(settings)), "--config", str(settings.config_file),
                     "runserver", f"127.0.0.1:{settings.http_port}", "--noreload",
                     "--insecure", "--skip-checks"],
                    log=settings.log("web"), env=_nautobot_env(settings),
                    cwd=settings.state_dir)
        _record(settings, pids, "web", web)
        wait_until(lambda: api_status(settings, keys["api_token"]) is not None, web,
                   what=f"Nautobot web server ({settings.url}/api/status/)",
                   log=settings.log("web"), timeout=settings.start_timeout)
    return f"up: {settings.url} ({source}) - {timings.line()}"


def _live_status(settings: Settings, pids: dict[str, Daemon]) -> str | None:
    """Nautobot's version when every daemon runs and the API answers, else None."""
    if set(pids) != {"postgres", "redis", "web"} or not all(map(running, pids.values())):
        return None
    with contextlib.suppress(OSError):
        token = settings.secret("api_token").read_text(encoding="utf-8").strip()
        status = api_status(settings, token)
        if status is not None:
            return str(status.get("nautobot-version", "?"))
    return None


def _down(settings: Settings, *, quiet: bool = False) -> list[str]:
    """Stop web server, Redis and PostgreSQL; the names of what could not be stopped."""
    pids = read_pids(settings.pids_file)
    left = []
    for name in ("web", "redis"):
        daemon = pids.get(name)
        if daemon is not None and not stop(daemon):
            left.append(f"{name} (pid {daemon.pid})")
    cluster_error = None
    try:
        cluster = Cluster(settings, "")
        cluster.stop()
    except SotError as exc:
        cluster_error = str(exc)
    daemon = pids.get("postgres")
    # pg_ctl could not stop it (data dir gone, pg_ctl failed): SIGINT is its fast shutdown
    if daemon is not None and not stop(daemon, first=signal.SIGINT):
        left.append(f"postgres (pid {daemon.pid}{': ' + cluster_error if cluster_error else ''})")
    if left:
        return left
    # exited daemons are orphans that init reaps on its own schedule: wait, so that nothing
    # of ours shows in a process list any more when down returns
    wait_reaped([d.pid for d in pids.values()], timeout=5)
    shutil.rmtree(settings.pg_data, ignore_errors=True)
    settings.pids_file.unlink(missing_ok=True)
    if not quiet and not pids:
        say(f"service {settings.name!r} was not running")
    return left


def down(settings: Settings) -> str:
    began = time.monotonic()
    with service_lock(settings):
        left = _down(settings)
    if left:
        raise SotError(f"still running after down: {', '.join(left)}")
    return f"down: service {settings.name!r} stopped ({time.monotonic() - began:.1f} s)"


def status(settings: Settings) -> tuple[bool, str]:
    pids = read_pids(settings.pids_file)
    lines = []
    ports = {"postgres": settings.pg_port, "redis": settings.redis_port,
             "web": settings.http_port}
    for name, port in ports.items():
        daemon = pids.get(name)
        state = f"running (pid {daemon.pid})" if daemon and running(daemon) else "stopped"
        lines.append(f"{name:9} {state:22} 127.0.0.1:{port}")
    version = _live_status(settings, pids)
    lines.append(f"api       {'answers: Nautobot ' + version if version else 'no answer':22} "
                 f"{settings.url}/api/status/")
    lines.append(f"state     {settings.state_dir}")
    return version is not None, "\n".join(lines)


def token(settings: Settings) -> str:
    try:
        return settings.secret("api_token").read_text(encoding="utf-8").strip()
    except OSError:
        raise SotError(f"no API token for service {settings.name!r} yet: run `python -m "
                       "labs.nautobot.server up` first") from None


# --- CLI ------------------------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m labs.nautobot.server",
                                     description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("action", choices=["up", "down", "status", "token"])
    parser.add_argument("--name", help="service name: state in <state root>/<name>/ "
                        "(FLATFAB_NAUTOBOT_NAME, default 'default')")
    parser.add_argument("--postgres-port", type=int, help="FLATFAB_NAUTOBOT_POSTGRES_PORT (55432)")
    parser.add_argument("--redis-port", type=int, help="FLATFAB_NAUTOBOT_REDIS_PORT (56379)")
    parser.add_argument("--http-port", type=int, help="FLATFAB_NAUTOBOT_HTTP_PORT (58080)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        settings = Settings.from_env(args.name, args.postgres_port, args.redis_port,
                                     args.http_port)
        if args.action == "up":
            print(up(settings))
        elif args.action == "down":
            print(down(settings))
        elif args.action == "status":
            ok, text = status(settings)
            print(text)
            return 0 if ok else 1
        else:
            print(token(settings))
    except FlatfabError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"error: {exc.strerror or exc}: {exc.filename or ''}".rstrip(": "),
              file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
