"""The fleet answers every transport flatfab uses, end to end through flatfab's own CLI and
real sockets on 127.0.0.1: intents/mixed (EOS spines, SONiC and FRR leaves, Linux hosts)
served by one fleet process, frr and hosts over SSH exec, SONiC over netmiko's interactive
shell, EOS over eAPI (NAPALM's eos driver, password from FLATFAB_PASSWORD), and with
`--gnmi` every switch's gNMI target (TLS, a password) for `flatfab watch`.

intents/mixed's spines are Tomahawk-5 EOS switches, whose buffers are their own (their
pools and lossless PGs are read as unknown, never judged); the same fabric with Trident-4
spines (buffers rendered and read back) must verify with no finding as well.
"""

from __future__ import annotations

import base64
import json
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
import yaml
from pygnmi.spec.v080 import gnmi_pb2, gnmi_pb2_grpc

from tests.fleet.served import PASSWORD, Run, Served, flatfab, intent_copy, served
from tests.support.paths import ROOT

SWITCHES = ("spine1", "spine2", "leaf1", "leaf2", "leaf3", "leaf4")
HOSTS = tuple(f"leaf{n}-h{h}" for n in range(1, 5) for h in (1, 2))
SONIC, EOS = ("leaf1", "leaf2"), ("spine1", "spine2")


def _problems(findings: list[dict[str, Any]]) -> set[tuple[str, str]]:
    """(check, device) of every finding that fails (above INFO, and judged)."""
    return {(f["check"], f["device"]) for f in findings
            if f["severity"] not in ("info", "not-judged")}


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with served(ROOT / "intents" / "mixed", tmp_path_factory.mktemp("mixed"), "--gnmi") as f:
        yield f


@pytest.fixture(scope="module")
def mixed_verify(mixed: Served) -> Run:
    return flatfab(mixed, "verify", "--lossless", "-f", "json")


def test_the_inventory_reaches_each_platform_its_own_way(mixed: Served) -> None:
    hosts = _yaml(mixed.inventory / "hosts.yaml")
    ssh, eapi = mixed.ready["port"], mixed.ready["eapi_port"]
    for name in SONIC:
        netmiko = hosts[name]["connection_options"]["netmiko"]
        assert netmiko["port"] == ssh and netmiko["extras"]["ssh_strict"] is True
    for name in EOS:
        options = hosts[name]["connection_options"]["napalm"]["extras"]["optional_args"]
        assert (options["transport"], options["port"]) == ("http", eapi)
    for name in SWITCHES:
        assert hosts[name]["connection_options"]["gnmi"]["port"] == mixed.ready["gnmi"][name]
    text = "".join(p.read_text() for p in mixed.inventory.glob("*.yaml"))
    assert PASSWORD not in text and "password" not in text


def test_every_device_is_read_over_its_transport(mixed_verify: Run) -> None:
    report = mixed_verify.json()
    assert mixed_verify.code == 0, mixed_verify.stderr
    assert report["devices"] == len(SWITCHES) + len(HOSTS)
    assert _problems(report["findings"]) == set()


def test_mixed_verifies_clean(mixed_verify: Run) -> None:
    assert _problems(mixed_verify.json()["findings"]) == set()


def test_audit_finds_no_config_drift(mixed: Served) -> None:
    report = flatfab(mixed, "audit", "-f", "json").json()
    assert report["drift"] == []
    assert _problems(report["findings"]) == set()


def test_watch_streams_every_switch_over_gnmi_with_no_finding(mixed: Served) -> None:
    # intervals long enough for every target to connect on a loaded machine (the suite's
    # sessions share two cores): a 1 s watch ended before TLS handshakes did
    run = flatfab(mixed, "watch", "--count", "2", "--interval", "4", "-f", "json")
    assert run.code == 0, run.stderr
    assert f"watching {len(SWITCHES)} gNMI targets" in run.stderr
    for name in SWITCHES:
        port = mixed.ready["gnmi"][name]
        assert f"{name} 127.0.0.1:{port}: connected, subscribed" in run.stderr
    report = run.json()
    assert report["findings"] == [] and report["ticks"] == 2
    assert set(report["streamed"]) == {*SWITCHES, *HOSTS}  # hosts: NIC counters over SSH


