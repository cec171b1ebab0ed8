"""The lab switch's kernel-enforced QoS: per-class queues that classify on DSCP.

Every port with lossless state, and every VRF sub-link riding on it, gets an HTB root with
one class per traffic class (strict classes first in line, weighted ones sharing the port by
their ETS weight), a u32 filter per DSCP that maps away from the default class, and a bfifo
with a byte limit under each class. The desired kernel state is one row per link in the
FLATFAB_KERNEL table of the qos section; reading tc back yields the same row, so drift in the
kernel shows up in the config diff like any other change.
"""

from __future__ import annotations

import re
import shlex
from typing import Any

from flatfab import devicejson
from flatfab.model.state import DeviceState, PortQos

KERNEL_TABLE = "FLATFAB_KERNEL"
TRAFFIC_CLASSES = range(8)
# `tc class show` (text): "class htb 1:13 parent 1:1 leaf 13: prio 1 [quantum N] rate 25Gbit
# ceil ...": iproute2 prints `quantum` (and `overhead`) only with -d, and rates as an integer
# with a SI unit up to T, or an IEC one (Kibit, Mibit, ...) with -iec
CLASS_RE = re.compile(r"^class htb 1:1([0-7]) parent 1:1 ")
PRIO_RE = re.compile(r"\bprio (\d+)\b")
RATE_RE = re.compile(r"\brate (\d+(?:\.\d+)?)([KMGT]?)(i?)bit\b")
RATE_UNIT = {"": 1e-6, "K": 1e-3, "M": 1.0, "G": 1000.0, "T": 1e6}  # -> Mb/s
IEC_UNIT = {"": 1e-6, "K": 1024 / 1e6, "M": 1024**2 / 1e6, "G": 1024**3 / 1e6,
            "T": 1024**4 / 1e6}


class KernelQosError(ValueError):
    """tc output flatfab cannot read."""


def _pairs(values: dict[int, int]) -> str:
    return ",".join(f"{k}:{v}" for k, v in sorted(values.items()))


def _unpairs(text: str) -> dict[int, int]:
    out = {}
    for item in filter(None, text.split(",")):
        key, _, value = item.partition(":")
        out[int(key)] = int(value)
    return out


def kernel_row(port: PortQos, vrf: str, lossless_queue_bytes: int,
               lossy_queue_bytes: int) -> dict[str, str]:
    counts: dict[int, int] = {}
    for tc in port.maps.dscp_to_tc:
        counts[tc] = counts.get(tc, 0) + 1
    default_tc = max(sorted(counts), key=lambda tc: counts[tc])
    dscp_map = {d: tc for d, tc in enumerate(port.maps.dscp_to_tc) if tc != default_tc}
    queue_of = port.maps.tc_to_queue
    strict = [tc for tc in TRAFFIC_CLASSES if port.queues[queue_of[tc]].strict]
    weights = {tc: port.queues[queue_of[tc]].weight or 0 for tc in TRAFFIC_CLASSES
               if tc not in strict and port.queues[queue_of[tc]].weight}
    limits = {tc: lossless_queue_bytes if tc in port.pfc else lossy_queue_bytes
              for tc in TRAFFIC_CLASSES}
    return {"vrf": vrf, "speed_mbps": str(port.speed_mbps), "default_tc": str(default_tc),
            "dscp_to_tc": _pairs(dscp_map), "strict": ",".join(map(str, strict)),
            "weights": _pairs(weights), "queue_bytes": _pairs(limits)}


def kernel_rows(device: DeviceState, lossless_queue_bytes: int,
                lossy_queue_bytes: int) -> dict[str, dict[str, str]]:
    """One row per link that carries lossless traffic: ports and their VRF sub-links.

    Links with the same port state and VRF share one row object.
    """
    rows = {}
    made: dict[tuple[int, str], dict[str, str]] = {}
    for name, iface in device.interfaces.items():
        port = iface.qos
        if port is None and iface.parent is not None:
            parent = device.interfaces.get(iface.parent)
            port = parent.qos if parent is not None else None
        if port is None:
            continue
        key = (id(port), iface.vrf)
        row = made.get(key)
        if row is None:
            row = made[key] = kernel_row(port, iface.vrf, lossless_queue_bytes,
                                         lossy_queue_bytes)
        rows[name] = row
    return dict(sorted(rows.items()))


