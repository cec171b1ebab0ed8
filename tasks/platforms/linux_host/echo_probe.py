"""An ICMP echo that judges the path as it is now, not the host's caches; verify runs it.

Two caches on a host outlive a repaired fault and would make `ping` judge the past:
- the path-MTU cache: after a router answered "fragmentation needed" (RFC 1191) the host
  keeps the lower MTU for ten minutes (net.ipv4.route.mtu_expires) and refuses to send
  full-size don't-fragment packets, long after the hop is repaired;
- the neighbour table: a learned entry for the next hop that still holds the MAC of a
  replaced or re-addressed gateway stays REACHABLE for up to 45 s (base_reachable_time),
  and frames sent to it are lost. (A configured, PERMANENT entry is not a cache: one that
  disagrees with the network fails the probe.)
So this probe resolves the next hop itself (an ARP request, RFC 826, the kernel's own
route lookup deciding the device and next hop) and sends the echo request as an Ethernet
frame to the MAC that answered, with its own IPv4 header: DF set or not as asked, sized to
the device MTU only. Replies and ICMP errors come back through the kernel to a raw ICMP
socket; a router that cannot forward a DF packet is reported with its next-hop MTU.

A target may name a source address (ADDRESS/PAYLOAD/DF/SOURCE): the route is then the
kernel's for traffic from that address (`ip route get ... from ...`, which applies the
policy rules of a multi-NIC server), so the probe leaves through the device the host's own
traffic from that NIC would; the summary names that device (`dev eth2`), so verify can tell
a NIC whose traffic leaves through another.

It is sent to the host as a script (python3 standard library only, no flatfab import):
`python3 -c SOURCE MARK COUNT WAIT_S ADDRESS/PAYLOAD_BYTES/DF(0|1)[/SOURCE]...`, run as
root (raw and packet sockets). It probes every target at once and prints one line per
target: `MARK INDEX CODE SUMMARY`, the code as ping's exit code (0: a reply came back) and
the summary like ping's last line.
"""

from __future__ import annotations

import json
import os
import select
import socket
import struct
import subprocess
import sys
import threading
import time

ECHO_REQUEST, ECHO_REPLY, UNREACHABLE, TIME_EXCEEDED = 8, 0, 3, 11
FRAG_NEEDED = 4  # code of UNREACHABLE
ETH_P_IP, ETH_P_ARP = 0x0800, 0x0806
INTERVAL_S = 0.2  # between requests, as ping -i 0.2
ARP_TRIES, ARP_WAIT_S = 3, 0.3
IP_DF = 0x4000
TTL = 64


class ProbeError(Exception):
    """The probe could not be sent; the message says why."""


def checksum(data: bytes) -> int:
    """The Internet checksum (RFC 1071)."""
    if len(data) % 2:
        data += b"\0"
    total: int = sum(struct.unpack(f"!{len(data) // 2}H", data))
    total = (total >> 16) + (total & 0xFFFF)
    total += total >> 16
    return ~total & 0xFFFF


def echo_request(ident: int, seq: int, payload_bytes: int) -> bytes:
    """An ICMP echo request (header + `payload_bytes` of zeros)."""
    body = struct.pack("!HH", ident, seq) + bytes(payload_bytes)
    head = struct.pack("!BB", ECHO_REQUEST, 0)
    return head + struct.pack("!H", checksum(head + b"\0\0" + body)) + body


def ipv4_packet(source: bytes, dest: bytes, ident: int, payload: bytes, *,
                dont_fragment: bool) -> bytes:
    """An IPv4 packet carrying ICMP `payload` (RFC 791), header checksum filled in."""
    header = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(payload), ident,
                         IP_DF if dont_fragment else 0, TTL, socket.IPPROTO_ICMP, 0, source,
                         dest)
    return header[:10] + struct.pack("!H", checksum(header)) + header[12:] + payload


