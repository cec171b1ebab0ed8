"""A don't-fragment ICMP echo that judges the path as it is now, run on a host by verify.

`ping -M do` obeys the host's path-MTU cache: after a fault lowered a hop's MTU the host
remembers the lower MTU for up to ten minutes (net.ipv4.route.mtu_expires) and refuses to
send full-size DF packets long after the hop is repaired. This probe sets
IP_PMTUDISC_PROBE (ip(7)): DF on every packet, sized to the device MTU only, the cache
ignored; newer iputils offer the same as `ping -M probe`, the one in Debian 12 does not.
A router that cannot forward it answers "fragmentation needed" (RFC 792, RFC 1191), which
is reported with the router and its next-hop MTU.

This file is sent to the host as a script (python3 standard library only, no flatfab
import): `python3 -c SOURCE ADDRESS PAYLOAD_BYTES COUNT WAIT_S`. It needs a raw ICMP
socket (root, as every probe runs). Its last line reads like ping's summary; its exit code
is 0 when an echo reply came back.
"""

from __future__ import annotations

import os
import select
import socket
import struct
import sys
import time

IP_MTU_DISCOVER = 10  # <linux/in.h>
IP_PMTUDISC_PROBE = 3
ECHO_REQUEST, ECHO_REPLY, UNREACHABLE, TIME_EXCEEDED = 8, 0, 3, 11
FRAG_NEEDED = 4  # code of UNREACHABLE
INTERVAL_S = 0.2  # between requests, as verify's pings


def checksum(data: bytes) -> int:
    """The Internet checksum (RFC 1071)."""
    if len(data) % 2:
        data += b"\0"
    total: int = sum(struct.unpack(f"!{len(data) // 2}H", data))
    total = (total >> 16) + (total & 0xFFFF)
    total += total >> 16
    return ~total & 0xFFFF


def echo_request(ident: int, seq: int, payload_bytes: int) -> bytes:
    body = struct.pack("!HH", ident, seq) + bytes(payload_bytes)
    head = struct.pack("!BB", ECHO_REQUEST, 0)
    return head + struct.pack("!H", checksum(head + b"\0\0" + body)) + body


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


def probe(address: str, payload_bytes: int, count: int, wait_s: float) -> tuple[int, int, str]:
    """(sent, replies, last error) of `count` DF echo requests to `address`."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    sock.setsockopt(socket.IPPROTO_IP, IP_MTU_DISCOVER, IP_PMTUDISC_PROBE)
    target, ident = socket.inet_aton(address), os.getpid() & 0xFFFF
    sent = replies = 0
    error = ""
    for seq in range(count):
        try:
            sock.sendto(echo_request(ident, seq, payload_bytes), (address, 0))
            sent += 1
        except OSError as exc:  # e.g. larger than the device MTU: the host's own limit
            error = f"local error: {exc.strerror}"
        last = seq == count - 1
        deadline = time.monotonic() + (wait_s if last else INTERVAL_S)
        while (remaining := deadline - time.monotonic()) > 0 and not (last and replies >= sent):
            if not select.select([sock], [], [], remaining)[0]:
                break
            seen = classify(sock.recv(65535), target, ident)
            if seen is not None and seen[0] == "reply":
                replies += 1
            elif seen is not None:
                error = seen[1]
    sock.close()
    return sent, replies, error


def main(argv: list[str]) -> int:
    address, payload, count, wait_s = argv[0], int(argv[1]), int(argv[2]), float(argv[3])
    sent, replies, error = probe(address, payload, count, wait_s)
    loss = 100 - (100 * replies // count if count else 0)
    print(f"{sent} packets transmitted, {replies} received, {loss}% packet loss, DF "
          f"{payload + 28} B, path-MTU cache ignored" + (f"; {error}" if error else ""))
    return 0 if replies else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
