"""Lab lifecycle: a second lab beside the first, errors without root, and a clean `down`.

The file name sorts last so that `down` runs after every other live test.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from flatfab.lab.netns import RUN_ROOT, LabPaths, lab_nodes_processes
from tests.support.flatfab import FLATFAB, flatfab
from tests.support.lab import Lab
from tests.support.paths import ROOT

pytestmark = pytest.mark.live


def test_second_lab_coexists_with_the_first(lab: Lab, tmp_path: Path) -> None:
    project = tmp_path / "project"
    # the numbered example: /31 underlay, explicit cabling, a tenant and default-VRF hosts
    shutil.copytree(ROOT / "intents" / "numbered", project / "intents" / "numbered")
    base = ("--root", str(project), "--fabric", "numbered")
    assert flatfab(*base, "lab", "generate").code == 0
    up = flatfab(*base, "lab", "up", "--prefix", "fft2", "--mgmt-subnet", "172.31.249.0/24")
    try:
        assert up.code == 0, up.stderr
        second = flatfab(*base, "lab", "status", "--prefix", "fft2", "--format", "json").json()
        first = lab.cli("lab", "status", "--prefix", lab.prefix, "--format", "json").json()
        assert second["healthy"] and first["healthy"]
        assert {n["node"] for n in second["nodes"]} == {"sp-a", "sp-b", "lf-a", "lf-b", "gpu-a1",
                                                        "gpu-a2", "lf-b-h1", "lf-b-h2"}
        rollout = flatfab(*base, "rollout", "--format", "json")
        assert rollout.code == 0, rollout.stdout + rollout.stderr
        assert flatfab(*base, "verify", "--format", "json").code == 0
    finally:
        # as after a crash: no lab state left, so only --sweep can find what to remove
        LabPaths("fft2").state_file.unlink(missing_ok=True)
        assert flatfab(*base, "lab", "down", "--prefix", "fft2").stdout.startswith("no lab")
        down = flatfab(*base, "lab", "down", "--sweep", "--prefix", "fft2")
    assert down.code == 0
    assert not _leftovers(LabPaths("fft2"))
    assert lab.cli("lab", "status", "--prefix", lab.prefix, "--format", "json").json()["healthy"]


def test_lab_up_without_root_is_one_clear_line(lab: Lab) -> None:
    if shutil.which("setpriv") is None:
        pytest.fail("setpriv (util-linux) is needed to run a command as another user")
    proc = subprocess.run(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups",
                           FLATFAB, "lab", "up", "--prefix", "fftx"], cwd=ROOT,
                          capture_output=True, text=True, check=False,
                          env={**os.environ, "HOME": "/tmp"})
    assert proc.returncode == 2
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "needs root" in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout


def _leftovers(paths: LabPaths) -> list[str]:
    found = []
    namespaces = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True,
                                check=False).stdout
    found += [f"netns {line.split()[0]}" for line in namespaces.splitlines()
              if paths.owns_netns(line.split()[0])]
    found += [f"pid {pid}" for pid in lab_nodes_processes(paths)]
    mounts = Path("/proc/self/mountinfo").read_text()
    found += [f"mount {line.split()[4]}" for line in mounts.splitlines()
              if str(paths.root) in line.split()[4]]
    if subprocess.run(["id", paths.user], capture_output=True, check=False).returncode == 0:
        found.append(f"user {paths.user}")
    if paths.root.exists():
        found.append(f"dir {paths.root}")
    if paths.sudoers.exists():
        found.append(f"file {paths.sudoers}")
    links = subprocess.run(["ip", "-br", "link"], capture_output=True, text=True,
                           check=False).stdout
    found += [f"link {line.split()[0]}" for line in links.splitlines()
              if line.startswith(paths.mgmt_if)]
    return found


def test_lab_down_leaves_nothing_behind(lab: Lab) -> None:
    before = set(lab_nodes_processes(lab.paths))
    names = {_comm(pid) for pid in before}
    assert {"watchfrr", "zebra", "bgpd", "sshd", "lldpd"} <= names, names
    down = lab.cli("lab", "down", "--prefix", lab.prefix)
    assert down.code == 0, down.stderr
    assert _leftovers(lab.paths) == []
    survivors = {pid: _comm(pid) for pid in before if _alive(pid)}
    assert survivors == {}
    assert not (RUN_ROOT / lab.prefix).exists()


def _comm(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def _alive(pid: int) -> bool:
    """Alive and not a zombie waiting to be reaped."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"
