"""Numbers and addresses a network engineer would refuse, wherever an intent uses them."""

from __future__ import annotations

import ipaddress

# (first, last, why), RFC 6793 (AS_TRANS), RFC 5398 (documentation), RFC 7300 (last ASNs),
# IANA reserved 65552-131071
RESERVED_ASNS = (
    (0, 0, "AS 0 is reserved (RFC 7607)"),
    (23456, 23456, "AS 23456 is AS_TRANS (RFC 6793)"),
    (64496, 64511, "ASNs 64496-64511 are for documentation (RFC 5398)"),
    (65535, 65535, "AS 65535 is reserved (RFC 7300)"),
    (65536, 65551, "ASNs 65536-65551 are for documentation (RFC 5398)"),
    (65552, 131071, "ASNs 65552-131071 are reserved by IANA"),
    (4294967295, 4294967295, "AS 4294967295 is reserved (RFC 7300)"),
)
# RFC 6996: the ASNs for private use (a fabric's underlay, RFC 7938 section 5.2.1)
PRIVATE_ASNS = ((64512, 65534), (4200000000, 4294967294))
# Linux routing tables VRFs cannot take: unspec 0, default 253, main 254, local 255
RESERVED_TABLES = {0: "unspec", 253: "default", 254: "main", 255: "local"}
SPECIAL_SPACE = (
    (ipaddress.IPv4Network("0.0.0.0/8"), "'this network' space (RFC 1122)"),
    (ipaddress.IPv4Network("127.0.0.0/8"), "loopback space (RFC 1122)"),
    (ipaddress.IPv4Network("169.254.0.0/16"), "link-local space (RFC 3927)"),
    (ipaddress.IPv4Network("224.0.0.0/4"), "multicast space (RFC 5771)"),
    (ipaddress.IPv4Network("240.0.0.0/4"), "reserved space (RFC 1112), broadcast included"),
)


def asn_problem(first: int, last: int | None = None) -> str | None:
    """Why an ASN (or the range first..last) touches a reserved ASN (None when it does not)."""
    end = first if last is None else last
    for low, high, why in RESERVED_ASNS:
        if first <= high and low <= end:
            return why if last is None else f"the range {first}-{end} crosses: {why}"
    return None


def is_private_asn(asn: int) -> bool:
    return any(low <= asn <= high for low, high in PRIVATE_ASNS)


def table_problem(table: int) -> str | None:
    if table in RESERVED_TABLES:
        return f"table {table} is the kernel's {RESERVED_TABLES[table]!r} table"
    return None


def space_problem(prefix: str) -> str | None:
    net = ipaddress.IPv4Network(prefix)
    for special, why in SPECIAL_SPACE:
        if net.overlaps(special):
            return f"{net} lies in {why}"
    return None
