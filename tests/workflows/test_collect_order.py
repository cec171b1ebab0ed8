"""The order a collect reads a fleet in: its heaviest devices spread through the run."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from flatfab.workflows.devices.collect import spread_heaviest


def test_spines_are_spaced_evenly_through_the_leaves() -> None:
    weights = {"spine1": 1000, "spine2": 1000, "spine3": 990}
    names = ["spine1", "spine2", "spine3", *(f"leaf{i}" for i in range(1, 10))]
    order = spread_heaviest(names, lambda n: weights.get(n, 40))
    assert order == ["spine1", "leaf1", "leaf2", "leaf3", "spine2", "leaf4", "leaf5",
                     "leaf6", "spine3", "leaf7", "leaf8", "leaf9"]


def test_a_fabric_without_a_heavy_few_keeps_its_order() -> None:
    names = ["spine1", "leaf1", "leaf2"]
    assert spread_heaviest(names, lambda n: 10 if n == "spine1" else 8) == names
    assert spread_heaviest(names, lambda n: 100 if n == "spine1" else 8) == names  # one alone
    assert spread_heaviest([], lambda n: 1) == []


@given(st.lists(st.integers(min_value=0, max_value=2000), max_size=60))
def test_every_device_is_read_once(weights: list[int]) -> None:
    names = [f"d{i}" for i in range(len(weights))]
    order = spread_heaviest(names, lambda n: weights[int(n[1:])])
    assert sorted(order) == sorted(names)
    light = [n for n in names if weights[int(n[1:])] * 4 < max(weights, default=0)]
    assert [n for n in order if n in light] == light  # the others keep their order
