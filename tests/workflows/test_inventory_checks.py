"""The inventory is checked before any connection, every planned device as Nornir resolves
its entry (host, groups depth first, defaults): platform, address and port, user name, a way
to log in, the host key in the known_hosts its plugin reads, the platform's extra. Every
problem is one line naming the file and key (and line), all found in one pass.

The environment (HOME, SSH_AUTH_SOCK, FLATFAB_PASSWORD*) is the test's own: each test hands
the checks a Credentials with its own `environ`."""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import paramiko
import pytest
import yaml

from flatfab.errors import InputError
from flatfab.model.state import FabricState
from flatfab.platforms.registry import PLATFORMS
from flatfab.sot.inventory import checked, local_hosts
from flatfab.sot.source import NautobotSource
from flatfab.workflows.devices import inventory, inventory_checks
from flatfab.workflows.devices.credentials import Credentials
from flatfab.workflows.project.layout import Project
from tests.support.inventory import USER, key_file, known_hosts, lab_like
from tests.support.paths import ROOT

LAB = Project(root=ROOT, fabric="lab").plan
MULTI = Project(root=ROOT, fabric="multivendor").plan
Edit = Callable[[dict[str, Any]], None]


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """An empty home folder: no ~/.ssh keys, no ~/.ssh/known_hosts."""
    found = tmp_path / "home"
    found.mkdir()
    return found


def _env(home: Path, **more: str) -> Credentials:
    return Credentials(environ={"HOME": str(home), **more})


def _edit(path: Path, change: Edit) -> None:
    doc = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    change(doc)
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")


def _lines(directory: Path, plan: FabricState, creds: Credentials, *,
           connects: bool = True) -> list[str]:
    """The one-line problems validation finds (none: it passes)."""
    try:
        inventory.validate(directory, plan, credentials=creds, connects=connects)
    except InputError as exc:
        lines = str(exc).splitlines()
        assert len(lines) == len(exc.problems)  # one line each
        return lines
    return []


