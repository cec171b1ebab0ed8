"""Where each device's gNMI target is, read from the Nornir inventory as a plain connection
option, so any Nornir script can read the same entry:

    leaf1:
      hostname: 172.31.255.13          # the target's address unless gnmi.hostname says else
      connection_options:
        gnmi:
          hostname: 172.31.255.13      # optional
          port: 57400                  # required: there is no safe default across NOSes
          extras:
            ca_file: /etc/flatfab/ca.pem          # required unless insecure: true
            tls_server_name: leaf1.lab            # optional: the name the cert carries
            username_env: FLATFAB_GNMI_USERNAME   # names of environment variables,
            password_env: FLATFAB_GNMI_PASSWORD   #   never the secrets themselves
            env_file: /run/flatfab/ff/gnmi/credentials.env  # optional, see below
            cert_file: /etc/flatfab/watch.crt     # optional: mutual TLS, the client's
            key_file: /etc/flatfab/watch.key      #   certificate and key (chmod 600)
            insecure: false                       # plaintext; for a lab only

Nornir resolves `connection_options.gnmi` host first, then groups, then defaults (extras whole
from the first level that has them), exactly as for NAPALM. A `password` under gnmi is refused:
secrets stay out of the inventory. `env_file` names a file only its owner may read, of
`NAME=value` lines, that supplies those two variables where the environment does not (the
embedded lab writes one per lab, as it writes the SSH key the inventory names).
`cert_file` and `key_file` go together: the certificate flatfab presents to a target that
verifies its clients (mutual TLS, openconfig/reference rpc/gnmi/gnmi-authentication.md);
with them the two credential variables may be left unset.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from nornir.core import Nornir
from nornir.core.inventory import Host

from flatfab.errors import InputError, InputProblem

PLUGIN: Final = "gnmi"
# where a target's credentials are read from unless its inventory entry names others
USERNAME_ENV: Final = "FLATFAB_GNMI_USERNAME"
PASSWORD_ENV: Final = "FLATFAB_GNMI_PASSWORD"
EXTRAS: Final = frozenset({"ca_file", "tls_server_name", "username_env", "password_env",
                           "insecure", "env_file", "cert_file", "key_file"})


@dataclass(frozen=True, slots=True)
class TargetSpec:
    """One device's gNMI target, resolved (no secrets in here: only env var names)."""

    device: str
    host: str
    port: int
    ca_file: Path | None
    tls_server_name: str | None = None
    username_env: str = USERNAME_ENV
    password_env: str = PASSWORD_ENV
    insecure: bool = False
    env_file: Path | None = None
    platform: str | None = None  # the host's: which path table its target speaks
    cert_file: Path | None = None  # mutual TLS: the client certificate and its key
    key_file: Path | None = None


def _declares(host: Host) -> str | None:
    """Which inventory level declares a gnmi connection option (None: none does)."""
    if PLUGIN in host.connection_options:
        return "hosts.yaml"
    for group in host.extended_groups():
        if PLUGIN in group.connection_options:
            return "groups.yaml"
    if host.defaults is not None and PLUGIN in host.defaults.connection_options:
        return "defaults.yaml"
    return None


