"""`lab down` then `lab up`, five times in a row, on a lab of its own.

After each `down` nothing of the lab is left: no process in its namespaces, no namespace,
no mount, no runtime directory. After each `up` the lab is healthy and a node answers over
SSH. Its prefix and management subnet are its own, so it never touches the session lab
(`fft`, 172.31.250.0/24) or the second one of test_zz_lifecycle (`fft2`, 172.31.249.0/24):
marked `own_lab`, `make test` runs it in its ownlab session, beside the lab's. The same
prefix then comes up once with `--gnmi-mutual-tls`.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from functools import partial
from pathlib import Path

import pytest
import yaml

from tests.support.flatfab import flatfab
from tests.support.lab import Lab
from tests.support.waiting import wait_for

pytestmark = [pytest.mark.live, pytest.mark.own_lab]

PREFIX = "fftc"
SUBNET = "172.31.248.0/24"
ROUNDS = 5
# every daemon of a node (`ip`: its carrier watchers), and the `sleep` of an operator logged
# in over SSH
EXPECTED = {"watchfrr", "zebra", "bgpd", "sshd", "lldpd", "ip", "sleep"}
LOGIN_WAIT_S = 30.0


def _lab_netns() -> list[str]:
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True,
                         check=True).stdout
    return [line.split()[0] for line in out.splitlines()
            if line.split()[0].startswith((f"{PREFIX}-", f"{PREFIX}_"))]


def _namespace_ids(lab: Lab) -> set[str]:
    """`kind:[inode]` of every namespace of the lab, as /proc/<pid>/ns/* links read."""
    ids = {f"net:[{Path(f'/run/netns/{n}').stat().st_ino}]" for n in _lab_netns()}
    for ns_file in lab.paths.ns_dir.iterdir():
        kind = {".mnt": "mnt", ".uts": "uts"}[ns_file.suffix]
        ids.add(f"{kind}:[{ns_file.stat().st_ino}]")
    return ids


def _processes_in(ids: set[str]) -> dict[int, str]:
    found = {}
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            links = {str((proc / "ns" / kind).readlink()) for kind in ("net", "mnt", "uts")}
            if links & ids:
                found[int(proc.name)] = (proc / "comm").read_text().strip()
        except OSError:  # gone meanwhile, or a zombie (it has no namespaces any more)
            continue
    return found


def _hold(ids: set[str], members: dict[int, str]) -> list[int]:
    """Open fds on the lab's namespaces, through its processes' /proc links (not the lab's
    own mounts, so `down` can still unmount those). A namespace held cannot be freed, so its
    id is not handed to a namespace another test session makes meanwhile: a process found
    in one of `ids` after `down` is in the lab's."""
    fds: list[int] = []
    held: set[str] = set()
    for pid in members:
        for kind in ("net", "mnt", "uts"):
            link = f"/proc/{pid}/ns/{kind}"
            try:
                name = str(Path(link).readlink())
                if name in ids and name not in held:
                    fds.append(os.open(link, os.O_RDONLY))
                    held.add(name)
            except OSError:
                continue
    return fds


def _logged_in(ids: set[str], session: subprocess.Popen[bytes]) -> bool:
    """The operator's `sudo sleep` runs in the lab (or its ssh gave up)."""
    return set(_processes_in(ids).values()) >= EXPECTED or session.poll() is not None


def _running(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _lab_mounts() -> list[str]:
    return [line.split()[1] for line in Path("/proc/mounts").read_text().splitlines()
            if f"/run/flatfab/{PREFIX}/" in line.split()[1] + "/"
            or line.split()[1].startswith((f"/run/netns/{PREFIX}-", f"/run/netns/{PREFIX}_"))]


def _ssh(lab: Lab, address: str, command: str) -> list[str]:
    return ["ssh", "-i", str(lab.paths.client_key), "-o",
            f"UserKnownHostsFile={lab.paths.known_hosts}", "-o", "BatchMode=yes", "-o",
            "ConnectTimeout=5", f"{lab.paths.user}@{address}", command]


def _assert_usable(lab: Lab) -> str:
    """Healthy by `lab status`, FRR answering over SSH; returns leaf1's address."""
    status = lab.cli("lab", "status", "--prefix", PREFIX, "--format", "json")
    assert status.code == 0, status.stdout + status.stderr
    nodes = {n["node"]: n for n in status.json()["nodes"]}
    address = nodes["leaf1"]["mgmt_ipv4"]
    shown = subprocess.run(_ssh(lab, address, "sudo vtysh -c 'show bgp summary'"),
                           capture_output=True, text=True, timeout=30, check=False)
    assert shown.returncode == 0, shown.stderr
    return str(address)


def _assert_nothing_left(lab: Lab, ids: set[str], before: dict[int, str]) -> None:
    assert _processes_in(ids) == {}
    assert {pid: comm for pid, comm in before.items() if _running(pid)} == {}
    assert _lab_netns() == []
    assert _lab_mounts() == []
    assert not lab.paths.root.exists()


def test_lab_down_then_up_five_times(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.fail("live lab tests need root (network namespaces, mounts, users)")
    lab = Lab(prefix=PREFIX, inventory=tmp_path / "inventory", state_dir=tmp_path / "state")
    flatfab("lab", "down", "--sweep", "--prefix", PREFIX)
    up = lab.cli("lab", "up", "--prefix", PREFIX, "--mgmt-subnet", SUBNET)
    timings: list[tuple[float, float]] = []
    try:
        assert up.code == 0, up.stderr
        address = _assert_usable(lab)
        for round_ in range(1, ROUNDS + 1):
            ids = _namespace_ids(lab)
            # an operator still logged in (sshd session, sudo, a shell) must not hold it up
            session = subprocess.Popen(_ssh(lab, address, "sudo sleep 300"),
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            # a login is not instant on a loaded machine (CI runs suites side by side)
            wait_for(partial(_logged_in, ids, session), "the operator's SSH login",
                     timeout=LOGIN_WAIT_S)
            before = _processes_in(ids)
            assert set(before.values()) >= EXPECTED, before
            held = _hold(ids, before)
            try:
                started = time.monotonic()
                down = lab.cli("lab", "down", "--prefix", PREFIX)
                down_s = time.monotonic() - started
                assert down.code == 0, down.stdout + down.stderr
                _assert_nothing_left(lab, ids, before)
            finally:
                for fd in held:
                    os.close(fd)
            session.wait(timeout=10)
            started = time.monotonic()
            up = lab.cli("lab", "up", "--prefix", PREFIX, "--mgmt-subnet", SUBNET)
            up_s = time.monotonic() - started
            assert up.code == 0, up.stdout + up.stderr
            address = _assert_usable(lab)
            timings.append((down_s, up_s))
            print(f"\nround {round_}: lab down {down_s:.2f} s, lab up {up_s:.2f} s")
    finally:
        for round_, (down_s, up_s) in enumerate(timings, 1):
            print(f"lab cycle round {round_}: down {down_s:.2f} s, up {up_s:.2f} s")
        final = flatfab("lab", "down", "--sweep", "--prefix", PREFIX)
    assert final.code == 0, final.stdout + final.stderr
    assert _lab_netns() == [] and _lab_mounts() == []


def test_a_lab_up_with_gnmi_mutual_tls_streams_only_to_the_certificate_it_signed(
        tmp_path: Path) -> None:
    """`lab up --gnmi-mutual-tls`: the inventory names the client certificate the lab CA
    signed and `watch` streams every switch with it; without it, leaf1 is refused (no
    session, even with the right password) and named unread, the run incomplete."""
    if os.geteuid() != 0:
        pytest.fail("live lab tests need root (network namespaces, mounts, users)")
    lab = Lab(prefix=PREFIX, inventory=tmp_path / "inventory", state_dir=tmp_path / "state")
    flatfab("lab", "down", "--sweep", "--prefix", PREFIX)
    up = lab.cli("lab", "up", "--prefix", PREFIX, "--mgmt-subnet", SUBNET, "--gnmi-mutual-tls")
    try:
        assert up.code == 0, up.stdout + up.stderr
        hosts = yaml.safe_load((lab.inventory / "hosts.yaml").read_text())
        extras = hosts["leaf1"]["connection_options"]["gnmi"]["extras"]
        assert {"cert_file", "key_file"} <= set(extras), extras
        switches = {"spine1", "spine2", "leaf1", "leaf2", "leaf3", "leaf4"}
        watched = lab.cli("watch", "--interval", "1", "--count", "3", "--format", "json")
        assert switches <= set(json.loads(watched.stdout)["streamed"]), watched.stderr
        for key in ("cert_file", "key_file"):
            del hosts["leaf1"]["connection_options"]["gnmi"]["extras"][key]
        (lab.inventory / "hosts.yaml").write_text(yaml.safe_dump(hosts))
        bare = lab.cli("watch", "--interval", "1", "--count", "3", "--format", "json")
        assert bare.code == 3, bare.stdout[-2000:] + bare.stderr
        data = json.loads(bare.stdout)
        assert "leaf1" not in data["streamed"] and "leaf2" in data["streamed"]
        assert [line for line in bare.stderr.splitlines() if line.startswith("leaf1: not read")]
    finally:
        down = flatfab("lab", "down", "--sweep", "--prefix", PREFIX)
    assert down.code == 0, down.stdout + down.stderr
