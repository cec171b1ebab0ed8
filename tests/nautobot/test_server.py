"""The local Nautobot service: it answers, its token works, seeding is idempotent and what
it holds reads back through flatfab's own reader, and `down` leaves no process behind (also
after a failed start). The down/up test comes last: it restarts the session's service."""

from __future__ import annotations

import http.client
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from flatfab.platforms.registry import loopback_names
from flatfab.sot.client import Nautobot
from flatfab.sot.nautobot import read_snapshot
from flatfab.sot.seed import fabric_input, seed
from flatfab.sot.source import NautobotSource
from flatfab.sot.workflow import run_check
from labs.nautobot.processes import read_pids
from labs.nautobot.server import port_open
from labs.nautobot.settings import NAUTOBOT_VERSION
from tests.support.flatfab import Run
from tests.support.nautobot_service import Service, sot
from tests.support.paths import ROOT

pytestmark = pytest.mark.nautobot

COUNTED = ["dcim/devices/", "dcim/interfaces/", "dcim/cables/", "ipam/ip-addresses/",
           "ipam/ip-address-to-interface/", "ipam/prefixes/", "dcim/locations/",
           "dcim/location-types/", "dcim/platforms/", "dcim/device-types/",
           "dcim/manufacturers/", "extras/roles/", "extras/statuses/",
           "extras/custom-fields/", "tenancy/tenants/"]


def get(service: Service, path: str, token: str | None = None) -> tuple[int, Any]:
    conn = http.client.HTTPConnection("127.0.0.1", service.settings.http_port, timeout=30)
    try:
        conn.request("GET", path, headers={"Authorization": f"Token {token or service.token}",
                                           "Accept": "application/json"})
        response = conn.getresponse()
        body = response.read()
        return response.status, json.loads(body) if body else None
    finally:
        conn.close()


def counts(service: Service) -> dict[str, int]:
    with Nautobot(service.url, service.token) as api:
        return {path: api.request("GET", path, params={"limit": 1})["count"]
                for path in COUNTED}


def one_error_line(run: Run) -> str:
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), run.stderr
    assert "Traceback" not in run.stderr
    return lines[0]


@pytest.fixture(scope="module")
def seeded(nautobot: Service) -> Run:
    """The lab fabric seeded once through the CLI, as `make nautobot-seed` does."""
    run = sot("seed", "--fabric", "lab", timeout=600)
    assert run.code == 0, run.stderr
    return run


def test_up_reports_its_timings(nautobot: Service) -> None:
    assert nautobot.up.stdout.startswith(f"up: {nautobot.url} ")
    assert "web server ready" in nautobot.up.stdout and "total" in nautobot.up.stdout


def test_status_answers(nautobot: Service) -> None:
    status, doc = get(nautobot, "/api/status/")
    assert status == 200 and doc["nautobot-version"] == NAUTOBOT_VERSION
    run = sot("server", "status")
    assert run.code == 0, run.stdout + run.stderr
    assert f"answers: Nautobot {NAUTOBOT_VERSION}" in run.stdout
    assert sum("running (pid" in line for line in run.stdout.splitlines()) == 3


def test_token_works_and_stays_private(nautobot: Service) -> None:
    assert len(nautobot.token) == 40 and nautobot.token.isalnum()
    assert get(nautobot, "/api/dcim/devices/")[0] == 200
    assert get(nautobot, "/api/dcim/devices/", token="0" * 40)[0] == 403
    secret = nautobot.settings.secret("api_token")
    assert secret.stat().st_mode & 0o777 == 0o600
    state = nautobot.settings.state_dir
    for log in state.glob("*.log"):
        assert nautobot.token not in log.read_text(errors="replace"), log
    assert nautobot.token not in (state / "nautobot_config.py").read_text()


