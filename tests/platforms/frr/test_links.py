"""The `links` section of frr switch configs (flatfab.platforms.frr.links), without a device.

Running state comes from `ip -j -d link show` recorded on leaf1 of the embedded lab, default
netns plus the VRF namespaces blue and red (tests/fixtures/frr/leaf1: byte-for-byte copies
of the recordings in tests/fixtures/recorded, as the lab was down when these tests were
written). plan_ops is checked twice: against the exact commands for the common changes, and
by replaying its commands on a small model of the kernel (`KernelLinks`) that must end in
the desired state.
"""

from __future__ import annotations

import random
import shlex
from dataclasses import replace

import pytest

from flatfab.model.state import DEFAULT_VRF
from flatfab.platforms.frr.links import (
    LinksError,
    LinkSpec,
    format_links,
    from_ip_json,
    join_sections,
    parse_links,
    plan_ops,
    split_sections,
)
from tests.support.paths import FIXTURES

LEAF1 = FIXTURES / "frr" / "leaf1"
MGMT = {"eth0"}

# What leaf1 runs, as the links section prints it: default VRF first, then blue and red;
# inside a VRF in natural interface order (br100 < swp1 < swp51.100).
LEAF1_LINKS = """\
link swp51 mtu 9216 up
link swp52 mtu 9216 up
link br100 vrf blue type bridge mtu 9000 up
link swp1 vrf blue master br100 mtu 9000 up
link swp51.100 vrf blue mtu 9216 up
link swp52.100 vrf blue mtu 9216 up
link br200 vrf red type bridge mtu 9000 up
link swp2 vrf red master br200 mtu 9000 up
link swp51.200 vrf red mtu 9216 up
link swp52.200 vrf red mtu 9216 up
"""


def recorded_leaf1() -> dict[str, LinkSpec]:
    outputs = {vrf: (LEAF1 / f"ip_link_{vrf}.json").read_text(encoding="utf-8")
               for vrf in (DEFAULT_VRF, "blue", "red")}
    return from_ip_json(outputs, MGMT)


def configured(specs: dict[str, LinkSpec]) -> dict[str, LinkSpec]:
    """The specs that have a config line (factory-state ports have none)."""
    return {name: spec for name, spec in specs.items() if not spec.unconfigured}


def factory(*names: str) -> dict[str, LinkSpec]:
    """Ports as a switch ships them: default netns, down, MTU 1500."""
    return {name: LinkSpec(name=name) for name in names}


def without(text: str, *names: str) -> str:
    return "".join(line + "\n" for line in text.splitlines() if line.split()[1] not in names)


# ---- a model of what the kernel does with the commands plan_ops emits -------------------


class KernelError(AssertionError):
    """A command the real `ip` would reject in this state."""


class KernelLinks:
    """Links of a switch and its VRF namespaces, changed by `ip [-n ns] link ...` commands.

    The rules that matter for ordering are the kernel's: a master must be a bridge in the
    same namespace; moving a port to another namespace takes it down and out of its bridge;
    deleting a bridge releases its ports; a bridge cannot change namespace.
    """

    def __init__(self, links: dict[str, LinkSpec]) -> None:
        self.links = dict(links)

    def _get(self, name: str, netns: str) -> LinkSpec:
        spec = self.links.get(name)
        if spec is None or spec.vrf != netns:
            raise KernelError(f'Cannot find device "{name}" in netns {netns}')
        return spec

    def apply(self, command: str) -> None:
        words = shlex.split(command)
        if words[:2] == ["ip", "-n"]:
            netns, words = words[2], words[3:]
        elif words[:1] == ["ip"]:
            netns, words = DEFAULT_VRF, words[1:]
        else:
            raise KernelError(f"not an ip command: {command}")
        if words[0] != "link":
            raise KernelError(f"not an ip link command: {command}")
        verb, name, args = words[1], words[2], words[3:]
        if verb == "add":
            if args != ["type", "bridge"]:
                raise KernelError(f"unexpected link add: {command}")
            if name in self.links:
                raise KernelError(f"{name} exists already")
            self.links[name] = LinkSpec(name=name, vrf=netns, bridge=True)
        elif verb == "del":
            if not self._get(name, netns).bridge:
                raise KernelError(f"{name}: deleting a port would destroy it")
            del self.links[name]
            self.links.update({n: replace(s, master=None) for n, s in self.links.items()
                               if s.master == name})
        elif verb == "set":
            self.links[name] = self._set(self._get(name, netns), netns, args)
        else:
            raise KernelError(f"unexpected verb: {command}")

    def _set(self, spec: LinkSpec, netns: str, args: list[str]) -> LinkSpec:
        while args:
            word, args = args[0], args[1:]
            if word == "netns":
                if spec.bridge:
                    raise KernelError(f"{spec.name}: a bridge cannot change namespace")
                target = DEFAULT_VRF if args[0] == "$$" else args[0]
                spec, args = replace(spec, vrf=target, up=False, master=None), args[1:]
            elif word == "mtu":
                spec, args = replace(spec, mtu=int(args[0])), args[1:]
            elif word == "master":
                master = self._get(args[0], netns)  # the bridge must be in this namespace
                if not master.bridge:
                    raise KernelError(f"{master.name} is not a bridge")
                spec, args = replace(spec, master=master.name), args[1:]
            elif word == "nomaster":
                spec = replace(spec, master=None)
            elif word in {"up", "down"}:
                spec = replace(spec, up=word == "up")
            else:
                raise KernelError(f"unexpected argument {word!r}")
        return spec


