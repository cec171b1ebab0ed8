"""Read a Cumulus Linux switch into observed DeviceState with NVUE reads only.

Sources (all `-o json`, NVIDIA Cumulus Linux 5.x user guide and NVUE command reference):
- `nv config show -o json`: the applied config (NVUE's own tree): ports, SVIs, sub-
  interfaces, addresses, VRFs, the BGP configuration and the whole lossless plane (what the
  switch was told, as CONFIG_DB is for SONiC);
- `nv show interface -o json`: per interface its operational link (mtu, speed, and its link
  state in the form the release prints: `link.oper-status`, or only `link.state` as
  `{"up": {}}`/`{"down": {}}` (5.6 and others), or as a word); an interface whose state the
  output does not give is unknown and named in the errors, never read as up;
- `nv show vrf <vrf> router bgp neighbor -o json`: per VRF its neighbours (state, remote-as);
  a BGP instance the applied config disables (`router bgp enable off` / `state disabled`,
  globally or in the VRF) is no instance: it is not read, and the errors say why;
- `nv show interface <port> lldp -o json`: each physical port's LLDP neighbours, every one
  (keyed by neighbour), with their age and TTL;
- `nv show interface <port> counters qos -o json` (5.5+): per lossless port its PFC pause
  frames per switch priority (`pfc-stats`) and per traffic class its transmitted and
  ECN-marked frames (`egress-queue-stats`);
- the ECMP hashing (`lb`) from the applied config's `system forwarding` (`ecmp-hash` fields,
  `hash-seed`), where flatfab renders every field; a field the config leaves to NVUE's
  default is read from `nv show system forwarding -o json` (asked only then: NVUE states
  every field there, defaults included; NVUE command reference, "System Forwarding");
- the way of balancing (`lb.mode`) from the applied config's `router adaptive-routing`
  (`state enabled`, 5.14 and earlier `enable on`): `adaptive` where the switch routes
  adaptively, `hash` where the config leaves it off or unset (NVUE's default is off: NVUE
  reference, "Adaptive Routing"); the ports it steers are each port's own `router
  adaptive-routing`, not modelled (`lb.adaptive_ports` judges the ports by their kind);
- packet trimming from the applied config: `system forwarding packet-trim` (state, size,
  switch-priority: the trim TC, whose traffic class is the trim queue; remark dscp: one DSCP
  for every port, or `port-level` and each port's `qos remark` profile), and each port's
  `packet-trim egress-eligibility traffic-class` (the queues that trim instead of dropping:
  their egress profile is the trimming one). What the config leaves to NVUE's default
  profile (`profile packet-trim-default`) is read from `nv show system forwarding
  packet-trim -o json`, asked only then (Cumulus Linux user guide, "Packet Trimming").
What NVUE does not state (a PFC watchdog restore time, pool modes, egress pools, PG alpha)
is recorded in `unknown` with the reason, never invented.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from flatfab.model.physical import PortPhysical
from flatfab.model.state import (
    DEFAULT_VRF,
    POOL_EGRESS_LOSSY,
    PROFILE_EGRESS_LOSSLESS,
    PROFILE_EGRESS_LOSSY,
    PROFILE_EGRESS_TRIM,
    PROFILE_INGRESS_LOSSY,
    TRIM,
    BgpInstance,
    BgpPeer,
    BufferPool,
    BufferProfile,
    DeviceQos,
    DeviceState,
    EcnProfile,
    Endpoint,
    HashField,
    IfKind,
    Interface,
    LbMode,
    LoadBalancing,
    PortCounters,
    PortQos,
    Probe,
    QosMaps,
    QueueQos,
    Trimming,
    Watchdog,
)
from flatfab.platforms import phy_read, readback
from flatfab.platforms.base import DeviceDriver, InterfaceNames
from flatfab.platforms.nvue import phy
from flatfab.platforms.nvue.driver import NvueError, config_tree, parse_json
from flatfab.platforms.nvue.nvyaml import Tree
from flatfab.platforms.nvue.render import (
    ADAPTIVE,
    GLOBAL,
    HASH_KEYS,
    LOSSLESS_POOL,
    LOSSY_POOL,
    OTHER_HASH_KEYS,
    PACKET_TRIM,
    PORT_LEVEL,
    SPEEDS,
)
from flatfab.platforms.readback import (
    asn_of,
    identity_from_bgp,
    lldp_device,
    lldp_far_port,
    lldp_neighbours,
    lldp_seconds,
    tenant,
)

APPLIED = "nv config show -o json"
INTERFACES = "nv show interface -o json"
FORWARDING = "nv show system forwarding -o json"
TRIM_SHOWN = "nv show system forwarding packet-trim -o json"
TRIM_DEFAULT = "packet-trim-default"  # NVUE's own trimming profile: it turns trimming on
# the traffic classes that profile makes eligible on every port (user guide, "Packet
# Trimming": "Global Level Packet Trimming with Default Profile")
TRIM_DEFAULT_CLASSES = frozenset({1, 2, 3})
_MBPS = {v: k for k, v in SPEEDS.items()}
_STATES = {"established": "Established", "idle": "Idle", "active": "Active",
           "connect": "Connect", "opensent": "OpenSent", "openconfirm": "OpenConfirm"}
# how releases spell a feature switched off: `enable: off` (5.0-5.14), `state: disabled`
# (5.15 on; render.RELEASES)
_OFF = frozenset({"off", "disabled", "disable", "false"})
_ON = frozenset({"on", "enabled", "enable", "true"})


def bgp_command(vrf: str) -> str:
    return f"nv show vrf {vrf} router bgp neighbor -o json"


def lldp_command(port: str) -> str:
    return f"nv show interface {port} lldp -o json"


def counters_command(port: str) -> str:
    return f"nv show interface {port} counters qos -o json"


def _group(value: Any, key: str) -> Tree | None:
    """An NVUE counter group (`pfc-stats`, `egress-queue-stats`) wherever the output nests
    it, as id -> counters (a list of rows with their own id is accepted too)."""
    if isinstance(value, dict):
        if key in value:
            found = value[key]
            if isinstance(found, list):
                return {str(row.get("switch-priority", row.get("traffic-class", row.get("id")))):
                        row for row in found if isinstance(row, dict)}
            return _dict(found)
        for child in value.values():
            inner = _group(child, key)
            if inner is not None:
                return inner
    return None


def port_counters(output: Any, queues: list[int]) -> PortCounters | None:
    """PFC frames (all priorities) and ECN marks of the given queues; None when the output
    holds neither group (the release or ASIC does not count them: unknown, not zero)."""
    pfc, egress = _group(output, "pfc-stats"), _group(output, "egress-queue-stats")
    if pfc is None and egress is None:
        return None
    def total(field: str) -> int | None:
        values = [_int(_dict(row).get(field)) for row in (pfc or {}).values()]
        counted = [v for v in values if v is not None]
        return sum(counted) if counted else None
    marked = {q: n for q in queues
              if (n := _int(_dict((egress or {}).get(str(q))).get("ecn-marked-frames")))
              is not None}
    return PortCounters(pfc_rx_frames=total("rx-pause-frames"),
                        pfc_tx_frames=total("tx-pause-frames"), ecn_marked=marked)


def class_packets(output: Any) -> dict[int, int]:
    """Frames sent per traffic class (NVUE's traffic class is flatfab's queue)."""
    egress = _group(output, "egress-queue-stats") or {}
    return {int(tc): n for tc, row in egress.items()
            if tc.isdigit() and (n := _int(_dict(row).get("tx-frames"))) is not None}


def _dict(value: Any) -> Tree:
    return value if isinstance(value, dict) else {}


def _int(value: Any) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.isdigit():
        return int(value)
    return None


def _addresses(entry: Tree) -> list[str]:
    v4 = _dict(_dict(entry.get("ipv4")).get("address")) or _dict(
        _dict(entry.get("ip")).get("address"))
    return sorted(a for a in v4 if ":" not in a)


def _vrf(entry: Tree) -> str | None:
    value = entry.get("vrf") or _dict(entry.get("ip")).get("vrf")
    return str(value) if value else None


def _kind(entry: Tree) -> IfKind:
    kind = entry.get("type")
    if kind == "loopback":
        return IfKind.LOOPBACK
    if kind == "svi":
        return IfKind.BRIDGE
    if kind == "sub":
        return IfKind.FABRIC
    if kind == "swp":
        return IfKind.HOST_PORT if _access(entry) is not None else IfKind.FABRIC
    return IfKind.OTHER


def _access(entry: Tree) -> int | None:
    for domain in _dict(_dict(entry.get("bridge")).get("domain")).values():
        vid = _int(_dict(domain).get("access"))
        if vid is not None:
            return vid
    return None


def _speed(value: Any) -> int | None:
    if isinstance(value, str):
        return _MBPS.get(value.upper().replace("GBPS", "G").replace("GB/S", "G"))
    return _int(value)


def link_up(entry: Any) -> bool | None:
    """An interface's operational link state from `nv show interface -o json`, in whichever
    form the release prints it: `link.oper-status` ("up", "down", "dormant", ...; the
    operational state where a release gives it beside the admin one), else `link.state` as
    NVUE's one-key object (`{"up": {}}`, `{"down": {}}`: 5.6 prints only this, the state
    `nv show interface` tabulates) or as a word. None: the output states neither."""
    link = _dict(_dict(entry).get("link"))
    for key in ("oper-status", "oper_status", "oper-state"):
        status = link.get(key)
        if isinstance(status, str) and status.strip():
            return status.strip().lower() == "up"
    state = link.get("state")
    if isinstance(state, dict) and len(state) == 1:
        word = next(iter(state))
    elif isinstance(state, str):
        word = state
    else:
        return None
    word = str(word).strip().lower()
    if word == "up":
        return True
    return False if word in ("down", "lowerlayerdown", "dormant", "notpresent") else None


def _interfaces(device: DeviceState, applied: Tree, oper: Tree, planned: DeviceState,
                names: InterfaceNames, peers: dict[str, list[Endpoint]]) -> None:
    svis = {_int(e.get("vlan")): e for e in _dict(applied.get("interface")).values()
            if _dict(e).get("type") == "svi"}
    unstated: list[str] = []
    for name, raw in _dict(applied.get("interface")).items():
        entry = _dict(raw)
        if name == "eth0" or entry.get("type") not in ("loopback", "svi", "sub", "swp"):
            continue
        link = _dict(entry.get("link"))
        live = _dict(_dict(oper.get(name)).get("link"))
        up = link_up(oper.get(name))
        if up is None and oper:
            unstated.append(name)
        vid = _access(entry)
        vrf = _vrf(entry)
        if vid is not None:  # an access port is in its SVI's VRF
            vrf = _vrf(_dict(svis.get(vid)))
        kind = planned.interfaces[name].kind if name in planned.interfaces else _kind(entry)
        mtu = _int(live.get("mtu")) or _int(link.get("mtu"))
        peer, neighbours = lldp_neighbours(peers.get(name, []))
        device.interfaces[name] = Interface(
            name=name, kind=kind, vrf=tenant(names, vrf), mtu=mtu,
            # the applied config's admin state is what the switch was told, not its link:
            # a state the output does not give stays unknown (not judged, named below)
            up=up, addresses=_addresses(entry),
            bridge=names.gateway(vid) if vid is not None else None,
            parent=str(entry["base-interface"]) if entry.get("base-interface") else None,
            speed_mbps=_speed(live.get("speed")) or _speed(link.get("speed")),
            peer=peer, lldp_neighbours=neighbours)
    if unstated:
        device.errors.append(f"interfaces: {INTERFACES} states no link state for "
                             f"{', '.join(sorted(unstated))}: not judged")
    for iface in device.interfaces.values():  # a sub-interface runs at its port's speed
        if iface.parent and iface.parent in device.interfaces and iface.speed_mbps is None:
            iface.speed_mbps = device.interfaces[iface.parent].speed_mbps


def lldp(output: Any) -> tuple[list[Endpoint], dict[str, str]]:
    """(every LLDP neighbour of `nv show interface <port> lldp -o json`, the entries that name
    no far device or port with why). Keyed by neighbour, a port may have several, read in key
    order; the far port from the port id by its subtype (`port.type`: ifname, local, mac, ...;
    readback.lldp_far_port), or lldpd's raw `port.id`; `age` (seconds, a number or digits)
    and `port.ttl` where stated."""
    found: list[Endpoint] = []
    unnamed: dict[str, str] = {}
    for key, raw in sorted(_dict(_dict(output).get("neighbor")).items()):
        entry = _dict(raw)
        chassis, port = _dict(entry.get("chassis")), _dict(entry.get("port"))
        raw_id = _dict(port.get("id"))
        name, why = lldp_far_port(port.get("name") or raw_id.get("value"),
                                  port.get("type") or raw_id.get("type"), port.get("description"))
        device = chassis.get("system-name") or key
        if device and name:
            found.append(Endpoint(device=lldp_device(device), port=name,
                                  age_s=lldp_seconds(entry.get("age")),
                                  expires_s=lldp_seconds(port.get("ttl", entry.get("ttl")))))
        else:
            unnamed[key] = why or readback.NO_SYSTEM_NAME
    return found, unnamed


def enabled(config: Tree) -> bool:
    """Whether an NVUE feature object is switched on: off only when its switch says so
    (`enable: off` up to 5.14, `state: disabled` from 5.15)."""
    switch = config.get("enable", config.get("state"))
    if isinstance(switch, bool):
        return switch
    return str(switch).strip().lower() not in _OFF if switch is not None else True


def bgp_vrfs(applied: Tree) -> tuple[list[str], dict[str, str]]:
    """(VRFs with a BGP instance to read, VRF -> why its configured instance is not one): an
    instance switched off, in the VRF or for the whole switch, is no instance."""
    router = _dict(_dict(applied.get("router")).get("bgp"))
    on: list[str] = []
    off: dict[str, str] = {}
    for vrf, raw in sorted(_dict(applied.get("vrf")).items()):
        config = _dict(_dict(_dict(raw).get("router")).get("bgp"))
        if not config or vrf == "mgmt":
            continue
        if router and not enabled(router):
            off[vrf] = "BGP is disabled on the switch (router bgp enable off / state disabled)"
        elif not enabled(config):
            off[vrf] = (f"BGP is disabled in the VRF (vrf {vrf} router bgp enable off / "
                        "state disabled)")
        else:
            on.append(vrf)
    return on, off


def _bgp(device: DeviceState, applied: Tree, outputs: dict[str, Any],
         names: InterfaceNames) -> None:
    router = _dict(_dict(applied.get("router")).get("bgp"))
    on, off = bgp_vrfs(applied)
    for vrf_name, why in off.items():
        # no instance: bgp.session names each planned session missing with this reason
        device.errors.append(f"bgp: VRF {vrf_name}: {why}: no BGP instance read")
    for vrf_name in on:
        config = _dict(_dict(_dict(_dict(applied.get("vrf")).get(vrf_name)).get("router"))
                       .get("bgp"))
        where = f"bgp: VRF {vrf_name}"
        name = tenant(names, vrf_name)
        unicast = _dict(_dict(config.get("address-family")).get("ipv4-unicast"))
        instance = BgpInstance(
            vrf=name,
            asn=asn_of(device, config.get("autonomous-system", router.get("autonomous-system")),
                       where),
            router_id=str(config.get("router-id") or router.get("router-id") or ""),
            networks=sorted(_dict(unicast.get("network"))),
            maximum_paths=_int(_dict(unicast.get("multipaths")).get("ebgp")))
        live = outputs.get(bgp_command(vrf_name))
        if not isinstance(live, dict):
            device.errors.append(f"{where}: neighbour state unreadable")
            live = {}
        for key, peer_raw in _dict(config.get("neighbor")).items():
            peer = _dict(peer_raw)
            seen = _dict(live.get(key))
            timers = _dict(peer.get("timers"))
            instance.keepalive = _int(timers.get("keepalive")) or instance.keepalive
            instance.hold = _int(timers.get("hold")) or instance.hold
            state = seen.get("state")
            numbered = peer.get("type") == "numbered"
            instance.peers[key] = BgpPeer(
                key=key, interface=None if numbered else key, address=key if numbered else None,
                remote_asn=asn_of(device, seen.get("remote-as", peer.get("remote-as")),
                                  f"{where} peer {key}"),
                peer_device=str(peer.get("description") or "") or None,
                state=_STATES.get(str(state).lower(), str(state)) if state else None,
                prefixes_received=_int(_dict(_dict(seen.get("address-family"))
                                             .get("ipv4-unicast")).get("rx-prefix")))
        device.bgp[name] = instance
    identity_from_bgp(device)


def hash_switches(ecmp_hash: Any) -> dict[str, bool]:
    """An `ecmp-hash` object's fields as on (True) or off, in either release's words
    (`on`/`off` up to 5.14, `enabled`/`disabled` from 5.15); a value in neither is left out,
    as a field not stated."""
    out: dict[str, bool] = {}
    for key, value in _dict(ecmp_hash).items():
        word = str(value).strip().lower()
        if word in _ON or word in _OFF:
            out[str(key)] = word in _ON
    return out


def _hashing(driver: DeviceDriver, device: DeviceState, applied: Tree) -> None:
    """What the switch hashes ECMP on (`lb`), once for all its VRFs. A field NVUE hashes on
    beyond flatfab's model (ingress port, GTP TEID, inner headers) is named in
    `not_modelled`; a hash nothing states is left unread (lb None), with why."""
    forwarding = _dict(_dict(applied.get("system")).get("forwarding"))
    stated = hash_switches(forwarding.get("ecmp-hash"))
    keys = [*HASH_KEYS.values(), *OTHER_HASH_KEYS]
    if any(key not in stated for key in keys):  # left to NVUE's defaults: NVUE says which
        try:
            shown = parse_json(str(driver.cli([FORWARDING])[FORWARDING]), FORWARDING)
        except NvueError as exc:
            device.errors.append(f"lb: {exc}: the ECMP hash is not judged")
            return
        stated = {**hash_switches(_dict(shown).get("ecmp-hash")), **stated}
        unstated = [key for key in keys if key not in stated]
        if unstated:
            device.errors.append(f"lb: neither the applied config nor {FORWARDING} states "
                                 f"ecmp-hash {', '.join(unstated)} as on or off: the ECMP "
                                 "hash is not judged")
            return
    # the seed only as configured: without one switchd hashes with its own random seed
    raw_seed = forwarding.get("hash-seed")
    seed = _int(raw_seed)
    if raw_seed is not None and seed is None:
        device.errors.append(f"lb: system forwarding hash-seed reads {raw_seed!r}, not a "
                             "number: the ECMP hash is not judged")
        return
    routes_adaptively = adaptive_state(applied)
    if isinstance(routes_adaptively, str):
        device.errors.append(f"lb: {routes_adaptively}: the load balancing is not judged")
        return
    device.lb = LoadBalancing(hash_fields=[f for f in HashField if stated[HASH_KEYS[f]]],
                              seed=seed,
                              mode=LbMode.ADAPTIVE if routes_adaptively else LbMode.HASH)
    for key in OTHER_HASH_KEYS:
        if stated[key]:
            device.not_modelled[f"system forwarding ecmp-hash {key}"] = (
                "the ECMP hash also reads this field, which flatfab's hash fields do not "
                "have (flatfab renders it disabled)")


def adaptive_state(applied: Tree) -> bool | str:
    """Whether the switch routes adaptively: `router adaptive-routing state` (5.15+) or
    `enable` (5.14 and earlier) on; unset is off (NVUE's default). A value in neither
    release's words is why it is not read."""
    config = _dict(applied.get("router")).get(ADAPTIVE)
    if config is None:
        return False
    if not isinstance(config, dict):
        return f"router adaptive-routing reads {config!r}, not an object"
    for key in ("state", "enable"):
        if key in config:
            word = str(config[key]).strip().lower()
            if word in _ON or word in _OFF:
                return word in _ON
            return f"router adaptive-routing {key} reads {config[key]!r}, not on or off"
    return False


@dataclass(frozen=True)
class TrimRead:
    """A switch's packet trimming as read: None where it does not trim."""

    trimming: Trimming | None = None
    remark: int | str | None = None  # the one DSCP of every port, `port-level`, or none
    # the classes a port states no eligibility for trims (NVUE's default profile's)
    default_classes: frozenset[int] = frozenset()
    unread: str | None = None  # why the switch's trimming could not be read


def _trim_config(driver: DeviceDriver, config: Tree) -> Tree | str:
    """The applied `packet-trim` with what it leaves to NVUE's default profile stated (from
    `nv show`), or why the fields stay unknown."""
    needed = ("size", "switch-priority")
    if all(key in config for key in needed) and "dscp" in _dict(config.get("remark")):
        return config
    try:
        shown = _dict(parse_json(str(driver.cli([TRIM_SHOWN])[TRIM_SHOWN]), TRIM_SHOWN))
    except NvueError as exc:
        return str(exc)
    remark = {**_dict(shown.get("remark")), **_dict(config.get("remark"))}
    merged = {**shown, **config, "remark": remark}
    unstated = [key for key in needed if _int(merged.get(key)) is None]
    if unstated:
        return (f"neither the applied config nor {TRIM_SHOWN} states packet-trim "
                f"{', '.join(unstated)}")
    return merged


def trimming_read(driver: DeviceDriver, device: DeviceState, applied: Tree) -> TrimRead:
    """Whether and how the switch trims (`system forwarding packet-trim`): off unless its
    state is enabled, or NVUE's default profile is set without a state (that profile turns
    trimming on; the feature is off by default). A trimming whose fields stay unknown is
    named in the errors and `unread`, never taken for none."""
    config = _dict(_dict(_dict(applied.get("system")).get("forwarding")).get(PACKET_TRIM))
    state = config.get("state")
    on = (str(state).strip().lower() in _ON if state is not None
          else config.get("profile") == TRIM_DEFAULT)
    if not on:
        return TrimRead()
    full = _trim_config(driver, config)
    if isinstance(full, str):
        device.errors.append(f"trimming: {full}: the packet trimming is not judged")
        return TrimRead(unread=full)
    size, priority = _int(full.get("size")), _int(full.get("switch-priority"))
    assert size is not None and priority is not None  # _trim_config states both
    # the trimmed packets' traffic class: the one NVUE states, else the priority's mapping
    eqm = _dict(_dict(_dict(_dict(applied.get("qos")).get("egress-queue-mapping")).get(GLOBAL))
                .get("switch-priority"))
    queue = _int(full.get("traffic-class"))
    if queue is None:
        queue = _int(_dict(eqm.get(str(priority))).get("traffic-class"))
    dscp = _dict(full.get("remark")).get("dscp")
    remark: int | str | None = PORT_LEVEL if dscp == PORT_LEVEL else _int(dscp)
    return TrimRead(Trimming(size=size, tc=priority, queue=priority if queue is None else queue),
                    remark, TRIM_DEFAULT_CLASSES if full.get("profile") == TRIM_DEFAULT
                    else frozenset())


def _trim_dscp(entry: Tree, qos: Tree, trim: TrimRead) -> int | None:
    """The DSCP a port gives trimmed packets: the switch's one, or at port level its remark
    profile's for the trim switch priority (None: the port re-marks none)."""
    if trim.trimming is None or trim.remark != PORT_LEVEL:
        return trim.remark if isinstance(trim.remark, int) else None
    remark = _dict(_profile(qos, "remark", entry).get("switch-priority"))
    return _int(_dict(remark.get(str(trim.trimming.tc))).get("dscp"))


def _trim_queues(entry: Tree, trim: TrimRead) -> set[int]:
    """The port's traffic classes eligible for trimming (none where the switch trims none;
    NVUE's default profile's where the port states none)."""
    if trim.trimming is None:
        return set()
    eligibility = _dict(_dict(entry.get(PACKET_TRIM)).get("egress-eligibility"))
    if "traffic-class" not in eligibility:
        return set(trim.default_classes)
    return {int(tc) for tc in _dict(eligibility["traffic-class"]) if str(tc).isdigit()}


def _profile(qos: Tree, kind: str, entry: Tree) -> Tree:
    bound = _dict(_dict(entry.get("qos")).get(kind)).get("profile")
    return _dict(_dict(qos.get(kind)).get(str(bound) if bound else GLOBAL))


def _port_qos(name: str, entry: Tree, qos: Tree, iface: Interface,
              trim: TrimRead) -> PortQos | None:
    mapping = _profile(qos, "mapping", entry)
    pfc_profile = str(_dict(_dict(entry.get("qos")).get("pfc")).get("profile") or "")
    pfc_tree = _dict(_dict(qos.get("pfc")).get(pfc_profile))
    if not mapping and not pfc_tree:
        return None
    unknown: dict[str, str] = {}
    trust = {"l3": "dscp", "l2": "pcp"}.get(str(mapping.get("trust")), str(mapping.get("trust")))
    dscp = _dict(mapping.get("dscp"))
    dscp_to_tc = [_int(_dict(dscp.get(str(d))).get("switch-priority")) or 0 for d in range(64)]
    eqm = _dict(_dict(_dict(qos.get("egress-queue-mapping")).get(GLOBAL)).get("switch-priority"))
    tc_to_queue = [_int(_dict(eqm.get(str(sp))).get("traffic-class")) for sp in range(8)]
    tc_to_queue_list = [tc if tc is not None else sp for sp, tc in enumerate(tc_to_queue)]
    pfc = sorted(int(p) for p in _dict(pfc_tree.get("switch-priority")) if p.isdigit())
    # NVUE gives each PFC priority a lossless group of its own and pauses its own class
    tc_to_pg = [tc if tc in pfc else 0 for tc in range(8)]
    pgs = {0: PROFILE_INGRESS_LOSSY, **dict.fromkeys(pfc, pfc_profile)}
    lossless_queues = {tc_to_queue_list[p] for p in pfc}
    trimming = _trim_queues(entry, trim)
    scheduler = _dict(_profile(qos, "egress-scheduler", entry).get("traffic-class"))
    congestion = _dict(_profile(qos, "congestion-control", entry).get("traffic-class"))
    queues: dict[int, QueueQos] = {}
    for queue in range(8):
        sched = _dict(scheduler.get(str(queue)))
        marks = _dict(congestion.get(str(queue)))
        ecn = None
        if marks.get("ecn") == "enable":
            ecn = EcnProfile(min_bytes=_int(marks.get("min-threshold")) or 0,
                             max_bytes=_int(marks.get("max-threshold")) or 0,
                             probability=_int(marks.get("probability")) or 0)
        queues[queue] = QueueQos(
            strict=sched.get("mode") == "strict",
            weight=(_int(sched.get("bw-percent")) or None) if sched.get("mode") == "dwrr"
            else None, ecn=ecn,
            profile=PROFILE_EGRESS_LOSSLESS if queue in lossless_queues else
            PROFILE_EGRESS_TRIM if queue in trimming else PROFILE_EGRESS_LOSSY)
    watchdog = None
    if _dict(_dict(entry.get("qos")).get("pfc-watchdog")).get("state") == "enable":
        global_dog = _dict(qos.get("pfc-watchdog"))
        poll = _int(global_dog.get("polling-interval")) or 100  # NVUE's default
        robust = _int(global_dog.get("robustness")) or 3  # NVUE's default
        watchdog = Watchdog(priorities=pfc, detect_ms=poll * robust, restore_ms=poll * robust,
                            action="drop", poll_ms=poll, unknown={
                                "restore_ms": "NVUE sets no restoration time: a queue "
                                              "recovers once polls see no stall"})
    return PortQos(
        trust=trust, maps=QosMaps(dscp_to_tc=dscp_to_tc, tc_to_pg=tc_to_pg,
                                  tc_to_queue=tc_to_queue_list, pfc_to_pg=list(range(8)),
                                  pfc_to_queue=tc_to_queue_list),
        pfc=pfc, watchdog=watchdog, pgs=pgs if pfc else {0: PROFILE_INGRESS_LOSSY},
        queues=queues, speed_mbps=iface.speed_mbps or 0,
        cable_m=float(_int(pfc_tree.get("cable-length")) or 0), mtu=iface.mtu or 0,
        trim_dscp=_trim_dscp(entry, qos, trim), unknown=unknown)


def _lossless(device: DeviceState, applied: Tree, planned: DeviceState,
              trim: TrimRead = TrimRead()) -> None:
    qos = _dict(applied.get("qos"))
    if planned.qos is None or not qos:
        return
    for name, raw in _dict(applied.get("interface")).items():
        iface = device.interfaces.get(name)
        if iface is None or iface.parent is not None or _dict(raw).get("type") != "swp":
            continue
        iface.qos = _port_qos(name, _dict(raw), qos, iface, trim)
        plan = planned.interfaces.get(name)
        if iface.qos and iface.qos.watchdog and plan and plan.qos and plan.qos.watchdog:
            # a placeholder, never judged (see unknown)
            iface.qos.watchdog.restore_ms = plan.qos.watchdog.restore_ms
    asic = planned.qos.asic
    unknown: dict[str, str] = {}
    pools: dict[str, BufferPool] = {}
    traffic = _dict(qos.get("traffic-pool"))
    for role, pool_name, lossless in (("ingress_lossless", LOSSLESS_POOL, True),
                                      ("ingress_lossy", LOSSY_POOL, False)):
        percent = _int(_dict(traffic.get(pool_name)).get("memory-percent"))
        planned_pool = planned.qos.pools.get(role)
        if percent is None or planned_pool is None:
            continue
        pools[role] = BufferPool(direction="ingress", mode=planned_pool.mode,
                                 size=asic.buffer_bytes * percent // 100, lossless=lossless)
        unknown[f"pools.{role}.mode"] = "NVUE's traffic pools state no mode"
    for role, pool in planned.qos.pools.items():
        if role not in pools:
            pools[role] = pool
            unknown[f"pools.{role}"] = "NVUE states ingress traffic pools only"
    profiles: dict[str, BufferProfile] = {}
    for name, raw in _dict(qos.get("pfc")).items():
        entry = _dict(raw)
        base = planned.qos.profiles.get(name)
        profiles[name] = BufferProfile(
            pool="ingress_lossless", size=_int(entry.get("port-buffer")) or 0,
            xon=_int(entry.get("xon-threshold")) or 0,
            xoff=_int(entry.get("xoff-threshold")) or 0,
            dynamic_th=base.dynamic_th if base else None,
            static_th=base.static_th if base else None)
        unknown[f"profiles.{name}.dynamic_th"] = "NVUE states no per-PG alpha"
    # the trimming profile's discard action is read (a port's eligible classes), its sizes
    # are NVUE's own like every lossy profile's
    trims = any(q.profile == PROFILE_EGRESS_TRIM for i in device.interfaces.values()
                if i.qos is not None for q in i.qos.queues.values())
    lossy_sized = "NVUE sizes lossy and egress buffers itself"
    for name, profile in planned.qos.profiles.items():
        if name not in profiles and profile.pool != "ingress_lossless":
            profiles[name] = (profile.model_copy(update={"discard": TRIM if trims else None})
                              if name == PROFILE_EGRESS_TRIM else profile)
            unknown[f"profiles.{name}"] = lossy_sized
    if trims and PROFILE_EGRESS_TRIM not in profiles:  # trimming the plan does not have
        profiles[PROFILE_EGRESS_TRIM] = BufferProfile(pool=POOL_EGRESS_LOSSY, discard=TRIM)
        unknown[f"profiles.{PROFILE_EGRESS_TRIM}"] = lossy_sized
    if trim.unread is not None:
        unknown["trimming"] = trim.unread
    device.qos = DeviceQos(asic=asic, pools=pools, profiles=profiles, trimming=trim.trimming,
                           unknown=unknown)


def _counters(driver: DeviceDriver, device: DeviceState) -> None:
    """Counters of every port with lossless state; a failed read is one error, and the
    rest of the ports are not asked (the release has no such command)."""
    for name in sorted(device.interfaces):
        iface = device.interfaces[name]
        if iface.qos is None or iface.parent is not None:
            continue
        command = counters_command(name)
        try:
            output = parse_json(str(driver.cli([command])[command]), command)
        except NvueError as exc:
            device.errors.append(f"counters: {exc}")
            return
        queues = sorted({iface.qos.maps.tc_to_queue[p] for p in iface.qos.pfc
                         if 0 <= p < len(iface.qos.maps.tc_to_queue)})
        iface.counters = port_counters(output, queues)


def collect(driver: DeviceDriver, planned: DeviceState, probes: list[Probe],
            names: InterfaceNames) -> DeviceState:
    device = DeviceState(name=planned.name, role=planned.role, platform=planned.platform)
    first = driver.cli([APPLIED, INTERFACES])
    try:
        applied = config_tree(parse_json(str(first[APPLIED]), "applied config"))
    except NvueError as exc:
        raise NvueError(f"{planned.name}: {exc}") from None
    oper: Tree = {}
    try:
        oper = _dict(parse_json(str(first[INTERFACES]), "nv show interface"))
    except NvueError as exc:
        device.errors.append(f"interfaces: {exc}")
    ports = sorted(n for n, e in _dict(applied.get("interface")).items()
                   if _dict(e).get("type") == "swp" and names.is_port(n))
    vrfs, _ = bgp_vrfs(applied)  # a disabled instance has no neighbours to ask for
    outputs: dict[str, Any] = {}
    # one command a call: a port without LLDP or a VRF whose bgpd is down fails alone
    for command in [bgp_command(v) for v in vrfs] + [lldp_command(p) for p in ports]:
        try:
            outputs[command] = parse_json(str(driver.cli([command])[command]), command)
        except NvueError as exc:
            what = "lldp" if "lldp" in command else "bgp"
            device.errors.append(f"{what}: {exc}")
    peers: dict[str, list[Endpoint]] = {}
    for port in ports:
        found, unnamed = lldp(outputs.get(lldp_command(port)))
        peers[port] = found
        for key, why in unnamed.items():
            readback.lldp_unnamed(device, port, key, why)
    _interfaces(device, applied, oper, planned, names, peers)
    device.loopback = readback.loopback_address(device, names.loopback)
    device.vrfs = {tenant(names, v): planned.vrfs.get(tenant(names, v), 0)
                   for v in _dict(applied.get("vrf")) if v not in (DEFAULT_VRF, "mgmt")}
    readback.guarded(device, "bgp", lambda: _bgp(device, applied, outputs, names),
                     errors=(ValueError, TypeError, AttributeError))  # pydantic's too
    _hashing(driver, device, applied)
    if planned.qos is not None:
        trim = trimming_read(driver, device, applied)
        try:
            _lossless(device, applied, planned, trim)
        except (ValueError, TypeError) as exc:
            device.errors.append(f"lossless: unexpected config ({str(exc).splitlines()[0]})")
        _counters(driver, device)
    return device


def physical(driver: DeviceDriver, planned: DeviceState) -> dict[str, PortPhysical]:
    """Each cabled port's module, diagnostics, FEC and flaps (nvue/phy.py): the whole-switch
    reads, then each port's FEC detail (one command a call: a command a release does not
    have fails alone, and its facts stay unknown with why)."""
    ports = readback.cabled_ports(planned)
    if not ports:
        return {}
    failed: tuple[type[Exception], ...] = (NvueError, *readback.read_errors())
    outputs: dict[str, Any] = {}
    for command in (*phy.COMMANDS, *(phy.phy_detail_command(p) for p in ports)):
        try:
            outputs[command] = parse_json(str(driver.cli([command])[command]), command)
        except failed:
            continue  # not in the outputs: read_ports names what it leaves unknown
    if phy.TRANSCEIVERS not in outputs:  # before 5.11: one port at a time
        for command in (phy.pluggable_command(p) for p in ports):
            try:
                outputs[command] = parse_json(str(driver.cli([command])[command]), command)
            except failed:
                continue
    return phy_read.read_answered(outputs, ports, phy.read_ports)
