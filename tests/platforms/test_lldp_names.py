"""Every platform's LLDP reader names a neighbour the same way: its host label, lower case."""

from __future__ import annotations

import pytest

from flatfab.platforms.readback import lldp_device


@pytest.mark.parametrize(("stated", "device"), [
    ("leaf1", "leaf1"),
    ("leaf1.fabric.example.net", "leaf1"),  # a domain the OS appends (EOS, Junos, SR Linux)
    ("Leaf1", "leaf1"),  # host names are case-insensitive (RFC 4343)
    (" spine2.example ", "spine2"),
])
def test_a_neighbour_is_named_by_its_host_label(stated: str, device: str) -> None:
    assert lldp_device(stated) == device