@pytest.mark.parametrize("ops", [
    ["ip link set swp1 netns blue", "ip -n blue link set swp1 master br100",
     "ip -n blue link add br100 type bridge"],  # enslaved before its bridge exists
    ["ip -n blue link add br100 type bridge", "ip link set swp1 master br100"],  # other netns
    ["ip -n blue link add br100 type bridge", "ip -n blue link set br100 netns $$"],
    ["ip link set swp1 netns blue", "ip link set swp1 up"],  # no longer in this netns
    ["ip link del swp1"],
])
def test_kernel_model_rejects_what_ip_would_reject(ops: list[str]) -> None:
    # the model has to be strict, or reaching the desired state would prove little
    with pytest.raises(KernelError):
        replay(factory("swp1"), ops)


def replay(current: dict[str, LinkSpec], ops: list[str]) -> dict[str, LinkSpec]:
    kernel = KernelLinks(current)
    for op in ops:
        kernel.apply(op)
    return kernel.links


def assert_reaches(current: dict[str, LinkSpec], desired: dict[str, LinkSpec]) -> list[str]:
    ops = plan_ops(current, desired)
    reached = replay(current, ops)
    assert configured(reached) == configured(desired), f"{current=}\n{desired=}\n{ops=}"
    return ops


# ---- format / parse -----------------------------------------------------------------------


def test_format_prints_recorded_leaf1_in_canonical_order() -> None:
    assert format_links(recorded_leaf1()) == LEAF1_LINKS


def test_parse_then_format_is_the_identity_on_canonical_text() -> None:
    specs = parse_links(LEAF1_LINKS)
    assert format_links(specs) == LEAF1_LINKS
    assert specs == recorded_leaf1()


def test_parse_reads_every_field() -> None:
    specs = parse_links("link br100 vrf blue type bridge mtu 9000 up\n"
                        "link swp1 vrf blue master br100 mtu 9000 down\n")
    assert specs["br100"] == LinkSpec(name="br100", vrf="blue", bridge=True, mtu=9000, up=True)
    assert specs["swp1"] == LinkSpec(name="swp1", vrf="blue", master="br100", mtu=9000)


def test_parse_skips_blank_and_comment_lines() -> None:
    text = "! links of leaf1\n\n# spine uplink\n  link swp51 mtu 9216 up  \n"
    assert parse_links(text) == {"swp51": LinkSpec(name="swp51", mtu=9216, up=True)}


def test_order_is_default_vrf_first_then_vrfs_by_name_and_natural_interface_order() -> None:
    specs = {spec.name: spec for spec in [
        LinkSpec(name="swp1", vrf="red", mtu=9000, up=True),
        LinkSpec(name="swp10", mtu=9000, up=True),
        LinkSpec(name="swp3", vrf="blue", mtu=9000, up=True),
        LinkSpec(name="swp2", mtu=9000, up=True),
    ]}
    # "blue" sorts before "default" by name: the default VRF is still first
    assert format_links(specs) == ("link swp2 mtu 9000 up\n"
                                   "link swp10 mtu 9000 up\n"
                                   "link swp3 vrf blue mtu 9000 up\n"
                                   "link swp1 vrf red mtu 9000 up\n")


