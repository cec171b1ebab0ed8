"""Credentials: a device's credential set is the inventory entry that gives it its user name,
found in Nornir's own order; its password comes from the --ask-pass prompt (once per set),
then FLATFAB_PASSWORD_<SET>, then FLATFAB_PASSWORD; passwords live on Nornir's in-memory
hosts only and are never printed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from nornir import InitNornir
from nornir.core import Nornir

from flatfab.workflows.devices.credentials import (
    Credentials,
    account_of,
    env_name,
    variable_of,
)
from flatfab.workflows.devices.nornir_origin import DEFAULTS, Entry


def _nornir(where: Path, hosts: dict[str, Any], groups: dict[str, Any] | None = None,
            defaults: dict[str, Any] | None = None) -> Nornir:
    """Plain Nornir (SimpleInventory) over these entries: resolution is Nornir's own."""
    for name, doc in (("hosts", hosts), ("groups", groups or {}),
                      ("defaults", defaults or {})):
        (where / f"{name}.yaml").write_text(yaml.safe_dump(doc), encoding="utf-8")
    return InitNornir(inventory={"plugin": "SimpleInventory", "options": {
        "host_file": str(where / "hosts.yaml"), "group_file": str(where / "groups.yaml"),
        "defaults_file": str(where / "defaults.yaml")}}, logging={"enabled": False})


def _set(nornir: Nornir, host: str, plugin: str = "napalm") -> tuple[str, Entry] | None:
    found = account_of(nornir.inventory.hosts[host], plugin)
    return None if found is None else (found.username, found.set)


@pytest.mark.parametrize(("name", "variable"), [
    ("spines", "FLATFAB_PASSWORD_SPINES"),
    ("leaf-eos", "FLATFAB_PASSWORD_LEAF_EOS"),
    ("rack.7/leafs", "FLATFAB_PASSWORD_RACK_7_LEAFS"),
    ("Spine_A1", "FLATFAB_PASSWORD_SPINE_A1"),
])
def test_a_set_s_variable_is_its_name_upper_cased_with_underscores(name: str,
                                                                   variable: str) -> None:
    assert variable_of(name) == variable
    assert env_name(Entry("group", name)) == variable == env_name(Entry("host", name))
    assert env_name(DEFAULTS) == "FLATFAB_PASSWORD"


def test_the_set_is_the_entry_that_gives_the_user_name_in_nornir_s_order(
        tmp_path: Path) -> None:
    hosts = {
        "own": {"username": "alice", "groups": ["leafs"]},
        "grouped": {"groups": ["leafs", "eos"]},
        # depth first: leafs' parent `rack1` comes before the host's second group `eos`
        "nested": {"groups": ["tor", "eos"]},
        "plain": {"groups": ["hosts"]},
        # a username in the plugin's options wins over the attribute, wherever it is
        "options": {"username": "ignored", "groups": ["netmiko-users"]},
    }
    groups = {"leafs": {"username": "leafadm"}, "eos": {"username": "eosadm"},
              "tor": {"groups": ["rack1"]}, "rack1": {"username": "rackadm"},
              "hosts": {}, "netmiko-users": {"connection_options": {
                  "napalm": {"username": "optuser"}}}}
    nornir = _nornir(tmp_path, hosts, groups, {"username": "admin"})
    assert _set(nornir, "own") == ("alice", Entry("host", "own"))
    assert _set(nornir, "grouped") == ("leafadm", Entry("group", "leafs"))
    assert _set(nornir, "nested") == ("rackadm", Entry("group", "rack1"))
    assert _set(nornir, "plain") == ("admin", DEFAULTS)
    assert _set(nornir, "options") == ("optuser", Entry("group", "netmiko-users"))
    # and the user name is exactly the one Nornir hands the plugin
    for name, host in nornir.inventory.hosts.items():
        assert _set(nornir, name) is not None
        assert _set(nornir, name)[0] == host.get_connection_parameters("napalm").username  # type: ignore[index]


def test_no_user_name_anywhere_is_no_set(tmp_path: Path) -> None:
    nornir = _nornir(tmp_path, {"h": {}}, {}, {})
    assert _set(nornir, "h") is None


