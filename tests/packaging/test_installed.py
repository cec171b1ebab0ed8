"""The package as an operator installs it (tests/support/installed.py): a user who is not
root, a fresh venv of Debian's Python outside the checkout, the core alone.

The walk a new user takes: `init`, `plan`, `check`, `render`, `lab generate`, then a dry run
against an inventory nothing answers (addresses on this machine only: 127.0.0.x on a port
nothing listens on), which must name every device it could not read and exit 3, never
report "no change". Then every optional command, on the core alone, names its extra.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support import installed
from tests.support.sockets import closed_port

UNREAD = 3


def _nothing_answers(project: Path, fabric: str, operator: installed.Installed) -> list[str]:
    """Point init's inventory at 127.0.0.x on a closed port, with a key and the host keys the
    checks before any connection ask for; the devices, in inventory order."""
    folder = project / "inventory" / fabric
    ssh = operator.folder("ssh-" + fabric)
    key = ssh / "id_ed25519"
    subprocess.run(["runuser", "-u", installed.USER, "--", "ssh-keygen", "-q", "-t",
                    "ed25519", "-N", "", "-f", str(key)], check=True)
    public = (ssh / "id_ed25519.pub").read_text(encoding="utf-8").split()[:2]
    port = closed_port()
    hosts: dict[str, Any] = yaml.safe_load((folder / "hosts.yaml").read_text(encoding="utf-8"))
    known = []
    for index, entry in enumerate(hosts.values(), start=2):
        entry["hostname"] = f"127.0.0.{index}"
        known.append(f"[127.0.0.{index}]:{port} {' '.join(public)}")
    (ssh / "known_hosts").write_text("\n".join(known) + "\n", encoding="utf-8")
    defaults: dict[str, Any] = yaml.safe_load(
        (folder / "defaults.yaml").read_text(encoding="utf-8")) or {}
    options = {"key_file": str(key), "known_hosts": str(ssh / "known_hosts"), "port": port}
    defaults["connection_options"] = {"napalm": {"extras": {"optional_args": options}}}
    (folder / "hosts.yaml").write_text(yaml.safe_dump(hosts), encoding="utf-8")
    (folder / "defaults.yaml").write_text(yaml.safe_dump(defaults), encoding="utf-8")
    return list(hosts)


def _no_traceback(*texts: str) -> None:
    for text in texts:
        assert "Traceback" not in text and "internal error" not in text, text


def test_the_installed_command_starts_outside_the_checkout(
        operator: installed.Installed) -> None:
    here = operator.folder("empty")
    shown = operator.run("--help", cwd=here)
    assert shown.code == 0, shown.stderr
    assert "Usage" in shown.stdout
    version = operator.run("--version", cwd=here)
    assert version.code == 0 and version.stdout.strip() == f"flatfab {installed.VERSION}"
    # the package installs under its own name only
    assert list(operator.venv.glob("lib/python3*/site-packages/tasks")) == []
    assert list(operator.venv.glob("lib/python3*/site-packages/flatfab/examples/lab"))


def test_a_new_user_walks_from_init_to_a_dry_run_that_names_every_unread_device(
        operator: installed.Installed) -> None:
    home = operator.folder("walk")
    made = operator.run("init", "dc1", "--fabric", "dc1", cwd=home)
    assert made.code == 0, made.stderr
    project = home / "dc1"
    deeper = operator.folder("walk/dc1/intents/dc1")  # any folder inside the project
    for args in (("plan",), ("check",), ("render", "--out", str(project / "configs")),
                 ("lab", "generate")):
        done = operator.run(*args, cwd=deeper)
        assert done.code == 0, (args, done.stdout[-2000:], done.stderr[-2000:])
        _no_traceback(done.stdout, done.stderr)
    assert len(list((project / "configs").glob("*"))) == 14
    assert (project / "labs" / "dc1.clab.yml").is_file()
    devices = _nothing_answers(project, "dc1", operator)
    dry = operator.run("rollout", "--dry-run", cwd=project, timeout=300)
    _no_traceback(dry.stdout, dry.stderr)
    assert dry.code == UNREAD, dry.stdout + dry.stderr
    unread = re.findall(r"^(\S+): not read: (.+)$", dry.stderr, re.M)
    assert sorted(name for name, _ in unread) == sorted(devices)
    assert all("refused" in why for _, why in unread), unread
    assert "would change" not in dry.stdout or "INCOMPLETE" in dry.stdout


def _one_line_naming(run: Any, extra: str, *, alone: bool = True) -> None:
    """Exit 2, and one line naming the extra (`alone`: the only line; else among the other
    problems the same pass found, each one line)."""
    _no_traceback(run.stdout, run.stderr)
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    assert run.code == 2 and all(line.startswith("error: ") for line in lines), run.stderr
    naming = [line for line in lines if f"pip install 'flatfab[{extra}]'" in line]
    assert len(naming) == 1, run.stderr
    assert len(lines) == 1 or not alone, run.stderr


@pytest.fixture(scope="module")
def core_project(operator: installed.Installed) -> Path:
    home = operator.folder("extras")
    for fabric, platform in (("lab", "frr"), ("nx", "nxos"), ("srl", "srlinux")):
        made = operator.run("init", fabric, "--fabric", fabric, "--platform", platform,
                            cwd=home)
        assert made.code == 0, made.stderr
        _nothing_answers(home / fabric, fabric, operator)
    return home


@pytest.mark.parametrize(("args", "extra"), [
    (("watch", "--prometheus", "127.0.0.1:9464"), "telemetry"),
    (("verify", "--distributed"), "distributed"),
    (("audit", "--distributed"), "distributed"),
    (("rollout", "--dry-run", "--distributed"), "distributed"),
    (("worker",), "distributed"),
    (("beat", "--every", "15m", "--report-dir", "reports"), "distributed"),
])
def test_each_optional_command_names_its_extra_on_the_core_alone(
        operator: installed.Installed, core_project: Path, args: tuple[str, ...],
        extra: str) -> None:
    _one_line_naming(operator.run(*args, cwd=core_project / "lab"), extra)


@pytest.mark.parametrize(("fabric", "extra"), [("nx", "nxos"), ("srl", "srlinux")])
def test_a_platform_of_an_extra_is_named_before_any_connection(
        operator: installed.Installed, core_project: Path, fabric: str, extra: str) -> None:
    # planning and rendering need no extra: only reaching the devices does
    assert operator.run("check", cwd=core_project / fabric).code == 0
    # the inventory init wrote is not filled in for these plugins (the extra's line is one
    # of the problems the pass names at once, before any connection)
    _one_line_naming(operator.run("rollout", "--dry-run", cwd=core_project / fabric), extra,
                     alone=False)


def test_a_nautobot_inventory_names_its_extra(operator: installed.Installed,
                                              core_project: Path) -> None:
    project = core_project / "lab"
    (project / "inventory" / "lab" / "source.yaml").write_text(
        "nautobot:\n  url: http://127.0.0.1:9/\n  inventory: nautobot\n", encoding="utf-8")
    try:
        shown = operator.run("verify", cwd=project,
                             env={"FLATFAB_NAUTOBOT_TOKEN": "not-a-real-token"})
    finally:
        (project / "inventory" / "lab" / "source.yaml").unlink()
    _one_line_naming(shown, "nautobot")
