"""Each embedded-lab switch serves gNMI, as a real one does: its own target process inside
the switch's namespaces, TLS with a certificate from a CA made for this lab, and a username
and password.

Everything is under /run/flatfab/<prefix>/gnmi/ (root only): `ca.pem` (what a watcher trusts),
`credentials.env` (FLATFAB_GNMI_USERNAME / FLATFAB_GNMI_PASSWORD, made fresh on every `up`),
and per switch its key, certificate and target config. The password reaches a target through
its environment, never its command line (which `ps` shows).

Mutual TLS is an option (`prepare(..., mutual_tls=True)`): the lab CA then also signs a client
certificate for the watcher (`client.crt`, `client.key`), every target requires and verifies
one (`client_ca_file`), and the inventory entry names them (`cert_file`, `key_file`).
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Final

import yaml

from flatfab.atomic import write_atomic
from flatfab.lab.system import LabError
from flatfab.lab.topology import LabNode
from flatfab.platforms.registry import DEFAULT_SWITCH, PLATFORMS
from flatfab.telemetry.targets import PASSWORD_ENV, USERNAME_ENV
from flatfab.telemetry.tls import make_ca, make_client_cert, make_server_cert

PORT: Final = 9339  # IANA's port for gNMI
USERNAME: Final = "flatfab"


def source(node: LabNode) -> str:
    """What serves a switch's telemetry (`module:function`): its platform's, as its data
    file's lab.runtime.telemetry declares."""
    name = node.platform or DEFAULT_SWITCH
    runtime = PLATFORMS[name].facts.lab.runtime if name in PLATFORMS else None
    if runtime is None or runtime.telemetry is None:
        raise LabError(f"node {node.name}: platform {name!r} declares no telemetry source "
                       "for the embedded lab (lab.runtime.telemetry)")
    return runtime.telemetry


def gnmi_dir(root: Path) -> Path:
    return root / "gnmi"


def ca_file(root: Path) -> Path:
    return gnmi_dir(root) / "ca.pem"


def env_file(root: Path) -> Path:
    return gnmi_dir(root) / "credentials.env"


def client_cert_file(root: Path) -> Path:
    return gnmi_dir(root) / "client.crt"


def client_key_file(root: Path) -> Path:
    return gnmi_dir(root) / "client.key"


def inventory_entry(root: Path, mutual_tls: bool = False) -> dict[str, object]:
    """A lab switch's `connection_options.gnmi`: the address is the host's own."""
    extras: dict[str, object] = {"ca_file": str(ca_file(root)), "env_file": str(env_file(root))}
    if mutual_tls:
        extras |= {"cert_file": str(client_cert_file(root)),
                   "key_file": str(client_key_file(root))}
    return {"port": PORT, "extras": extras}


def _private(path: Path, data: bytes) -> None:
    write_atomic(path, data.decode("ascii"))
    path.chmod(0o600)


def prepare(root: Path, switches: list[LabNode], mutual_tls: bool = False) -> None:
    """The lab CA, the credentials and each switch's certificate and target config; with
    `mutual_tls`, a client certificate for the watcher that every target requires."""
    folder = gnmi_dir(root)
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    ca = make_ca(f"flatfab lab CA ({root.name})")
    write_atomic(ca_file(root), ca.cert.decode("ascii"))
    password = secrets.token_urlsafe(24)
    _private(env_file(root), f"{USERNAME_ENV}={USERNAME}\n{PASSWORD_ENV}={password}\n".encode())
    if mutual_tls:
        client = make_client_cert(ca, f"flatfab watch ({root.name})")
        write_atomic(client_cert_file(root), client.cert.decode("ascii"))
        _private(client_key_file(root), client.key)
    for node in switches:
        pem = make_server_cert(ca, [node.name, node.mgmt_ipv4])
        write_atomic(folder / f"{node.name}.crt", pem.cert.decode("ascii"))
        _private(folder / f"{node.name}.key", pem.key)
        config = {"name": node.name, "address": node.mgmt_ipv4, "port": PORT,
                  "tls_cert": str(folder / f"{node.name}.crt"),
                  "tls_key": str(folder / f"{node.name}.key"),
                  "username_env": USERNAME_ENV, "password_env": PASSWORD_ENV,
                  "source": source(node), "source_args": {"state_dir": "/var/lib/flatfab"}}
        if mutual_tls:
            config["client_ca_file"] = str(ca_file(root))
        write_atomic(folder / f"{node.name}.yaml", yaml.safe_dump(config, sort_keys=True))


def credentials(root: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in env_file(root).read_text(encoding="utf-8").splitlines():
        name, sep, value = line.partition("=")
        if sep:
            out[name.strip()] = value.strip()
    return out


def _target_env(root: Path) -> dict[str, str]:
    """A target's environment: a PATH and the lab's gNMI credentials, nothing else of ours."""
    return {"PATH": os.environ.get("PATH", "/usr/sbin:/usr/bin:/sbin:/bin"), **credentials(root)}


def start_all(root: Path, nodes: list[LabNode],
              namespaces: Callable[[LabNode], dict[str, str]]) -> dict[str, int]:
    """Start every switch's target inside its namespaces from one interpreter (imported
    once, forked per switch: flatfab.lab.gnmi_spawn); each switch's pid. `namespaces` gives
    a switch's namespace files: `net`, `mnt`, `uts`."""
    if not nodes:
        return {}
    folder = gnmi_dir(root)
    specs = [{**namespaces(node), "config": str(folder / f"{node.name}.yaml"),
              "log": str(folder / f"{node.name}.log"), "wd": str(folder),
              "source": source(node)} for node in nodes]
    env = _target_env(root)
    done = subprocess.run([sys.executable, "-m", "flatfab.lab.gnmi_spawn"],
                          input=json.dumps(specs), env=env, capture_output=True, text=True,
                          timeout=120, check=False)
    try:
        pids = json.loads(done.stdout.strip().splitlines()[-1]) if done.stdout.strip() else None
    except ValueError:
        pids = None
    if done.returncode != 0 or not isinstance(pids, list) or len(pids) != len(nodes):
        why = (done.stderr or done.stdout).strip().splitlines()
        raise LabError(f"gNMI targets did not start: {why[-1] if why else done.returncode}")
    return {node.name: int(pid) for node, pid in zip(nodes, pids, strict=True)}


def start(root: Path, node: LabNode, nsenter: list[str]) -> int:
    """Start a switch's target inside its namespaces, an interpreter of its own (a target
    started again); its pid."""
    folder = gnmi_dir(root)
    # the interpreter running flatfab finds the package, installed or a checkout's
    env = _target_env(root)
    with (folder / f"{node.name}.log").open("ab") as log:
        proc = subprocess.Popen(
            [*nsenter, "--wd=" + str(folder), sys.executable, "-m",
             "flatfab.telemetry.gnmi_target", "--config", str(folder / f"{node.name}.yaml")],
            env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True)
    return proc.pid


def wait_listening(root: Path, nodes: list[LabNode], port_open: Callable[[str, int], bool],
                   timeout: float = 30) -> None:
    pending = {n.name: n.mgmt_ipv4 for n in nodes}
    deadline = time.monotonic() + timeout
    while pending and time.monotonic() < deadline:
        for name, address in list(pending.items()):
            if port_open(address, PORT):
                del pending[name]
        if pending:
            time.sleep(0.1)
    if pending:
        first = sorted(pending)[0]
        raise LabError(f"gNMI targets did not come up on {', '.join(sorted(pending))} "
                       f"(see {gnmi_dir(root) / (first + '.log')})")