def _spec(host: Host, base: Path, file: str) -> TargetSpec:
    key = f"{host.name}.connection_options.{PLUGIN}" if file == "hosts.yaml" else \
        f"connection_options.{PLUGIN} (for {host.name})"
    shown = str(base / file)

    def bad(sub: str, reason: str) -> InputError:
        return InputError.single(shown, f"{key}{sub}", reason)

    params = host.get_connection_parameters(PLUGIN)
    if params.password and params.password != host.password:  # not the host's own
        raise bad(".password", "secrets never go in the inventory: name an environment "
                  "variable in extras.password_env")
    port: Any = params.port
    if not isinstance(port, int) or isinstance(port, bool) or not 0 < port < 65536:
        raise bad(".port", f"needs the gNMI port, an integer 1-65535 (got {port!r})")
    address = params.hostname or host.hostname
    if not address:
        raise bad(".hostname", "needs an address (or the host's hostname)")
    extras: Any = params.extras or {}
    if not isinstance(extras, dict):
        raise bad(".extras", "must be a mapping")
    unknown = sorted(set(extras) - EXTRAS)
    if unknown:
        raise bad(f".extras.{unknown[0]}", f"unknown key (known: {', '.join(sorted(EXTRAS))})")
    for name in ("ca_file", "tls_server_name", "username_env", "password_env", "env_file",
                 "cert_file", "key_file"):
        if extras.get(name) is not None and not isinstance(extras[name], str):
            raise bad(f".extras.{name}", "must be a string")
    insecure = extras.get("insecure", False)
    if not isinstance(insecure, bool):
        raise bad(".extras.insecure", "must be true or false")
    ca = extras.get("ca_file")
    if ca is None and not insecure:
        raise bad(".extras.ca_file", "needs the CA file that signed the target's certificate "
                  "(or insecure: true, plaintext, for a lab)")
    ca_file = None if ca is None else (base / ca if not Path(ca).is_absolute() else Path(ca))
    env = extras.get("env_file")
    env_file = None if env is None else (base / env if not Path(env).is_absolute() else Path(env))
    cert_name, key_name = extras.get("cert_file"), extras.get("key_file")
    if (cert_name is None) != (key_name is None):
        missing = "key_file" if key_name is None else "cert_file"
        raise bad(f".extras.{missing}", "a client certificate needs both cert_file and "
                  "key_file (mutual TLS)")
    if cert_name is not None and insecure:
        raise bad(".extras.cert_file", "a client certificate needs TLS: not with "
                  "insecure: true")
    cert_file, key_file = (None if n is None else (base / n if not Path(n).is_absolute()
                                                   else Path(n))
                           for n in (cert_name, key_name))
    return TargetSpec(device=host.name, host=str(address), port=port, ca_file=ca_file,
                      tls_server_name=extras.get("tls_server_name"),
                      username_env=extras.get("username_env") or USERNAME_ENV,
                      password_env=extras.get("password_env") or PASSWORD_ENV,
                      insecure=insecure, env_file=env_file,
                      platform=str(host.platform) if host.platform else None,
                      cert_file=cert_file, key_file=key_file)


def _load_env_file(spec: TargetSpec) -> None:
    """Set the target's two credential variables from its env_file, where not already set."""
    assert spec.env_file is not None
    wanted = {spec.username_env, spec.password_env}
    if all(os.environ.get(name) for name in wanted):
        return
    try:
        mode = spec.env_file.stat().st_mode
        text = spec.env_file.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError.single(str(spec.env_file), "", f"cannot read the gNMI credentials "
                                f"of {spec.device}: {exc.strerror or exc}") from None
    if mode & 0o077:
        raise InputError.single(str(spec.env_file), "", "holds credentials but others may "
                                "read it (chmod 600)")
    found = {}
    for line in text.splitlines():
        name, sep, value = line.partition("=")
        if sep and name.strip() in wanted:
            found[name.strip()] = value.strip()
    missing = sorted(wanted - set(found))
    if missing:
        raise InputError.single(str(spec.env_file), "", f"does not set {', '.join(missing)}")
    for name, value in found.items():
        if not os.environ.get(name):  # what the operator exported wins
            os.environ[name] = value


def _check_key_file(spec: TargetSpec) -> None:
    """A client key others may read is refused, as an env_file is: it is a secret."""
    if spec.key_file is None:
        return
    try:
        mode = spec.key_file.stat().st_mode
    except OSError as exc:
        raise InputError.single(str(spec.key_file), "", f"cannot read the gNMI client key "
                                f"of {spec.device}: {exc.strerror or exc}") from None
    if mode & 0o077:
        raise InputError.single(str(spec.key_file), "", "is a private key but others may "
                                "read it (chmod 600)")


def gnmi_targets(nornir: Nornir, inventory_dir: Path) -> dict[str, TargetSpec]:
    """Every host that declares a gNMI target, by name. Relative CA paths are taken from
    the inventory folder; an env_file fills the credential variables the environment does
    not set; a client key others may read is refused. Bad entries are all reported, one line
    each."""
    found: dict[str, TargetSpec] = {}
    problems: list[InputProblem] = []
    for name, host in sorted(nornir.inventory.hosts.items()):
        file = _declares(host)
        if file is None:
            continue
        try:
            found[name] = _spec(host, inventory_dir, file)
            if found[name].env_file is not None:
                _load_env_file(found[name])
            _check_key_file(found[name])
        except InputError as exc:
            problems += exc.problems
    if problems:
        raise InputError(problems)
    return found
