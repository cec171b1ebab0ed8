"""A GPU server's NCCL and RDMA settings against the fabric (hosts.yaml `nccl.manage`): its
nccl.conf, each fabric NIC's RDMA port and the GID NCCL picks on it. The rules are
flatfab.cluster.nccl's and flatfab.cluster.rdma's; here each mismatch becomes a finding
named at the server and NIC (port) with the setting, expected and actual.

A host without RDMA devices (the embedded lab) has nothing RDMA to judge: each RDMA part is
a not-judged finding saying so, never a pass. Its nccl.conf is still judged.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from flatfab.checks.base import (
    Check,
    CheckContext,
    Finding,
    Scope,
    Severity,
    Stage,
    check,
    not_judged,
)
from flatfab.cluster.nccl import (
    HCA,
    InUse,
    NcclConfError,
    NcclError,
    NcclSettings,
    data_nics,
    judge_gid_index,
    judge_nccl,
    nccl_settings,
    parse_nccl_conf,
    settings_in_use,
)
from flatfab.cluster.rdma import (
    GidEntry,
    GidTable,
    IbvPort,
    Mismatch,
    NoRdma,
    RdmaLink,
    RdmaPort,
    judge_rdma_mtu,
    netdev_map,
)
from flatfab.model.state import DeviceState, FabricState, HostRdma, Role

SYSFS, RDMA_LINK, IBV_DEVINFO = "sysfs", "rdma link", "ibv_devinfo"  # rdma_state's sources


def nccl_host(_plan: FabricState, host: DeviceState) -> bool:
    """A host whose NCCL and RDMA settings flatfab manages (the plan carries them)."""
    return host.role is Role.HOST and host.rdma is not None


def _hosts(ctx: CheckContext) -> Iterator[tuple[DeviceState, DeviceState, HostRdma]]:
    """(planned, observed, observed RDMA state) of each managed, read host with NCCL
    settings planned; a host read without them is host.rdma_unread's."""
    for name, planned in sorted(ctx.plan.devices.items()):
        if not planned.managed or not nccl_host(ctx.plan, planned):
            continue
        device = ctx.observed(name)
        # a host state that holds no RDMA reading at all (a plan taken as what was seen)
        # says nothing to judge; a collect always names the file it read
        if device is not None and device.rdma is not None \
                and device.rdma.nccl_path is not None:
            yield planned, device, device.rdma


def _finding(item: Check, found: Mismatch, note: str = "") -> Finding:
    return item.finding(found.server, f"{found}{note}", port=found.nic,
                        expected=found.expected, actual=found.actual)


# --- what a check needs of the observed state, as the cluster's readers give it -----------


def _links(rdma: HostRdma) -> list[RdmaLink]:
    return [RdmaLink(p.device, p.port, p.state, p.physical_state, p.netdev)
            for p in rdma.ports if p.state is not None and p.physical_state is not None]


def _tables(rdma: HostRdma) -> list[GidTable]:
    return [GidTable(p.device, p.port, tuple(GidEntry(g.index, g.gid, g.type, g.netdev)
                                             for g in p.gids),
                     tuple(sorted(p.unread.items())))
            for p in rdma.ports if p.gids is not None]


def _ibv(rdma: HostRdma) -> list[IbvPort]:
    return [IbvPort(p.device, p.port, p.ibv_state, p.active_mtu, p.link_layer or "")
            for p in rdma.ports if p.ibv_state is not None]


def _devices(rdma: HostRdma) -> dict[str, RdmaPort] | str:
    """Each netdev's RDMA port, from `rdma link`; or why it is not known."""
    if rdma.none_why is not None:
        return f"no RDMA devices ({rdma.none_why})"
    if RDMA_LINK in rdma.unread:
        return f"rdma link not read ({rdma.unread[RDMA_LINK]})"
    return netdev_map(_links(rdma))


