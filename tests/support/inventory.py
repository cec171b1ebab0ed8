"""Inventories as tests write them, complete as flatfab checks them before any connection:
a user name, a key file that exists and a known_hosts file holding a host key for every
device's address, all in the test's own folder. (Nothing answers at those addresses unless
a test serves them: the keys are made for the test and trusted by nothing else.)"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import asyncssh

from flatfab.model.state import FabricState
from flatfab.workflows.devices import inventory

USER = "flatfab-test"


def key_file(folder: Path) -> Path:
    """A private key of the test's own (made once per folder)."""
    path = folder / "id_ed25519"
    if not path.exists():
        folder.mkdir(parents=True, exist_ok=True)
        asyncssh.generate_private_key("ssh-ed25519").write_private_key(path)
        path.chmod(0o600)
    return path


def known_hosts(path: Path, addresses: Iterable[str]) -> Path:
    """A known_hosts file holding one made-up host key for each address (`[a]:port` for a
    port other than 22)."""
    public = asyncssh.generate_private_key("ssh-ed25519").export_public_key().decode().strip()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{address} {public}\n" for address in addresses),
                    encoding="utf-8")
    return path


def login_defaults(folder: Path, addresses: Iterable[str], *,
                   extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """defaults.yaml for NAPALM platforms over SSH: the user, the key and the known_hosts
    (written into `folder`) holding every address; `extra`: more optional_args."""
    options = {"key_file": str(key_file(folder)),
               "known_hosts": str(known_hosts(folder / "known_hosts", addresses)),
               **(extra or {})}
    return {"username": USER, "connection_options": {"napalm": {"extras": {
        "optional_args": options}}}}


def lab_like(directory: Path, plan: FabricState,
             addresses: dict[str, str] | None = None) -> Path:
    """The inventory `flatfab lab up` writes (inventory.lab_inventory), its key and
    known_hosts in `directory`; `addresses`: device -> management address (default: one
    in 192.0.2.0/24, TEST-NET-1, per device)."""
    names = sorted(plan.devices)
    found = addresses or {name: f"192.0.2.{10 + i}" for i, name in enumerate(names)}
    nodes = {name: {"mgmt_ipv4": found[name]} for name in names}
    inventory.write(directory, inventory.lab_inventory(
        plan, nodes, user=USER, key_file=key_file(directory),
        known_hosts=known_hosts(directory / "known_hosts", found.values()),
        lldp_sockets={}))
    return directory
