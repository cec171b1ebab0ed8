"""The NCCL settings a GPU server needs so its collectives agree with the fabric: computed
from the host's planned state, rendered as /etc/nccl.conf, parsed back, and judged.

Facts used (NVIDIA NCCL documentation, "Environment Variables"):

- NCCL_IB_TC is the traffic class of NCCL's RoCE packets: the ToS byte, DSCP and ECN bits,
  so it must be the NIC's planned RoCE ToS (NicQos.roce_tos, e.g. 106 = DSCP 26 with
  ECT(0)), the class the fabric makes lossless. One value per process, for every HCA.
- NCCL_IB_HCA filters the RDMA devices NCCL uses: a comma list of `device[:port]`; `^`
  excludes; `=` makes every name exact. Without `=` a name is a prefix, so `mlx5_1` also
  selects mlx5_10 to mlx5_19. It is a filter: NCCL orders the devices it keeps by topology,
  not by the list, so flatfab writes rail order for people and judges the set.
- NCCL_IB_GID_INDEX picks the GID table entry (hence RoCE version and source address).
  Since NCCL 2.21 it defaults to -1: NCCL picks a RoCE v2 GID of the address family
  NCCL_IB_ADDR_FAMILY (AF_INET) itself. The plan cannot know the index (it depends on the
  host's GID table), so the render leaves it out unless a caller passes what it found.
- NCCL_SOCKET_IFNAME names the IP interfaces of NCCL's bootstrap and socket transport;
  unset, NCCL picks one itself (ib* first, never lo or docker* while others exist).
- NCCL_IB_QPS_PER_CONNECTION: queue pairs per connection between two ranks (default 1).
- NCCL reads KEY=VALUE lines from the environment first, then NCCL_CONF_FILE (2.23+) or
  ~/.nccl.conf, then /etc/nccl.conf, never overwriting a variable already set: the
  environment wins, and in a file the first line of a key wins. NCCL takes the line as it
  is: no whitespace is trimmed around the key or the `=`.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from flatfab.cluster.rdma import GidEntry, GidTable, Mismatch, NoRdma, RdmaLink, RdmaPort
from flatfab.model.state import DeviceState, IfKind, Interface, Role

TC = "NCCL_IB_TC"
HCA = "NCCL_IB_HCA"
GID_INDEX = "NCCL_IB_GID_INDEX"
SOCKET_IFNAME = "NCCL_SOCKET_IFNAME"
QPS = "NCCL_IB_QPS_PER_CONNECTION"
ROCE_VERSION = "NCCL_IB_ROCE_VERSION_NUM"
ADDR_FAMILY = "NCCL_IB_ADDR_FAMILY"
ENVIRONMENT = "environment"


class NcclError(ValueError):
    """The plan and the host's RDMA devices cannot give NCCL settings (said why)."""


class NcclConfError(ValueError):
    """An nccl.conf line NCCL would not read as meant: names the file and line."""


@dataclass(frozen=True)
class NicHca:
    """A data NIC with its rail, fabric IPv4 address and RDMA device port."""

    nic: str
    rail: int | None
    address: str | None
    rdma: RdmaPort


@dataclass(frozen=True)
class NcclSettings:
    """What one server's NCCL must use: `hcas` in rail order; `bootstrap` None: not planned
    (not rendered, not judged); `gid_index` None: left to NCCL's own choice."""

    server: str
    traffic_class: int
    hcas: tuple[NicHca, ...]
    bootstrap: str | None
    queue_pairs: int = 1
    gid_index: int | None = None

    def variables(self) -> dict[str, str]:
        """The variables to set, in render order."""
        found = {HCA: "=" + ",".join(str(h.rdma) for h in self.hcas),
                 TC: str(self.traffic_class)}
        if self.gid_index is not None:
            found[GID_INDEX] = str(self.gid_index)
        if self.queue_pairs > 1:
            found[QPS] = str(self.queue_pairs)
        if self.bootstrap is not None:
            found[SOCKET_IFNAME] = "=" + self.bootstrap
        return found


