"""The service's private PostgreSQL cluster: initdb, start, stop, dump and restore.

TCP on 127.0.0.1 only (no Unix socket), password auth, fsync off: a throwaway database for
tests and demos that starts in under a second. As root the server runs as the `postgres`
user (initdb refuses root); otherwise as the caller. Clients get the password through
PGPASSWORD, never an argument.
"""

from __future__ import annotations

import os
import pwd
import shutil
from pathlib import Path

from flatfab.sot.errors import SotError
from labs.nautobot.processes import Daemon, identify, run, wait_gone
from labs.nautobot.settings import DB_NAME, DB_USER, Settings

PG_ROOT = Path("/usr/lib/postgresql")
SERVER_OPTIONS = ("-c listen_addresses=127.0.0.1 -c unix_socket_directories='' "
                  "-c fsync=off -c synchronous_commit=off -c full_page_writes=off")


def bin_dir() -> Path:
    """The newest PostgreSQL server's binaries (Debian's layout), or FLATFAB_PG_BIN."""
    override = os.environ.get("FLATFAB_PG_BIN")
    found = [Path(override)] if override else sorted(
        (p / "bin" for p in PG_ROOT.glob("*") if p.name.isdigit()),
        key=lambda p: int(p.parent.name))
    usable = [p for p in found if (p / "initdb").is_file() and (p / "pg_ctl").is_file()]
    if not usable:
        raise SotError(f"PostgreSQL server not found in {override or PG_ROOT}/*/bin "
                       "(run `make nautobot-deps` as root, or set FLATFAB_PG_BIN)")
    return usable[-1]


class Cluster:
    def __init__(self, settings: Settings, password: str) -> None:
        self.settings = settings
        self.bin = bin_dir()
        self.password = password
        self.data = settings.pg_data
        self.log = settings.log("postgres")

    @property
    def major(self) -> str:
        return self.bin.parent.name

    def _owner(self) -> pwd.struct_passwd | None:
        """The account the server runs as, when we are root."""
        if os.geteuid() != 0:
            return None
        try:
            return pwd.getpwnam("postgres")
        except KeyError:
            raise SotError("running as root needs a `postgres` user for the database server "
                           "(installed with Debian's postgresql package)") from None

    def _server_cmd(self, *args: str) -> list[str]:
        owner = self._owner()
        cmd = [str(self.bin / args[0]), *args[1:]]
        return ["runuser", "-u", owner.pw_name, "--", *cmd] if owner else cmd

    def _give(self, path: Path) -> None:
        owner = self._owner()
        if owner is not None:
            os.chown(path, owner.pw_uid, owner.pw_gid)

    def init(self) -> None:
        """A new, empty cluster whose superuser is Nautobot's database user."""
        shutil.rmtree(self.data, ignore_errors=True)
        self.data.mkdir(mode=0o700, parents=True)
        self._give(self.data)
        self.log.touch(mode=0o600)
        self._give(self.log)
        pwfile = self.data.parent / ".initdb-password"
        fd = os.open(pwfile, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(self.password + "\n")
        self._give(pwfile)
        try:
            run(self._server_cmd("initdb", "-D", str(self.data), "-U", DB_USER,
                                 "--auth=scram-sha-256", f"--pwfile={pwfile}", "-E", "UTF8",
                                 "--locale=C.UTF-8", "--no-instructions"),
                what="creating the PostgreSQL cluster", timeout=120)
        finally:
            pwfile.unlink(missing_ok=True)

    def start(self) -> Daemon:
        run(self._server_cmd("pg_ctl", "-D", str(self.data), "-l", str(self.log), "-w",
                             "-t", "60", "-o", f"-p {self.settings.pg_port} {SERVER_OPTIONS}",
                             "start"),
            what="starting PostgreSQL", timeout=90)
        daemon = self.postmaster()
        if daemon is None:
            raise SotError(f"starting PostgreSQL: no postmaster.pid in {self.data} "
                           f"(see {self.log})")
        return daemon

    def postmaster(self) -> Daemon | None:
        """The running server of this data directory, from its own pid file."""
        try:
            first = (self.data / "postmaster.pid").read_text(encoding="utf-8").split("\n", 1)[0]
        except OSError:
            return None
        return identify(int(first)) if first.strip().isdigit() else None

    def stop(self) -> None:
        """Fast shutdown (rolls back open transactions), then wait until it has exited."""
        daemon = self.postmaster()
        if daemon is None:
            return
        run(self._server_cmd("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "-t", "60",
                             "stop"),
            what="stopping PostgreSQL", timeout=90)
        if not wait_gone(daemon.pid, 10):
            raise SotError(f"stopping PostgreSQL: pid {daemon.pid} still runs after pg_ctl stop")

    def _client(self, tool: str, *args: str, what: str, stdin: str | None = None,
                timeout: float = 120) -> str:
        env = {"PGPASSWORD": self.password, "PGHOST": "127.0.0.1",
               "PGPORT": str(self.settings.pg_port), "PGUSER": DB_USER,
               "PGCONNECT_TIMEOUT": "10"}
        return run([str(self.bin / tool), *args], what=what, env=env, stdin=stdin,
                   timeout=timeout).stdout

    def create_database(self) -> None:
        self._client("createdb", DB_NAME, what="creating the nautobot database")

    def dump(self, target: Path) -> None:
        """A custom-format dump, renamed into place only once complete."""
        target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        partial = target.with_name(f".{target.name}.{os.getpid()}.partial")
        try:
            self._client("pg_dump", "-Fc", "-d", DB_NAME, "-f", str(partial),
                         what="dumping the migrated database", timeout=300)
            partial.chmod(0o600)
            partial.replace(target)
        finally:
            partial.unlink(missing_ok=True)

    def restore(self, source: Path) -> None:
        self._client("pg_restore", "--no-owner", "--no-privileges", "--exit-on-error",
                     "-d", DB_NAME, str(source),
                     what=f"restoring {source}", timeout=300)

    def sql(self, script: str, what: str) -> str:
        """Run SQL given on standard input (so no value in it shows in a process list)."""
        return self._client("psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1",
                            "-d", DB_NAME, "-f", "-", what=what, stdin=script)
