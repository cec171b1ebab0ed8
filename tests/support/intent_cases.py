"""Broken intents, as data: the lab's value-level errors (VALUE_CASES, each one edit of
intents/lab/ and the problem it must give) and the rail's refusals (RAIL_REFUSALS, edits of
intents/rail/). tests/intent/ checks each problem exactly; the broken-input corpus
(tests/corpus/) runs every command on them.
"""

from __future__ import annotations

from dataclasses import dataclass

from tests.support.intent_edits import FABRIC, HOSTS, TENANTS, Edit, append, delete, replace, write

# the default full-mesh cabling written out for spine1, to edit `links:` cases from
LINKS = "links:\n" + "".join(f"  - {{leaf: leaf{i}, spine: spine1}}\n" for i in range(1, 5))
# numbered mode also needs a p2p_pool per tenant; these give each one a roomy pool
TENANT_POOLS = (
    replace(TENANTS, '    members: ["*-h1"]', '    p2p_pool: 172.17.0.0/22\n    members: ["*-h1"]'),
    replace(TENANTS, '    members: ["*-h2"]', '    p2p_pool: 172.18.0.0/22\n    members: ["*-h2"]'),
)


@dataclass(frozen=True)
class Case:
    id: str
    edits: tuple[Edit, ...]
    file: str  # name of the file the problem must name
    path: str  # the key path, exactly
    reason: str  # a phrase the reason must contain (picks the problem when there are several)
    marker: str | None  # text on the line the problem must point at; None: no line
    alone: bool = True  # False: the edit inherently causes other problems too