def _in_use(rdma: HostRdma) -> InUse | Mismatch | None:
    """The settings nccl.conf gives NCCL (None: no file), or why NCCL misreads it."""
    if rdma.nccl_conf is None:
        return None
    try:
        conf = parse_nccl_conf(rdma.nccl_conf, rdma.nccl_path or "nccl.conf")
    except NcclConfError as error:
        return Mismatch("", "nccl.conf", "KEY=VALUE lines NCCL reads as meant", "a line it "
                        "does not", where=rdma.nccl_path, why=str(error))
    return settings_in_use(None, [conf])


def _settings(planned: DeviceState, devices: dict[str, RdmaPort] | str
              ) -> tuple[NcclSettings, list[Mismatch]]:
    """The planned settings with each fabric NIC's RDMA device, and the NICs that have none;
    where a device is not known, the settings have no HCAs (NCCL_IB_HCA is not judged).
    NcclError: the plan itself gives no one value (the static check names it)."""
    bootstrap = planned.rdma.bootstrap if planned.rdma is not None else None
    nics = data_nics(planned)
    missing = [] if isinstance(devices, str) else [
        Mismatch(planned.name, "rdma device", "an RDMA device in rdma link", "none", n.name,
                 where=RDMA_LINK, why="NCCL cannot use this NIC for RDMA")
        for n in nics if n.name not in devices]
    if isinstance(devices, dict) and not missing:
        return nccl_settings(planned, devices, bootstrap=bootstrap), []
    whole = nccl_settings(planned, {n.name: RdmaPort(n.name) for n in nics},
                          bootstrap=bootstrap)
    return NcclSettings(whole.server, whole.traffic_class, (), bootstrap,
                        whole.queue_pairs), missing


# --- checks --------------------------------------------------------------------------------


@check("host.nccl", "Every GPU server's nccl.conf agrees with the fabric",
       scope=Scope.DEVICE, severity=Severity.ERROR, hosts=nccl_host)
def nccl(item: Check, ctx: CheckContext) -> Iterator[Finding]:
    """Reads: statically, the plan's GPU servers whose nccl.conf flatfab manages (hosts.yaml
    `nccl`) and their data NICs' RoCE ToS and queue pairs; live, the nccl.conf each one has
    (the linux_host inventory's `nccl_conf`) and its RDMA devices' netdevs (`rdma -j link
    show`).
    Expects: one traffic class and one queue pair count for the server's NICs (NCCL takes one
    value for every HCA); live, NCCL_IB_TC the NICs' RoCE ToS (the class the fabric makes
    lossless), NCCL_IB_QPS_PER_CONNECTION the planned queue pairs, NCCL_IB_HCA selecting
    exactly the fabric NICs' RDMA devices (names exact, `=`), NCCL_SOCKET_IFNAME the planned
    bootstrap interface and never a fabric NIC, and every line one NCCL reads as meant.
    Fails when: the plan's NICs of one server disagree on ToS or queue pairs; live, a setting
    differs, is unset or NCCL would misread its line, or a fabric NIC has no RDMA device,
    named at the server and NIC with the setting, expected and actual. On a host without
    RDMA devices NCCL_IB_HCA is not judged (the rest is).
    Fix: `flatfab rollout` writes the planned nccl.conf (give each fabric NIC's RDMA device
    in the inventory's `rdma_devices`). From `flatfab check`: give the server's NICs one
    `roce_tos` and `queue_pairs` in qos.yaml. A job's own NCCL_* environment wins over the
    file: keep it from setting these.
    """
    if not ctx.live:
        yield from _plan_nccl(item, ctx.plan)
        return
    for planned, _device, rdma in _hosts(ctx):
        yield from _nccl_host(item, planned, rdma)


def _plan_nccl(item: Check, plan: FabricState) -> Iterator[Finding]:
    for name, host in sorted(plan.devices.items()):
        if not nccl_host(plan, host) or not data_nics(host):
            continue
        try:
            _settings(host, "no RDMA device read statically")
        except NcclError as error:
            yield item.finding(name, f"{name}'s nccl.conf cannot be written: {error}",
                               expected="one value for every NIC", actual=str(error))


