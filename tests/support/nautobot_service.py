"""The local Nautobot (labs/nautobot/) the `nautobot` tests (tests/nautobot/, and the SoT
tests of tests/live/) run against: its settings, `python -m labs.nautobot.<module>` for it,
and the session fixture that brings it up and always down after (each conftest that needs it
imports the fixture from here).

It runs under its own name and ports, so it coexists with a demo service (`make nautobot-up`).
The first session on a machine migrates (about 5 minutes) and caches the dump; later ones
start from the dump in about 8 s.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from flatfab.sot.client import Nautobot
from labs.nautobot.settings import Settings
from tests.support.flatfab import Run
from tests.support.paths import ROOT

NAME = "pytest"
ENV = {
    "FLATFAB_NAUTOBOT_NAME": NAME,
    "FLATFAB_NAUTOBOT_POSTGRES_PORT": "55442",
    "FLATFAB_NAUTOBOT_REDIS_PORT": "56392",
    "FLATFAB_NAUTOBOT_HTTP_PORT": "58092",
}
SETTINGS = Settings(name=NAME, pg_port=55442, redis_port=56392, http_port=58092)


def sot(module: str, *args: str, extra: dict[str, str] | None = None,
        timeout: float = 1800) -> Run:
    """`python -m labs.nautobot.<module>` for the test service, as an operator runs it."""
    env = {**os.environ, **ENV, **(extra or {})}
    env.pop("FLATFAB_NAUTOBOT_TOKEN", None)
    proc = subprocess.run([sys.executable, "-m", f"labs.nautobot.{module}", *args], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=timeout,
                          check=False)
    return Run(proc.returncode, proc.stdout, proc.stderr)


@dataclass(frozen=True)
class Service:
    url: str
    token: str
    settings: Settings
    up: Run  # what the session's `up` printed


@pytest.fixture(scope="session")
def nautobot() -> Iterator[Service]:
    if os.geteuid() != 0:
        pytest.skip("the Nautobot service needs root (its PostgreSQL runs as `postgres`)")
    sot("server", "down")  # what a crashed session left
    try:
        up = sot("server", "up")
        assert up.code == 0, f"nautobot up failed: {up.stderr.strip()}"
        token = sot("server", "token").stdout.strip()
        yield Service(SETTINGS.url, token, SETTINGS, up)
    finally:
        down = sot("server", "down")
        assert down.code == 0, f"nautobot down failed: {down.stderr.strip()}"


def api_of(service: Service) -> Nautobot:
    """An API client of the test service (its token)."""
    return Nautobot(service.url, service.token)


def one(api: Nautobot, path: str, **params: Any) -> dict[str, Any]:
    """The single object an endpoint lists for these filters (the test fails otherwise)."""
    found = api.request("GET", path, params=params)["results"]
    assert len(found) == 1, (path, params, found)
    result: dict[str, Any] = found[0]
    return result