def tc_cmd(vrf: str) -> str:
    return "tc" if vrf == "default" else f"tc -n {shlex.quote(vrf)}"


def tc_ops(rows: dict[str, dict[str, str]]) -> list[str]:
    """Commands that make the kernel match the rows (each link rebuilt from scratch)."""
    ops: list[str] = []
    for link, row in rows.items():
        tc, dev = tc_cmd(row["vrf"]), shlex.quote(link)
        speed = int(row["speed_mbps"]) or 100_000
        strict = {int(t) for t in row["strict"].split(",") if t}
        weights, limits = _unpairs(row["weights"]), _unpairs(row["queue_bytes"])
        ops.append(f"{tc} qdisc del dev {dev} root 2>/dev/null || true")
        ops.append(f"{tc} qdisc add dev {dev} root handle 1: htb default 1{row['default_tc']} "
                   "r2q 1000000")
        ops.append(f"{tc} class add dev {dev} parent 1: classid 1:1 htb rate {speed}mbit "
                   "burst 1m cburst 1m")
        for tc_id in TRAFFIC_CLASSES:
            share = weights.get(tc_id, 0)
            rate = f"{max(speed * share // 100, 1)}mbit" if tc_id not in strict else "1mbit"
            prio = 0 if tc_id in strict else 1
            ops.append(f"{tc} class add dev {dev} parent 1:1 classid 1:1{tc_id} htb rate {rate} "
                       f"ceil {speed}mbit burst 1m cburst 1m prio {prio} quantum 60000")
            ops.append(f"{tc} qdisc add dev {dev} parent 1:1{tc_id} handle 1{tc_id}: bfifo "
                       f"limit {limits.get(tc_id, 1_000_000)}")
        for dscp, tc_id in sorted(_unpairs(row["dscp_to_tc"]).items()):
            ops.append(f"{tc} filter add dev {dev} parent 1: protocol ip prio 1 u32 match ip "
                       f"dsfield {dscp << 2:#04x} 0xfc flowid 1:1{tc_id}")
    return ops


def readback_commands(links: dict[str, str]) -> dict[str, str]:
    """Batch keys -> commands that read the tc state of each link (name -> VRF)."""
    commands = {}
    for link, vrf in sorted(links.items()):
        tc, dev = tc_cmd(vrf), shlex.quote(link)
        commands[f"qdisc {link}"] = f"{tc} -j -s qdisc show dev {dev}"
        commands[f"filter {link}"] = f"{tc} -j filter show dev {dev}"
        commands[f"class {link}"] = f"{tc} class show dev {dev}"
    return commands


def _json(text: str, what: str) -> list[dict[str, Any]]:
    try:
        data = devicejson.loads(text or "[]")
    except ValueError as exc:
        raise KernelQosError(f"{what}: not JSON: {exc}") from None
    if not isinstance(data, list):
        raise KernelQosError(f"{what}: expected a list")
    return data


def _mbps(found: re.Match[str]) -> float:
    units = IEC_UNIT if found.group(3) else RATE_UNIT
    return float(found.group(1)) * units[found.group(2)]


def _htb_default(value: object, link: str) -> int:
    """The traffic class of HTB's default class 1:1<tc>.

    iproute2 prints the default class id as hex text ("0x13", since `print_0xhex`); a JSON
    number is the class minor itself (0x13 = 19); bare hex text ("13") is read as hex, as tc
    writes it.
    """
    try:
        if isinstance(value, int) and not isinstance(value, bool):
            minor = value
        elif isinstance(value, str):
            minor = int(value, 16)
        else:
            raise ValueError
    except ValueError:
        raise KernelQosError(f"{link}: HTB default class {value!r} is not a class id") from None
    if not 0x10 <= minor <= 0x17:
        raise KernelQosError(f"{link}: HTB default class {minor:#x} is not a flatfab class")
    return minor - 0x10


def _int_field(value: object, what: str) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.isdigit():
        return int(value)
    raise KernelQosError(f"{what}: {value!r} is not a number")