def classify(packet: bytes, target: bytes, ident: int) -> tuple[str, str] | None:
    """("reply", "") for our echo reply, ("error", text) for an ICMP error about one of our
    requests, None for anything else the raw socket sees."""
    header = (packet[0] & 0x0F) * 4
    icmp = packet[header:]
    if len(icmp) < 8:
        return None
    kind, code = icmp[0], icmp[1]
    source = socket.inet_ntoa(packet[12:16])
    if kind == ECHO_REPLY:
        ours = packet[12:16] == target and struct.unpack("!H", icmp[4:6])[0] == ident
        return ("reply", "") if ours else None
    if kind not in (UNREACHABLE, TIME_EXCEEDED) or len(icmp) < 8 + 20 + 8:
        return None
    inner = icmp[8:]
    inner_header = (inner[0] & 0x0F) * 4
    quoted = inner[inner_header:inner_header + 8]
    if inner[16:20] != target or len(quoted) < 8 or quoted[0] != ECHO_REQUEST \
            or struct.unpack("!H", quoted[4:6])[0] != ident:
        return None
    if kind == UNREACHABLE and code == FRAG_NEEDED:
        mtu = struct.unpack("!H", icmp[6:8])[0]
        return "error", f"{source} needs fragmentation (next-hop MTU {mtu})"
    what = "time exceeded" if kind == TIME_EXCEEDED else f"unreachable (code {code})"
    return "error", f"{source} answers {what}"


def route(address: str, source: str | None = None) -> tuple[str, str, str]:
    """(device, next hop, source address) the kernel would use towards `address` (for
    traffic from `source`, when given)."""
    command = ["ip", "-j", "route", "get", address, *(["from", source] if source else [])]
    run = subprocess.run(command, capture_output=True, text=True, check=False)
    if run.returncode != 0:
        raise ProbeError(f"no route to {address}: {run.stderr.strip()}")
    entry = json.loads(run.stdout)[0]
    # with `from`, ip-route(8) prints the source given as `from` and no `prefsrc`
    chosen = entry.get("prefsrc") or source or entry.get("from")
    if not isinstance(chosen, str):
        raise ProbeError(f"the route to {address} names no source address")
    return entry["dev"], entry.get("gateway", address), chosen


def arp_request(own_mac: bytes, source: bytes, next_hop: bytes) -> bytes:
    return struct.pack("!HHBBH6s4s6s4s", 1, ETH_P_IP, 6, 4, 1, own_mac, source, bytes(6),
                       next_hop)


def arp_answer(frame: bytes, next_hop: bytes) -> bytes | None:
    """The MAC in an ARP reply from `next_hop`, None for any other ARP frame."""
    if len(frame) < 28:
        return None
    opcode, sender_mac, sender_ip = struct.unpack("!6xH6s4s", frame[:18])
    return sender_mac if opcode == 2 and sender_ip == next_hop else None


def resolve(device: str, next_hop: str, source: str) -> bytes:
    """The MAC that answers ARP for `next_hop` on `device` now (the neighbour table unread)."""
    sock = socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM, socket.htons(ETH_P_ARP))
    try:
        sock.bind((device, ETH_P_ARP))
        own_mac = sock.getsockname()[4]
        hop = socket.inet_aton(next_hop)
        request = arp_request(own_mac, socket.inet_aton(source), hop)
        for _ in range(ARP_TRIES):
            sock.sendto(request, (device, ETH_P_ARP, 0, 0, b"\xff" * 6))
            deadline = time.monotonic() + ARP_WAIT_S
            while (remaining := deadline - time.monotonic()) > 0:
                if not select.select([sock], [], [], remaining)[0]:
                    break
                mac = arp_answer(sock.recv(2048), hop)
                if mac is not None:
                    return mac
    finally:
        sock.close()
    raise ProbeError(f"next hop {next_hop} does not answer ARP on {device}")


def static_neighbour(device: str, next_hop: str) -> str | None:
    """The MAC of a PERMANENT (configured, not learned) neighbour entry for `next_hop`.

    Learned entries are a cache the probe looks past; a configured one is what the host's
    own traffic will use for good, so the probe judges it."""
    run = subprocess.run(["ip", "-j", "neigh", "show", next_hop, "dev", device],
                         capture_output=True, text=True, check=False)
    entries = json.loads(run.stdout or "[]") if run.returncode == 0 else []
    for entry in entries:
        if "PERMANENT" in entry.get("state", []) and entry.get("lladdr"):
            return str(entry["lladdr"])
    return None


