"""The lab's process finding and stopping (tasks/lab/procs.py) on a fake /proc: no root."""

from __future__ import annotations

import signal
from pathlib import Path

from flatfab.lab import procs
from tests.doubles.lab import FakeKernel

LAB_NET = "net:[4026532001]"
LAB_MNT = "mnt:[4026532002]"
HOST_NET = "net:[4026531833]"
MARKER = "/run/flatfab/fftc/"


def _proc(root: Path, pid: int, comm: str, *, state: str = "S", ppid: int = 1,
          ns: tuple[str, ...] = (HOST_NET,), cmdline: str = "") -> None:
    base = root / str(pid)
    (base / "ns").mkdir(parents=True)
    (base / "stat").write_text(f"{pid} ({comm}) {state} {ppid} 1 1 0 -1\n")
    (base / "cmdline").write_bytes(cmdline.replace(" ", "\0").encode())
    for link in ns:
        (base / "ns" / link.split(":")[0]).symlink_to(link)


def test_read_proc_parses_odd_comm_and_zombies(tmp_path: Path) -> None:
    _proc(tmp_path, 10, "we) ird (name", ns=(LAB_NET, LAB_MNT))
    _proc(tmp_path, 11, "bgpd", state="Z", ns=())
    odd = procs.read_proc(10, tmp_path)
    assert odd is not None and odd.comm == "we) ird (name" and odd.state == "S"
    assert odd.namespaces == {LAB_NET, LAB_MNT} and odd.ppid == 1
    zombie = procs.read_proc(11, tmp_path)
    assert zombie is not None and zombie.exited and zombie.namespaces == frozenset()
    assert procs.read_proc(12, tmp_path) is None


def test_members_by_namespace_or_lab_path_never_the_spared(tmp_path: Path) -> None:
    _proc(tmp_path, 20, "zebra", ns=(LAB_NET, LAB_MNT))
    _proc(tmp_path, 21, "vtysh", ns=(HOST_NET, LAB_MNT))  # nsenter --mount only
    _proc(tmp_path, 22, "sshd", cmdline=f"sshd -f {MARKER}nodes/leaf1/sshd_config")
    _proc(tmp_path, 23, "sshd", cmdline="sshd -f /run/flatfab/fftc2/nodes/x/sshd_config")
    _proc(tmp_path, 24, "bgpd", state="Z", ns=())
    _proc(tmp_path, 25, "bash", ns=(HOST_NET,))
    _proc(tmp_path, 26, "flatfab", ns=(LAB_NET,))
    # an operator's client on the host, with the lab's key on its command line
    _proc(tmp_path, 27, "ssh", ns=(HOST_NET,), cmdline=f"ssh -i {MARKER}ssh/id_ed25519 x")
    # a daemon of a crashed `down`: its namespace has no name any more, only its config does
    _proc(tmp_path, 28, "lldpd", ns=("net:[4026532077]",), cmdline=f"lldpd -u {MARKER}x")
    found = procs.members(procs.scan(tmp_path), frozenset({LAB_NET, LAB_MNT}), MARKER,
                          exclude={26}, home=frozenset({HOST_NET}))
    assert found == {20: "zebra", 21: "vtysh", 28: "lldpd"}
    # without a home namespace given, a lab path alone is enough
    assert 22 in procs.members(procs.scan(tmp_path), frozenset(), MARKER)


def test_ancestors_follow_ppid_to_init(tmp_path: Path) -> None:
    _proc(tmp_path, 30, "sh", ppid=1)
    _proc(tmp_path, 31, "pytest", ppid=30)
    _proc(tmp_path, 32, "flatfab", ppid=31)
    assert procs.ancestors(32, tmp_path) == {30, 31, 32}


