"""audit --sot on the live lab against a real Nautobot seeded with the lab: a clean fabric
agrees; two uplink cables swapped in Nautobot are named by sot.cabling with device, port and
the Nautobot cable; a stopped switch is named by sot.devices."""

from __future__ import annotations

import time
from typing import Any

import pytest

from flatfab.lab.netns import node_exec
from flatfab.sot.client import Nautobot
from tests.support.lab import SUBNET, Lab
from tests.support.nautobot_service import Service, sot

pytestmark = [pytest.mark.live, pytest.mark.nautobot]


@pytest.fixture(scope="module")
def recorded(lab: Lab, nautobot: Service) -> Service:
    """Nautobot holding the lab as planned, with the live lab's management addresses."""
    run = sot("seed", "--fabric", "lab", "--mgmt-subnet", SUBNET, timeout=600)
    assert run.code == 0, run.stderr
    (lab.inventory / "source.yaml").write_text(
        f"nautobot:\n  url: {nautobot.url}\n  token_env: FFT_NAUTOBOT_TOKEN\n"
        "  filters: {location: lab}\n")
    rolled = lab.cli("rollout", "--format", "json")
    assert rolled.code == 0, rolled.stderr
    return nautobot


def _audit(lab: Lab, service: Service) -> dict[str, Any]:
    from tests.support.flatfab import flatfab  # noqa: PLC0415

    run = flatfab("--inventory", str(lab.inventory), "--state-dir", str(lab.state_dir),
                  "audit", "--sot", "--no-probes", "--no-lossless", "--format", "json",
                  env={"FFT_NAUTOBOT_TOKEN": service.token})
    assert run.code in (0, 1), run.stderr
    data: dict[str, Any] = run.json()
    return data


def _sot(data: dict[str, Any]) -> list[tuple[str, str | None, str]]:
    return sorted((f["device"], f["port"], f["message"]) for f in data["findings"]
                  if f["check"].startswith("sot."))


def test_the_lab_agrees_with_nautobot(lab: Lab, recorded: Service) -> None:
    data = _audit(lab, recorded)
    assert {"sot.cabling", "sot.devices"} <= set(data["checks_run"])
    assert _sot(data) == []


def _ids(api: Nautobot, path: str, **params: Any) -> list[str]:
    return [r["id"] for r in api.request("GET", path, params=params)["results"]]


def test_uplinks_swapped_in_nautobot_are_named_by_device_port_and_cable(
        lab: Lab, recorded: Service) -> None:
    with Nautobot(recorded.url, recorded.token) as api:
        port = {(d, n): _ids(api, "dcim/interfaces/", device=d, name=n)[0]
                for d, n in (("leaf2", "swp51"), ("leaf2", "swp52"), ("spine1", "swp2"),
                             ("spine2", "swp2"))}
        for cable in _ids(api, "dcim/cables/", device="leaf2"):
            found = api.request("GET", f"dcim/cables/{cable}/")
            if found["termination_b_id"] in (port[("spine1", "swp2")],
                                             port[("spine2", "swp2")]) or \
                    found["termination_a_id"] in (port[("spine1", "swp2")],
                                                  port[("spine2", "swp2")]):
                api.request("DELETE", f"dcim/cables/{cable}/")
        connected = _ids(api, "extras/statuses/", name="Connected")[0]
        swapped = [api.request("POST", "dcim/cables/", body={
            "termination_a_type": "dcim.interface", "termination_a_id": port[a],
            "termination_b_type": "dcim.interface", "termination_b_id": port[b],
            "status": connected})["id"]
            for a, b in ((("leaf2", "swp51"), ("spine2", "swp2")),
                         (("leaf2", "swp52"), ("spine1", "swp2")))]
    try:
        found = _sot(_audit(lab, recorded))
        assert ("leaf2", "swp51", f"leaf2:swp51: LLDP sees spine1:swp2; dcim.cable "
                f"leaf2:swp51 - spine2:swp2 ({swapped[0]}) goes to spine2:swp2") in found
        assert ("spine1", "swp2", f"spine1:swp2: LLDP sees leaf2:swp51; dcim.cable "
                f"leaf2:swp52 - spine1:swp2 ({swapped[1]}) goes to leaf2:swp52") in found
        assert {(d, p) for d, p, _ in found} == {("leaf2", "swp51"), ("leaf2", "swp52"),
                                                 ("spine1", "swp2"), ("spine2", "swp2")}
    finally:
        with Nautobot(recorded.url, recorded.token) as api:
            for cable in swapped:
                api.request("DELETE", f"dcim/cables/{cable}/")
        assert sot("seed", "--fabric", "lab", "--mgmt-subnet", SUBNET, timeout=600).code == 0
    assert _sot(_audit(lab, recorded)) == []


def test_a_stopped_switch_is_named_against_its_nautobot_device(lab: Lab,
                                                               recorded: Service) -> None:
    # leaf4's sshd only (the lab shares one PID namespace), with its sessions
    pidfile = lab.paths.node_dir("leaf4") / "sshd.pid"
    lab.sh("leaf4", f"p=$(cat {pidfile}); pkill -P $p; kill $p")
    try:
        found = _sot(_audit(lab, recorded))
    finally:
        conf = lab.paths.node_dir("leaf4") / "sshd_config"
        node_exec(lab.paths, "leaf4", ["/usr/sbin/sshd", "-f", str(conf)])
        time.sleep(1)
    assert any(d == "leaf4" and f"is unreachable at {SUBNET.rsplit('.', 1)[0]}." in m
               for d, _, m in found), found


def test_nornir_hosts_from_nautobot_verify_the_lab(lab: Lab, recorded: Service) -> None:
    """inventory: nautobot: hosts, addresses and platforms come from Nautobot (through
    nornir-nautobot); the inventory folder keeps only what Nautobot does not hold."""
    from tests.support.flatfab import flatfab  # noqa: PLC0415

    source = lab.inventory / "source.yaml"
    hosts = lab.inventory / "hosts.yaml"
    saved = source.read_text(), hosts.read_text()
    source.write_text(saved[0] + "  inventory: nautobot\n")
    # addresses and platforms gone from the file: only Nautobot can supply them now
    text = "\n".join(line for line in saved[1].splitlines()
                     if not line.strip().startswith(("hostname:", "platform:"))) + "\n"
    hosts.write_text(text)
    try:
        run = flatfab("--inventory", str(lab.inventory), "--state-dir", str(lab.state_dir),
                      "verify", "--no-probes", "--format", "json",
                      env={"FFT_NAUTOBOT_TOKEN": recorded.token})
        assert run.code == 0, run.stdout[-2000:] + run.stderr
        assert run.json()["findings"] == []
        assert recorded.token not in run.stdout + run.stderr
        unset = flatfab("--inventory", str(lab.inventory), "verify", "--no-probes")
        assert unset.code == 2
        assert "$FFT_NAUTOBOT_TOKEN is not set" in unset.stderr
    finally:
        source.write_text(saved[0])
        hosts.write_text(saved[1])
