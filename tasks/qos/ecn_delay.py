"""ECN thresholds in both units: bytes of queue depth, and the queue delay they stand for at a
port's speed (a queue of B bytes drains in B x 8 / speed; microseconds x Mb/s = bits)."""

from __future__ import annotations


def delay_us(depth_bytes: int, speed_mbps: int) -> float:
    """How long a port of `speed_mbps` takes to send `depth_bytes`, in microseconds."""
    return depth_bytes * 8 / speed_mbps


def delay_bytes(us: float, speed_mbps: int) -> int:
    """The bytes a port of `speed_mbps` sends in `us` microseconds (at least one)."""
    return max(1, round(us * speed_mbps / 8))


def speed_text(speed_mbps: int) -> str:
    return f"{speed_mbps // 1000}G" if speed_mbps % 1000 == 0 else f"{speed_mbps} Mb/s"


def depth_text(depth_bytes: int, speed_mbps: int | None) -> str:
    """`150000 B (3 µs)`: the bytes, and the delay at the port's speed where known."""
    if not speed_mbps:
        return f"{depth_bytes} B"
    return f"{depth_bytes} B ({delay_us(depth_bytes, speed_mbps):.3g} µs)"