# --- expected settings from the plan -----------------------------------------------------


def data_nics(host: DeviceState) -> list[Interface]:
    """A host's data NICs in rail order (rail 1 first; NICs without a rail after, by name)."""
    nics = [i for i in host.interfaces.values() if i.kind is IfKind.NIC and i.nic is not None]
    return sorted(nics, key=lambda i: (i.rail is None, i.rail or 0, i.name))


def _ipv4(nic: Interface) -> str | None:
    for address in nic.addresses:
        interface = ipaddress.ip_interface(address)
        if interface.version == 4:
            return str(interface.ip)
    return None


def _one(host: str, what: str, values: Mapping[str, int]) -> int:
    """The one value every NIC has: NCCL takes one per process, not one per HCA."""
    if len(set(values.values())) > 1:
        shown = ", ".join(f"{n} {v}" for n, v in values.items())
        raise NcclError(f"{host}: NICs disagree on {what} ({shown}); NCCL takes one value "
                        f"for every HCA")
    return next(iter(values.values()))


def nccl_settings(host: DeviceState, rdma: Mapping[str, RdmaPort | str], *,
                  bootstrap: str | None, gid_index: int | None = None) -> NcclSettings:
    """The NCCL settings of a planned GPU host.

    `rdma` maps each data NIC (netdev) to its RDMA device (rdma.netdev_map of the host's
    `rdma link`, or an inventory's `{"eth1": "mlx5_0"}`). `bootstrap` is the interface of
    NCCL's bootstrap, the host's management or front-end NIC, which the plan does not model;
    it is required and never defaults to a data NIC: rank 0's bootstrap address must be
    reachable from every rank, and a fabric NIC reaches only its own rail, plane or tenant
    VRF, while the front-end network is the one the launcher's rendezvous already uses. And
    should NCCL fall back from RDMA to its socket transport, on a data NIC it would silently
    carry the collectives as TCP through the fabric outside the lossless class. None leaves
    NCCL_SOCKET_IFNAME unplanned."""
    if host.role is not Role.HOST:
        raise NcclError(f"{host.name}: a {host.role.value}, not a host")
    nics = data_nics(host)
    if not nics:
        raise NcclError(f"{host.name}: no data NIC planned")
    if bootstrap is not None and bootstrap in {n.name for n in nics}:
        raise NcclError(f"{host.name}: bootstrap {bootstrap} is a fabric data NIC; give the "
                        f"management or front-end interface")
    missing = [n.name for n in nics if n.name not in rdma]
    if missing:
        raise NcclError(f"{host.name}: no RDMA device known for {', '.join(missing)} "
                        f"(not in `rdma link` as a netdev)")
    hcas = tuple(NicHca(n.name, n.rail, _ipv4(n), _port(rdma[n.name])) for n in nics)
    qos = {n.name: n.nic for n in nics if n.nic is not None}
    return NcclSettings(
        server=host.name, hcas=hcas, bootstrap=bootstrap, gid_index=gid_index,
        traffic_class=_one(host.name, "RoCE ToS", {k: q.roce_tos for k, q in qos.items()}),
        queue_pairs=_one(host.name, "queue pairs", {k: q.queue_pairs for k, q in qos.items()}))


def _port(value: RdmaPort | str) -> RdmaPort:
    return value if isinstance(value, RdmaPort) else RdmaPort(value)


def found_gid_index(settings: NcclSettings, tables: Sequence[GidTable]) -> int | None:
    """The GID index that holds every NIC's RoCE v2 IPv4 GID, if one index does for all (one
    NCCL_IB_GID_INDEX serves every HCA); None when the NICs need different ones or one has
    none (then leave it to NCCL's own choice)."""
    found = set()
    for hca in settings.hcas:
        table = _table(tables, hca.rdma)
        entry = None if table is None or hca.address is None else \
            table.roce_v2_of(hca.address, hca.nic)
        if entry is None:
            return None
        found.add(entry.index)
    return found.pop() if len(found) == 1 else None


# --- /etc/nccl.conf ----------------------------------------------------------------------


