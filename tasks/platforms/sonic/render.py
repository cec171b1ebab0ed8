"""DeviceState -> SONiC config: the CONFIG_DB tables and the split-mode frr.conf.

The rendered text has two `!! ` sections: `config_db` (canonical CONFIG_DB JSON of every
table flatfab owns) and `frr` (frr.conf: BGP only; in split mode addresses and VRFs are
CONFIG_DB's, so frr.conf repeats no interface addresses). A switch with planned hashing gets
`SWITCH_HASH|GLOBAL` `ecmp_hash` (sonic/hashing.py); without, its hashing is left alone. A
trimming fabric's switch gets configdb's trimming rows (`SWITCH_TRIMMING|GLOBAL`, its
`TC_TO_DSCP_MAP`s bound by `PORT_QOS_MAP` `tc_to_dscp_map`, `packet_discard_action` on the
RoCE queue's profile: sonic/trimming.py). A port of a link class with link-level retry gets
its `LLR_PORT` row (`llr_mode` static, `llr_local` and `llr_remote` enabled: sonic/llr.py).
"""

from __future__ import annotations

import re

from flatfab.model.state import DEFAULT_VRF, DeviceState, IfKind, Interface
from flatfab.platforms import configdb
from flatfab.platforms.base import InterfaceNames
from flatfab.platforms.configdb import ConfigDb
from flatfab.platforms.names import sort_interfaces
from flatfab.platforms.sonic import hashing, llr, trimming
from flatfab.platforms.templating import environment

CONFIG_DB = "config_db"
FRR = "frr"
PRIVATE = "FLATFAB_"
# tables whose rows flatfab owns completely: a row it does not render is removed on push
OWNED_TABLES = (
    "LOOPBACK_INTERFACE", "INTERFACE", "VRF", "VLAN_SUB_INTERFACE", "VLAN", "VLAN_MEMBER",
    "VLAN_INTERFACE", "BUFFER_POOL", "BUFFER_PROFILE", "BUFFER_PG", "BUFFER_QUEUE",
    "PORT_QOS_MAP", "QUEUE", "SCHEDULER", "WRED_PROFILE", "PFC_WD", "CABLE_LENGTH",
    *configdb.MAP_TABLES, configdb.DOT1P_TABLE, trimming.MAP_TABLE, llr.TABLE)
# tables of the hardware and the image: flatfab owns only the rows and fields it renders
# (SWITCH_HASH: its ecmp_hash; orchagent refuses a removed row or field, so none is removed)
# and SWITCH_TRIMMING's four fields, rendered or not (changes.FIXED_FIELDS: a removal the
# intent asks for is refused, never pushed, since orchagent would not make it)
MERGED_TABLES = ("PORT", "DEVICE_METADATA", hashing.TABLE, trimming.TABLE)
_VLAN_ID = re.compile(r"(\d+)$")


def _vlan_of(name: str) -> str:
    """The VLAN id in a gateway (Vlan100) or sub-interface (Ethernet8.100) name."""
    found = _VLAN_ID.search(name.rpartition(".")[2] if "." in name else name)
    if found is None:
        raise ValueError(f"{name!r} carries no VLAN id")
    return found.group(1)


def _admin(iface: Interface) -> str:
    return "down" if iface.up is False else "up"


