"""What a network engineer would refuse is refused at load, with file, key path and line:
reserved ASNs and ranges that cross them, booleans where numbers belong, kernel-reserved
VRF tables, addresses in special space, tenant names that are interface names, tenant
subnets too small for their hosts, cables longer than their optics reach, qos overrides
whose devices or ports match nothing, and a lab management subnet that overlaps the
fabric."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from flatfab.errors import InputError, InputProblem
from flatfab.intent.loader import load_intent
from flatfab.intent.models import Intent
from flatfab.intent.optics import REACH_M, Media, longest
from flatfab.intent.ports import device_ports
from flatfab.model.state import IfKind
from flatfab.plan.planner import plan
from flatfab.platforms.registry import PLATFORMS
from tests.support.flatfab import flatfab
from tests.support.intent_edits import (
    FABRIC,
    TENANTS,
    Edit,
    append,
    assert_refused,
    bad_copy,
    replace,
)
from tests.support.paths import ROOT

QOS = "qos.yaml"
FABRIC_CLASS = "fabric: {speed: 100G, cable_m: 3, mtu: 9216}"


def fabric_class(text: str) -> Edit:
    """The lab's fabric link class written as `text`."""
    return replace(FABRIC, FABRIC_CLASS, f"fabric: {{{text}, mtu: 9216}}")


def override(text: str) -> Edit:
    return append(QOS, f"overrides:\n{text}")