VALUE_CASES = [
    # --- unknown keys and wrong values, caught by the pydantic models
    Case("unknown-top-level-key", (replace(FABRIC, "roce_mtu:", "roce_mtuu:"),),
         FABRIC, "roce_mtuu", "unknown key 'roce_mtuu'", "roce_mtuu"),
    # a typo in a required key also reports the key as missing: two problems by nature
    Case("unknown-nested-key", (replace(FABRIC, "spine_asn:", "spine_asm:"),),
         FABRIC, "underlay.spine_asm", "unknown key 'spine_asm'", "spine_asm", alone=False),
    Case("wrong-type", (replace(FABRIC, "spine_asn: 65000", "spine_asn: abc"),),
         FABRIC, "underlay.spine_asn", "'abc' is not an integer", "spine_asn: abc"),
    Case("invalid-speed", (replace(FABRIC, "fabric: {speed: 100G", "fabric: {speed: 123G"),),
         FABRIC, "link_classes.fabric.speed", "unknown speed '123G'", "123G"),
    Case("invalid-roce-mtu", (replace(FABRIC, "roce_mtu: 4096", "roce_mtu: 3000"),),
         FABRIC, "roce_mtu", "RoCE MTU must be one of", "roce_mtu: 3000"),
    Case("hold-below-3x-keepalive",
         (replace(FABRIC, "  max_spines: 16\n",
                  "  max_spines: 16\n  timers: {keepalive: 5, hold: 10}\n"),),
         FABRIC, "underlay.timers", "hold (10) must be at least 3 x keepalive (5)", "timers:"),
    Case("numbered-without-p2p-pool",
         (replace(FABRIC, "mode: unnumbered", "mode: numbered"), *TENANT_POOLS),
         FABRIC, "underlay", "mode 'numbered' needs a p2p_pool", "underlay:"),
    Case("invalid-name", (replace(FABRIC, "- name: spine2", "- name: Spine2"),),
         FABRIC, "spines[1].name", "'Spine2' is not a safe name: it holds 'S'", "Spine2"),
    Case("prefix-with-host-bits", (replace(TENANTS, "10.100.0.0/16", "10.100.0.1/16"),),
         TENANTS, "tenants[0].prefixes", "host bits", "10.100.0.1/16"),
    Case("reserved-tenant-name", (replace(TENANTS, "name: red", "name: default"),),
         TENANTS, "tenants[1].name", "'default' is reserved", "name: default"),
    Case("count-and-hosts",
         (append(HOSTS, "leaves:\n  leaf1:  # both\n    count: 2\n    hosts: [{}]\n"),),
         HOSTS, "leaves.leaf1", "either 'count' or 'hosts'", "# both"),
    # --- switches: names, ids, ASNs
    Case("duplicate-device-name", (replace(FABRIC, "- name: spine2", "- {name: spine1, id: 2}"),),
         FABRIC, "spines[1].name", "duplicate device name 'spine1'", "{name: spine1, id: 2}"),
    Case("duplicate-switch-id", (replace(FABRIC, "- name: spine2", "- {name: spine2, id: 1}"),),
         FABRIC, "spines[1]", "already used by 'spine1'", "{name: spine2, id: 1}"),
    Case("name-without-number-or-id", (replace(FABRIC, "- name: spine2", "- name: spinex"),),
         FABRIC, "spines[1]", "'spinex' needs an 'id'", "spinex"),
    Case("spine-id-above-max-spines", (replace(FABRIC, "- name: spine2", "- name: spine17"),),
         FABRIC, "spines[1]", "exceeds underlay.max_spines (16)", "spine17"),
    Case("asn-range-too-small", (replace(FABRIC, "last: 65199", "last: 65103"),),
         FABRIC, "leaves[3]", "ASN range too small", "- name: leaf4"),
    Case("spine-asn-inside-leaf-range", (replace(FABRIC, "spine_asn: 65000", "spine_asn: 65150"),),
         FABRIC, "underlay.spine_asn", "lies inside leaf_asns 65101-65199", "spine_asn: 65150"),
    # --- pools
    Case("loopback-pool-exhausted", (replace(FABRIC, "10.0.0.0/24", "10.0.0.0/28"),),
         FABRIC, "leaves[0]", "loopback_pool 10.0.0.0/28 exhausted", "- name: leaf1"),
    Case("p2p-pool-exhausted",
         (replace(FABRIC, "mode: unnumbered", "mode: numbered\n  p2p_pool: 172.16.0.0/28"),
          *TENANT_POOLS),
         FABRIC, "underlay.p2p_pool", "p2p_pool 172.16.0.0/28 exhausted", "172.16.0.0/28"),
    Case("tenant-prefix-overlaps-loopback-pool",
         (replace(TENANTS, "10.100.0.0/16", "10.0.0.0/16"),),
         TENANTS, "tenants[0].prefixes[0]", "10.0.0.0/16 overlaps 10.0.0.0/24", "10.0.0.0/16"),
    # --- explicit cabling
    Case("link-to-unknown-spine", (append(FABRIC, LINKS + "  - {leaf: leaf1, spine: spine9}\n"),),
         FABRIC, "links[4].spine", "link to unknown spine 'spine9'", "spine9"),
    # the same pair written the other way round is still the same link
    Case("duplicate-link",
         (append(FABRIC, LINKS + "  - {spine: spine1, leaf: leaf1}  # again\n"),),
         FABRIC, "links[4]", "duplicate link leaf1 - spine1", "# again"),
    Case("unknown-link-class",
         (append(FABRIC, LINKS + "  - {leaf: leaf1, spine: spine2, class: fast}\n"),),
         FABRIC, "links[4].class", "unknown link class 'fast'", "class: fast"),
    Case("leaf-without-link", (append(FABRIC, LINKS.replace("  - {leaf: leaf4, spine: spine1}\n",
                                                            "")),),
         FABRIC, "leaves[3]", "leaf 'leaf4' has no link to any spine", "- name: leaf4"),
    # --- tenants
    Case("vrf-id-clash", (replace(TENANTS, "vrf_id: 200", "vrf_id: 100  # clash"),),
         TENANTS, "tenants[1].vrf_id", "VRF id 100 already used by tenant 'blue'", "# clash"),
    Case("host-in-two-tenants",
         (replace(TENANTS, 'members: ["*-h2"]', 'members: ["*-h2", "leaf1-h1"]'),),
         TENANTS, "tenants[1].members[1]", "'leaf1-h1' is already in tenant 'blue'", "leaf1-h1"),
    Case("member-pattern-matches-no-host",
         (replace(TENANTS, 'members: ["*-h2"]', 'members: ["*-h2", "gpu-*"]'),),
         TENANTS, "tenants[1].members[1]", "'gpu-*' matches no host", "gpu-*"),
    # --- hosts
    # every host inherits the default MTU, so every host is reported, all at defaults.mtu
    Case("mtu-too-small-for-roce", (replace(HOSTS, "mtu: 9000", "mtu: 1500"),),
         HOSTS, "defaults.mtu", "MTU 1500 (of leaf1-h1 and hosts sharing this setting) is too "
         "small for RoCE MTU 4096", "mtu: 1500"),
    Case("host-mtu-too-small-for-roce",
         (append(HOSTS, "leaves:\n  leaf1:\n    hosts:\n      - {mtu: 1500}\n      - {}\n"),),
         HOSTS, "leaves.leaf1.hosts[0].mtu", "needs at least 4192", "mtu: 1500"),
    Case("host-mtu-above-link-class",
         (append(HOSTS, "leaves:\n  leaf1:\n    hosts:\n      - {mtu: 9216}\n      - {}\n"),),
         HOSTS, "leaves.leaf1.hosts[0].mtu", "exceeds the MTU 9000 of its link class 'host'",
         "mtu: 9216"),
    Case("unknown-leaf-in-hosts", (append(HOSTS, "leaves:\n  leaf9: {count: 1}\n"),),
         HOSTS, "leaves.leaf9", "unknown leaf 'leaf9'", "leaf9"),
    # uplinks at swp51.. moved to swp2..: port 2 of every leaf collides, one problem per leaf
    Case("host-port-is-uplink-port",
         (replace(FABRIC, "link_classes:", "ports: {leaf_uplink_base: 1}\nlink_classes:"),),
         HOSTS, "defaults.count", "host port number 2 on leaf1 collides with a spine uplink",
         "count: 2", alone=False),
    Case("explicit-host-port-is-uplink-port",
         (append(HOSTS, "leaves:\n  leaf1:\n    hosts:\n      - {port: 1}\n"
                        "      - {name: leaf1-h2, port: 51}\n"),),
         HOSTS, "leaves.leaf1.hosts[1]", "host port number 51 on leaf1 collides", "port: 51"),
    # --- YAML syntax and files
    Case("bad-indentation", (replace(HOSTS, "  nic: eth1", " nic: eth1"),),
         HOSTS, "", "malformed YAML", "nic: eth1"),
    # the parser notices the missing '}' on the next line, where a ':' cannot be
    Case("unclosed-bracket", (replace(FABRIC, "last: 65199}", "last: 65199"),),
         FABRIC, "", "malformed YAML: while parsing a flow mapping", "loopback_pool:"),
    Case("duplicate-yaml-key",
         (replace(FABRIC, "  max_spines: 16\n", "  max_spines: 16\n  spine_asn: 65001\n"),),
         FABRIC, "", 'duplicate key "spine_asn"', "spine_asn: 65001"),
    Case("top-level-not-a-mapping", (write(TENANTS, "- name: blue\n"),),
         TENANTS, "", "top level must be a mapping", "- name: blue"),
    Case("missing-fabric-yaml", (delete(FABRIC),), FABRIC, "", "file not found", None),
    Case("unknown-intent-file", (write("tenant.yaml", "tenants: []\n"),),
         "tenant.yaml", "", "unknown intent file", None),
]


