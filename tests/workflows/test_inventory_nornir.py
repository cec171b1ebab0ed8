"""The inventory flatfab writes is a plain Nornir inventory, and flatfab reads it as Nornir does.

Nornir (SimpleInventory) resolves connection_options host > groups > defaults and takes
`extras` whole from the first level that has it (no deep merge), and nornir_napalm passes
`extras` to the NAPALM driver as keyword arguments: a switch's own `optional_args` must carry
the defaults' key_file and known_hosts besides its lldpd socket.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from nornir import InitNornir
from nornir.core import Nornir
from nornir.core.inventory import Host

from flatfab.errors import InputError
from flatfab.intent.loader import load_intent
from flatfab.plan.planner import plan
from flatfab.workflows.devices import connections, inventory
from tests.support.inventory import key_file, known_hosts
from tests.support.paths import ROOT

PLAN = plan(load_intent(ROOT / "intents" / "lab"))
SWITCHES = sorted(n for n, d in PLAN.devices.items() if d.platform == "frr")


def sockets() -> dict[str, Path]:
    return {name: Path(f"/run/flatfab/ffx/nodes/{name}/lldpd.socket") for name in SWITCHES}


def write_lab_inventory(directory: Path) -> Path:
    """What `lab up` writes, its key and known_hosts (as the lab makes them) in `directory`."""
    nodes = {name: {"mgmt_ipv4": f"172.31.249.{10 + i}"}
             for i, name in enumerate(sorted(PLAN.devices))}
    known = known_hosts(directory / "known_hosts", (n["mgmt_ipv4"] for n in nodes.values()))
    inventory.write(directory, inventory.lab_inventory(
        PLAN, nodes, user="ff-admin", key_file=key_file(directory), known_hosts=known,
        lldp_sockets=sockets()))
    return directory


def plain_nornir(directory: Path) -> Nornir:
    """What any Nornir script does: nothing of flatfab's."""
    return InitNornir(inventory={"plugin": "SimpleInventory", "options": {
        "host_file": str(directory / "hosts.yaml"),
        "group_file": str(directory / "groups.yaml"),
        "defaults_file": str(directory / "defaults.yaml")}}, logging={"enabled": False})


def test_plain_nornir_resolves_every_driver_option(tmp_path: Path) -> None:
    nornir = plain_nornir(write_lab_inventory(tmp_path))
    key, known = tmp_path / "id_ed25519", tmp_path / "known_hosts"
    assert sorted(nornir.inventory.hosts) == sorted(PLAN.devices)
    for name, host in nornir.inventory.hosts.items():
        params = host.get_connection_parameters("napalm")
        assert params.platform == PLAN.devices[name].platform  # get_network_driver(platform)
        assert params.username == "ff-admin"
        optional = (params.extras or {})["optional_args"]
        assert optional["key_file"] == str(key), name
        assert optional["known_hosts"] == str(known), name
        if name in SWITCHES:
            assert optional["lldp_socket"] == f"/run/flatfab/ffx/nodes/{name}/lldpd.socket"
        else:
            assert "lldp_socket" not in optional
        assert "optional_args" not in host.data  # Nornir never hands `data` to a driver


def test_written_inventory_passes_flatfab_validation(tmp_path: Path) -> None:
    directory = write_lab_inventory(tmp_path)
    inventory.validate(directory, PLAN)
    built = inventory.build(directory, PLAN)
    assert sorted(built.inventory.hosts) == sorted(PLAN.devices)


class _Task:
    def __init__(self, host: Host, nornir: Nornir) -> None:
        self.host = host
        self.nornir = nornir


