"""Open a lab device's NAPALM driver straight from the lab's generated inventory."""

from __future__ import annotations

from typing import Any

import yaml
from napalm import get_network_driver

from tests.live.conftest import Lab


def open_driver(lab: Lab, node: str, *, read_only: bool) -> Any:
    hosts = yaml.safe_load((lab.inventory / "hosts.yaml").read_text())
    defaults = yaml.safe_load((lab.inventory / "defaults.yaml").read_text())
    host = hosts[node]
    # as Nornir resolves them: the host's own extras, else the defaults' (never merged)
    options = host.get("connection_options") or defaults["connection_options"]
    optional = dict(options["napalm"]["extras"]["optional_args"])
    optional["read_only"] = read_only
    driver = get_network_driver(host["platform"])(host["hostname"], defaults["username"], None,
                                                  optional_args=optional)
    driver.open()
    return driver