def render_nccl_conf(settings: NcclSettings) -> str:
    """/etc/nccl.conf text, deterministic. Comments hold no `=`: older NCCL releases read
    any line with one as a setting, `#` or not (param.cc's setEnvFile)."""
    lines = [f"# NCCL settings of {settings.server}, written by flatfab from the fabric plan.",
             "# NCCL_IB_HCA: the RDMA devices of the fabric NICs, rail 1 first, names exact",
             f"# ({', '.join(f'{h.nic} {h.rdma}' for h in settings.hcas)}).",
             f"# NCCL_IB_TC: the RoCE ToS the fabric makes lossless ({settings.traffic_class}).",
             ]
    if settings.gid_index is None:
        lines.append("# NCCL_IB_GID_INDEX unset: NCCL picks the RoCE v2 GID of each NIC's "
                     "IPv4 address.")
    if settings.bootstrap is None:
        lines.append("# NCCL_SOCKET_IFNAME not planned: set it to the management interface.")
    lines += [f"{key}={value}" for key, value in settings.variables().items()]
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class NcclConf:
    """A parsed nccl.conf: each key's value and line (the first line of a key, as NCCL)."""

    source: str
    values: dict[str, str]
    lines: dict[str, int]


_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _setting(line: str, number: int, source: str) -> tuple[str, str]:
    where = f"{source}:{number}"
    key, equals, value = line.partition("=")
    if not equals:
        raise NcclConfError(f"{where}: {line.strip()!r} is not KEY=VALUE (NCCL skips it)")
    if key != key.strip() or (value and value[0].isspace()):
        raise NcclConfError(f"{where}: whitespace around the key or '=': NCCL reads the line "
                            f"as it is, so {key!r} would never be the variable meant")
    if not _KEY.fullmatch(key):
        raise NcclConfError(f"{where}: {key!r} is not a variable name")
    return key, value.rstrip()


def parse_nccl_conf(text: str, source: str = "/etc/nccl.conf") -> NcclConf:
    """An nccl.conf's settings: blank and `#` lines skipped, trailing whitespace dropped; a
    line NCCL would skip or misread (no `=`, whitespace around the key or `=`) is an
    NcclConfError naming the file and line. A key set twice keeps its first line, as NCCL."""
    values: dict[str, str] = {}
    lines: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        key, value = _setting(line.rstrip(), number, source)
        if key not in values:
            values[key], lines[key] = value, number
    return NcclConf(source, values, lines)


# --- what NCCL uses ----------------------------------------------------------------------


@dataclass(frozen=True)
class InUse:
    """The NCCL variables a process gets: key -> (value, where it came from)."""

    values: dict[str, tuple[str, str]]

    def get(self, key: str) -> tuple[str, str] | None:
        return self.values.get(key)


def settings_in_use(env: Mapping[str, str] | None = None, confs: Iterable[NcclConf] = ()
                    ) -> InUse:
    """What NCCL ends up with: the environment first, then each file in NCCL's reading order
    (NCCL_CONF_FILE or ~/.nccl.conf, then /etc/nccl.conf), a variable already set never
    overwritten."""
    found: dict[str, tuple[str, str]] = {}
    for key, value in (env or {}).items():
        if key.startswith("NCCL_"):
            found[key] = (value, ENVIRONMENT)
    for conf in confs:
        for key, value in conf.values.items():
            found.setdefault(key, (value, f"{conf.source}:{conf.lines[key]}"))
    return InUse(found)


# --- the judge ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _Spec:
    """An NCCL interface or device list: `^` exclude, `=` exact, entries name[:port]."""

    exclude: bool
    exact: bool
    entries: tuple[tuple[str, int | None], ...]

    def selects(self, name: str, port: int | None = None) -> bool:
        hit = any((name == n if self.exact else name.startswith(n))
                  and (p is None or port is None or p == port) for n, p in self.entries)
        return hit != self.exclude