def test_unconfigured_ports_have_no_line() -> None:
    specs = {"swp1": LinkSpec(name="swp1"), "swp2": LinkSpec(name="swp2", mtu=1500, up=False)}
    assert format_links(specs) == ""


@pytest.mark.parametrize(("spec", "line"), [
    (LinkSpec(name="swp3", up=True), "link swp3 mtu 1500 up"),
    (LinkSpec(name="swp3", mtu=9000), "link swp3 mtu 9000 down"),
    (LinkSpec(name="swp3", vrf="blue"), "link swp3 vrf blue mtu 1500 down"),
    (LinkSpec(name="br1", bridge=True), "link br1 type bridge mtu 1500 down"),
])
def test_any_difference_from_the_factory_state_gets_a_line(spec: LinkSpec, line: str) -> None:
    assert not spec.unconfigured
    assert format_links({spec.name: spec}) == line + "\n"


@pytest.mark.parametrize(("text", "message"), [
    ("link swp1 mtu 9000\n", r"links line 1: cannot parse 'link swp1 mtu 9000'"),
    ("link br1 type bridge mtu 9000 up\n! ok\nlink swp1 master br1 vrf blue mtu 9000 up\n",
     r"links line 3: cannot parse"),  # fields out of order
    ("interface swp1\n", r"links line 1: cannot parse 'interface swp1'"),
    ("link swp1 mtu 9000 up\n\nlink swp1 mtu 1500 down\n", r"links line 3: swp1 is given twice"),
])
def test_syntax_errors_name_the_line(text: str, message: str) -> None:
    with pytest.raises(LinksError, match=message):
        parse_links(text)


def test_master_that_is_not_a_bridge_is_an_error_naming_the_port() -> None:
    text = "link swp2 mtu 9000 up\nlink swp1 master swp2 mtu 9000 up\n"
    with pytest.raises(LinksError, match=r"^swp1: master swp2 is not a bridge in the config$"):
        parse_links(text)


def test_master_missing_from_the_config_is_an_error() -> None:
    with pytest.raises(LinksError, match=r"^swp1: master br9 is not a bridge in the config$"):
        parse_links("link swp1 master br9 mtu 9000 up\n")


def test_bridge_in_another_vrf_is_an_error_naming_the_port() -> None:
    text = ("link br100 vrf blue type bridge mtu 9000 up\n"
            "link swp1 vrf red master br100 mtu 9000 up\n")
    with pytest.raises(LinksError, match=r"^swp1: bridge br100 is in another VRF$"):
        parse_links(text)


# ---- sections -----------------------------------------------------------------------------

FRR_TEXT = "frr defaults datacenter\nhostname leaf1\n!\nend\n"


def test_split_sections_with_links_marker() -> None:
    text = f"!! links\nlink swp51 mtu 9216 up\n!! frr\n{FRR_TEXT}"
    assert split_sections(text) == ("link swp51 mtu 9216 up\n", FRR_TEXT)


def test_split_sections_without_links_marker_leaves_links_unmanaged() -> None:
    assert split_sections(FRR_TEXT) == (None, FRR_TEXT)
    assert split_sections(f"!! frr\n{FRR_TEXT}") == (None, FRR_TEXT)


def test_empty_links_section_is_managed_and_empty() -> None:
    # distinct from no section at all: every port is to return to the factory state
    links, frr = split_sections(f"!! links\n!! frr\n{FRR_TEXT}")
    assert links is not None
    assert parse_links(links) == {}
    assert frr == FRR_TEXT


def test_join_then_split_round_trip() -> None:
    assert split_sections(join_sections(LEAF1_LINKS, FRR_TEXT)) == (LEAF1_LINKS, FRR_TEXT)


# ---- from_ip_json -------------------------------------------------------------------------


def test_from_ip_json_reads_recorded_namespaces_without_eth0_and_lo() -> None:
    specs = recorded_leaf1()
    assert set(specs) == {"swp51", "swp52", "swp51.100", "swp52.100", "br100", "swp1",
                          "swp51.200", "swp52.200", "br200", "swp2"}
    assert specs["swp51"] == LinkSpec(name="swp51", mtu=9216, up=True)
    assert specs["br100"] == LinkSpec(name="br100", vrf="blue", bridge=True, mtu=9000, up=True)
    assert specs["swp1"] == LinkSpec(name="swp1", vrf="blue", master="br100", mtu=9000,
                                     up=True)
    assert specs["swp2"] == LinkSpec(name="swp2", vrf="red", master="br200", mtu=9000, up=True)