def test_gnmi_refuses_a_wrong_password(mixed: Served) -> None:
    ca = (mixed.folder / "gnmi" / "ca.pem").read_bytes()
    port = mixed.ready["gnmi"]["leaf1"]
    with grpc.secure_channel(f"127.0.0.1:{port}", grpc.ssl_channel_credentials(ca)) as channel:
        stub = gnmi_pb2_grpc.gNMIStub(channel)
        with pytest.raises(grpc.RpcError) as refused:
            stub.Capabilities(gnmi_pb2.CapabilityRequest(), timeout=10,
                              metadata=(("username", "flatfab"), ("password", "wrong")))
    assert refused.value.code() is grpc.StatusCode.UNAUTHENTICATED


def test_eapi_refuses_a_wrong_password_and_reports_a_failed_command(mixed: Served) -> None:
    def run_cmds(password: str, cmds: list[Any]) -> tuple[int, dict[str, Any]]:
        token = base64.b64encode(f"spine1:{password}".encode()).decode()
        request = urllib.request.Request(
            f"http://127.0.0.1:{mixed.ready['eapi_port']}/command-api", method="POST",
            headers={"Authorization": f"Basic {token}",
                     "Content-Type": "application/json-rpc"},
            data=json.dumps({"jsonrpc": "2.0", "method": "runCmds", "id": "1",
                             "params": {"version": 1, "cmds": cmds,
                                        "format": "json"}}).encode())
        try:
            with urllib.request.urlopen(request, timeout=10) as answer:
                return answer.status, json.loads(answer.read())
        except urllib.error.HTTPError as refused:
            return refused.code, {}

    assert run_cmds("wrong", ["show version"])[0] == 401
    status, reply = run_cmds(PASSWORD, ["enable", "show version", "configure replace "
                                                                  "flash:none"])
    assert status == 200
    error = reply["error"]
    # eAPI's failure (pyeapi re-raises it as CommandError): what ran, then the error
    assert error["code"] == 1002
    assert error["message"].startswith("CLI command 3 of 3 'configure replace flash:none' "
                                       "failed")
    assert error["data"][0] == {} and error["data"][1]["version"]
    assert error["data"][2] == {"errors": ["flash:none does not exist"]}


@pytest.fixture(scope="module")
def trident(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    root = tmp_path_factory.mktemp("trident")
    intent = intent_copy("mixed", root, {"qos.yaml": ("eos: {family: tomahawk-5}",
                                                      "eos: {family: trident-4}")})
    with served(intent, root / "fleet") as fleet:
        yield fleet


def test_mixed_with_trident_spines_verifies_with_no_finding(trident: Served) -> None:
    run = flatfab(trident, "verify", "--lossless", "-f", "json")
    assert run.code == 0, run.stdout + run.stderr
    assert run.json()["findings"] == []


@pytest.fixture(scope="module")
def faulty(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with served(ROOT / "intents" / "mixed", tmp_path_factory.mktemp("faulty"),
                "--fault", "leaf1=session-down:Ethernet256",
                "--fault", "spine1=session-down:Ethernet2",
                "--fault", "leaf2=port-down:Ethernet8") as fleet:
        yield fleet


def test_faults_on_sonic_and_eos_are_named_by_their_check(faulty: Served) -> None:
    run = flatfab(faulty, "verify", "-f", "json")
    assert run.code == 1
    found = {(f["check"], f["device"], f["port"]) for f in run.json()["findings"]}
    assert found == {("bgp.session", "leaf1", "Ethernet256"),  # sonic, FRR's summary
                     ("bgp.session", "spine1", "Ethernet2"),  # eos, over eAPI
                     ("interface.up", "leaf2", "Ethernet8")}  # sonic, FRR's interfaces


@pytest.fixture(scope="module")
def factory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with served(ROOT / "intents" / "mixed", tmp_path_factory.mktemp("factory"),
                "--factory") as fleet:
        yield fleet


def test_a_phased_rollout_brings_the_fleet_up_from_the_factory(factory: Served) -> None:
    before = flatfab(factory, "audit", "-f", "json").json()
    assert {d["device"] for d in before["drift"]} == {*SWITCHES, *HOSTS}
    run = flatfab(factory, "rollout", "--yes", "--runbook",
                  str(ROOT / "runbooks" / "first-bring-up.yaml"))
    assert run.code == 0, run.stdout[-3000:] + run.stderr
    assert "changed 14 of 14 devices; converged and confirmed" in run.stdout
    after = flatfab(factory, "audit", "-f", "json").json()
    assert after["drift"] == []
    assert _problems(after["findings"]) == set()
    again = flatfab(factory, "rollout", "--yes")
    assert again.code == 0 and "no changes: all 14 devices already match" in again.stdout


def _yaml(path: Path) -> Any:
    return yaml.safe_load(path.read_text(encoding="utf-8"))