def _spec(value: str, ports: bool) -> _Spec:
    exclude = value.startswith("^")
    value = value.removeprefix("^")
    exact = value.startswith("=")
    entries = []
    for token in value.removeprefix("=").split(","):
        name, colon, port = token.strip().partition(":")
        if name:
            entries.append((name, int(port) if ports and colon and port.isdigit() else None))
    return _Spec(exclude, exact, tuple(entries))


def _mismatch(s: NcclSettings, key: str, expected: str, used: tuple[str, str] | None,
              why: str, nic: str | None = None, rdma: str | None = None,
              unset: str = "unset") -> Mismatch:
    """A mismatch of `key`, whose value in use (with where it came from) is `used`, or
    `unset` (what NCCL does then) when nothing sets it."""
    actual, where = used if used is not None else (unset, None)
    return Mismatch(s.server, key, expected, actual, nic, rdma, where, why)


def _judge_tc(s: NcclSettings, in_use: InUse) -> list[Mismatch]:
    used = in_use.get(TC)
    if used is not None and used[0].strip() == str(s.traffic_class):
        return []
    return [_mismatch(s, TC, str(s.traffic_class), used,
                      "the fabric makes only the planned RoCE ToS lossless")]


def _judge_hca(s: NcclSettings, in_use: InUse, links: Sequence[RdmaLink] | None
               ) -> list[Mismatch]:
    expected = s.variables()[HCA]
    used = in_use.get(HCA)
    if used is None:
        return [_mismatch(s, HCA, expected, None,
                          "unset, NCCL uses every RDMA device it finds, fabric or not")]
    spec = _spec(used[0], ports=True)
    found = [_mismatch(s, HCA, expected, used, f"does not select {h.rdma}", h.nic, h.rdma.name)
             for h in s.hcas if not spec.selects(h.rdma.device, h.rdma.port)]
    if not spec.exact and not spec.exclude:
        found.append(_mismatch(s, HCA, expected, used, "names without '=' are prefixes "
                               "(mlx5_1 also selects mlx5_10 to mlx5_19)"))
    planned = {(h.rdma.device, h.rdma.port) for h in s.hcas}
    for link in links or ():
        if spec.selects(link.device, link.port) and (link.device, link.port) not in planned \
                and (link.device, None) not in planned:
            found.append(_mismatch(s, HCA, expected, used, "also selects a device that is not "
                                   "a fabric NIC's", link.netdev, link.rdma_port.name))
    return found


def _judge_qps(s: NcclSettings, in_use: InUse) -> list[Mismatch]:
    used = in_use.get(QPS)
    actual = used[0].strip() if used is not None else "1"  # NCCL's default
    if actual == str(s.queue_pairs):
        return []
    return [_mismatch(s, QPS, str(s.queue_pairs), used,
                      "the fabric's hashing was planned for this many flows per connection",
                      unset="1 (NCCL's default)")]


def _judge_bootstrap(s: NcclSettings, in_use: InUse) -> list[Mismatch]:
    used = in_use.get(SOCKET_IFNAME)
    found = []
    if s.bootstrap is not None:
        expected = "=" + s.bootstrap
        spec = None if used is None else _spec(used[0], ports=False)
        if spec is None or not spec.selects(s.bootstrap):
            found.append(_mismatch(s, SOCKET_IFNAME, expected, used,
                                   "NCCL's bootstrap must use the management interface"))
    if used is not None:
        spec = _spec(used[0], ports=False)
        found += [_mismatch(s, SOCKET_IFNAME, "the management interface", used,
                            "selects a fabric data NIC for NCCL's sockets", h.nic)
                  for h in s.hcas if spec.selects(h.nic)]
    return found


def _judge_roce_choice(s: NcclSettings, in_use: InUse) -> list[Mismatch]:
    """With the GID index left to NCCL, what steers its choice must ask for RoCE v2 IPv4."""
    found = []
    for key, want in ((ROCE_VERSION, "2"), (ADDR_FAMILY, "AF_INET")):
        used = in_use.get(key)
        if used is not None and used[0].strip() != want:
            found.append(_mismatch(s, key, want, used, "NCCL must pick the RoCE v2 GID of the "
                                   "NIC's fabric IPv4 address"))
    return found


