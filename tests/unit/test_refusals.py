"""What a network engineer would refuse is refused at load, with file, key path and line:
reserved ASNs and ranges that cross them, booleans where numbers belong, kernel-reserved
VRF tables, addresses in special space, tenant names that are interface names, tenant
subnets too small for their hosts, qos overrides that match nothing, and a lab management
subnet that overlaps the fabric."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tasks.errors import InputError
from tasks.intent.loader import load_intent
from tasks.platforms.registry import PLATFORMS
from tests.conftest import ROOT, flatfab
from tests.unit.test_intent_errors import FABRIC, TENANTS, Edit, append, bad_copy, replace

QOS = "qos.yaml"


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
])
def test_refused_at_load(tmp_path: Path, edit: Edit, file: str, path: str,
                         phrase: str) -> None:
    folder = bad_copy(tmp_path / "lab", edit)
    with pytest.raises(InputError) as caught:
        load_intent(folder, known_platforms=PLATFORMS)
    found = [p for p in caught.value.problems if p.file.endswith(file) and p.path == path]
    assert found, "\n".join(map(str, caught.value.problems))
    assert phrase in found[0].reason and found[0].line is not None, found[0]


def test_a_mgmt_subnet_over_the_fabric_is_refused(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "intents" / "lab", tmp_path / "intents" / "lab")
    run = flatfab("--root", str(tmp_path), "lab", "generate", "--mgmt-subnet", "10.0.0.0/16")
    assert run.code == 2 and not (tmp_path / "labs").exists()
    assert run.stderr.strip() == ("error: --mgmt-subnet: 10.0.0.0/16 overlaps 10.0.0.1/32 of "
                                  "spine1 lo; choose a management subnet outside the "
                                  "fabric's pools")
