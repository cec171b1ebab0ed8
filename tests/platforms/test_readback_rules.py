"""Rules every platform's reader shares (flatfab.platforms.readback): an interface's oper
state, and the far port an LLDP entry names where the OS prints no port ID subtype."""

from __future__ import annotations

import pytest

from flatfab.platforms.readback import lldp_far_port, oper_up


@pytest.mark.parametrize(("status", "up"), [
    ("up", True), ("UP", True), ("down", False), ("lowerLayerDown", False),
    ("notPresent", False), ("dormant", False), (None, None), ("", None), ("unknown", None)])
def test_an_oper_state_not_stated_is_unknown_never_down(status: str | None,
                                                        up: bool | None) -> None:
    assert oper_up(status) is up


@pytest.mark.parametrize(("port_id", "description", "port"), [
    ("Ethernet4", None, "Ethernet4"),  # no subtype printed: the id is the name
    ("5254.001a.0011", "eth1", "eth1"),  # shaped like a MAC: the description names it
    ("52:54:00:1a:00:21", None, None),  # a MAC and no description: no port
    ("", "", None),
])
def test_without_a_subtype_an_id_shaped_like_a_mac_is_no_name(port_id: str,
                                                               description: str | None,
                                                               port: str | None) -> None:
    name, why = lldp_far_port(port_id, None, description)
    assert name == port
    assert bool(why) is (port is None)