def test_a_set_s_password_the_prompt_then_its_variable_then_flatfab_password() -> None:
    spines, leafs = Entry("group", "spines"), Entry("group", "leafs")
    env = {"FLATFAB_PASSWORD": "everyone", "FLATFAB_PASSWORD_SPINES": "spines-only",
           "FLATFAB_PASSWORD_LEAFS": ""}  # empty counts as unset
    creds = Credentials(environ=env)
    assert (creds.password(spines), creds.source(spines)) == ("spines-only",
                                                              "FLATFAB_PASSWORD_SPINES")
    assert (creds.password(leafs), creds.source(leafs)) == ("everyone", "FLATFAB_PASSWORD")
    assert creds.password(DEFAULTS) == "everyone"
    assert Credentials(environ={}).password(spines) is None
    assert Credentials(environ={}).source(spines) is None
    asked = Credentials(ask=lambda prompt: "typed", environ=env)
    asked.prompt({spines: ({"admin"}, 2)})
    assert asked.password(spines) == "typed"  # the prompt wins over the environment
    assert asked.source(leafs) == "--ask-pass"  # to be typed: a source already


def _fabric(tmp_path: Path) -> Nornir:
    hosts = {"spine1": {"groups": ["spines"]}, "spine2": {"groups": ["spines"]},
             "leaf1": {"groups": ["leafs"]}, "leaf2": {"groups": ["leafs"]},
             "leaf3": {"groups": ["leafs"], "username": "breakglass"},
             "h1": {"groups": ["hosts"]}, "h2": {"groups": ["hosts"]}}
    for host in hosts.values():
        host["platform"] = "frr"
    groups = {"spines": {"username": "netops"}, "leafs": {"username": "netops"},
              "hosts": {}}
    return _nornir(tmp_path, hosts, groups, {"username": "gpuadmin"})


def test_ask_pass_prompts_once_per_set_naming_user_set_and_devices(tmp_path: Path) -> None:
    prompts: list[str] = []

    def ask(prompt: str) -> str:
        prompts.append(prompt)
        return f"pw{len(prompts)}"

    nornir = _fabric(tmp_path)
    creds = Credentials(ask=ask, environ={"FLATFAB_PASSWORD": "env"})
    creds.apply(nornir)
    assert prompts == [
        "password for user gpuadmin (the defaults, 2 devices): ",
        "password for user netops (group leafs, 2 devices): ",
        "password for user netops (group spines, 2 devices): ",
        "password for user breakglass (host leaf3, 1 device): ",
    ]
    hosts = nornir.inventory.hosts
    assert {n: h.password for n, h in hosts.items()} == {
        "h1": "pw1", "h2": "pw1", "leaf1": "pw2", "leaf2": "pw2", "spine1": "pw3",
        "spine2": "pw3", "leaf3": "pw4"}
    creds.apply(_fabric(tmp_path))  # a second Nornir of the same run: nothing asked again
    assert len(prompts) == 4
    later = creds.settled()  # a worker's pool process: typed passwords kept, no prompt
    assert not later.asking and later.password(Entry("group", "spines")) == "pw3"


def test_without_ask_pass_the_environment_fills_hosts_and_nothing_is_asked(
        tmp_path: Path) -> None:
    nornir = _fabric(tmp_path)
    Credentials(environ={"FLATFAB_PASSWORD_SPINES": "s", "FLATFAB_PASSWORD_LEAF3": "l3"}
                ).apply(nornir)
    hosts = nornir.inventory.hosts
    assert {n: h.password for n, h in hosts.items()} == {
        "spine1": "s", "spine2": "s", "leaf3": "l3", "leaf1": None, "leaf2": None,
        "h1": None, "h2": None}  # no password: keys and the agent


def test_credentials_never_print_a_password(tmp_path: Path) -> None:
    creds = Credentials(ask=lambda prompt: "hunter2-typed",
                        environ={"FLATFAB_PASSWORD": "hunter2-env"})
    creds.apply(_fabric(tmp_path))
    assert "hunter2" not in repr(creds) and "hunter2" not in str(creds)
    assert "group spines" in repr(creds)
