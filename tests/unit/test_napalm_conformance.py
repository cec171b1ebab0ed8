"""flatfab's NAPALM drivers under NAPALM's own getter tests (napalm.base.test.getters).

The way NAPALM's community drivers are tested: NAPALM's `BaseTestGetters` runs every getter
with a mocked device, checks each result against NAPALM's models (`napalm.base.models`,
`helpers.test_model`) and compares it with `expected_result.json` of the test case. The mocked
device is a `BaseTestDouble` that stands in for the driver's SSH session and answers each
command from a file named after it (NAPALM's `sanitize_text(command)` + `.txt`) under
tests/fixtures/napalm/<driver>/mocked_data/<test>/<case>/; tests/fixtures/napalm/README.md
says where those files come from (`capture.py`, on the embedded lab).

Getters a driver does not implement are not collected (NAPALM's tests would skip them); an
implemented getter without a test case fails ("No test case for ... found").

NAPALM's `test_method_signatures` also fails any public method NAPALM's base does not have.
flatfab's drivers have a few on purpose (reads and actions flatfab uses that are not NAPALM
getters, listed in EXTENSIONS): the test runs NAPALM's own check on a subclass that hides
exactly those, and a second test keeps the list exact and outside NAPALM's names.
"""

from __future__ import annotations

from tasks.platforms.frr.driver import FrrDriver
from tasks.platforms.linux_host.driver import LinuxHostDriver
from tests.doubles.napalm import PatchedFrrDriver, PatchedLinuxHostDriver
from tests.support.napalm_conformance import (  # the hook: NAPALM's test-case discovery
    Conformance,
    pytest_generate_tests,  # noqa: F401
)


class TestFrrGetters(Conformance):
    driver = FrrDriver
    patched_driver = PatchedFrrDriver
    mocked = "frr"


class TestLinuxHostGetters(Conformance):
    driver = LinuxHostDriver
    patched_driver = PatchedLinuxHostDriver
    mocked = "linux_host"
