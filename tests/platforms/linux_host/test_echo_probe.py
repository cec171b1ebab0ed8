"""The ICMP echo prober verify runs on hosts (tasks/platforms/linux_host/echo_probe.py).

The root-only tests run the script exactly as a host does, in two network namespaces
joined by a veth pair (a host and its gateway), and give the host stale caches for real.
"""

from __future__ import annotations

import os
import socket
import struct
import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from flatfab.platforms.linux_host import echo_probe
from flatfab.platforms.linux_host.driver import ECHO_PROBE_SOURCE

TARGET = socket.inet_aton("10.100.2.11")
root_only = pytest.mark.skipif(os.geteuid() != 0, reason="namespaces and raw sockets need root")


def _ip(source: str, dest: bytes, payload: bytes) -> bytes:
    return echo_probe.ipv4_packet(socket.inet_aton(source), dest, 1, payload,
                                  dont_fragment=True)


def test_requests_and_headers_checksum_to_zero() -> None:
    request = echo_probe.echo_request(0x1234, 7, 8972)
    assert len(request) == 8 + 8972  # ICMP header + payload: 9000 B with the IP header
    assert request[0] == echo_probe.ECHO_REQUEST
    assert struct.unpack("!HH", request[4:8]) == (0x1234, 7)
    assert echo_probe.checksum(request) == 0
    assert echo_probe.checksum(echo_probe.echo_request(1, 1, 3)) == 0  # odd length
    packet = _ip("10.100.1.11", TARGET, request)
    assert echo_probe.checksum(packet[:20]) == 0 and len(packet) == 9000
    flags = struct.unpack("!H", packet[6:8])[0]
    assert flags == echo_probe.IP_DF and packet[9] == socket.IPPROTO_ICMP
    loose = echo_probe.ipv4_packet(b"\0" * 4, TARGET, 1, request, dont_fragment=False)
    assert struct.unpack("!H", loose[6:8])[0] == 0


def test_our_echo_reply_is_a_reply_and_others_are_ignored() -> None:
    reply = struct.pack("!BBHHH", echo_probe.ECHO_REPLY, 0, 0, 0x1234, 0) + bytes(16)
    assert echo_probe.classify(_ip("10.100.2.11", socket.inet_aton("10.100.1.11"), reply),
                               TARGET, 0x1234) == ("reply", "")
    # another process's ping, and a reply from another address
    assert echo_probe.classify(_ip("10.100.2.11", b"\0" * 4, reply), TARGET, 0x4321) is None
    assert echo_probe.classify(_ip("10.100.3.11", b"\0" * 4, reply), TARGET, 0x1234) is None


def test_fragmentation_needed_names_the_router_and_its_mtu() -> None:
    request = _ip("10.100.1.11", TARGET, echo_probe.echo_request(0x1234, 1, 64)[:8])
    error = struct.pack("!BBHHH", echo_probe.UNREACHABLE, echo_probe.FRAG_NEEDED, 0, 0,
                        1500) + request
    assert echo_probe.classify(_ip("10.100.2.1", b"\0" * 4, error), TARGET, 0x1234) == (
        "error", "10.100.2.1 needs fragmentation (next-hop MTU 1500)")
    # the same error about someone else's request is not ours
    assert echo_probe.classify(_ip("10.100.2.1", b"\0" * 4, error), TARGET, 0x9999) is None
    exceeded = struct.pack("!BBHI", echo_probe.TIME_EXCEEDED, 0, 0, 0) + request
    assert echo_probe.classify(_ip("10.0.0.1", b"\0" * 4, exceeded), TARGET, 0x1234) == (
        "error", "10.0.0.1 answers time exceeded")


def test_an_arp_reply_from_the_next_hop_gives_its_mac() -> None:
    hop, mac = socket.inet_aton("10.100.1.1"), bytes.fromhex("020000000001")
    reply = struct.pack("!HHBBH6s4s6s4s", 1, 0x0800, 6, 4, 2, mac, hop, bytes(6), bytes(4))
    assert echo_probe.arp_answer(reply, hop) == mac
    assert echo_probe.arp_answer(reply, socket.inet_aton("10.100.1.2")) is None
    request = echo_probe.arp_request(bytes(6), bytes(4), hop)  # a request is no answer
    assert echo_probe.arp_answer(request, hop) is None
    assert echo_probe.arp_answer(b"\0" * 10, hop) is None


# -- the script as a host runs it, in real namespaces ---------------------------------------

@dataclass
class Path:
    """host (10.9.0.2) -- gateway (10.9.0.1 | 10.9.1.1) -- target (10.9.1.2), jumbo MTU."""

    host: str
    gateway: str
    target: str

    def sh(self, netns: str, command: str) -> str:
        return subprocess.run(["ip", "netns", "exec", netns, "sh", "-c", command],
                              capture_output=True, text=True, check=True, timeout=30).stdout

    def probe(self, address: str, payload: int, dont_fragment: bool) -> tuple[int, str]:
        """The script as the host driver runs it, with one target: (code, summary)."""
        [code, summary] = self.probe_many([(address, payload, dont_fragment)])[0]
        return int(code), summary

    def probe_many(self, targets: list[tuple[str, int, bool]]) -> list[list[str]]:
        listed = [f"{a}/{p}/{int(df)}" for a, p, df in targets]
        run = subprocess.run(["ip", "netns", "exec", self.host, "python3", "-c",
                              ECHO_PROBE_SOURCE, "@@probe", "2", "1", *listed],
                             capture_output=True, text=True, timeout=30, check=False)
        assert run.returncode == 0 and not run.stderr, run.stderr
        lines = sorted(line.split(" ", 3) for line in run.stdout.splitlines())
        assert [line[:2] for line in lines] == [["@@probe", str(i)] for i in range(len(targets))]
        return [line[2:] for line in lines]