def _line_of(path: Path, text: str) -> int:
    """The first line that starts with `text` (indentation aside)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return next(n for n, line in enumerate(lines, 1) if line.strip().startswith(text))


def test_the_lab_inventory_as_lab_up_writes_it_passes(tmp_path: Path, home: Path) -> None:
    assert _lines(lab_like(tmp_path / "inv", LAB), LAB, _env(home)) == []


def _multivendor(tmp_path: Path, home: Path) -> Path:
    """What `lab up` would write for every platform (each plugin's own options), with
    ~/.ssh/known_hosts for junos (ncclient reads no other file)."""
    directory = tmp_path / "inv"
    addresses = {name: f"192.0.2.{10 + i}" for i, name in enumerate(sorted(MULTI.devices))}
    lab_like(directory, MULTI, addresses)
    known_hosts(home / ".ssh" / "known_hosts", [addresses["spine1"]])
    return directory


def test_every_platform_s_lab_options_pass_with_passwords_for_https(tmp_path: Path,
                                                                     home: Path) -> None:
    directory = _multivendor(tmp_path, home)
    assert _lines(directory, MULTI, _env(home, FLATFAB_PASSWORD="x")) == []
    # eAPI and JSON-RPC take a password only: one line per credential set
    lines = _lines(directory, MULTI, _env(home))
    assert len(lines) == 2, lines
    assert all(line.startswith(f"{directory / 'defaults.yaml'}:") and " username: " in line
               for line in lines)
    assert any("eos logs in as flatfab-test over HTTPS, with a password only: export "
               "FLATFAB_PASSWORD, or pass --ask-pass (leaf2)" in line for line in lines)
    assert any("srlinux logs in" in line and "(leaf4)" in line for line in lines)
    # a set of the host's own: its own variable, or --ask-pass
    _edit(directory / "hosts.yaml", lambda h: h["leaf2"].update(username="eapi"))
    line = next(x for x in _lines(directory, MULTI, _env(home)) if "eos" in x)
    assert " leaf2.username: " in line and "FLATFAB_PASSWORD_LEAF2 or FLATFAB_PASSWORD" in line
    assert not [x for x in _lines(directory, MULTI, _env(home, FLATFAB_PASSWORD_LEAF2="p"))
                if "eos" in x]
    asking = Credentials(ask=lambda prompt: "p", environ={"HOME": str(home)})
    assert _lines(directory, MULTI, asking) == []


@pytest.mark.parametrize(("where", "edit", "key", "devices"), [
    ("groups.yaml", lambda d: d["spines"].update(platform="sonic"), "spines.platform",
     "2 devices: spine1, spine2"),
    ("defaults.yaml", lambda d: d.update(platform="eos"), "platform",
     "8 devices: leaf1-h1, leaf1-h2"),
])
def test_a_platform_set_in_a_group_or_the_defaults_is_checked(
        tmp_path: Path, home: Path, where: str, edit: Edit, key: str, devices: str) -> None:
    directory = lab_like(tmp_path / "inv", LAB)
    # a host's own platform wins over its groups' and the defaults': these hosts have none
    lacking = ("spine1", "spine2") if where == "groups.yaml" else \
        [n for n, d in LAB.devices.items() if d.platform == "linux_host"]
    _edit(directory / "hosts.yaml", lambda h: [h[n].pop("platform") for n in lacking])
    _edit(directory / where, edit)
    lines = _lines(directory, LAB, _env(home))
    assert len(lines) == 1, lines
    wrong = "sonic" if where == "groups.yaml" else "eos"
    wanted = "frr" if where == "groups.yaml" else "linux_host"
    line = _line_of(directory / where, f"platform: {wrong}")
    assert lines[0].startswith(f"{directory / where}:{line}: ")
    assert f" {key}: '{wrong}' differs from the intent's '{wanted}' ({devices}" in lines[0]


def test_a_platform_from_a_parent_group_is_named_there(tmp_path: Path, home: Path) -> None:
    directory = lab_like(tmp_path / "inv", LAB)
    _edit(directory / "hosts.yaml", lambda h: [h[n].pop("platform") for n in ("leaf1",
                                                                               "leaf2")])
    _edit(directory / "groups.yaml", lambda g: (g["leafs"].update(groups=["rack"]),
                                                g.update(rack={"platform": "nvue"})))
    lines = _lines(directory, LAB, _env(home))
    assert len(lines) == 1 and " rack.platform: 'nvue' differs from the intent's 'frr' " \
        "(2 devices: leaf1, leaf2)" in lines[0], lines


def test_a_device_with_no_platform_anywhere_is_named(tmp_path: Path, home: Path) -> None:
    directory = lab_like(tmp_path / "inv", LAB)
    _edit(directory / "hosts.yaml", lambda h: h["leaf3"].pop("platform"))
    lines = _lines(directory, LAB, _env(home))
    assert len(lines) == 1
    assert lines[0].startswith(f"{directory / 'hosts.yaml'}:")
    assert " leaf3.platform: no platform for leaf3 (the intent's is 'frr')" in lines[0]


def test_no_user_name_is_one_line_at_the_defaults(tmp_path: Path, home: Path) -> None:
    directory = lab_like(tmp_path / "inv", LAB)
    _edit(directory / "defaults.yaml", lambda d: d.pop("username"))
    lines = _lines(directory, LAB, _env(home))
    assert len(lines) == 1 and lines[0].startswith(f"{directory / 'defaults.yaml'}:")
    assert lines[0].endswith(" username: no user name: set username here, or on the devices' "
                             "groups or hosts (14 devices: spine1, spine2, leaf1, leaf2, "
                             "leaf3, ...)")
    # read-only runs (a runbook's groups on a distributed coordinator) log in nowhere
    assert _lines(directory, LAB, _env(home), connects=False) == []


def _without_key(directory: Path) -> None:
    """The lab's key_file taken out of every entry's options."""
    def drop(doc: dict[str, Any], entries: list[Any]) -> None:
        for entry in entries:
            options = (entry.get("connection_options") or {}).get("napalm")
            if options:
                options["extras"]["optional_args"].pop("key_file", None)
    _edit(directory / "defaults.yaml", lambda d: drop(d, [d]))
    _edit(directory / "hosts.yaml", lambda h: drop(h, list(h.values())))


@pytest.fixture
def agent(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "agent.sock"
    listening = socket.socket(socket.AF_UNIX)
    listening.bind(str(path))
    yield path
    listening.close()


def test_no_way_to_log_in_is_named_and_each_way_in_is_enough(tmp_path: Path, home: Path,
                                                            agent: Path) -> None:
    directory = lab_like(tmp_path / "inv", LAB)
    _without_key(directory)
    lines = _lines(directory, LAB, _env(home))
    line = _line_of(directory / "defaults.yaml", f"username: {USER}")
    assert lines == [
        f"{directory / 'defaults.yaml'}:{line}: username: no way to "
        f"log in as {USER}: no password (FLATFAB_PASSWORD, or --ask-pass), no key file "
        "(connection_options.napalm.extras.optional_args.key_file), no SSH agent "
        f"(SSH_AUTH_SOCK), no key of your own in {home / '.ssh'} (14 devices: spine1, "
        "spine2, leaf1, leaf2, leaf3, ...)"]
    assert _lines(directory, LAB, _env(home, FLATFAB_PASSWORD="pw")) == []
    assert _lines(directory, LAB, _env(home, SSH_AUTH_SOCK=str(agent))) == []
    assert _lines(directory, LAB, _env(home, SSH_AUTH_SOCK=str(tmp_path / "gone"))) != []
    key_file(home / ".ssh")
    assert _lines(directory, LAB, _env(home)) == []


def test_a_key_file_that_does_not_exist_is_named_once(tmp_path: Path, home: Path) -> None:
    directory = lab_like(tmp_path / "inv", LAB)
    (directory / "id_ed25519").unlink()
    lines = _lines(directory, LAB, _env(home, FLATFAB_PASSWORD="pw"))
    # the defaults' key, which every device uses: one line, not one per device
    line = _line_of(directory / "defaults.yaml", "key_file:")
    assert lines == [f"{directory / 'defaults.yaml'}:{line}: connection_options.napalm.extras."
                     f"optional_args.key_file: key file {directory / 'id_ed25519'} not found"]


def test_a_missing_known_hosts_is_one_line_with_ssh_keyscan_and_its_warning(
        tmp_path: Path, home: Path) -> None:
    directory = lab_like(tmp_path / "inv", LAB)
    (directory / "known_hosts").unlink()
    lines = _lines(directory, LAB, _env(home))
    assert len(lines) == 1
    assert lines[0].startswith(f"{directory / 'known_hosts'}: known_hosts file not found "
                               "(host keys of 14 devices: ")
    spine1 = yaml.safe_load((directory / "hosts.yaml").read_text())["spine1"]["hostname"]
    assert f"`ssh-keyscan -H {spine1} >> {directory / 'known_hosts'}`" in lines[0]
    assert "ssh-keyscan trusts whatever answers: compare the fingerprints with the " \
        "device's console first" in lines[0]


def test_a_device_missing_from_known_hosts_is_named_with_its_address(tmp_path: Path,
                                                                    home: Path) -> None:
    directory = lab_like(tmp_path / "inv", LAB)
    file = directory / "known_hosts"
    entries = file.read_text().splitlines()
    address = {line.split()[0]: line for line in entries}
    leaf1 = yaml.safe_load((directory / "hosts.yaml").read_text())["leaf1"]["hostname"]
    keys = paramiko.HostKeys()
    kind, blob = address[leaf1].split()[1:3]
    keys.add(paramiko.HostKeys.hash_host(leaf1), kind, paramiko.PKey.from_type_string(
        kind, paramiko.util.b(__import__("base64").b64decode(blob))))
    keys.save(str(tmp_path / "hashed"))
    # leaf1 hashed (as `ssh-keyscan -H` writes it), spine1 gone
    spine1 = yaml.safe_load((directory / "hosts.yaml").read_text())["spine1"]["hostname"]
    kept = [line for a, line in address.items() if a not in (leaf1, spine1)]
    file.write_text("\n".join(kept) + "\n" + (tmp_path / "hashed").read_text())
    lines = _lines(directory, LAB, _env(home))
    assert lines == [f"{file}: no host key for spine1 ({spine1}): add it, e.g. `ssh-keyscan "
                     f"-H {spine1} >> {file}` (ssh-keyscan trusts whatever answers: compare "
                     "the fingerprints with the device's console first)"]


def test_a_port_other_than_22_is_looked_up_as_host_and_port(tmp_path: Path,
                                                            home: Path) -> None:
    directory = lab_like(tmp_path / "inv", LAB)
    _edit(directory / "hosts.yaml", lambda h: h["leaf1-h1"].update(
        connection_options={"napalm": {"extras": {"optional_args": {
            "key_file": str(directory / "id_ed25519"),
            "known_hosts": str(directory / "known_hosts"), "port": 2222}}}}))
    address = yaml.safe_load((directory / "hosts.yaml").read_text())["leaf1-h1"]["hostname"]
    lines = _lines(directory, LAB, _env(home))
    assert len(lines) == 1 and f"no host key for leaf1-h1 ([{address}]:2222)" in lines[0]
    assert f"`ssh-keyscan -H -p 2222 {address} >> " in lines[0]
    with (directory / "known_hosts").open("a") as file:
        public = (directory / "known_hosts").read_text().split()[1:3]
        file.write(f"[{address}]:2222 {' '.join(public)}\n")
    assert _lines(directory, LAB, _env(home)) == []


@pytest.mark.parametrize(("value", "why"), [
    ("bad..name", "'bad..name' is neither an IP address nor a valid DNS name"),
    ("leaf_1.example.net", "'leaf_1.example.net' is neither an IP address nor a valid DNS "
     "name"),
    ("-leaf.example.net", "'-leaf.example.net' is neither an IP address nor a valid DNS name"),
    ("10.0.0.300", "'10.0.0.300' is not a valid IP address"),
])
def test_a_bad_address_is_named(tmp_path: Path, home: Path, value: str, why: str) -> None:
    directory = lab_like(tmp_path / "inv", LAB)
    _edit(directory / "hosts.yaml", lambda h: h["leaf2"].update(hostname=value))
    lines = _lines(directory, LAB, _env(home))
    line = _line_of(directory / "hosts.yaml", f"hostname: {value}")
    assert len(lines) == 1 and f"hosts.yaml:{line}: leaf2.hostname: {why}" in lines[0], lines


def test_dns_names_and_ipv6_addresses_are_addresses(tmp_path: Path, home: Path) -> None:
    directory = lab_like(tmp_path / "inv", LAB, {
        **{n: f"192.0.2.{10 + i}" for i, n in enumerate(sorted(LAB.devices))},
        "leaf2": "leaf2.oob.example.net", "leaf3": "2001:db8::3"})
    assert _lines(directory, LAB, _env(home)) == []


@pytest.mark.parametrize("port", [70000, 0, "ssh", True])
def test_a_bad_port_is_named(tmp_path: Path, home: Path, port: object) -> None:
    directory = lab_like(tmp_path / "inv", LAB)
    _edit(directory / "hosts.yaml", lambda h: h["leaf2-h1"].update(port=port))
    lines = _lines(directory, LAB, _env(home))
    assert len(lines) == 1 and f" leaf2-h1.port: {port!r} is not a TCP port (1-65535)" \
        in lines[0], lines


def test_a_platform_whose_extra_is_missing_is_one_line(tmp_path: Path, home: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    directory = _multivendor(tmp_path, home)
    monkeypatch.setattr(inventory_checks, "installed", lambda extra: extra != "nxos")
    lines = _lines(directory, MULTI, _env(home, FLATFAB_PASSWORD="x"))
    line = _line_of(directory / "hosts.yaml", "platform: nxos")
    assert lines == [f"{directory / 'hosts.yaml'}:{line}: "
                     "spine2.platform: platform nxos needs flatfab's nxos extra, which is not "
                     "installed: pip install 'flatfab[nxos]' (spine2)"]


@pytest.mark.parametrize(("change", "key", "why"), [
    ({"ssh_strict": False}, "ssh_strict", "must be true: netmiko accepts any host key"),
    ({"use_keys": False}, "use_keys", "must be true for netmiko to use key_file"),
    ({"alt_host_keys": False}, "alt_host_keys", "name the host keys netmiko checks"),
])
def test_netmiko_options_that_skip_host_keys_or_the_key_are_named(
        tmp_path: Path, home: Path, change: dict[str, Any], key: str, why: str) -> None:
    directory = _multivendor(tmp_path, home)
    _edit(directory / "hosts.yaml",
          lambda h: h["leaf3"]["connection_options"]["netmiko"]["extras"].update(change))
    lines = _lines(directory, MULTI, _env(home, FLATFAB_PASSWORD="x"))
    assert len(lines) == 1, lines
    assert f" leaf3.connection_options.netmiko.extras.{key}: {why}" in lines[0]


def test_a_scrapli_device_s_known_hosts_is_the_one_its_options_name(tmp_path: Path,
                                                                    home: Path) -> None:
    directory = _multivendor(tmp_path, home)
    _edit(directory / "hosts.yaml",
          lambda h: h["spine2"]["connection_options"]["scrapli"]["extras"].pop(
              "ssh_known_hosts_file"))
    lines = _lines(directory, MULTI, _env(home, FLATFAB_PASSWORD="x"))
    assert len(lines) == 1 and lines[0].startswith(f"{home / '.ssh' / 'known_hosts'}: no "
                                                   "host key for spine2 ")


@pytest.mark.parametrize(("file", "edit", "key", "variable"), [
    ("hosts.yaml", lambda d: d["leaf1"].update(password="hunter2"), "leaf1.password",
     "FLATFAB_PASSWORD_LEAF1"),
    ("groups.yaml", lambda d: d["spines"].update(connection_options={"napalm": {
        "password": "hunter2"}}), "spines.connection_options.napalm.password",
     "FLATFAB_PASSWORD_SPINES"),
    ("defaults.yaml", lambda d: d["connection_options"]["napalm"]["extras"][
        "optional_args"].update(secret="hunter2"),
     "connection_options.napalm.extras.optional_args.secret", "FLATFAB_PASSWORD"),
])
def test_a_password_in_the_inventory_is_refused(tmp_path: Path, home: Path, file: str,
                                                edit: Edit, key: str, variable: str) -> None:
    directory = lab_like(tmp_path / "inv", LAB)
    _edit(directory / file, edit)
    lines = _lines(directory, LAB, _env(home))
    also = "" if variable == "FLATFAB_PASSWORD" else " (or FLATFAB_PASSWORD)"
    assert len(lines) == 1 and f"{file}:" in lines[0] and f" {key}: secrets never go in the " \
        f"inventory: export {variable}{also}, or pass --ask-pass" in lines[0]
    assert "hunter2" not in lines[0]


@pytest.mark.parametrize(("groups", "key", "why"), [
    (["leafs", "racks"], "leaf1.groups.1", "group 'racks' is not in groups.yaml"),
    ("leafs", "leaf1.groups", "must be a list of group names"),
])
def test_a_group_nornir_could_not_find_is_refused(tmp_path: Path, home: Path, groups: Any,
                                                  key: str, why: str) -> None:
    directory = lab_like(tmp_path / "inv", LAB)
    _edit(directory / "hosts.yaml", lambda h: h["leaf1"].update(groups=groups))
    assert [line.split(": ", 1)[1] for line in _lines(directory, LAB, _env(home))] == \
        [f"{key}: {why}"]


def test_every_problem_is_found_in_one_pass(tmp_path: Path, home: Path) -> None:
    directory = lab_like(tmp_path / "inv", LAB)
    _edit(directory / "groups.yaml", lambda d: d["spines"].update(platform="eos"))
    _edit(directory / "hosts.yaml", lambda h: (h["spine1"].pop("platform"),
                                               h["leaf1"].update(hostname="a..b"),
                                               h["leaf2"].update(password="x"),
                                               h["leaf3"].update(port=0)))
    lines = _lines(directory, LAB, _env(home))
    assert [line.split(": ", 2)[1] for line in lines] == [
        "spines.platform", "leaf1.hostname", "leaf2.password", "leaf3.port"]


def test_hosts_from_nautobot_are_checked_like_a_file_s(tmp_path: Path, home: Path) -> None:
    """Addresses and platforms come from Nautobot (named at its API); user names, options
    and groups (with their user names: a group is read whole) from the folder."""
    directory = lab_like(tmp_path / "inv", LAB)
    _edit(directory / "hosts.yaml", lambda h: [(e.pop("hostname"), e.pop("platform"))
                                               for e in h.values()])
    _edit(directory / "groups.yaml", lambda g: g["spines"].update(username="spineadm"))
    source = NautobotSource.model_validate({"url": "http://192.0.2.99/", "token_env": "T",
                                            "filters": {}})
    # the addresses lab_like wrote (its known_hosts holds them), the drivers Nautobot names
    found = {name: (f"192.0.2.{10 + i}", "frr" if LAB.devices[name].platform == "frr"
                    else "linux") for i, name in enumerate(sorted(LAB.devices))}
    hosts = local_hosts(source, directory, found)
    assert hosts[0]["spine1"].username == "spineadm"  # the group's user name
    creds = _env(home)
    nornir = checked(directory, source, LAB, hosts, 4, (), credentials=creds, connects=True)
    assert sorted(nornir.inventory.hosts) == sorted(LAB.devices)
    wrong = {**found, "leaf2": (found["leaf2"][0], "linux")}
    with pytest.raises(InputError) as caught:
        checked(directory, source, LAB, local_hosts(source, directory, wrong), 4, (),
                credentials=creds, connects=True)
    assert str(caught.value) == (f"{source.api_url}: leaf2.platform: 'linux_host' differs "
                                 "from the intent's 'frr' (leaf2)")


@pytest.mark.parametrize("name", sorted(PLATFORMS))
def test_every_platform_reads_back_the_login_its_lab_options_spell(name: str) -> None:
    """`login` reads what `lab_connection` writes, for every plugin: the key, the
    known_hosts file (junos: ncclient's own), nothing that skips host keys; eos and srlinux
    log in over HTTPS."""
    platform = PLATFORMS[name]
    key, known = Path("/k/id_ed25519"), Path("/k/known_hosts")
    spelt = platform.lab_connection(key_file=key, known_hosts=known)
    login = platform.login(spelt[platform.facts.connection.plugin]["extras"])
    assert login.problems == ()
    if name in ("eos", "srlinux"):
        assert login.transport == "https"
        return
    assert (login.transport, login.key_file, login.reads_known_hosts) == ("ssh", str(key), True)
    assert login.known_hosts == (None if name == "junos" else str(known))
