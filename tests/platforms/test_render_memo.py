"""Rendered sections remembered by value: a switch that changes gets its own text."""

from __future__ import annotations

import importlib

import pytest

from flatfab.intent.loader import load_intent
from flatfab.model.state import DeviceState, FabricState, Role
from flatfab.plan.planner import plan
from flatfab.platforms import configdb
from flatfab.platforms.frr.kernel_qos import KERNEL_TABLE, kernel_rows
from flatfab.platforms.frr.links import format_links
from flatfab.platforms.memo import TextMemo
from flatfab.platforms.registry import PLATFORMS
from tests.support.paths import ROOT

frr_render = importlib.import_module("flatfab.platforms.frr.render")


@pytest.fixture(scope="module")
def lab() -> FabricState:
    return plan(load_intent(ROOT / "intents" / "lab", known_platforms=PLATFORMS))


def _fresh(device: DeviceState) -> tuple[str, str | None]:
    """The sections as made without the memo."""
    db = configdb.to_config_db(device)
    assert device.qos is not None
    db[KERNEL_TABLE] = kernel_rows(device, *configdb.queue_limits(device.qos))
    return format_links(frr_render.link_specs(device)), configdb.dump(db)


def _memo(device: DeviceState) -> tuple[str, str | None]:
    return frr_render.render_links(device), frr_render.render_qos(device)


def test_switches_of_one_shape_share_texts_equal_to_fresh_ones(lab: FabricState) -> None:
    leaves = lab.of_role(Role.LEAF)
    assert len(leaves) > 1
    for device in leaves + lab.of_role(Role.SPINE):
        assert _memo(device) == _fresh(device)


def test_a_switch_changed_in_place_is_rendered_again(lab: FabricState) -> None:
    device = lab.model_copy(deep=True).devices[lab.of_role(Role.LEAF)[0].name]
    before = _memo(device)
    port = next(i for i in device.interfaces.values() if i.qos is not None)
    assert port.qos is not None
    port.qos.pfc = [3, 4]  # shared by every port of its kind: all their rows change
    port.mtu = 1500
    after = _memo(device)
    assert after == _fresh(device)
    assert after[0] != before[0] and after[1] != before[1]


def test_text_memo_keeps_the_newest_keys() -> None:
    memo = TextMemo(2)
    made: list[str] = []

    def make(text: str) -> str:
        made.append(text)
        return text

    for key in ("a", "b", "a", "c", "a"):
        assert memo.get(key, lambda key=key: make(key)) == key
    assert made == ["a", "b", "c", "a"]  # "a" was the oldest when "c" came