def test_from_ip_json_reads_admin_state_from_flags() -> None:
    out = '[{"ifname":"swp3","flags":["BROADCAST","MULTICAST"],"mtu":1500,"operstate":"DOWN"}]'
    assert from_ip_json({DEFAULT_VRF: out}, MGMT) == {"swp3": LinkSpec(name="swp3")}


def test_from_ip_json_empty_output_is_no_links() -> None:
    assert from_ip_json({DEFAULT_VRF: "", "blue": "[]"}, MGMT) == {}


def test_from_ip_json_rejects_output_that_is_not_json() -> None:
    with pytest.raises(LinksError, match="VRF blue is not JSON"):
        from_ip_json({DEFAULT_VRF: "[]", "blue": 'Cannot open network namespace "blue"'}, MGMT)


# ---- plan_ops: exact commands for the common changes ---------------------------------------


def test_first_configuration_sets_mtu_and_brings_ports_up() -> None:
    current = factory("swp1", "swp51", "swp52")
    desired = parse_links("link swp51 mtu 9216 up\nlink swp52 mtu 9216 up\n")
    ops = assert_reaches(current, desired)
    assert ops == ["ip link set swp51 mtu 9216 up", "ip link set swp52 mtu 9216 up"]


def test_creating_a_bridge_and_moving_a_port_into_vrf_blue() -> None:
    current = factory("swp1", "swp51")
    desired = parse_links("link swp51 mtu 9216 up\n"
                          "link br100 vrf blue type bridge mtu 9000 up\n"
                          "link swp1 vrf blue master br100 mtu 9000 up\n")
    ops = assert_reaches(current, desired)
    assert ops == [
        "ip -n blue link add br100 type bridge",
        "ip link set swp1 netns blue",
        "ip link set swp51 mtu 9216 up",
        "ip -n blue link set br100 mtu 9000 up",
        "ip -n blue link set swp1 mtu 9000 master br100 up",
    ]


def test_moving_a_port_back_to_the_default_vrf() -> None:
    current = recorded_leaf1()
    desired = parse_links(without(LEAF1_LINKS, "br100", "swp1") + "link swp1 mtu 9000 up\n")
    ops = assert_reaches(current, desired)
    assert ops == [
        "ip -n blue link del br100",
        "ip -n blue link set swp1 nomaster",
        "ip -n blue link set swp1 netns $$",  # $$: the shell's, i.e. the switch's, netns
        "ip link set swp1 up",  # a move takes the port down; MTU stays
    ]


def test_removing_a_bridge_releases_its_port() -> None:
    current = recorded_leaf1()
    desired = parse_links(without(LEAF1_LINKS, "br200", "swp2")
                          + "link swp2 vrf red mtu 9000 up\n")
    ops = assert_reaches(current, desired)
    assert ops == ["ip -n red link del br200", "ip -n red link set swp2 nomaster"]


def test_releasing_a_port_but_keeping_its_bridge() -> None:
    current = recorded_leaf1()
    desired = parse_links(without(LEAF1_LINKS, "swp2") + "link swp2 vrf red mtu 9000 up\n")
    assert assert_reaches(current, desired) == ["ip -n red link set swp2 nomaster"]


def test_port_dropped_from_the_config_returns_to_the_factory_state() -> None:
    current = recorded_leaf1()
    ops = assert_reaches(current, parse_links(without(LEAF1_LINKS, "swp52")))
    assert ops == ["ip link set swp52 down mtu 1500"]


def test_vrf_port_dropped_from_the_config_returns_to_the_default_netns() -> None:
    current = recorded_leaf1()
    ops = assert_reaches(current, parse_links(without(LEAF1_LINKS, "swp2")))
    assert ops == [
        "ip -n red link set swp2 nomaster",
        "ip -n red link set swp2 down mtu 1500",
        "ip -n red link set swp2 netns $$",
    ]


def test_empty_links_section_resets_every_port() -> None:
    current = recorded_leaf1()
    ops = assert_reaches(current, {})
    assert "ip -n blue link del br100" in ops
    assert "ip -n red link del br200" in ops


def test_running_state_as_desired_needs_no_commands() -> None:
    current = recorded_leaf1()
    assert plan_ops(current, parse_links(format_links(current))) == []