@pytest.mark.parametrize(("edit", "file", "path", "phrase"), [
    (replace(FABRIC, "spine_asn: 65000", "spine_asn: 23456"), FABRIC, "underlay.spine_asn",
     "AS_TRANS (RFC 6793)"),
    (replace(FABRIC, "spine_asn: 65000", "spine_asn: 65535"), FABRIC, "underlay.spine_asn",
     "RFC 7300"),
    (replace(FABRIC, "spine_asn: 65000", "spine_asn: 64500"), FABRIC, "underlay.spine_asn",
     "documentation (RFC 5398)"),
    (replace(FABRIC, "{first: 65101, last: 65199}", "{first: 65500, last: 65600}"), FABRIC,
     "underlay.leaf_asns", "the range 65500-65600 crosses: AS 65535"),
    (replace(FABRIC, "{first: 65101, last: 65199}", "{first: 4294967000, last: 4294967295}"),
     FABRIC, "underlay.leaf_asns.last", "less than or equal to 4294967294"),
    # YAML 1.2 reads yes/on as text; true/false are booleans, never taken as 1/0
    (replace(FABRIC, "spine_asn: 65000", "spine_asn: yes"), FABRIC, "underlay.spine_asn",
     "'yes' is not an integer"),
    (replace(FABRIC, "spine_asn: 65000", "spine_asn: true"), FABRIC, "underlay.spine_asn",
     "true is a boolean"),
    (replace(FABRIC, "max_spines: 16", "max_spines: false"), FABRIC, "underlay.max_spines",
     "a number belongs here"),
    (replace(FABRIC, "cable_m: 3", "cable_m: false"), FABRIC, "link_classes.fabric.cable_m",
     "false is a boolean"),
    (replace(FABRIC, "cable_m: 3", "cable_m: no"), FABRIC, "link_classes.fabric.cable_m",
     "'no' is not a number"),
    (replace(TENANTS, "vrf_id: 100", "vrf_id: 254"), TENANTS, "tenants[0].vrf_id",
     "the kernel's 'main' table"),
    (replace(TENANTS, "vrf_id: 100", "vrf_id: 253"), TENANTS, "tenants[0].vrf_id",
     "'default' table"),
    (replace(TENANTS, "10.100.0.0/16", "169.254.0.0/16"), TENANTS, "tenants[0].prefixes",
     "link-local space"),
    (replace(TENANTS, "10.100.0.0/16", "224.100.0.0/16"), TENANTS, "tenants[0].prefixes",
     "multicast space"),
    (replace(TENANTS, "10.100.0.0/16", "127.100.0.0/16"), TENANTS, "tenants[0].prefixes",
     "loopback space"),
    (replace(FABRIC, "loopback_pool: 10.0.0.0/24", "loopback_pool: 127.0.0.0/24"), FABRIC,
     "underlay.loopback_pool", "loopback space"),
    (replace(FABRIC, "loopback_pool: 10.0.0.0/24", "loopback_pool: 10.100.0.0/24"), TENANTS,
     "tenants[0].prefixes[0]", "overlaps 10.100.0.0/24"),
    (replace(TENANTS, "name: blue", "name: lo"), TENANTS, "tenants[0].name",
     "also the name of an interface"),
    (replace(TENANTS, "name: blue", "name: swp3"), TENANTS, "tenants[0].name",
     "also the name of an interface"),
    (replace(TENANTS, "name: blue", "name: br100"), TENANTS, "tenants[0].name",
     "also the name of an interface"),
    (replace(TENANTS, "name: blue", "name: eth0"), TENANTS, "tenants[0].name",
     "also the name of an interface"),
    (replace(TENANTS, "    prefixes: [10.100.0.0/16]",
             "    prefixes: [10.100.0.0/16]\n    subnet_length: 29"), TENANTS,
     "tenants[0].subnet_length", "a /29 per leaf cannot hold host 'leaf1-h1'"),
    (append(QOS, "overrides:\n  - devices: [leaf9*]\n    trust: pcp\n"), QOS,
     "overrides[0].devices[0]", "'leaf9*' matches no device"),
    # cables beyond their optics' reach (tasks/intent/optics.py)
    (fabric_class("speed: 400G, media: dac, cable_m: 40"), FABRIC,
     "link_classes.fabric.cable_m", "40 m is beyond 400G dac reach (3 m)"),
    (fabric_class("speed: 800G, media: dac, cable_m: 2.5"), FABRIC,
     "link_classes.fabric.cable_m", "2.5 m is beyond 800G dac reach (2 m)"),
    (fabric_class("speed: 100G, media: sr, cable_m: 150"), FABRIC,
     "link_classes.fabric.cable_m", "150 m is beyond 100G sr reach (100 m)"),
    (fabric_class("speed: 10G, media: sr, cable_m: 401"), FABRIC,
     "link_classes.fabric.cable_m", "401 m is beyond 10G sr reach (400 m)"),
    (fabric_class("speed: 400G, media: dr, cable_m: 600"), FABRIC,
     "link_classes.fabric.cable_m", "600 m is beyond 400G dr reach (500 m)"),
    (fabric_class("speed: 100G, media: lr, cable_m: 10001"), FABRIC,
     "link_classes.fabric.cable_m", "10001 m is beyond 100G lr reach (10000 m)"),
    (fabric_class("speed: 10G, media: dr, cable_m: 300"), FABRIC,
     "link_classes.fabric.media", "no 10G dr optic (10G media: dac, aoc, sr, lr, er)"),
    (fabric_class("speed: 25G, media: fr, cable_m: 300"), FABRIC,
     "link_classes.fabric.media", "no 25G fr optic"),
    (fabric_class("speed: 100G, media: zr, cable_m: 300"), FABRIC,
     "link_classes.fabric.media", "unknown media 'zr'; expected one of dac, aoc, sr"),
    (fabric_class("speed: 100G, cable_m: 40001"), FABRIC, "link_classes.fabric.cable_m",
     "40001 m is beyond the reach of any 100G optic (longest: er, 40000 m)"),
    (replace(FABRIC, "host: {speed: 100G, cable_m: 2", "host: {speed: 100G, media: aoc, "
                                                       "cable_m: 120"), FABRIC,
     "link_classes.host.cable_m", "120 m is beyond 100G aoc reach (100 m)"),
    # per-port override patterns that match no port of their devices (tasks/intent/ports.py)
    (override("  - devices: [leaf1, leaf2]\n    ports: [swp1, swp99]\n    trust: pcp\n"),
     QOS, "overrides[0].ports[1]",
     "'swp99' matches no port on leaf1, leaf2 (leaf1 has swp1, swp2, swp51, swp52)"),
    # the lab's switches are FRR: SONiC's and EOS's names match nothing there
    (override("  - devices: [spine*]\n    ports: [Ethernet*]\n    ecn_enabled: false\n"),
     QOS, "overrides[0].ports[0]",
     "'Ethernet*' matches no port on spine1, spine2 (spine1 has swp1, swp2, swp3, swp4)"),
    # host ports exist on leaves only: a spine has downlinks 1-4 (one per leaf)
    (override("  - devices: [spine1]\n    ports: [swp5]\n    trust: pcp\n"),
     QOS, "overrides[0].ports[0]", "'swp5' matches no port on spine1"),
    (override("  - devices: ['*']\n    ports: ['swp6?']\n    trust: pcp\n"),
     QOS, "overrides[0].ports[0]", "'swp6?' matches no port on spine1, spine2, leaf1, leaf2, "
     "leaf3, leaf4 and 8 more"),
    # a host's one port is its NIC
    (override("  - devices: [leaf1-h1]\n    ports: [eth9]\n    nic: {trust: pcp}\n"),
     QOS, "overrides[0].ports[0]", "'eth9' matches no port on leaf1-h1 (leaf1-h1 has eth1)"),
    # the second override is judged on its own devices, not the first one's
    (override("  - devices: [leaf1]\n    ports: [swp1]\n    trust: pcp\n"
              "  - devices: [spine1]\n    ports: [swp1, swp51]\n    trust: pcp\n"),
     QOS, "overrides[1].ports[1]", "'swp51' matches no port on spine1"),
])
def test_refused_at_load(tmp_path: Path, edit: Edit, file: str, path: str,
                         phrase: str) -> None:
    assert_refused(bad_copy(tmp_path / "lab", edit), file, path, phrase)