def _nccl_host(item: Check, planned: DeviceState, rdma: HostRdma) -> Iterator[Finding]:
    name = planned.name
    in_use = _in_use(rdma)
    if isinstance(in_use, Mismatch):
        yield _finding(item, _named(in_use, name))
        return
    devices = _devices(rdma)
    try:
        settings, missing = _settings(planned, devices)
    except NcclError as error:
        yield not_judged(item.id, name, f"the plan gives no one value ({error}): see "
                         "`flatfab check`", what=f"{name} nccl.conf")
        return
    yield from (_finding(item, m) for m in missing)
    note = "" if in_use is not None else f" (there is no {rdma.nccl_path})"
    found = judge_nccl(settings, in_use or settings_in_use(),
                       links=_links(rdma) if isinstance(devices, dict) else None)
    for mismatch in found:
        if mismatch.setting == HCA and not settings.hcas:
            continue  # judged below only where each NIC's device is known
        yield _finding(item, mismatch, note)
    if not settings.hcas:
        why = devices if isinstance(devices, str) else "a fabric NIC has no RDMA device"
        yield not_judged(item.id, name, why, what=f"{name} {HCA}")


def _named(found: Mismatch, server: str) -> Mismatch:
    return Mismatch(server, found.setting, found.expected, found.actual, found.nic,
                    found.rdma, found.where, found.why)


@check("host.rdma_gid", "NCCL uses each fabric NIC's RoCE v2 GID of its fabric address",
       scope=Scope.DEVICE, severity=Severity.ERROR, stages=[Stage.LIVE], hosts=nccl_host)
def rdma_gid(item: Check, ctx: CheckContext) -> Iterator[Finding]:
    """Reads: live, on each GPU server whose nccl.conf flatfab manages, the GID table of each
    fabric NIC's RDMA port (/sys/class/infiniband/<dev>/ports/<port>/gids, gid_attrs/types,
    gid_attrs/ndevs), its RDMA devices' netdevs (`rdma -j link show`) and the nccl.conf's
    NCCL_IB_GID_INDEX, NCCL_IB_ROCE_VERSION_NUM and NCCL_IB_ADDR_FAMILY.
    Expects: the GID NCCL uses on each NIC (NCCL_IB_GID_INDEX, or NCCL's own choice when
    unset: a RoCE v2 GID of the address family asked for) is the RoCE v2 GID of the NIC's
    fabric IPv4 address (::ffff:a.b.c.d), on that NIC: RoCE v1 is not routed across an L3
    fabric, nor is a link-local GID.
    Fails when: the index picks another entry (RoCE v1, link-local, another address or
    netdev, an unreadable or empty one), or the table holds no RoCE v2 GID of the fabric
    address, named at the server and NIC with the RDMA port. A host without RDMA devices, or
    whose GID tables or `rdma link` were not read, is not judged.
    Fix: Give the NIC its planned fabric address (`flatfab rollout`): the kernel adds its
    RoCE v2 GID. Leave NCCL_IB_GID_INDEX unset (NCCL 2.21 and later pick the RoCE v2 GID
    themselves) or set the index `show_gids` prints for it.
    """
    for planned, _device, rdma in _hosts(ctx):
        name = planned.name
        devices = _devices(rdma)
        if isinstance(devices, str):
            yield not_judged(item.id, name, devices, what=f"{name} RDMA GID tables")
            continue
        if SYSFS in rdma.unread:
            continue  # host.rdma_unread names it
        in_use = _in_use(rdma)
        if isinstance(in_use, Mismatch):
            continue  # host.nccl names the line NCCL misreads
        try:
            settings, missing = _settings(planned, devices)
        except NcclError:
            continue  # the static host.nccl names it
        if missing:
            continue  # host.nccl names each NIC without an RDMA device
        judged = judge_gid_index(settings, in_use or settings_in_use(), _tables(rdma))
        for mismatch in judged if not isinstance(judged, NoRdma) else ():
            yield _finding(item, mismatch)


@check("host.rdma_port", "Every fabric NIC's RDMA port is active Ethernet at the RoCE MTU",
       scope=Scope.DEVICE, severity=Severity.ERROR, stages=[Stage.LIVE], hosts=nccl_host)
