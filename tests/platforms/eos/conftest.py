"""The lab on eos and its leaf1, shared by the eos tests that read leaf1 back."""

from __future__ import annotations

import pytest

from flatfab.model.state import DeviceState, FabricState
from tests.support.eos import eos_fabric


@pytest.fixture(scope="module")
def lab() -> FabricState:
    return eos_fabric("lab")


@pytest.fixture
def planned(lab: FabricState) -> DeviceState:
    return lab.devices["leaf1"]