def config_db(device: DeviceState, names: InterfaceNames) -> ConfigDb:
    """Every CONFIG_DB row flatfab renders for the device (no private FLATFAB_* tables)."""
    lossless = {t: rows for t, rows in configdb.to_config_db(device).items()
                if not t.startswith(PRIVATE)}
    db: ConfigDb = {}

    def put(table: str, key: str, fields: dict[str, str]) -> None:
        db.setdefault(table, {})[key] = fields

    def vrf(tenant: str) -> dict[str, str]:
        return {} if tenant == DEFAULT_VRF else {"vrf_name": names.vrf(tenant)}

    metadata = {"hostname": device.name, "docker_routing_config_mode": "split",
                **lossless.pop("DEVICE_METADATA", {}).get("localhost", {})}
    if device.asn is not None:
        metadata["bgp_asn"] = str(device.asn)
    if device.qos is not None:
        metadata["buffer_model"] = "traditional"  # flatfab computes headroom itself
    put("DEVICE_METADATA", "localhost", metadata)
    for tenant in sorted(device.vrfs):
        put("VRF", names.vrf(tenant), {})
    qos_ports = lossless.pop("PORT", {})
    unnumbered = {p.interface for b in device.bgp.values() for p in b.peers.values()
                  if p.interface and p.address is None}
    for name in sort_interfaces(list(device.interfaces)):
        iface = device.interfaces[name]
        if iface.kind is IfKind.LOOPBACK:
            put("LOOPBACK_INTERFACE", name, {})
            for address in iface.addresses:
                put("LOOPBACK_INTERFACE", f"{name}|{address}", {})
        elif iface.kind is IfKind.BRIDGE:
            put("VLAN", name, {"vlanid": _vlan_of(name), "mtu": str(iface.mtu or 9100),
                               "admin_status": _admin(iface)})
            put("VLAN_INTERFACE", name, vrf(iface.vrf))
            for address in iface.addresses:
                put("VLAN_INTERFACE", f"{name}|{address}", {})
        elif iface.parent is not None:  # a VRF sub-interface of a fabric port
            fields = {"admin_status": _admin(iface), "vlan": _vlan_of(name), **vrf(iface.vrf)}
            if name in unnumbered:
                fields["ipv6_use_link_local_only"] = "enable"
            put("VLAN_SUB_INTERFACE", name, fields)
            for address in iface.addresses:
                put("VLAN_SUB_INTERFACE", f"{name}|{address}", {})
        elif iface.kind in (IfKind.FABRIC, IfKind.HOST_PORT):
            # a fresh dict: to_config_db shares one PORT row between equal ports
            row = {"admin_status": _admin(iface), **qos_ports.get(name, {})}
            row.setdefault("mtu", str(iface.mtu or 9100))
            if iface.speed_mbps:
                row.setdefault("speed", str(iface.speed_mbps))
            put("PORT", name, row)
            if iface.bridge is not None:
                put("VLAN_MEMBER", f"{iface.bridge}|{name}", {"tagging_mode": "untagged"})
            elif iface.addresses or name in unnumbered or iface.vrf != DEFAULT_VRF:
                fields = vrf(iface.vrf)
                if name in unnumbered:
                    fields["ipv6_use_link_local_only"] = "enable"
                put("INTERFACE", name, fields)
                for address in iface.addresses:
                    put("INTERFACE", f"{name}|{address}", {})
    # link-level retry as sonic-llr-port spells it (configdb's rows are the virtual ASIC's)
    if lossless.get(llr.TABLE):
        lossless[llr.TABLE] = {port: llr.row() for port in lossless[llr.TABLE]}
    for table, rows in lossless.items():
        db.setdefault(table, {}).update(rows)
    if device.lb is not None:
        put(hashing.TABLE, hashing.KEY, hashing.row(device.lb))
    return db


def device_view(device: DeviceState, names: InterfaceNames) -> DeviceState:
    """A copy of the device with tenant VRFs named the SONiC way (Vrf_blue)."""
    def name(vrf: str) -> str:
        return vrf if vrf == DEFAULT_VRF else names.vrf(vrf)

    return device.model_copy(update={
        "vrfs": {name(v): i for v, i in device.vrfs.items()},
        "interfaces": {n: i.model_copy(update={"vrf": name(i.vrf)})
                       for n, i in device.interfaces.items()},
        "bgp": {name(v): b.model_copy(update={"vrf": name(b.vrf)})
                for v, b in device.bgp.items()},
    })


def render_frr(device: DeviceState, names: InterfaceNames) -> str:
    view = device_view(device, names)
    bgp = sorted(view.bgp.values(), key=lambda b: (b.vrf != DEFAULT_VRF, b.vrf))
    template = environment("flatfab.platforms.sonic").get_template("frr.conf.j2")
    return template.render(device=view, vrfs=sorted(view.vrfs),
                           bgp_instances=[{**b.model_dump(), "peers": list(b.peers.values())}
                                          for b in bgp])


def join(config_db_text: str, frr_text: str) -> str:
    return f"!! {CONFIG_DB}\n{config_db_text}!! {FRR}\n{frr_text}"


def render(device: DeviceState, names: InterfaceNames) -> str:
    return join(configdb.dump(config_db(device, names)), render_frr(device, names))
