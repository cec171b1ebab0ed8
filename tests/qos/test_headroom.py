"""Headroom arithmetic against the worked numbers of the lossless-domain reference §2.3/§2.4."""

from __future__ import annotations

import pytest

from flatfab.qos.headroom import ASICS, cable_bytes, cell_headroom, generic_xoff, required_headroom

G, M = 1000, 1  # Gb/s in Mb/s; metres


@pytest.mark.parametrize(("speed", "cable", "rtt", "expected"), [
    (100 * G, 5, 631, 45_098),
    (100 * G, 100, 12_626, 57_093),
    (100 * G, 300, 37_879, 82_346),
    (400 * G, 5, 2_525, 79_696),
    (400 * G, 100, 50_505, 127_676),
    (400 * G, 300, 151_515, 228_686),
])
def test_generic_model_matches_the_worked_table(speed: int, cable: int, rtt: int,
                                                expected: int) -> None:
    assert round(cable_bytes(speed, cable)) == rtt
    assert generic_xoff(speed, cable, mtu_tx=9216, mtu_rx=9216, mac_phy_bytes=819) \
        == pytest.approx(expected, abs=1)


@pytest.mark.parametrize(("speed", "cable", "spp", "xon", "xoff", "size"), [
    (100 * G, 5, 100, 19456, 113664, 133120),
    (100 * G, 100, 100, 19456, 149504, 168960),
    (100 * G, 300, 100, 19456, 225280, 244736),
    (400 * G, 5, 100, 19456, 231424, 250880),
    (400 * G, 100, 100, 19456, 374784, 394240),
    (400 * G, 300, 100, 19456, 677888, 697344),
    (100 * G, 5, 50, 19456, 50176, 69632),
    (100 * G, 100, 50, 19456, 64512, 83968),
    (100 * G, 300, 50, 19456, 96256, 115712),
    (400 * G, 5, 50, 19456, 98304, 117760),
    (400 * G, 100, 50, 19456, 157696, 177152),
    (400 * G, 300, 50, 19456, 281600, 301056),
])
def test_spectrum4_matches_sonic_dynamic_headroom(speed: int, cable: int, spp: int, xon: int,
                                                  xoff: int, size: int) -> None:
    room = cell_headroom(ASICS["spectrum-4"], speed, cable * M, port_mtu=9216,
                         small_packet_percent=spp, lossless_mtu=1024)
    assert (room.xon, room.xoff, room.size) == (xon, xoff, size)


def test_headroom_grows_with_cable_length_and_speed() -> None:
    asic = ASICS["generic"]
    short = required_headroom(asic, 100 * G, 3, 9216, 9000)
    long = required_headroom(asic, 100 * G, 300, 9216, 9000)
    fast = required_headroom(asic, 400 * G, 3, 9216, 9000)
    assert short.xoff < long.xoff and short.xoff < fast.xoff
    assert short.size == short.xon + short.xoff


def test_unknown_speed_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="no pause response time known for 1234 Mb/s"):
        generic_xoff(1234, 5, 9216, 9216)
