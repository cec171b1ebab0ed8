"""flatfab's conformance suite on acme: `pip install 'flatfab-acme[test]'`, then
`pytest tests/`. The suite plans flatfab's `lab` example with every switch on acme to render
it, and collects from the recorded switch."""

from __future__ import annotations

from acme_platform.double import RecordedAcme

from flatfab.testing.conformance import CollectCase, SwitchConformance, example_plan


class TestAcme(SwitchConformance):
    platform = "acme"
    # acme is reached through NAPALM: flatfab gives its driver the command timeout for each
    # request and, in optional_args, the connect timeout
    expected_timeouts = {"timeout": 45.0, "optional_args.timeout": 4.0}

    def collect_cases(self) -> list[CollectCase]:
        switch = RecordedAcme("leaf1")
        return [CollectCase(
            name="acme-lab-leaf1", driver=switch,
            planned=example_plan("acme").devices["leaf1"],
            commands=lambda: list(switch.log),
            source="written for this example by record.py from flatfab's plan of its lab "
                   "example on acme: there is no Acme NOS to record")]
