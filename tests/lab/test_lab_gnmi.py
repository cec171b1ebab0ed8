"""What `lab up` prepares for its switches' gNMI targets: a CA, fresh credentials readable by
root only, a certificate per switch for its name and management address, and the inventory
entry that points a watcher at them."""

from __future__ import annotations

import ipaddress
import stat
from pathlib import Path

import yaml
from cryptography import x509

from flatfab.lab import gnmi
from flatfab.lab.topology import LabNode
from flatfab.telemetry.targets import PASSWORD_ENV, USERNAME_ENV
from flatfab.workflows.devices import inventory
from tests.support.telemetry_streams import lab_plan

NODES = [LabNode("leaf1", "leaf", "frr", "172.31.9.13"), LabNode("spine1", "spine", "frr",
                                                                  "172.31.9.11")]


def test_each_switch_gets_a_certificate_and_a_config_and_the_secret_stays_private(
        tmp_path: Path) -> None:
    gnmi.prepare(tmp_path, NODES)
    folder = gnmi.gnmi_dir(tmp_path)
    creds = gnmi.credentials(tmp_path)
    assert set(creds) == {USERNAME_ENV, PASSWORD_ENV} and len(creds[PASSWORD_ENV]) >= 24
    for private in (gnmi.env_file(tmp_path), folder / "leaf1.key"):
        assert stat.S_IMODE(private.stat().st_mode) == 0o600
    cert = x509.load_pem_x509_certificate((folder / "leaf1.crt").read_bytes())
    sans = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert sans.get_values_for_type(x509.DNSName) == ["leaf1"]
    assert sans.get_values_for_type(x509.IPAddress) == [ipaddress.ip_address("172.31.9.13")]
    config = yaml.safe_load((folder / "leaf1.yaml").read_text())
    assert config["address"] == "172.31.9.13" and config["port"] == gnmi.PORT
    # the frr platform's data file names what serves it
    assert config["source"] == "flatfab.platforms.frr.asic_telemetry:source"
    assert creds[PASSWORD_ENV] not in (folder / "leaf1.yaml").read_text()
    gnmi.prepare(tmp_path, NODES)  # every up makes a new password
    assert gnmi.credentials(tmp_path)[PASSWORD_ENV] != creds[PASSWORD_ENV]


def test_the_lab_inventory_names_each_switch_target(tmp_path: Path) -> None:
    plan = lab_plan()
    nodes = {name: {"mgmt_ipv4": f"172.31.9.{n + 2}"} for n, name in enumerate(plan.devices)}
    switches = [n for n, d in plan.devices.items() if d.role.value != "host"]
    written = inventory.lab_inventory(
        plan, nodes, user="ff-admin", key_file=tmp_path / "id", known_hosts=tmp_path / "kh",
        lldp_sockets={}, gnmi={n: gnmi.inventory_entry(tmp_path) for n in switches})
    hosts = yaml.safe_load(written["hosts.yaml"])
    for name, entry in hosts.items():
        options = entry.get("connection_options", {})
        if name in switches:
            assert options["gnmi"] == {"port": gnmi.PORT, "extras": {
                "ca_file": str(gnmi.ca_file(tmp_path)),
                "env_file": str(gnmi.env_file(tmp_path))}}
        else:
            assert "gnmi" not in options