def _mac_text(mac: bytes) -> str:
    return ":".join(f"{octet:02x}" for octet in mac)


def probe(address: str, payload_bytes: int, count: int, wait_s: float,
          dont_fragment: bool, ident: int, source_address: str | None = None,
          ) -> tuple[int, int, str, str]:
    """(sent, replies, last error, device) of `count` echo requests to `address`, ICMP id
    `ident`, from `source_address` (the kernel's choice when None)."""
    device, next_hop, source = route(address, source_address)
    # the loopback has no neighbours: any destination MAC is delivered
    mac = bytes(6) if device == "lo" else resolve(device, next_hop, source)
    configured = None if device == "lo" else static_neighbour(device, next_hop)
    if configured is not None and configured != _mac_text(mac):
        raise ProbeError(f"a static neighbour entry sends {next_hop} to {configured}, but "
                         f"{_mac_text(mac)} answers for it")
    listen = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    send = socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM, socket.htons(ETH_P_IP))
    target = socket.inet_aton(address)
    sent = replies = 0
    error = ""
    try:
        for seq in range(count):
            packet = ipv4_packet(socket.inet_aton(source), target, (ident + seq) & 0xFFFF,
                                 echo_request(ident, seq, payload_bytes),
                                 dont_fragment=dont_fragment)
            try:
                send.sendto(packet, (device, ETH_P_IP, 0, 0, mac))
                sent += 1
            except OSError as exc:  # e.g. larger than the device MTU: the host's own limit
                error = f"local error: {exc.strerror}"
            last = seq == count - 1
            deadline = time.monotonic() + (wait_s if last else INTERVAL_S)
            while (remaining := deadline - time.monotonic()) > 0 \
                    and not (last and replies >= sent):
                if not select.select([listen], [], [], remaining)[0]:
                    break
                seen = classify(listen.recv(65535), target, ident)
                if seen is not None and seen[0] == "reply":
                    replies += 1
                elif seen is not None:
                    error = seen[1]
    finally:
        listen.close()
        send.close()
    return sent, replies, error, device


def summary(address: str, payload: int, count: int, wait_s: float, dont_fragment: bool,
            ident: int, source: str | None = None) -> tuple[int, str]:
    """(exit code as ping's: 0 answered, 1 not, 2 could not probe; ping-like summary)."""
    try:
        sent, replies, error, device = probe(address, payload, count, wait_s, dont_fragment,
                                             ident, source)
    except (ProbeError, OSError) as exc:
        return (1 if isinstance(exc, ProbeError) else 2,
                f"0 packets transmitted, 0 received, 100% packet loss; {exc}")
    loss = 100 - (100 * replies // count if count else 0)
    flag = "DF" if dont_fragment else "no DF"
    return (0 if replies else 1,
            f"{sent} packets transmitted, {replies} received, {loss}% packet loss, "
            f"{payload + 28} B {flag}" + (f", dev {device}" if source else "")
            + (f"; {error}" if error else ""))


def main(argv: list[str]) -> int:
    """MARK COUNT WAIT_S ADDRESS/PAYLOAD/DF[/SOURCE]...: every target probed at once (one thread
    each, its own ICMP id), one line `MARK INDEX CODE SUMMARY` per target as it ends."""
    mark, count, wait_s = argv[0], int(argv[1]), float(argv[2])
    lock = threading.Lock()

    def run(index: int, target: str) -> None:
        address, payload, dont_fragment, *source = target.split("/")
        ident = (os.getpid() * 64 + index) & 0xFFFF
        try:
            code, line = summary(address, int(payload), count, wait_s, dont_fragment == "1",
                                 ident, source[0] if source else None)
        except Exception as exc:  # noqa: BLE001 - every target gets its line, whatever broke
            code, line = 2, f"0 packets transmitted, 0 received, 100% packet loss; {exc!r}"
        with lock:
            print(f"{mark} {index} {code} {line}", flush=True)

    threads = [threading.Thread(target=run, args=(i, t)) for i, t in enumerate(argv[3:])]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
