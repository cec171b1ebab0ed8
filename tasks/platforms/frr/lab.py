"""The frr platform's lab node: an FRR container with its day-0 files and kernel objects."""

from __future__ import annotations

from flatfab.model.state import DeviceState
from flatfab.platforms.base import LabNodeSpec


def daemons_file() -> str:
    return "\n".join([
        "# FRR daemons for a flatfab lab switch",
        "zebra=yes",
        "bgpd=yes",
        "staticd=yes",
        "vtysh_enable=yes",
        'frr_profile="datacenter"',
        'zebra_options="  -A 127.0.0.1 -s 90000000"',
        'bgpd_options="   -A 127.0.0.1"',
        'staticd_options="-A 127.0.0.1"',
        'watchfrr_options=""',
        "",
    ])


def day0_frr_conf(hostname: str) -> str:
    """The configuration a switch boots with: only what the lab needs before any rollout."""
    return "\n".join([
        "frr defaults datacenter",
        f"hostname {hostname}",
        "log file /var/log/frr/frr.log informational",
        "service integrated-vtysh-config",
        "!",
        "end",
        "",
    ])


ROUTER_SYSCTLS = (
    "net.ipv4.ip_forward=1",
    "net.ipv6.conf.all.forwarding=1",
    "net.ipv4.fib_multipath_hash_policy=1",
)


def switch_exec(device: DeviceState) -> list[str]:
    """What a container switch runs after deploy: the kernel objects FRR expects."""
    cmds = [f"sysctl -w {s}" for s in ROUTER_SYSCTLS]
    for vrf, vrf_id in device.vrfs.items():
        cmds.append(f"ip link add {vrf} type vrf table {vrf_id}")
        cmds.append(f"ip link set {vrf} up")
    for sub in device.interfaces.values():
        if sub.parent is not None:
            vrf_id = device.vrfs[sub.vrf]
            cmds.append(f"ip link add link {sub.parent} name {sub.name} type vlan id {vrf_id}")
            cmds.append(f"ip link set {sub.name} master {sub.vrf}")
    return cmds


def lab_node(device: DeviceState, kind: str, image: str, etc: str) -> LabNodeSpec:
    """The node with its day-0 files in `etc` (FRR's /etc/frr, the data file's
    lab.runtime.config_dir)."""
    return LabNodeSpec(kind=kind, image=image, files={
        f"{etc}/daemons": daemons_file(),
        f"{etc}/frr.conf": day0_frr_conf(device.name),
        f"{etc}/vtysh.conf": "service integrated-vtysh-config\n",
    }, exec=tuple(switch_exec(device)))


def netns_daemons(text: str) -> str:
    """The daemons file as the embedded lab runs it: zebra with FRR's netns VRF backend
    (`-n`: it learns VRFs from /run/netns, where the lab binds the switch's VRF
    namespaces)."""
    return text.replace('zebra_options="', 'zebra_options=" -n')