@pytest.fixture
def path() -> Iterator[Path]:
    tag = uuid.uuid4().hex[:6]
    names = Path(f"ffprobe-h-{tag}", f"ffprobe-g-{tag}", f"ffprobe-t-{tag}")
    for netns in (names.host, names.gateway, names.target):
        subprocess.run(["ip", "netns", "add", netns], check=True)
    try:
        for left, right, a, b in ((names.host, names.gateway, "p0", "p1"),
                                  (names.gateway, names.target, "p2", "p3")):
            subprocess.run(["ip", "link", "add", a, "netns", left, "mtu", "9000", "type",
                            "veth", "peer", "name", b, "netns", right, "mtu", "9000"],
                           check=True)
        names.sh(names.gateway, "ip link set lo up && ip link set p1 up && ip link set p2 up && "
                 "ip addr add 10.9.0.1/24 dev p1 && ip addr add 10.9.1.1/24 dev p2 && "
                 "sysctl -qw net.ipv4.ip_forward=1")
        names.sh(names.host, "ip link set lo up && ip link set p0 up && "
                 "ip addr add 10.9.0.2/24 dev p0 && ip route add default via 10.9.0.1")
        names.sh(names.target, "ip link set lo up && ip link set p3 up && "
                 "ip addr add 10.9.1.2/24 dev p3 && ip route add default via 10.9.1.1")
        yield names
    finally:
        for netns in (names.host, names.gateway, names.target):
            subprocess.run(["ip", "netns", "del", netns], check=False)


@root_only
def test_full_size_with_dont_fragment_is_answered(path: Path) -> None:
    code, out = path.probe("10.9.1.2", 9000 - 28, dont_fragment=True)
    assert code == 0, out
    assert out == "2 packets transmitted, 2 received, 0% packet loss, 9000 B DF"


@root_only
def test_a_stale_neighbour_entry_does_not_fail_the_probe(path: Path) -> None:
    """The host learned its gateway's MAC before the switch was replaced."""
    path.sh(path.host, "ip neigh replace 10.9.0.1 lladdr 02:00:00:00:de:ad dev p0 "
            "nud reachable")
    ping = subprocess.run(["ip", "netns", "exec", path.host, "ping", "-n", "-c", "2", "-i",
                           "0.2", "-W", "1", "10.9.1.2"], capture_output=True, check=False)
    assert ping.returncode != 0  # what a probe through the neighbour table sees
    code, out = path.probe("10.9.1.2", 56, dont_fragment=False)
    assert code == 0, out
    # the gateway's ARP answer refreshed the learned entry, as any ARP exchange would
    assert "02:00:00:00:de:ad" not in path.sh(path.host, "ip neigh show 10.9.0.1")


@root_only
def test_a_learned_path_mtu_does_not_fail_the_probe_once_repaired(path: Path) -> None:
    path.sh(path.gateway, "ip link set p2 mtu 1500")
    code, out = path.probe("10.9.1.2", 9000 - 28, dont_fragment=True)
    assert code == 1
    assert out.endswith("9000 B DF; 10.9.0.1 needs fragmentation (next-hop MTU 1500)")
    assert "mtu 1500" in path.sh(path.host, "ip route get 10.9.1.2")  # the host learned it
    path.sh(path.gateway, "ip link set p2 mtu 9000")
    ping = subprocess.run(["ip", "netns", "exec", path.host, "ping", "-n", "-c", "1", "-W",
                           "1", "-s", str(9000 - 28), "-M", "do", "10.9.1.2"],
                          capture_output=True, check=False)
    assert ping.returncode != 0  # ping obeys the cache for ten minutes
    code, out = path.probe("10.9.1.2", 9000 - 28, dont_fragment=True)
    assert code == 0, out


@root_only
def test_above_the_device_mtu_is_a_local_error_and_no_route_is_named(path: Path) -> None:
    code, out = path.probe("10.9.1.2", 9001 - 28, dont_fragment=True)
    assert code == 1 and "local error: Message too long" in out, out
    path.sh(path.host, "ip route del default")
    code, out = path.probe("10.7.7.7", 56, dont_fragment=False)
    assert code == 1 and "no route to 10.7.7.7" in out, out


@root_only
def test_every_target_is_probed_at_once_with_its_own_answer(path: Path) -> None:
    answers = path.probe_many([("10.9.1.2", 9000 - 28, True), ("10.9.1.99", 56, False),
                               ("10.9.0.1", 56, False)])
    assert [code for code, _ in answers] == ["0", "1", "0"]
    assert answers[1][1] == "2 packets transmitted, 0 received, 100% packet loss, 84 B no DF"


@root_only
def test_a_silent_next_hop_is_named(path: Path) -> None:
    path.sh(path.gateway, "ip link set p1 down")
    code, out = path.probe("10.9.1.2", 56, dont_fragment=False)
    assert code == 1 and "next hop 10.9.0.1 does not answer ARP on p0" in out, out


@root_only
def test_a_configured_neighbour_entry_that_disagrees_is_named(path: Path) -> None:
    """A PERMANENT entry is the host's configuration, not a cache: its traffic uses it."""
    path.sh(path.host, "ip neigh replace 10.9.0.1 lladdr 02:00:00:00:de:ad dev p0 "
            "nud permanent")
    code, out = path.probe("10.9.1.2", 56, dont_fragment=False)
    assert code == 1, out
    assert "a static neighbour entry sends 10.9.0.1 to 02:00:00:00:de:ad, but " in out