def test_interface_missing_on_the_device_is_an_error() -> None:
    current = factory("swp1", "swp51")
    desired = parse_links("link swp51 mtu 9216 up\nlink swp9 mtu 9216 up\nlink swp7 mtu 9216 up\n")
    with pytest.raises(LinksError, match=r"^no such interface on the device: swp9, swp7$"):
        plan_ops(current, desired)


def test_bridge_is_created_not_required_to_exist() -> None:
    desired = parse_links("link br1 type bridge mtu 9000 up\n")
    assert assert_reaches(factory("swp1"), desired) == [
        "ip link add br1 type bridge", "ip link set br1 mtu 9000 up"]


def test_moving_a_port_between_two_vrfs_directly() -> None:
    current = recorded_leaf1()
    desired = parse_links(without(LEAF1_LINKS, "swp51.100")
                          + "link swp51.100 vrf red mtu 9216 up\n")
    assert assert_reaches(current, desired) == [
        "ip -n blue link set swp51.100 netns red", "ip -n red link set swp51.100 up"]


def test_moving_a_bridge_with_its_port_to_another_vrf() -> None:
    current = recorded_leaf1()
    desired = parse_links(without(LEAF1_LINKS, "br100", "swp1")
                          + "link br100 vrf red type bridge mtu 9000 up\n"
                          + "link swp1 vrf red master br100 mtu 9000 up\n")
    assert_reaches(current, desired)


# Regression: plan_ops only checks that non-bridge interfaces exist; a name whose type changes
# between bridge and port is not checked. Bridge -> port crashes with KeyError (the bridge is
# deleted and nothing recreates it); port -> bridge silently leaves a port (see report).


def test_plan_ops_rejects_turning_a_bridge_into_a_plain_port() -> None:
    current = recorded_leaf1()
    # the operator dropped "type bridge" from br100's line: br100 cannot become a port
    desired = parse_links(without(LEAF1_LINKS, "br100", "swp1")
                          + "link br100 vrf blue mtu 9000 up\n"
                          + "link swp1 vrf blue mtu 9000 up\n")
    with pytest.raises(LinksError):
        plan_ops(current, desired)


def test_plan_ops_rejects_turning_a_port_into_a_bridge() -> None:
    current = factory("swp1", "swp51")
    desired = parse_links("link swp1 type bridge mtu 9000 up\n")
    with pytest.raises(LinksError):
        plan_ops(current, desired)


# ---- plan_ops on generated states ---------------------------------------------------------

PORTS = ("swp1", "swp2", "swp10", "swp51")
BRIDGES = ("br1", "br2")
VRFS = (DEFAULT_VRF, "blue", "red")
MTUS = (1500, 9000, 9216)


def random_links(rng: random.Random, *, all_ports: bool) -> dict[str, LinkSpec]:
    """A valid links state; with all_ports every port exists (a device), else a config."""
    specs: dict[str, LinkSpec] = {}
    for bridge in BRIDGES:
        if rng.choice([True, False]):
            specs[bridge] = LinkSpec(name=bridge, vrf=rng.choice(VRFS), bridge=True,
                                     mtu=rng.choice(MTUS), up=rng.choice([True, False]))
    for port in PORTS:
        if not all_ports and rng.random() < 0.3:
            continue
        vrf = rng.choice(VRFS)
        masters = [None, *(b for b, s in specs.items() if s.bridge and s.vrf == vrf)]
        specs[port] = LinkSpec(name=port, vrf=vrf, master=rng.choice(masters),
                               mtu=rng.choice(MTUS), up=rng.choice([True, False]))
    items = list(specs.items())
    rng.shuffle(items)  # plan_ops must not depend on the order of its inputs
    return dict(items)


@pytest.mark.parametrize("seed", range(10))
def test_plan_ops_reaches_random_desired_states(seed: int) -> None:
    rng = random.Random(seed)  # seeded: a failure is reproducible
    for _ in range(100):
        current = random_links(rng, all_ports=True)
        assert_reaches(current, random_links(rng, all_ports=False))


@pytest.mark.parametrize("seed", range(5))
def test_format_parse_round_trip_on_random_states(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(100):
        desired = random_links(rng, all_ports=False)
        text = format_links(desired)
        assert parse_links(text) == configured(desired)
        assert format_links(parse_links(text)) == text