def test_admin_password_is_a_django_hash(nautobot: Service) -> None:
    """The superuser's password is written as SQL: Django itself must accept the hash."""
    settings = nautobot.settings
    password = settings.secret("admin_password").read_text().strip()
    stored = settings.secret("admin_password_hash").read_text().strip()
    check = ("import sys; from django.conf import settings; settings.configure(); "
             "from django.contrib.auth.hashers import check_password; "
             "pw, h = sys.stdin.read().split(); print(check_password(pw, h))")
    proc = subprocess.run([str(settings.venv / "bin" / "python"), "-c", check],
                          input=f"{password} {stored}", capture_output=True, text=True,
                          timeout=60, check=False)
    assert proc.stdout.strip() == "True", proc.stderr


def test_seed_is_idempotent(nautobot: Service, seeded: Run) -> None:
    data = fabric_input(ROOT, "lab", "172.31.255.0/24")
    plan = data.state
    assert "created 0 " not in seeded.stdout, seeded.stdout
    first = counts(nautobot)
    assert first["dcim/devices/"] == len(plan.devices)
    assert first["dcim/cables/"] == sum(link.parent is None for link in plan.links)
    assert first["ipam/ip-addresses/"] == len(plan.devices) + sum(
        d.loopback is not None for d in plan.devices.values())
    assert first["tenancy/tenants/"] == len(plan.tenants)
    with Nautobot(nautobot.url, nautobot.token) as api:
        again = seed(api, data)
    assert sum(again.created.values()) == 0, again.line()
    assert sum(again.updated.values()) == 0, again.line()
    assert counts(nautobot) == first


def test_seeded_fabric_reads_back_as_the_intent(nautobot: Service, seeded: Run) -> None:
    """flatfab's own reader sees the lab exactly as intents/lab/ plans it."""
    source = NautobotSource(url=nautobot.url, filters={"location": "lab"})
    with Nautobot(source.url, nautobot.token) as api:
        snapshot = read_snapshot(api, source.filters, loopback_names())
    plan = fabric_input(ROOT, "lab", "172.31.255.0/24").state
    assert sorted(d.name for d in snapshot.devices) == sorted(plan.devices)
    spine = next(d for d in snapshot.devices if d.name == "spine1")
    assert (spine.role, spine.platform, spine.asn, spine.loopback) == (
        "spine", "frr", plan.devices["spine1"].asn, plan.devices["spine1"].router_id)
    assert run_check(snapshot, ROOT / "intents" / "lab", source.mapping) == []


def _processes_of(state_dir: Path) -> list[int]:
    """Processes whose command line names the service's state dir (config, data dir)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if str(state_dir) in cmdline:
                found.append(int(entry.name))
    return found


def _assert_nothing_left(service: Service, pids: list[int]) -> None:
    settings = service.settings
    assert [p for p in pids if Path(f"/proc/{p}").exists()] == []
    assert _processes_of(settings.state_dir) == []
    for port in (settings.pg_port, settings.redis_port, settings.http_port):
        assert not port_open(port), f"port {port} still open"
    assert not settings.pg_data.exists()


def test_zz_down_leaves_nothing_and_up_restores_the_dump(nautobot: Service) -> None:
    settings = nautobot.settings
    pids = read_pids(settings.pids_file)
    assert set(pids) == {"postgres", "redis", "web"}
    down = sot("server", "down")
    assert down.code == 0, down.stderr
    _assert_nothing_left(nautobot, [d.pid for d in pids.values()])

    # a start that fails half-way (the web server not ready in time) stops what it started
    failed = sot("server", "up", extra={"FLATFAB_NAUTOBOT_START_TIMEOUT": "0.5"})
    assert failed.code == 2
    assert "not ready after" in one_error_line(failed)
    _assert_nothing_left(nautobot, [])

    up = sot("server", "up")
    assert up.code == 0, up.stderr
    assert "restore cached dump" in up.stdout and "migrate" not in up.stdout
    assert get(nautobot, "/api/status/")[0] == 200  # the same token, recreated
    assert counts(nautobot)["dcim/devices/"] == 0  # every up starts empty