def test_a_mgmt_subnet_over_the_fabric_is_refused(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "intents" / "lab", tmp_path / "intents" / "lab")
    run = flatfab("--root", str(tmp_path), "lab", "generate", "--mgmt-subnet", "10.0.0.0/16")
    assert run.code == 2 and not (tmp_path / "labs").exists()
    assert run.stderr.strip() == ("error: --mgmt-subnet: 10.0.0.0/16 overlaps 10.0.0.1/32 of "
                                  "spine1 lo; choose a management subnet outside the "
                                  "fabric's pools")


@pytest.mark.parametrize("edits", [
    # every reach is inclusive: a cable exactly as long as its media reaches loads
    (fabric_class("speed: 100G, media: dac, cable_m: 5"),),
    (fabric_class("speed: 400G, media: dac, cable_m: 3"),),
    (fabric_class("speed: 800G, media: DAC, cable_m: 2"),),  # media in any case
    (fabric_class("speed: 40G, media: sr, cable_m: 150"),),
    (fabric_class("speed: 800G, media: dr, cable_m: 500"),),
    (fabric_class("speed: 50G, media: fr, cable_m: 2000"),),
    (fabric_class("speed: 10G, media: er, cable_m: 40000"),),
    (fabric_class("speed: 400G, media: aoc, cable_m: 100"),),
    (fabric_class("speed: 800G, cable_m: 40000"),),  # no media: the longest optic bounds it
    (fabric_class("speed: 100G, cable_m: 0.5"),),
    # port patterns: exact names, wildcards, classes, one matching pattern among devices
    (override("  - devices: [leaf1]\n    ports: [swp1, swp52]\n    trust: pcp\n"),),
    (override("  - devices: [leaf*]\n    ports: ['swp5?', 'swp[12]']\n    trust: pcp\n"),),
    (override("  - devices: [spine1, leaf1]\n    ports: [swp51]\n    trust: pcp\n"),),
    (override("  - devices: ['*-h1']\n    ports: [eth1]\n    nic: {trust: pcp}\n"),),
    (override("  - devices: [spine2]\n    trust: pcp\n"),),  # ports unset: all of them
], ids=["dac-100g-5m", "dac-400g-3m", "dac-800g-2m", "sr-40g-150m", "dr-800g-500m",
        "fr-50g-2km", "er-10g-40km", "aoc-400g-100m", "no-media-800g-40km", "no-media-short",
        "exact-ports", "wildcard-ports", "port-on-one-of-two", "host-nic", "ports-unset"])
def test_boundaries_still_load(tmp_path: Path, edits: tuple[Edit, ...]) -> None:
    folder = bad_copy(tmp_path / "lab", *edits)
    assert isinstance(load_intent(folder, known_platforms=PLATFORMS), Intent)


