"""The catalog judges the NIC's RoCE ToS (ECN field and value against the intent) and a pool
smaller than what its lossless PGs reserve."""

from __future__ import annotations

import pytest

from flatfab.model.state import FabricState
from tests.support.checks import static_findings


def _tos(value: int) -> object:
    def mutate(state: FabricState) -> None:
        nic = state.devices["leaf2-h1"].interfaces["eth1"].nic
        assert nic is not None
        state.devices["leaf2-h1"].interfaces["eth1"].nic = nic.model_copy(
            update={"roce_tos": value})
    return mutate


@pytest.mark.parametrize(("tos", "phrase"), [
    (104, "ToS 104, whose ECN field is not-ECT"),
    (107, "ToS 107, whose ECN field is CE"),
    (105, "ToS 105, the intent says 106"),
])
def test_the_nic_roce_tos_is_judged(tos: int, phrase: str) -> None:
    found = static_findings(_tos(tos), "host.agreement")  # type: ignore[arg-type]
    assert any(d == "leaf2-h1" and phrase in m for d, m in found), found


def test_a_pool_smaller_than_its_reservations_is_named() -> None:
    def shrink(state: FabricState) -> None:
        qos = state.devices["spine2"].qos
        assert qos is not None
        pool = qos.pools["ingress_lossless"].model_copy(update={"size": 100_000})
        state.devices["spine2"].qos = qos.model_copy(
            update={"pools": {**qos.pools, "ingress_lossless": pool}})

    found = static_findings(shrink, "buffer.budget")
    assert [d for d, _ in found] == ["spine2"]
    assert "spine2 pool ingress_lossless (100000 B) is smaller than the" in found[0][1]