def test_stop_escalates_catches_respawns_and_reports_what_never_ends() -> None:
    kernel = FakeKernel()
    left = procs.stop(kernel.find, term_grace=1.0, kill_grace=0.5, send=kernel.send,
                      clock=lambda: kernel.now, sleep=kernel.sleep, poll=0.1)
    assert left == {4: "stuck"}
    assert 1.5 <= kernel.now < 1.7  # bounded by the two graces, not by the stuck process
    assert (5, signal.SIGTERM) in kernel.sent  # the respawned zebra was found and stopped
    term_of = [p for p, s in kernel.sent if s == signal.SIGTERM]
    assert sorted(term_of) == [1, 2, 3, 4, 5]  # TERM once each
    assert (2, signal.SIGKILL) in kernel.sent and (4, signal.SIGKILL) in kernel.sent
    assert (1, signal.SIGKILL) not in kernel.sent  # what exits on TERM is not killed


def test_stop_returns_at_once_when_nothing_runs() -> None:
    calls: list[tuple[int, int]] = []
    assert procs.stop(dict, send=lambda p, s: calls.append((p, s)),
                      sleep=lambda _: None) == {}
    assert calls == []


def test_wait_reaped_waits_for_zombies_only_until_the_deadline(tmp_path: Path) -> None:
    _proc(tmp_path, 40, "bgpd", state="Z", ns=())
    _proc(tmp_path, 41, "sshd", state="Z", ns=())
    _proc(tmp_path, 42, "reused", state="S")  # a pid reused by another process: not ours
    _proc(tmp_path, 44, "sh", state="S", ppid=1)  # alive: reaps its children when it will
    _proc(tmp_path, 45, "ssh", state="Z", ns=(), ppid=44)
    _proc(tmp_path, 46, "sleep", state="Z", ns=(), ppid=40)  # parent is ours: init's soon
    clock = [0.0]

    def sleep(seconds: float) -> None:
        clock[0] += seconds
        if clock[0] > 0.2:
            (tmp_path / "41" / "stat").unlink(missing_ok=True)  # init reaped it

    left = procs.wait_reaped([40, 41, 42, 43, 45, 46], 1.0, tmp_path,
                             clock=lambda: clock[0], sleep=sleep)
    assert left == [40, 46] and clock[0] >= 1.0


def test_mounts_matching_is_exact_about_prefixes() -> None:
    mountinfo = "\n".join([
        "30 25 0:25 / /run rw shared:5 - tmpfs tmpfs rw",
        "81 30 0:4 net:[4026532001] /run/netns/fftc-leaf1 rw shared:9 - nsfs nsfs rw",
        "82 30 0:4 net:[4026532009] /run/netns/fftc2-leaf1 rw shared:9 - nsfs nsfs rw",
        "90 30 0:25 /flatfab/fftc/ns /run/flatfab/fftc/ns rw - tmpfs tmpfs rw",
        "91 90 0:4 mnt:[4026532002] /run/flatfab/fftc/ns/leaf1.mnt rw - nsfs nsfs rw",
        "92 30 0:25 /x /run/flatfab/fftc/nodes/my\\040dir rw - tmpfs tmpfs rw",
        "93 30 0:25 /y /run/flatfab/fftc2/ns rw - tmpfs tmpfs rw",
    ])
    assert procs.mounts_matching(mountinfo, ["/run/flatfab/fftc/"]) == [
        "/run/flatfab/fftc/nodes/my dir", "/run/flatfab/fftc/ns/leaf1.mnt",
        "/run/flatfab/fftc/ns"]  # deepest first: a mount before the one it sits on
    assert procs.mounts_matching(mountinfo, ["/run/netns/fftc-leaf1"]) == [
        "/run/netns/fftc-leaf1"]


def test_namespace_ids_count_only_live_namespace_bindings(tmp_path: Path) -> None:
    bound = tmp_path / "leaf1.mnt"
    bound.touch()
    dev, ino = bound.stat().st_dev, bound.stat().st_ino
    files = [("mnt", bound), ("net", tmp_path / "gone")]
    assert procs.namespace_ids(files, nsfs_dev=dev) == {f"mnt:[{ino}]"}
    # the same file when its bind mount is gone: a plain file, not a namespace
    assert procs.namespace_ids(files, nsfs_dev=dev + 1) == frozenset()
