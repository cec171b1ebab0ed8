"""What the built package holds: every file the CLI reads at run time, under the package's
own name and nowhere else."""

from __future__ import annotations

import subprocess
import tarfile
import zipfile
from pathlib import Path

from tests.support import installed
from tests.support.paths import ROOT

# repository folder -> where its files land in the installed package (setup.py)
MAPPED = {"tasks": "flatfab", "intents": "flatfab/examples", "runbooks": "flatfab/runbooks",
          "dashboards": "flatfab/dashboards", "napalm_frr": "napalm_frr",
          "napalm_linux_host": "napalm_linux_host", "napalm_flatfab_junos": "napalm_flatfab_junos"}


def _tracked(folder: str) -> list[str]:
    out = subprocess.run(["git", "ls-files", folder], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout
    return [line for line in out.splitlines() if line]


def test_the_wheel_holds_every_file_of_the_package_and_its_data(
        dist: tuple[Path, Path]) -> None:
    names = set(installed.wheel_names(dist[1]))
    missing = [f"{path} -> {MAPPED[folder]}{path[len(folder):]}"
               for folder in MAPPED for path in _tracked(folder)
               if f"{MAPPED[folder]}{path[len(folder):]}" not in names]
    assert missing == []
    tops = {name.split("/")[0] for name in names if not name.startswith("flatfab-")}
    # no top-level `tasks`
    assert tops == {"flatfab", "napalm_frr", "napalm_linux_host", "napalm_flatfab_junos"}


def test_the_wheel_declares_its_console_script_and_extras(dist: tuple[Path, Path]) -> None:
    with zipfile.ZipFile(dist[1]) as archive:
        info = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        metadata = archive.read(info).decode()
        points = archive.read(info.replace("METADATA", "entry_points.txt")).decode()
    assert "flatfab = flatfab.cli.app:main" in points
    extras = {line.split(":", 1)[1].strip() for line in metadata.splitlines()
              if line.startswith("Provides-Extra:")}
    assert {"telemetry", "distributed", "nautobot", "nxos", "srlinux", "all"} <= extras
    assert f"Version: {installed.VERSION}" in metadata


def test_the_sdist_holds_what_the_wheel_is_built_from(dist: tuple[Path, Path]) -> None:
    with tarfile.open(dist[0]) as archive:
        names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    missing = [path for folder in MAPPED for path in _tracked(folder) if path not in names]
    assert missing == []
    assert {"setup.py", "pyproject.toml", "README.md"} <= names