def rdma_port(item: Check, ctx: CheckContext) -> Iterator[Finding]:
    """Reads: live, on each GPU server whose nccl.conf flatfab manages, each fabric NIC's RDMA
    port as `ibv_devinfo` states it (port state, active MTU, link layer), and as `rdma -j link
    show` does (state) where ibv_devinfo is not read.
    Expects: each fabric NIC has an RDMA port, on Ethernet (RoCE), PORT_ACTIVE, whose active
    MTU is the fabric's RoCE MTU (fabric.yaml `roce_mtu`): a smaller one sends more, smaller
    packets; a larger one than the switches carry is dropped.
    Fails when: a NIC's port is absent, down, not Ethernet or at another MTU, named at the
    server and NIC with the RDMA port, setting, expected and actual. A host without RDMA
    devices, or whose tools were not read, is not judged.
    Fix: Bring the port up and give the NIC an MTU that holds the RoCE MTU and the RoCEv2
    headers (`flatfab rollout` sets the planned NIC MTU); check its cable and the leaf port
    (`flatfab verify --physical`).
    """
    for planned, _device, rdma in _hosts(ctx):
        name = planned.name
        devices = _devices(rdma)
        if isinstance(devices, str):
            yield not_judged(item.id, name, devices, what=f"{name} RDMA ports")
            continue
        nics = {n.name: devices[n.name] for n in data_nics(planned) if n.name in devices}
        if IBV_DEVINFO not in rdma.unread:
            judged = judge_rdma_mtu(name, _ibv(rdma), ctx.plan.roce_mtu, nics)
            for mismatch in judged if not isinstance(judged, NoRdma) else ():
                yield _finding(item, mismatch)
            continue
        yield from _link_states(item, name, nics, _links(rdma))


def _link_states(item: Check, name: str, nics: dict[str, RdmaPort],
                 links: Sequence[RdmaLink]) -> Iterator[Finding]:
    """Without ibv_devinfo: each NIC's port state from `rdma link` (its MTU is unread)."""
    for nic, port in sorted(nics.items()):
        link = next((k for k in links if k.rdma_port == port or
                     (port.port is None and k.device == port.device)), None)
        if link is not None and not link.active:
            yield _finding(item, Mismatch(name, "state", "ACTIVE", link.state, nic,
                                          link.rdma_port.name, RDMA_LINK,
                                          "the port carries no RDMA traffic"))


@check("host.rdma_unread", "Every NCCL and RDMA source of a GPU server was read",
       scope=Scope.DEVICE, severity=Severity.NOT_JUDGED, stages=[Stage.LIVE],
       hosts=nccl_host)
def rdma_unread(item: Check, ctx: CheckContext) -> Iterator[Finding]:
    """Reads: live, on each GPU server whose nccl.conf flatfab manages, which of its NCCL and
    RDMA sources collect could not read: the GID tables (sysfs), `rdma -j link show`,
    `ibv_devinfo` (a tool that is not installed, or failed), or none at all (a driver that
    reads no RDMA state).
    Expects: every source read, so host.nccl, host.rdma_gid and host.rdma_port judge all of
    what they read from.
    Fails when: never: each source not read is a not-judged finding with why, and the parts
    of the other checks that need it are not judged. A host without RDMA devices is not
    listed here: the other checks say so.
    Fix: Install what is missing on the server (iproute2's `rdma`, rdma-core's `ibv_devinfo`,
    python3 for the GID tables' reader), or read the reason the finding gives.
    """
    for name, planned in sorted(ctx.plan.devices.items()):
        device = ctx.observed(name)
        if not planned.managed or not nccl_host(ctx.plan, planned) or device is None:
            continue
        if device.rdma is None:
            yield not_judged(item.id, name, "its driver read no NCCL or RDMA state",
                             what=f"{name} nccl.conf and RDMA state")
            continue
        if device.rdma.none_why is not None or device.rdma.nccl_path is None:
            continue  # no device to read; or no reading at all (a plan taken as seen)
        for source, why in sorted(device.rdma.unread.items()):
            yield not_judged(item.id, name, why, what=f"{name} {source}")
