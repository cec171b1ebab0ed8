"""DeviceState -> frr switch config: the links section and frr.conf."""

from __future__ import annotations

from operator import attrgetter

from flatfab.model.state import DEFAULT_VRF, DeviceQos, DeviceState, IfKind, Interface
from flatfab.platforms import configdb
from flatfab.platforms.frr import ecmp
from flatfab.platforms.frr.kernel_qos import KERNEL_TABLE, kernel_rows
from flatfab.platforms.frr.links import LinkSpec, format_links, join_sections
from flatfab.platforms.memo import TextMemo
from flatfab.platforms.names import sort_interfaces
from flatfab.platforms.templating import environment

LINK_KINDS = (IfKind.FABRIC, IfKind.HOST_PORT, IfKind.BRIDGE)
# a few shapes of switch per fabric; the texts of a 1,000-port spine are a few MB
_LINKS = TextMemo(8)
_QOS = TextMemo(8)
_LINK_VALUES = attrgetter("name", "vrf", "kind", "bridge", "mtu", "up")
_QOS_OF = attrgetter("qos")
_VRF_PARENT = attrgetter("vrf", "parent")


def link_specs(device: DeviceState) -> dict[str, LinkSpec]:
    return {
        i.name: LinkSpec(name=i.name, vrf=i.vrf, bridge=i.kind is IfKind.BRIDGE, master=i.bridge,
                         mtu=i.mtu or 1500, up=bool(i.up))
        for i in device.interfaces.values() if i.kind in LINK_KINDS
    }


def render_links(device: DeviceState) -> str:
    """format_links(link_specs(device)), once per distinct set of link values."""
    # every interface's raw values (a finer key than the section needs), gathered in C
    key = tuple(map(_LINK_VALUES, device.interfaces.values()))
    return _LINKS.get(key, lambda: format_links(link_specs(device)))


def _frr_order(interfaces: list[Interface]) -> list[Interface]:
    """FRR lists interfaces per VRF, VRFs by name ('default' among them), then by name."""
    vrfs = sorted({i.vrf for i in interfaces})
    ordered: list[Interface] = []
    for vrf in vrfs:
        by_name = {i.name: i for i in interfaces if i.vrf == vrf}
        ordered += [by_name[n] for n in sort_interfaces(list(by_name))]
    return ordered


def render_frr(device: DeviceState) -> str:
    interfaces = _frr_order([i for i in device.interfaces.values() if i.addresses])
    bgp = sorted(device.bgp.values(), key=lambda b: (b.vrf != DEFAULT_VRF, b.vrf))
    template = environment("flatfab.platforms.frr").get_template("frr.conf.j2")
    # the peers go in as models: dumping a spine's thousands of them to dicts is wasted work
    return template.render(device=device, vrfs=sorted(device.vrfs), interfaces=interfaces,
                           bgp_instances=[{**b.model_dump(exclude={"peers"}),
                                           "peers": list(b.peers.values())} for b in bgp])


def render_qos(device: DeviceState) -> str | None:
    """The virtual ASIC (CONFIG_DB tables) plus the kernel queue rows, as canonical JSON."""
    qos = device.qos
    if qos is None:
        return None
    # everything the section is made of: the device's buffers, each interface's name, VRF
    # and parent, and which of the switch's few distinct lossless states it has (numbered by
    # first use, each as JSON); gathered with C-level map()s, a spine has thousands of ports
    interfaces = device.interfaces.values()
    states = list(map(_QOS_OF, interfaces))
    ids = list(map(id, states))
    distinct = dict(zip(ids, states, strict=True))
    slot = {state_id: number for number, state_id in enumerate(distinct)}
    modes = ecmp.mode_rows(device.lb)
    key = (qos.model_dump_json(),
           tuple("null" if state is None else state.model_dump_json()
                 for state in distinct.values()),
           tuple(device.interfaces), tuple(map(_VRF_PARENT, interfaces)),
           tuple(map(slot.__getitem__, ids)), repr(modes))
    return _QOS.get(key, lambda: _qos_text(device, qos, modes))


def _qos_text(device: DeviceState, qos: DeviceQos,
              modes: dict[str, dict[str, str]] | None) -> str:
    db = configdb.to_config_db(device)
    db[KERNEL_TABLE] = kernel_rows(device, *configdb.queue_limits(qos))
    if modes is not None:  # beyond plain hashing: the virtual ASIC's, like PFC
        db[ecmp.MODE_TABLE] = modes
    return configdb.dump(db)


def render(device: DeviceState) -> str:
    return join_sections(render_links(device), render_frr(device), render_qos(device),
                         ecmp.render(device.lb) if device.lb is not None else None)
