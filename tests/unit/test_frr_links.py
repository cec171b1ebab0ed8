"""The frr `links` section: text format, reading `ip -j link`, and iproute2 transitions.

A tiny iproute2 simulator applies the generated commands to prove they are complete and in
a valid order (a port is only enslaved once its bridge exists in the same namespace).
"""

from __future__ import annotations

import shlex
from dataclasses import replace
from pathlib import Path

import pytest

from tasks.platforms.frr.links import (
    LinksError,
    LinkSpec,
    format_links,
    from_ip_json,
    join_sections,
    parse_links,
    plan_ops,
    split_sections,
)

RECORDED = Path(__file__).resolve().parent.parent / "fixtures" / "recorded" / "leaf1"

LAB_LEAF = """link swp51 mtu 9216 up
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


def simulate(state: dict[str, LinkSpec], ops: list[str]) -> dict[str, LinkSpec]:
    """Apply the generated ip commands the way the kernel would, failing on invalid ones."""
    links = dict(state)
    for op in ops:
        words = shlex.split(op)
        ns = "default"
        if words[1] == "-n":
            ns, words = words[2], [words[0], *words[3:]]
        assert words[:2] == ["ip", "link"], op
        verb, name, args = words[2], words[3], words[4:]
        if verb == "add":
            assert name not in links and args == ["type", "bridge"], op
            links[name] = LinkSpec(name=name, vrf=ns, bridge=True)
            continue
        assert name in links and links[name].vrf == ns, f"{op}: {name} not in {ns}"
        if verb == "del":
            del links[name]
            continue
        spec = links[name]
        while args:
            key = args.pop(0)
            if key == "mtu":
                spec = replace(spec, mtu=int(args.pop(0)))
            elif key == "master":
                bridge = args.pop(0)
                assert bridge in links and links[bridge].bridge and links[bridge].vrf == ns, op
                spec = replace(spec, master=bridge)
            elif key == "nomaster":
                spec = replace(spec, master=None)
            elif key in {"up", "down"}:
                spec = replace(spec, up=key == "up")
            elif key == "netns":
                target = args.pop(0)
                assert spec.master is None, f"{op}: move a port out of its bridge first"
                spec = replace(spec, vrf="default" if target == "$$" else target, up=False)
            else:
                raise AssertionError(f"unknown argument {key} in {op}")
        links[name] = spec
    return links


def wiring() -> dict[str, LinkSpec]:
    """leaf1 fresh from the lab: every port down at MTU 1500, subinterfaces in VRF netns."""
    names = {"swp1": "default", "swp2": "default", "swp51": "default", "swp52": "default",
             "swp51.100": "blue", "swp52.100": "blue", "swp51.200": "red", "swp52.200": "red"}
    return {n: LinkSpec(name=n, vrf=v) for n, v in names.items()}


def configured(state: dict[str, LinkSpec]) -> dict[str, LinkSpec]:
    return {n: s for n, s in state.items() if not s.unconfigured}


def test_format_parse_round_trip_in_canonical_order() -> None:
    specs = parse_links(LAB_LEAF)
    assert format_links(specs) == LAB_LEAF
    shuffled = dict(reversed(list(specs.items())))
    assert format_links(shuffled) == LAB_LEAF


def test_natural_interface_order_and_unconfigured_ports_have_no_line() -> None:
    specs = {n: LinkSpec(name=n, mtu=9216, up=True) for n in ("swp10", "swp2", "swp1")}
    specs["swp3"] = LinkSpec(name="swp3")
    assert format_links(specs).splitlines() == ["link swp1 mtu 9216 up", "link swp2 mtu 9216 up",
                                                "link swp10 mtu 9216 up"]


@pytest.mark.parametrize(("text", "reason"), [
    ("link swp1 mtu 9216 sideways\n", "line 1: cannot parse"),
    ("link swp1 mtu 9216 up\nlink swp1 mtu 9000 up\n", "line 2: swp1 is given twice"),
    ("link swp1 master swp2 mtu 9000 up\nlink swp2 mtu 9000 up\n", "not a bridge"),
    ("link br1 vrf blue type bridge mtu 9000 up\nlink swp1 master br1 mtu 9000 up\n",
     "another VRF"),
])
def test_bad_lines_name_the_problem(text: str, reason: str) -> None:
    with pytest.raises(LinksError, match=reason):
        parse_links(text)


def test_sections_split_and_join() -> None:
    text = join_sections(LAB_LEAF, "frr defaults datacenter\nend\n")
    links, frr = split_sections(text)
    assert links == LAB_LEAF and frr == "frr defaults datacenter\nend\n"
    # without the marker the config does not manage links at all
    assert split_sections("hostname x\nend\n") == (None, "hostname x\nend\n")


def test_running_state_from_recorded_ip_json() -> None:
    outputs = {vrf: (RECORDED / f"link_{vrf}.json").read_text() for vrf in
               ("default", "blue", "red")}
    running = from_ip_json(outputs, ignore={"eth0"})
    assert "eth0" not in running and "lo" not in running
    assert format_links(running) == LAB_LEAF


def test_first_configuration_reaches_the_plan() -> None:
    desired = parse_links(LAB_LEAF)
    ops = plan_ops(wiring(), desired)
    assert "ip link set swp1 netns blue" in ops
    assert "ip -n blue link add br100 type bridge" in ops
    assert configured(simulate(wiring(), ops)) == desired
    assert plan_ops(simulate(wiring(), ops), desired) == []  # idempotent


def test_the_way_back_to_the_factory_state() -> None:
    desired = parse_links(LAB_LEAF)
    done = simulate(wiring(), plan_ops(wiring(), desired))
    back = plan_ops(done, {})
    assert "ip -n blue link del br100" in back
    assert "ip -n blue link set swp1 netns $$" in back
    assert configured(simulate(done, back)) == {}


def test_moving_a_host_port_between_tenants() -> None:
    desired = parse_links(LAB_LEAF)
    done = simulate(wiring(), plan_ops(wiring(), desired))
    moved = parse_links(LAB_LEAF.replace("link swp1 vrf blue master br100",
                                         "link swp1 vrf red master br200"))
    ops = plan_ops(done, moved)
    assert ops.index("ip -n blue link set swp1 nomaster") < ops.index(
        "ip -n blue link set swp1 netns red")
    assert configured(simulate(done, ops)) == moved


def test_dropped_port_returns_to_unconfigured() -> None:
    desired = parse_links(LAB_LEAF)
    done = simulate(wiring(), plan_ops(wiring(), desired))
    fewer = {n: s for n, s in desired.items() if n != "swp52"}
    ops = plan_ops(done, fewer)
    assert "ip link set swp52 down mtu 1500" in ops
    assert simulate(done, ops)["swp52"].unconfigured


def test_an_interface_missing_on_the_device_is_refused() -> None:
    with pytest.raises(LinksError, match="no such interface on the device: swp9"):
        plan_ops(wiring(), {"swp9": LinkSpec(name="swp9", mtu=9216, up=True)})