def test_every_speed_has_an_optic_and_every_media_a_speed() -> None:
    for speed in ("10G", "25G", "40G", "50G", "100G", "200G", "400G", "800G"):
        assert longest(speed) is not None, speed
    assert set(REACH_M) == set(Media) and all(REACH_M.values())


def test_override_ports_on_a_mixed_fabric_use_each_devices_own_names(tmp_path: Path) -> None:
    # EOS spines count Ethernet1.., SONiC leaves Ethernet0.. by 8, FRR leaves swp1..
    folder = tmp_path / "mixed"
    shutil.copytree(ROOT / "intents" / "mixed", folder)
    qos = folder / QOS
    base = qos.read_text(encoding="utf-8") if qos.exists() else ""
    assert "overrides:" not in base
    qos.write_text(base + "overrides:\n  - devices: ['spine*']\n    ports: [Ethernet1]\n"
                   "    trust: pcp\n", encoding="utf-8")
    assert isinstance(load_intent(folder, known_platforms=PLATFORMS), Intent)
    qos.write_text(base + "overrides:\n  - devices: ['spine*']\n    ports: [swp1]\n"
                   "    trust: pcp\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_intent(folder, known_platforms=PLATFORMS)
    [problem] = caught.value.problems
    assert (problem.path, problem.reason) == (
        "overrides[0].ports[0]", "'swp1' matches no port on spine1, spine2 (spine1 has "
        "Ethernet1, Ethernet2, Ethernet3, Ethernet4)"), problem
    assert problem.line is not None


@pytest.mark.parametrize("fabric", ["lab", "lab4x16", "mixed", "numbered"])
def test_port_names_known_at_load_are_the_planned_ones(fabric: str) -> None:
    # the refusal judges patterns by tasks/intent/ports.py; the plan names ports itself
    intent = load_intent(ROOT / "intents" / fabric, known_platforms=PLATFORMS)
    state = plan(intent)
    planned = {(device.name, name) for device in state.devices.values()
               for name, iface in device.interfaces.items()
               if iface.kind in (IfKind.FABRIC, IfKind.HOST_PORT, IfKind.NIC)
               and iface.parent is None}
    known = {(device, port) for device, ports in device_ports(intent, PLATFORMS).items()
             for port in ports}
    assert known == planned


def test_every_static_command_refuses_a_port_pattern_that_matches_nothing(
        tmp_path: Path) -> None:
    folder = bad_copy(tmp_path / "intents" / "lab",
                      override("  - devices: [leaf1, leaf2]\n    ports: [swp99]  # typo\n"
                               "    trust: pcp\n"))
    line = next(n for n, text in enumerate((folder / QOS).read_text().splitlines(), 1)
                if "# typo" in text)
    expected = (f"error: {folder / QOS}:{line}: overrides[0].ports[0]: 'swp99' matches no "
                "port on leaf1, leaf2 (leaf1 has swp1, swp2, swp51, swp52)")
    for command in (["plan"], ["check"], ["render", "--out", str(tmp_path / "out")],
                    ["rollout", "--dry-run"]):
        run = flatfab("--root", str(tmp_path), "--fabric", "lab", *command)
        assert run.code == 2, (command, run.stderr)
        assert run.stderr.strip() == expected, (command, run.stderr)
    assert not (tmp_path / "out").exists()


# --- issue 19, the rest of the way: inputs that loaded silently -----------------------------

HOSTS = "hosts.yaml"


@pytest.mark.parametrize(("edit", "file", "path", "phrase"), [
    # a YAML float is no AS number: 65000.0, or asdot written without quotes (1.10 -> 1.1)
    (replace(FABRIC, "spine_asn: 65000", "spine_asn: 65000.0"), FABRIC, "underlay.spine_asn",
     "65000.0 is a YAML number with a decimal point, not an AS number"),
    (replace(FABRIC, "spine_asn: 65000", "spine_asn: 1.10"), FABRIC, "underlay.spine_asn",
     "write asplain (65001), or asdot in quotes ('1.10')"),
    (replace(FABRIC, "last: 65199}", "last: 65199.0}"), FABRIC, "underlay.leaf_asns.last",
     "not an AS number"),
    (replace(FABRIC, "spine_asn: 65000", "spine_asn: '70000.1'"), FABRIC, "underlay.spine_asn",
     "each half of an asdot AS number is at most 65535"),
    # asdot text is read as asdot, then judged like any AS number
    (replace(FABRIC, "spine_asn: 65000", "spine_asn: '0.23456'"), FABRIC, "underlay.spine_asn",
     "AS_TRANS (RFC 6793)"),
    # a GPU host's fabric NIC
    (replace(HOSTS, "nic: eth1", "nic: lo"), HOSTS, "defaults.nic",
     "'lo' is the loopback interface (as frr names it), not a NIC"),
    (append(HOSTS, "leaves:\n  leaf2:\n    hosts: [{}, {nic: eth0}]\n"), HOSTS,
     "leaves.leaf2.hosts[1].nic", "'eth0' is the hosts' management interface"),
    # qos: the fabric-wide map cannot move RoCE or CNP (it would be ignored)
    (append(QOS, "dscp_to_tc: {26: 0}\n"), QOS, "dscp_to_tc[26]",
     "would move RoCE DSCP 26 to class 0, but its class is roce.priority (3)"),
    (append(QOS, "dscp_to_tc: {48: 1}\n"), QOS, "dscp_to_tc[48]",
     "would move CNP DSCP 48 to class 1"),
    # qos.asics: only switch platforms; a known family
    (replace(QOS, "  frr: {family: spectrum-4}", "  ffr: {family: spectrum-4}"), QOS,
     "asics.ffr", f"unknown platform 'ffr' ({', '.join(sorted(PLATFORMS))})"),
    (replace(QOS, "  frr: {family: spectrum-4}", "  linux_host: {family: generic}"), QOS,
     "asics.linux_host", "platform 'linux_host' is for hosts"),
    (replace(QOS, "  frr: {family: spectrum-4}", "  frr: {family: spectrum-9}"), QOS,
     "asics.frr.family", "unknown ASIC family 'spectrum-9'"),
], ids=["asn-float", "asn-unquoted-asdot", "asn-range-float", "asdot-half-too-big",
        "asdot-reserved", "nic-lo", "nic-mgmt", "map-moves-roce", "map-moves-cnp",
        "asic-misspelt-platform", "asic-host-platform", "asic-unknown-family"])
def test_refused_at_load_too(tmp_path: Path, edit: Edit, file: str, path: str,
                             phrase: str) -> None:
    assert_refused(bad_copy(tmp_path / "lab", edit), file, path, phrase)


def test_quoted_asdot_loads_as_its_number(tmp_path: Path) -> None:
    folder = bad_copy(tmp_path / "lab", replace(FABRIC, "spine_asn: 65000",
                                                "spine_asn: '0.65000'"))
    assert load_intent(folder, known_platforms=PLATFORMS).fabric.underlay.spine_asn == 65000


def test_the_fabric_asked_for_is_the_fabric_in_the_folder(tmp_path: Path) -> None:
    folder = bad_copy(tmp_path / "other")
    with pytest.raises(InputError) as caught:
        load_intent(folder, known_platforms=PLATFORMS, fabric="other")
    [problem] = caught.value.problems
    assert (problem.path, problem.line) == ("name", 2), problem
    assert problem.reason.startswith("'lab' is not 'other', the fabric asked for (--fabric")
    assert isinstance(load_intent(folder, known_platforms=PLATFORMS, fabric="lab"), Intent)


@pytest.mark.parametrize(("edits", "file", "path", "phrase"), [
    ((replace(TENANTS, 'members: ["*-h2"]', "members: []"),
      append(HOSTS, "host_pool: 10.50.0.0/16\n")), TENANTS, "tenants[1]",
     "tenant 'red' has no members: its VRF (table 200) is configured on every leaf"),
    ((replace(QOS, "priorities: [3]", "priorities: [3, 5]"),), QOS, "pfc.priorities[1]",
     "PFC priority 5 carries no class (RoCE is on 3, CNP on 6, other DSCPs on 0)"),
    ((override("  - devices: [leaf1]\n    dscp_to_tc: {26: 0}\n"),), QOS,
     "overrides[0].dscp_to_tc[26]",
     "moves RoCE DSCP 26 to class 0 on leaf1, out of its lossless class 3 (roce.priority)"),
    ((replace(QOS, "hosts:\n  trust: dscp",
              "hosts:\n  dscp_to_priority: {48: 0}\n  trust: dscp"),),
     QOS, "hosts.dscp_to_priority[48]", "moves CNP DSCP 48 to class 0 on every host NIC"),
    ((replace(QOS, "  frr: {family: spectrum-4}",
              "  frr: {family: spectrum-4}\n  sonic: {family: spectrum-2}"),), QOS,
     "asics.sonic", "no switch of this fabric runs sonic: this ASIC is never used"),
], ids=["tenant-without-members", "pfc-priority-unused", "override-moves-roce",
        "nic-map-moves-cnp", "asic-unused"])
def test_warned_at_load(tmp_path: Path, edits: tuple[Edit, ...], file: str, path: str,
                        phrase: str) -> None:
    heard: list[InputProblem] = []
    folder = bad_copy(tmp_path / "lab", *edits)
    assert isinstance(load_intent(folder, known_platforms=PLATFORMS, warn=heard.append), Intent)
    assert len(heard) == 1, heard
    [warning] = heard
    assert warning.file.endswith(file) and warning.path == path, warning
    assert phrase in warning.reason and warning.line is not None, warning


@pytest.mark.parametrize("fabric", ["lab", "lab4x16", "mixed", "numbered"])
def test_the_examples_load_without_a_warning(fabric: str) -> None:
    heard: list[InputProblem] = []
    load_intent(ROOT / "intents" / fabric, known_platforms=PLATFORMS, fabric=fabric,
                warn=heard.append)
    assert heard == []


def test_the_cli_prints_a_warning_as_one_line_and_goes_on(tmp_path: Path) -> None:
    folder = bad_copy(tmp_path / "intents" / "lab",
                      replace(QOS, "priorities: [3]", "priorities: [3, 4]  # spare"))
    line = next(n for n, text in enumerate((folder / QOS).read_text().splitlines(), 1)
                if "# spare" in text)
    run = flatfab("--root", str(tmp_path), "plan")
    assert run.code == 0, run.stderr
    assert run.stderr.strip() == (
        f"warning: {folder / QOS}:{line}: pfc.priorities[1]: PFC priority 4 carries no class "
        "(RoCE is on 3, CNP on 6, other DSCPs on 0): its headroom and watchdog are reserved "
        "for nothing")


@pytest.mark.parametrize(("subnet", "expected"), [
    ("10.100.200.0/24", "10.100.200.0/24 lies inside 10.100.0.0/16, the fabric's "
     "tenants[0].prefixes[0] (intents/lab/tenants.yaml)"),
    ("10.0.0.128/26", "10.0.0.128/26 lies inside 10.0.0.0/24, the fabric's "
     "underlay.loopback_pool (intents/lab/fabric.yaml)"),
    ("10.200.128.0/17", "10.200.128.0/17 lies inside 10.200.0.0/16, the fabric's "
     "tenants[1].prefixes[0] (intents/lab/tenants.yaml)"),
])
def test_a_mgmt_subnet_inside_the_fabrics_pools_is_refused(tmp_path: Path, subnet: str,
                                                           expected: str) -> None:
    # no planned address lies in these subnets (yet): the pools they sit in are the fabric's
    shutil.copytree(ROOT / "intents" / "lab", tmp_path / "intents" / "lab")
    run = flatfab("--root", str(tmp_path), "lab", "generate", "--mgmt-subnet", subnet)
    assert run.code == 2 and not (tmp_path / "labs").exists()
    assert run.stderr.strip() == (f"error: --mgmt-subnet: {expected}; choose a management "
                                  "subnet outside the fabric's pools")
    assert flatfab("--root", str(tmp_path), "lab", "generate").code == 0
    up = flatfab("--root", str(tmp_path), "lab", "up", "--mgmt-subnet", subnet)
    assert up.code == 2 and up.stderr.strip().startswith(f"error: --mgmt-subnet: {expected}")