def test_flatfab_opens_drivers_with_what_nornir_resolves(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    built = inventory.build(write_lab_inventory(tmp_path), PLAN)
    opened: dict[str, dict[str, Any]] = {}

    def open_connection(self: Host, connection: str, configuration: Any, **kwargs: Any) -> None:
        opened[self.name] = kwargs["extras"]["optional_args"]
        raise RuntimeError("stop here")

    monkeypatch.setattr(Host, "open_connection", open_connection)
    for name in ("leaf1", "leaf1-h1"):
        with pytest.raises(connections.ConnectError, match="stop here"):
            connections.driver(_Task(built.inventory.hosts[name], built), read_only=True)  # type: ignore[arg-type]
        resolved = built.inventory.hosts[name].get_connection_parameters("napalm").extras
        # plus the run's mode and, the inventory setting none, its connect timeout
        assert opened[name] == {**(resolved or {})["optional_args"], "read_only": True,
                                "timeout": 10.0}
    assert opened["leaf1"]["lldp_socket"].endswith("/leaf1/lldpd.socket")
    # flatfab's read_only never leaks into the inventory Nornir scripts share
    shared = built.inventory.hosts["leaf1"].get_connection_parameters("napalm").extras or {}
    assert "read_only" not in shared["optional_args"]


def test_drivers_get_the_password_the_run_set_on_the_host(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The password is the run's (a prompt or the environment, resolved once per
    credential set when the inventory is built): drivers read no environment of their own,
    and a set without one opens its drivers with none (keys, the agent)."""
    passwords: list[str | None] = []

    def open_connection(self: Host, connection: str, configuration: Any, **kwargs: Any) -> None:
        passwords.append(kwargs["password"])
        raise RuntimeError("stop here")

    monkeypatch.setattr(Host, "open_connection", open_connection)
    for password in (None, "from-the-env"):
        if password is None:
            monkeypatch.delenv("FLATFAB_PASSWORD", raising=False)
        else:
            monkeypatch.setenv("FLATFAB_PASSWORD", password)
        built = inventory.build(write_lab_inventory(tmp_path), PLAN)
        with pytest.raises(connections.ConnectError, match="stop here"):
            connections.driver(_Task(built.inventory.hosts["leaf1"], built),  # type: ignore[arg-type]
                               read_only=True)
    assert passwords == [None, "from-the-env"]
    # set after the run began, the environment is not read again
    monkeypatch.setenv("FLATFAB_PASSWORD", "later")
    with pytest.raises(connections.ConnectError, match="stop here"):
        connections.driver(_Task(built.inventory.hosts["leaf1-h1"], built),  # type: ignore[arg-type]
                           read_only=True)
    assert passwords[-1] == "from-the-env"


def _edit(path: Path, change: Any) -> None:
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    header = "".join(line for line in lines if line.startswith("#"))
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    change(doc)
    path.write_text(header + yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")


def _refusal(directory: Path) -> str:
    with pytest.raises(InputError) as info:
        inventory.validate(directory, PLAN)
    return str(info.value)


def test_driver_options_in_data_are_refused_naming_file_and_key(tmp_path: Path) -> None:
    directory = write_lab_inventory(tmp_path)

    def old_location(hosts: dict[str, Any]) -> None:
        del hosts["leaf1"]["connection_options"]
        hosts["leaf1"]["data"]["optional_args"] = {"lldp_socket": "/run/x.socket"}

    _edit(directory / "hosts.yaml", old_location)
    message = _refusal(directory)
    assert "\n" not in message
    assert message.startswith(f"{directory / 'hosts.yaml'}:")
    assert " leaf1.data.optional_args: " in message
    assert "connection_options.napalm.extras.optional_args" in message


def test_driver_options_in_a_group_s_data_are_refused(tmp_path: Path) -> None:
    directory = write_lab_inventory(tmp_path)
    _edit(directory / "groups.yaml",
          lambda groups: groups["leafs"]["data"].update(optional_args={"port": 22}))
    message = _refusal(directory)
    assert message.startswith(f"{directory / 'groups.yaml'}:") and "\n" not in message
    assert " leafs.data.optional_args: " in message


@pytest.mark.parametrize(("path", "value", "reason"), [
    (("connection_options",), ["napalm"], "must be a mapping of connection plugin names"),
    (("connection_options", "napalm"), "frr", "must be a mapping"),
    (("connection_options", "napalm", "extras"), "x", "must be a mapping"),
    (("connection_options", "napalm", "extras", "optional_args"), ["lldp_socket"],
     "must be a mapping of driver options"),
])
def test_misshapen_connection_options_are_refused_in_one_line(
        tmp_path: Path, path: tuple[str, ...], value: Any, reason: str) -> None:
    directory = write_lab_inventory(tmp_path)

    def misshape(hosts: dict[str, Any]) -> None:
        node = hosts["spine1"]
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value

    _edit(directory / "hosts.yaml", misshape)
    message = _refusal(directory)
    assert "\n" not in message
    assert message.startswith(f"{directory / 'hosts.yaml'}:")
    assert f" spine1.{'.'.join(path)}: {reason}" in message


def test_defaults_are_checked_too(tmp_path: Path) -> None:
    directory = write_lab_inventory(tmp_path)
    _edit(directory / "defaults.yaml",
          lambda d: d["connection_options"]["napalm"].update(extras="nope"))
    message = _refusal(directory)
    assert message.startswith(f"{directory / 'defaults.yaml'}:") and "\n" not in message
    assert " connection_options.napalm.extras: must be a mapping" in message


def test_a_refusal_names_its_line_though_the_fast_read_keeps_none(tmp_path: Path) -> None:
    """validate reads a fleet's files without line numbers first; a problem is then read
    again, with them, so the operator is still pointed at the line."""
    directory = write_lab_inventory(tmp_path)
    _edit(directory / "hosts.yaml",
          lambda hosts: hosts["leaf1"]["data"].update(optional_args={"port": 22}))
    text = (directory / "hosts.yaml").read_text(encoding="utf-8").splitlines()
    leaf1 = text.index("leaf1:")
    line = next(i for i, t in enumerate(text) if i > leaf1 and "optional_args:" in t) + 1
    assert _refusal(directory).startswith(f"{directory / 'hosts.yaml'}:{line}: ")
