"""FrrDriver (napalm_frr) under NAPALM's own getter tests (napalm.base.test.getters).

NAPALM's `BaseTestGetters` runs every getter the driver implements with a mocked device
(tests/doubles/napalm.py) answering from tests/fixtures/napalm/frr/mocked_data/, checks
each result against NAPALM's models and its case's `expected_result.json`, and NAPALM's
method-signature check runs with flatfab's own extensions hidden: tests/support/
napalm_conformance.py says how (tests/fixtures/napalm/README.md: where the data comes from).
"""

from __future__ import annotations

from flatfab.platforms.frr.driver import FrrDriver
from tests.doubles.napalm import PatchedFrrDriver
from tests.support.napalm_conformance import (  # the hook: NAPALM's test-case discovery
    Conformance,
    pytest_generate_tests,  # noqa: F401
)


class TestFrrGetters(Conformance):
    driver = FrrDriver
    patched_driver = PatchedFrrDriver
    mocked = "frr"