def _hex(value: object) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    try:
        return int(value, 16) if isinstance(value, str) and value else None
    except ValueError:
        return None


def parse_link(link: str, vrf: str, qdisc: str, filters: str, classes: str
               ) -> tuple[dict[str, str] | None, dict[int, dict[str, int]]]:
    """(kernel row or None when the link has no flatfab queues, per-class counters).

    What tc adds (statistics flatfab does not use, `offload`, `direct_qlen`, ...) is
    ignored; a counter tc does not print is left out, never taken as 0; a part of
    flatfab's queues that tc shows in a shape flatfab cannot read raises KernelQosError.
    """
    qdiscs = [q for q in _json(qdisc, f"tc qdisc of {link}") if isinstance(q, dict)]
    root = next((q for q in qdiscs if q.get("root")), None)
    if root is None or root.get("kind") != "htb":
        return None, {}
    found_options = root.get("options")
    options: dict[str, Any] = found_options if isinstance(found_options, dict) else {}
    default_tc = _htb_default(options.get("default", "0x10"), link)
    limits: dict[int, int] = {}
    counters: dict[int, dict[str, int]] = {}
    for q in qdiscs:
        parent = str(q.get("parent", ""))
        match = re.fullmatch(r"1:1([0-7])", parent)
        if match and q.get("kind") == "bfifo":
            tc_id = int(match.group(1))
            found_q = q.get("options")
            q_options: dict[str, Any] = found_q if isinstance(found_q, dict) else {}
            limits[tc_id] = _int_field(q_options.get("limit"), f"{link}: bfifo limit of TC "
                                                               f"{tc_id}")
            counters[tc_id] = {k: q[k] for k in ("bytes", "packets", "drops")
                               if isinstance(q.get(k), int) and not isinstance(q[k], bool)}
    dscp_map: dict[int, int] = {}
    for item in _json(filters, f"tc filter of {link}"):
        item_options = item.get("options") if isinstance(item, dict) else None
        if not isinstance(item_options, dict):
            continue
        flow = re.fullmatch(r"1:1([0-7])", str(item_options.get("flowid", "")))
        if not flow:
            continue
        match_ = item_options.get("match")
        if not isinstance(match_, dict):
            raise KernelQosError(f"{link}: a tc filter into class 1:1{flow.group(1)} prints "
                                 "no match flatfab can read")
        value, mask = _hex(match_.get("value")), _hex(match_.get("mask"))
        if match_.get("off") != 0 or mask != 0xFC0000 or value is None:
            raise KernelQosError(f"{link}: a tc filter matches something other than DSCP")
        dscp_map[(value >> 16) >> 2] = int(flow.group(1))
    strict, weights = [], {}
    speed = 0
    for line in classes.splitlines():  # the root's rate is the port speed; it may come last
        rate = RATE_RE.search(line)
        if line.startswith("class htb 1:1 root") and rate:
            speed = round(_mbps(rate))
    for line in classes.splitlines():
        found = CLASS_RE.match(line)
        if found is None:
            continue
        prio, rate = PRIO_RE.search(line), RATE_RE.search(line)
        if prio is None or rate is None:
            raise KernelQosError(f"{link}: cannot read the prio and rate of {line.strip()!r}")
        tc_id = int(found.group(1))
        mbps = _mbps(rate)
        if int(prio.group(1)) == 0:
            strict.append(tc_id)
        elif speed and round(mbps * 100 / speed):
            weights[tc_id] = round(mbps * 100 / speed)
    row = {"vrf": vrf, "speed_mbps": str(speed), "default_tc": str(default_tc),
           "dscp_to_tc": _pairs(dscp_map), "strict": ",".join(map(str, sorted(strict))),
           "weights": _pairs(weights), "queue_bytes": _pairs(limits)}
    return row, counters


def dscp_to_tc(row: dict[str, str]) -> list[int]:
    """The 64-entry DSCP -> TC map a kernel row enforces."""
    table = [int(row["default_tc"])] * 64
    for dscp, tc_id in _unpairs(row["dscp_to_tc"]).items():
        table[dscp] = tc_id
    return table
