"""The don't-fragment prober verify runs on hosts (tasks/platforms/linux_host/df_probe.py)."""

from __future__ import annotations

import os
import socket
import struct
import subprocess
import sys

import pytest

from tasks.platforms.linux_host import df_probe
from tasks.platforms.linux_host.driver import DF_PROBE_SOURCE

TARGET = socket.inet_aton("10.100.2.11")


def _ip(source: str, dest: bytes, payload: bytes) -> bytes:
    return (struct.pack("!BBHHHBBH", 0x45, 0, 20 + len(payload), 0, 0x4000, 64, 1, 0)
            + socket.inet_aton(source) + dest + payload)


def test_the_checksum_of_a_request_verifies_to_zero() -> None:
    packet = df_probe.echo_request(0x1234, 7, 8972)
    assert len(packet) == 8 + 8972  # ICMP header + payload: 9000 B with the IP header
    assert packet[0] == df_probe.ECHO_REQUEST and struct.unpack("!HH", packet[4:8]) == (0x1234, 7)
    assert df_probe.checksum(packet) == 0
    assert df_probe.checksum(df_probe.echo_request(1, 1, 3)) == 0  # odd length


def test_our_echo_reply_is_a_reply_and_others_are_ignored() -> None:
    reply = struct.pack("!BBHHH", df_probe.ECHO_REPLY, 0, 0, 0x1234, 0) + bytes(16)
    assert df_probe.classify(_ip("10.100.2.11", socket.inet_aton("10.100.1.11"), reply),
                             TARGET, 0x1234) == ("reply", "")
    # another process's ping, and a reply from another address
    assert df_probe.classify(_ip("10.100.2.11", b"\0" * 4, reply), TARGET, 0x4321) is None
    assert df_probe.classify(_ip("10.100.3.11", b"\0" * 4, reply), TARGET, 0x1234) is None


def test_fragmentation_needed_names_the_router_and_its_mtu() -> None:
    request = _ip("10.100.1.11", TARGET, df_probe.echo_request(0x1234, 1, 64)[:8])
    error = struct.pack("!BBHHH", df_probe.UNREACHABLE, df_probe.FRAG_NEEDED, 0, 0, 1500) + request
    assert df_probe.classify(_ip("10.100.2.1", b"\0" * 4, error), TARGET, 0x1234) == (
        "error", "10.100.2.1 needs fragmentation (next-hop MTU 1500)")
    # the same error about someone else's request is not ours
    assert df_probe.classify(_ip("10.100.2.1", b"\0" * 4, error), TARGET, 0x9999) is None
    exceeded = struct.pack("!BBHI", df_probe.TIME_EXCEEDED, 0, 0, 0) + request
    assert df_probe.classify(_ip("10.0.0.1", b"\0" * 4, exceeded), TARGET, 0x1234) == (
        "error", "10.0.0.1 answers time exceeded")


@pytest.mark.skipif(os.geteuid() != 0, reason="a raw ICMP socket needs root")
def test_the_script_as_sent_to_a_host_gets_replies_at_full_loopback_size() -> None:
    run = subprocess.run([sys.executable, "-c", DF_PROBE_SOURCE, "127.0.0.1", "9000", "2",
                          "1"], capture_output=True, text=True, timeout=20, check=False)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.startswith("2 packets transmitted, 2 received, 0% packet loss, DF 9028 B")


@pytest.mark.skipif(os.geteuid() != 0, reason="a raw ICMP socket needs root")
def test_a_packet_above_the_device_mtu_is_a_local_error() -> None:
    run = subprocess.run([sys.executable, "-c", DF_PROBE_SOURCE, "127.0.0.1", "70000", "1",
                          "0.2"], capture_output=True, text=True, timeout=20, check=False)
    assert run.returncode == 1
    assert "0 packets transmitted, 0 received, 100% packet loss" in run.stdout
    assert "local error: Message too long" in run.stdout