CABLES = "    cabling: [{leaf: su1-leaf1, port: 3}, {leaf: su1-leaf3, port: 3}]"


@dataclass(frozen=True)
class Refusal:
    id: str
    edits: tuple[tuple[str, str, str], ...]
    file: str
    path: str
    reason: str
    marker: str | None  # text on the line named (None: no line)


PLANES_1 = "rails: {1: [1, 2], 2: [3, 4]}"
RAIL_REFUSALS = [
    Refusal("rails-not-nics", ((FABRIC, "  rails: 4\n", "  rails: 3\n"),), FABRIC,
            "scalable_units.rails", "profile 'gpu' has 4 NICs", "rails: 3"),
    Refusal("su-beyond-host-ports", ((FABRIC, "  servers: 2\n", "  servers: 60\n"),), FABRIC,
            "scalable_units.servers", "larger than a leaf's host ports", "servers: 60"),
    Refusal("unknown-profile", ((FABRIC, "  profile: gpu\n", "  profile: cpu\n"),), FABRIC,
            "scalable_units.profile", "unknown server profile 'cpu'", "profile: cpu"),
    Refusal("pod-asns-overlap-leaves",
            ((FABRIC, "asns: {first: 65001, last: 65004}", "asns: {first: 65101, last: 65104}"),),
            FABRIC, "pods.asns", "overlaps leaf_asns", "asns: {first: 65101, last: 65104}"),
    Refusal("pod-asns-hold-tier1",
            ((FABRIC, "asns: {first: 65001, last: 65004}", "asns: {first: 64990, last: 65004}"),),
            FABRIC, "pods.asns", "holds spine_asn 65000", "asns: {first: 64990"),
    Refusal("pod-asns-too-few",
            ((FABRIC, "asns: {first: 65001, last: 65004}", "asns: {first: 65001, last: 65001}"),),
            FABRIC, "pods.asns", "2 pods need 2 ASNs", "asns: {first: 65001, last: 65001}"),
    Refusal("plane-without-rails", ((FABRIC, PLANES_1, "rails: {1: [1, 2, 3, 4]}"),), FABRIC,
            "planes.rails", "plane 2 carries no rail", "rails: {1: [1, 2, 3, 4]}"),
    Refusal("rail-in-two-planes", ((FABRIC, PLANES_1, "rails: {1: [1, 2], 2: [1, 3, 4]}"),), FABRIC,
            "planes.rails[2][0]", "rail 1 is already in plane 1", "2: [1, 3, 4]}"),
    Refusal("tier1-name-without-plane",
            ((FABRIC, 'name: "p{plane}-ss{spine}"', 'name: "ss{spine}"'),), FABRIC,
            "superspines.name", "must use {plane}", 'name: "ss{spine}"'),
    Refusal("max-spines-below-reservation",
            ((FABRIC, "  max_spines: 20 ", "  max_spines: 8 "),), FABRIC,
            "underlay.max_spines", "below the 20 spine ids", "max_spines: 8"),
    Refusal("numbered-five-stage",
            ((FABRIC, "  mode: unnumbered\n", "  mode: numbered\n  p2p_pool: 172.16.0.0/16\n"),),
            FABRIC, "underlay.mode", "BGP unnumbered only", "mode: numbered"),
    Refusal("oversubscribed-tier",
            ((FABRIC, "host: {speed: 100G,", "host: {speed: 400G,"),), FABRIC,
            "scalable_units.servers", "1200 Gb/s down and 400 Gb/s up", "servers: 2"),
    Refusal("placed-server-beyond-sus",
            ((HOSTS, CABLES, "    su: 3\n    port: 3"),), HOSTS,
            "servers[0].su", "SU 3 does not exist", "su: 3"),
    Refusal("cabling-not-per-nic",
            ((HOSTS, ", {leaf: su1-leaf3, port: 3}]", "]"),), HOSTS,
            "servers[0].cabling", "1 cables for the 2 NICs", "cabling: [{leaf"),
    Refusal("cabling-to-unknown-leaf",
            ((HOSTS, "{leaf: su1-leaf3, port: 3}", "{leaf: su9-leaf2, port: 3}"),), HOSTS,
            "servers[0].cabling[1]", "cabled to unknown leaf 'su9-leaf2'", "cabling: [{leaf"),
    Refusal("server-named-like-a-switch",
            ((HOSTS, "name: store1", "name: su1-leaf1"),), HOSTS, "servers[0].cabling[0]",
            "duplicate device name 'su1-leaf1'", "cabling: [{leaf"),
    Refusal("server-port-taken",
            ((HOSTS, "{leaf: su1-leaf1, port: 3}", "{leaf: su1-leaf1, port: 2}"),), HOSTS,
            "servers[0].cabling[0]", "port 2 of su1-leaf1 is used twice", "cabling: [{leaf"),
    Refusal("rack-slot-beyond-leaves",
            ((FABRIC, "  attach: rail\n  rails: 4\n", "  attach: rack\n  leaves: 1\n"),
             (FABRIC, "planes:\n  count: 2\n  max: 2\n  " + PLANES_1 + "\n", ""),
             (HOSTS, CABLES, "    su: 1\n    port: 3"),
             (FABRIC, 'spine_name: "p{plane}-pod{pod}-spine{spine}"',
              'spine_name: "pod{pod}-spine{spine}"'),
             (FABRIC, 'name: "p{plane}-ss{spine}"', 'name: "ss{spine}"')), HOSTS,
            "servers[0].port", "beyond the 1 rack leaf", "port: 3"),
    Refusal("rack-with-planes",
            ((FABRIC, "  attach: rail\n  rails: 4\n", "  attach: rack\n  leaves: 1\n"),), FABRIC,
            "planes", "planes need attach: rail", "planes:"),
    Refusal("listed-leaves-with-sus",
            ((FABRIC, "scalable_units:\n", "leaves: [{name: leaf1}]\nscalable_units:\n"),),
            FABRIC, "", "'leaves' are generated from scalable_units", None),
    Refusal("pods-without-superspines",
            ((FABRIC, "superspines:\n  count: 2\n  max: 2\n  name: \"p{plane}-ss{spine}\"\n",
              ""),), FABRIC, "", "needs both 'pods' and 'superspines'", None),
    Refusal("leaf-name-without-su",
            ((FABRIC, "  rails: 4\n", "  rails: 4\n  leaf_name: \"leaf{leaf}\"\n"),),
            FABRIC, "scalable_units.leaf_name", "must use {su}", 'leaf_name: "leaf{leaf}"'),
    Refusal("rail-without-rails",
            ((FABRIC, "  rails: 4\n", ""),), FABRIC, "scalable_units",
            "attach 'rail' needs 'rails'", "scalable_units:"),
    Refusal("tenant-prefix-too-small-for-generated-leaves",
            (("tenants.yaml", "prefixes: [10.100.0.0/16]", "prefixes: [10.100.0.0/22]"),),
            "tenants.yaml", "tenants[0].prefixes", "leaf id 12 needs subnet #12",
            "prefixes: [10.100.0.0/22]"),
    Refusal("nic-names-twice",
            ((HOSTS, "names: [eth1, eth2]", "names: [eth1, eth1]"),), HOSTS,
            "profiles.storage.nics", "NIC names must be unique", "names: [eth1, eth1]"),
]
