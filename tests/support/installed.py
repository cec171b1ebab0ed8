"""flatfab as an operator gets it: the wheel built from this checkout, installed into a
fresh venv outside the checkout by a user who is not root, with Debian's own Python and no
extras (the core alone).

Building needs the build backend from the package index (pip's cache makes it quick); the
operator's install then runs offline from a wheelhouse of the pinned dependencies
(constraints.txt), which root downloads first: the user has no pip cache of its own.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
import tempfile
import tomllib
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tests.support.flatfab import Run
from tests.support.paths import ROOT

USER = "nobody"  # a user with no rights of its own, as an operator's account has none here
SYSTEM_PYTHON = "/usr/bin/python3"  # Debian's, as on an operator's workstation
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
    "version"]


def not_possible() -> str | None:
    """Why the operator's install cannot be made here (None when it can)."""
    if os.geteuid() != 0:
        return "installing as another user needs root"
    if not Path(SYSTEM_PYTHON).is_file():
        return f"{SYSTEM_PYTHON} not found (Debian's python3 and python3-venv)"
    return None


def _run(argv: list[str], *, cwd: Path | None = None, timeout: float = 600,
         env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          check=False, env=env)
    if proc.returncode != 0:
        raise AssertionError(f"{' '.join(argv)} exited {proc.returncode}:\n"
                             f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return proc


def build_dist(out: Path) -> tuple[Path, Path]:
    """The checkout's sdist and the wheel built from that sdist, as `python -m build` makes
    them (an sdist missing a file gives a wheel missing it)."""
    _run([sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)], timeout=900)
    sdist = next(out.glob("flatfab-*.tar.gz"))
    wheel = next(out.glob("flatfab-*-py3-none-any.whl"))
    return sdist, wheel


def shared_dist(out: Path) -> tuple[Path, Path]:
    """`build_dist`, once for every session of a `make test` (tests/suites.sh names a folder
    they share, FLATFAB_SHARED_DIST): the first to ask builds under a lock, the others wait
    and take the same files. Without it, into `out`."""
    shared = os.environ.get("FLATFAB_SHARED_DIST")
    if not shared:
        return build_dist(out)
    folder = Path(shared)
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (folder / ".built").exists():
            build_dist(folder)
            (folder / ".built").touch()
    return next(folder.glob("flatfab-*.tar.gz")), next(folder.glob("flatfab-*-py3-none-any.whl"))


def build_wheel(source: Path, out: Path) -> Path:
    """The wheel of the package in `source` (another package than flatfab: a platform's),
    as `python -m build --wheel` makes it (the build backend from the package index)."""
    _run([sys.executable, "-m", "build", "--wheel", "--outdir", str(out), str(source)],
         timeout=900)
    return next(out.glob("*.whl"))


def wheel_names(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as archive:
        return archive.namelist()


@dataclass
class Installed:
    """A user's home with the wheel installed into `home/venv`."""

    home: Path
    wheel: Path

    @property
    def venv(self) -> Path:
        return self.home / "venv"

    @property
    def flatfab(self) -> Path:
        return self.venv / "bin" / "flatfab"

    def env(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        """A login-like environment: nothing of the checkout's (no PYTHONPATH, no venv)."""
        base = {"HOME": str(self.home), "USER": USER, "LANG": "C.UTF-8",
                "PATH": f"{self.venv / 'bin'}:/usr/local/sbin:/usr/local/bin:/usr/sbin:"
                        "/usr/bin:/sbin:/bin", "TERM": "dumb", "COLUMNS": "200"}
        return {**base, **(extra or {})}

    def run(self, *args: str, cwd: Path, as_root: bool = False, timeout: float = 600,
            env: dict[str, str] | None = None) -> Run:
        """The installed `flatfab`, as the user (or as root, for the lab)."""
        prefix = [] if as_root else ["runuser", "-u", USER, "--"]
        proc = subprocess.run([*prefix, "env", "-i", *(f"{k}={v}" for k, v in
                                                    self.env(env).items()),
                               str(self.flatfab), *args], cwd=cwd, capture_output=True,
                              text=True, timeout=timeout, check=False)
        return Run(proc.returncode, proc.stdout, proc.stderr)

    def folder(self, name: str) -> Path:
        """A folder of the user's, outside the checkout."""
        path = self.home / name
        _run(["runuser", "-u", USER, "--", "mkdir", "-p", str(path)])
        return path

    def _as_user(self) -> list[str]:
        return ["runuser", "-u", USER, "--", "env", "-i",
                *(f"{k}={v}" for k, v in self.env().items())]

    def pip_install(self, *wheels: Path) -> None:
        """More wheels into the user's venv, offline: their dependencies from the
        wheelhouse or already installed."""
        mine = []
        for wheel in wheels:
            shutil.copy2(wheel, self.home / wheel.name)
            _run(["chown", f"{USER}:", str(self.home / wheel.name)])
            mine.append(str(self.home / wheel.name))
        _run([*self._as_user(), str(self.venv / "bin" / "pip"), "install", "-q",
              "--disable-pip-version-check", "--no-index", "--find-links",
              str(self.home / "wheelhouse"), *mine], timeout=900)

    def command(self, program: str, *args: str, cwd: Path, timeout: float = 600) -> Run:
        """Another program of the user's venv (`python`, `pytest`), as the user."""
        proc = subprocess.run([*self._as_user(), str(self.venv / "bin" / program), *args],
                              cwd=cwd, capture_output=True, text=True, timeout=timeout,
                              check=False)
        return Run(proc.returncode, proc.stdout, proc.stderr)


def install(wheel: Path, extras: Sequence[str] = ()) -> Installed:
    """A fresh home for the user, the pinned dependencies (and those of `extras`) in a
    wheelhouse there, and the user's own venv with the wheel installed from it, offline."""
    home = Path(tempfile.mkdtemp(prefix="flatfab-operator-"))
    wheelhouse = home / "wheelhouse"
    with_extras = f"[{','.join(extras)}]" if extras else ""
    _run([sys.executable, "-m", "pip", "download", "-q", "--dest", str(wheelhouse),
          "--constraint", str(ROOT / "constraints.txt"), f"{wheel}{with_extras}"],
         timeout=900)
    shutil.copy2(wheel, home / wheel.name)
    home.chmod(0o755)
    _run(["chown", "-R", f"{USER}:", str(home)])
    installed = Installed(home=home, wheel=home / wheel.name)
    as_user = installed._as_user()
    _run([*as_user, SYSTEM_PYTHON, "-m", "venv", str(installed.venv)])
    _run([*as_user, str(installed.venv / "bin" / "pip"), "install", "-q",
          "--disable-pip-version-check", "--no-index", "--find-links", str(wheelhouse),
          f"{installed.wheel}{with_extras}"], timeout=900)
    return installed


def remove(installed: Installed) -> None:
    shutil.rmtree(installed.home, ignore_errors=True)