def _table(tables: Sequence[GidTable], port: RdmaPort) -> GidTable | None:
    return next((t for t in tables if t.device == port.device
                 and (port.port is None or t.port == port.port)), None)


def _gid_problem(entry: GidEntry | None, hca: NicHca, table: GidTable, index: int) -> str | None:
    """Why GID `index` is not the NIC's RoCE v2 IPv4 GID (None: it is)."""
    if entry is None:
        return table.unread(index) or "no GID at that index"
    if entry.type is None or entry.netdev is None:
        return f"unreadable ({table.unread(index)})"
    if not entry.roce_v2:
        return f"a {entry.type} GID, not RoCE v2"
    if entry.link_local:
        return "a link-local GID, not routed across the fabric"
    if entry.ipv4 != hca.address:
        return f"not the IPv4-mapped GID of {hca.nic}'s fabric address {hca.address}"
    if entry.netdev != hca.nic:
        return f"a GID of {entry.netdev}, not of {hca.nic}"
    return None


def judge_gid_index(s: NcclSettings, in_use: InUse, tables: Sequence[GidTable] | NoRdma
                    ) -> list[Mismatch] | NoRdma:
    """Per NIC: the GID index NCCL uses (NCCL_IB_GID_INDEX, or NCCL's own choice when unset
    or -1) must pick a RoCE v2 GID of the NIC's fabric IPv4 address (::ffff:a.b.c.d), never
    RoCE v1, never a link-local one. NoRdma comes back as it is: the host is not judged."""
    if isinstance(tables, NoRdma):
        return tables
    used = in_use.get(GID_INDEX)
    value = used[0].strip() if used is not None else "-1"
    if not re.fullmatch(r"-?\d+", value):
        return [_mismatch(s, GID_INDEX, "a GID index", used, "not a number")]
    index = int(value)
    found = [] if index >= 0 else _judge_roce_choice(s, in_use)
    for hca in s.hcas:
        table = _table(tables, hca.rdma)
        if table is None:
            found.append(_mismatch(s, GID_INDEX, f"a GID table for {hca.rdma.name}", used,
                                   "no GID table in sysfs", hca.nic, hca.rdma.name))
            continue
        where = f"{hca.rdma.device}/{table.port}"
        if hca.address is None:
            found.append(_mismatch(s, GID_INDEX, "a RoCE v2 GID of the NIC's IPv4 address", used,
                                   "no fabric IPv4 address planned", hca.nic, where))
            continue
        right = table.roce_v2_of(hca.address, hca.nic)
        want = right.describe() if right else \
            f"a RoCE v2 GID of {hca.address} (none in the table)"
        if index < 0:
            if right is None:
                found.append(_mismatch(s, GID_INDEX, want, used,
                                       "NCCL finds no RoCE v2 GID of the fabric address",
                                       hca.nic, where, unset="-1 (NCCL's own choice)"))
            continue
        entry = table.at(index)
        problem = _gid_problem(entry, hca, table, index)
        if problem is not None:
            shown = entry.describe() if entry else str(index)
            found.append(Mismatch(s.server, GID_INDEX, want, shown, hca.nic, where,
                                  used[1] if used else None, problem))
    return found


def judge_nccl(settings: NcclSettings, in_use: InUse, *,
               gids: Sequence[GidTable] | NoRdma | None = None,
               links: Sequence[RdmaLink] | None = None) -> list[Mismatch]:
    """Every setting in use that does not agree with the planned ones: traffic class, HCAs
    (with `links`, also devices selected that no fabric NIC has), queue pairs, bootstrap
    interface, and, with the GID tables, the GID index of each NIC. GID tables that are
    NoRdma judge nothing (see judge_gid_index)."""
    found = [*_judge_hca(settings, in_use, links), *_judge_tc(settings, in_use),
             *_judge_qps(settings, in_use), *_judge_bootstrap(settings, in_use)]
    if gids is not None:
        judged = judge_gid_index(settings, in_use, gids)
        if not isinstance(judged, NoRdma):
            found += judged
    return found
