"""gNMI paths <-> `Metric`s: the one place that knows which leaf carries which counter.

Paths are kept as xpath-style strings (`/a/b[k=v]/c`) inside flatfab and turned into gNMI
`Path` messages only at the wire (`gnmi_target`, `gnmi_client`).

Sources for the leaf names (checked 2026-11-25):
- OpenConfig `openconfig-interfaces.yang`: `/interfaces/interface[name]/state/oper-status`
  (enum UP, DOWN, ...).
- OpenConfig `openconfig-qos-interfaces.yang` 2.0.1 (github openconfig/public,
  release/models/qos/): list `/qos/interfaces/interface` keyed by `interface-id`,
  `output/queues/queue[name]/state/{transmit-pkts, dropped-pkts, ecn-marked-pkts}`
  (ecn-marked-pkts added in 0.11.0, 2023-09-15).
- OpenConfig has no per-priority PFC counters and no PFC watchdog (only the MAC-level
  `ethernet/state/counters/{in,out}-mac-pause-frames`, which do not say which priority).
  flatfab serves those under its own clearly named root `/flatfab-qos/...`, shaped like
  SR Linux's `qos interfaces interface X pfc statistics pfc-priority N`
  (`pfc-pause-frames-received|generated`, `deadlock-recovery-occurrences`) and NVUE's
  per-switch-priority `pfc-stats`. A vendor adapter maps its native path onto these.
- NIC counters (CNP, ECN-marked received, out-of-buffer) have no OpenConfig model either:
  `/flatfab-nic/...`, named after the mlx5 ethtool/`rdma statistic` counters.
- The physical layer (checked 2026-12-01): OpenConfig `openconfig-interfaces.yang` 3.8.0
  (2024-12-05) `/interfaces/interface[name]/state/counters/link-transitions` (counter64,
  the link's changes to or from UP before any hold-time or damping: a flap counts two;
  `carrier-transitions` is deprecated for `interface-transitions`, which counts after
  them). `openconfig-platform-transceiver.yang` (0.6.0 on) on a TRANSCEIVER component:
  `transceiver/state/fec-uncorrectable-blocks` (counter64) and `transceiver/state/
  pre-fec-ber/instant` (decimal64, 18 fraction digits); per lane, `transceiver/
  physical-channels/channel[index]/state/input-power/instant` (decimal64 dBm, 2 fraction
  digits; revision 2026-02-10 indexes a single-lane port's channel 0, optics documents and
  several OSes count lanes from 1: the key is the index as the target sends it). The lab
  names each port's transceiver component after its port and its lanes from 1, as
  `ethtool -m` and SFF-8636/CMIS do. OpenConfig counts corrected FEC bits and bytes
  (`fec-corrected-bits`, `-bytes`), not codewords: those are flatfab's own,
  `/flatfab-phy/interfaces/interface[name]/fec/state/corrected-codewords`.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, Final

from flatfab.telemetry.samples import GAUGES, Metric, Number

Elem = tuple[str, tuple[tuple[str, str], ...]]  # (name, sorted (key, value) pairs)

OPER_STATUS_UP: Final = "UP"
OPER_STATUS_DOWN: Final = "DOWN"


@dataclass(frozen=True, slots=True)
class Leaf:
    """Where one metric lives: a template with `{port}` and (optionally) `{key}`."""

    metric: Metric
    template: str
    keyed: bool  # does `{key}` appear (priority or queue index)


# fmt: off
LEAVES: Final[tuple[Leaf, ...]] = (
    # OpenConfig interfaces (state, ON_CHANGE)
    Leaf(Metric.OPER_UP, "/interfaces/interface[name={port}]/state/oper-status", False),
    # OpenConfig QoS: egress queues; the queue name is flatfab's queue index ("0".."7")
    Leaf(Metric.QUEUE_TX, "/qos/interfaces/interface[interface-id={port}]/output/queues"
                          "/queue[name={key}]/state/transmit-pkts", True),
    Leaf(Metric.QUEUE_DROPS, "/qos/interfaces/interface[interface-id={port}]/output/queues"
                             "/queue[name={key}]/state/dropped-pkts", True),
    Leaf(Metric.QUEUE_ECN, "/qos/interfaces/interface[interface-id={port}]/output/queues"
                           "/queue[name={key}]/state/ecn-marked-pkts", True),
    # flatfab: per-priority PFC and watchdog (no OpenConfig leaf exists)
    Leaf(Metric.PFC_RX, "/flatfab-qos/interfaces/interface[name={port}]/pfc/priorities"
                        "/priority[id={key}]/state/rx-pause-frames", True),
    Leaf(Metric.PFC_TX, "/flatfab-qos/interfaces/interface[name={port}]/pfc/priorities"
                        "/priority[id={key}]/state/tx-pause-frames", True),
    Leaf(Metric.WATCHDOG, "/flatfab-qos/interfaces/interface[name={port}]/pfc/priorities"
                          "/priority[id={key}]/state/watchdog-storms", True),
    # the physical layer: OpenConfig interfaces (link transitions) and transceiver (FEC
    # uncorrectable blocks, pre-FEC BER: the lab's component is named after its port);
    # corrected codewords under flatfab's own root (OpenConfig counts corrected bits)
    Leaf(Metric.CARRIER_TRANSITIONS,
         "/interfaces/interface[name={port}]/state/counters/link-transitions", False),
    Leaf(Metric.FEC_UNCORRECTABLE,
         "/components/component[name={port}]/transceiver/state/fec-uncorrectable-blocks",
         False),
    Leaf(Metric.PRE_FEC_BER,
         "/components/component[name={port}]/transceiver/state/pre-fec-ber/instant", False),
    Leaf(Metric.RX_POWER,
         "/components/component[name={port}]/transceiver/physical-channels/channel[index={key}]"
         "/state/input-power/instant", True),
    Leaf(Metric.FEC_CORRECTED,
         "/flatfab-phy/interfaces/interface[name={port}]/fec/state/corrected-codewords",
         False),
    # flatfab: NIC (host) counters
    Leaf(Metric.NIC_CNP_SENT, "/flatfab-nic/interfaces/interface[name={port}]/state/cnp-sent",
         False),
    Leaf(Metric.NIC_CNP_HANDLED,
         "/flatfab-nic/interfaces/interface[name={port}]/state/cnp-handled", False),
    Leaf(Metric.NIC_ECN_MARKED_RX,
         "/flatfab-nic/interfaces/interface[name={port}]/state/ecn-marked-rx", False),
    Leaf(Metric.NIC_OUT_OF_BUFFER,
         "/flatfab-nic/interfaces/interface[name={port}]/state/out-of-buffer", False),
)
# fmt: on

# What a subscriber asks for: wildcard prefixes (a list without keys means every entry).
COUNTER_SUBSCRIPTIONS: Final = (
    "/qos/interfaces/interface/output/queues/queue/state",
    "/flatfab-qos/interfaces/interface/pfc/priorities/priority/state",
    "/flatfab-nic/interfaces/interface/state",
    # the physical layer: leaf by leaf, as a switch's trees below these hold far more
    "/interfaces/interface/state/counters/link-transitions",
    "/components/component/transceiver/state/fec-uncorrectable-blocks",
    "/components/component/transceiver/state/pre-fec-ber/instant",
    "/components/component/transceiver/physical-channels/channel/state/input-power/instant",
    "/flatfab-phy/interfaces/interface/fec/state",
)
STATE_SUBSCRIPTIONS: Final = ("/interfaces/interface/state/oper-status",)


class PathError(ValueError):
    """A path string flatfab cannot parse."""


_ELEM = re.compile(r"([^/\[\]]+)((?:\[[^=\]]+=[^\]]*\])*)")
_KEY = re.compile(r"\[([^=\]]+)=([^\]]*)\]")


def parse(path: str) -> tuple[Elem, ...]:
    """`/a/b[k=v]/c` -> ((a, ()), (b, ((k, v),)), (c, ())). Key values may not hold `/`, `]`."""
    elems: list[Elem] = []
    for part in _split(path):
        m = _ELEM.fullmatch(part)
        if m is None:
            raise PathError(f"not a gNMI path: {path!r}")
        keys = tuple(sorted(_KEY.findall(m.group(2))))
        elems.append((m.group(1), keys))
    return tuple(elems)


def _split(path: str) -> list[str]:
    # split on "/" outside brackets: interface names like "Ethernet1/1" live in keys
    parts, depth, cur = [], 0, ""
    for ch in path.strip("/"):
        if ch == "/" and depth == 0:
            parts.append(cur)
            cur = ""
            continue
        depth += ch == "["
        depth -= ch == "]"
        cur += ch
    if cur:
        parts.append(cur)
    return parts


def render(elems: tuple[Elem, ...]) -> str:
    return "/" + "/".join(name + "".join(f"[{k}={v}]" for k, v in keys) for name, keys in elems)


def leaf_path(metric: Metric, port: str, key: int | None = None) -> str:
    """The path that carries `metric` for `port` (and priority/queue `key`) on a target
    serving flatfab's own paths (the embedded lab's)."""
    return FLATFAB.leaf_path(metric, port, key)


def leaf_value(metric: Metric, value: Number) -> Number | str:
    """What the target serves for a metric: counters as integers, gauges as floats, oper
    state as its enum."""
    if metric is Metric.OPER_UP:
        return OPER_STATUS_UP if value else OPER_STATUS_DOWN
    if metric in GAUGES:
        return float(value)
    return value


def _pattern(leaf: Leaf) -> re.Pattern[str]:
    # matched against canonical paths (keys sorted): so is the template, or a leaf whose
    # keys are written in another order would never match
    try:
        template = render(parse(leaf.template))
    except PathError:
        template = leaf.template
    esc = re.escape(template).replace(r"\{port\}", "(?P<port>[^\\]]+)")
    esc = esc.replace(r"\{key\}", r"(?P<key>\d+)")
    return re.compile(esc)


Hit = tuple[Metric, str, int | None]  # (metric, port, key)
_Where = tuple[int, str] | None  # (element index, key name) a placeholder is the value of
_Signature = tuple[tuple[str, tuple[str, ...]], ...]  # element names and their key names


@dataclass(frozen=True, slots=True)
class _Shape:
    """A leaf whose `{port}`/`{key}` are whole key values: matched on the parsed elements,
    no rendering and no regex (templates with a placeholder inside a name are not shapes)."""

    order: int  # the leaf's place in the table: the first leaf that matches wins
    leaf: Leaf
    literals: tuple[tuple[int, str, str], ...]  # (element, key name, value) to equal
    port: tuple[int, str]
    key: _Where


def _shape(order: int, leaf: Leaf) -> tuple[_Signature, _Shape] | None:
    try:
        elems = parse(leaf.template)
    except PathError:
        return None
    literals: list[tuple[int, str, str]] = []
    port: _Where = None
    key: _Where = None
    for i, (name, keys) in enumerate(elems):
        if "{" in name or "}" in name:
            return None  # placeholder inside a name (SONiC's COUNTERS/{port}/..._{key}_...)
        for k, v in keys:
            if v == "{port}" and port is None:
                port = (i, k)
            elif v == "{key}" and key is None:
                key = (i, k)
            elif "{" in v or "}" in v:
                return None  # a placeholder with text around it, or twice
            else:
                literals.append((i, k, v))
    if port is None or (leaf.keyed and key is None):
        return None
    signature = tuple((name, tuple(k for k, _ in keys)) for name, keys in elems)
    return signature, _Shape(order, leaf, tuple(literals), port, key if leaf.keyed else None)


@dataclass(frozen=True)
class PathTable:
    """One platform's telemetry paths: which leaf carries which metric, and the wildcard
    paths a subscriber asks for (SAMPLE for counters, ON_CHANGE for state). `origin` and
    `target` go in the subscription prefix where a platform needs them (SONiC's telemetry
    container serves COUNTERS_DB under target `COUNTERS_DB`)."""

    name: str
    leaves: tuple[Leaf, ...]
    counter_subscriptions: tuple[str, ...]
    state_subscriptions: tuple[str, ...]
    origin: str = ""
    target: str = ""
    _patterns: tuple[tuple[re.Pattern[str], Leaf], ...] = field(
        init=False, repr=False, compare=False)
    _by_metric: dict[Metric, Leaf] = field(init=False, repr=False, compare=False)
    # element names and key names -> the shapes that could match; a leaf that is not a
    # shape is found by its regex, and no shape after it is trusted before that regex
    _shapes: dict[_Signature, tuple[_Shape, ...]] = field(
        init=False, repr=False, compare=False)
    _first_unshaped: int = field(init=False, repr=False, compare=False)
    # element names from the root -> the key names of that (list) element, from the leaves
    _list_keys: dict[tuple[str, ...], tuple[str, ...]] = field(
        init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        list_keys: dict[tuple[str, ...], tuple[str, ...]] = {}
        for leaf in self.leaves:
            try:
                elems = parse(leaf.template)
            except PathError:
                continue
            for i, (_, keys) in enumerate(elems):
                if keys:
                    list_keys.setdefault(tuple(n for n, _ in elems[:i + 1]),
                                         tuple(k for k, _ in keys))
        object.__setattr__(self, "_list_keys", list_keys)
        patterns = tuple((_pattern(leaf), leaf) for leaf in self.leaves)
        object.__setattr__(self, "_patterns", patterns)
        object.__setattr__(self, "_by_metric", {leaf.metric: leaf for leaf in self.leaves})
        shapes: dict[_Signature, tuple[_Shape, ...]] = {}
        first_unshaped = len(self.leaves)
        for order, leaf in enumerate(self.leaves):
            found = _shape(order, leaf)
            if found is None:
                first_unshaped = min(first_unshaped, order)
                continue
            signature, shape = found
            shapes[signature] = (*shapes.get(signature, ()), shape)
        object.__setattr__(self, "_shapes", shapes)
        object.__setattr__(self, "_first_unshaped", first_unshaped)

    def leaf_path(self, metric: Metric, port: str, key: int | None = None) -> str:
        """The path that carries `metric` for `port` (and priority/queue `key`)."""
        leaf = self._by_metric.get(metric)
        if leaf is None:
            raise PathError(f"{self.name}: no path carries {metric}")
        if leaf.keyed and key is None:
            raise PathError(f"{metric} needs a priority or queue index")
        return leaf.template.format(port=port, key="" if key is None else key)

    def metric_of(self, path: str) -> Hit | None:
        """(metric, port, key) for a leaf path this table knows, None for any other leaf."""
        return self.decode(parse(path))

    def decode(self, elems: tuple[Elem, ...]) -> Hit | None:
        """`metric_of` for a parsed path (as `from_proto` gives it)."""
        hit = self._by_shape(elems)
        if hit is not None and hit[0] < self._first_unshaped:
            return hit[1]
        if hit is None and self._first_unshaped == len(self.leaves):
            return None  # every leaf is a shape: the regexes would say no too
        return self._by_pattern(render(elems))

    def list_keys(self, names: tuple[str, ...]) -> tuple[str, ...] | None:
        """The key names of the list element at `names` (from the root), where a leaf of
        this table goes through it: how a JSON list's entries become keyed elements."""
        return self._list_keys.get(names)

    def under(self, elems: tuple[Elem, ...]) -> list[tuple[Metric, str | None, int | None]]:
        """The metrics whose leaves lie at or below `elems` (a deleted subtree): (metric,
        port, key), None where the path leaves the port or the key open (every one)."""
        out: list[tuple[Metric, str | None, int | None]] = []
        for signature, shapes in self._shapes.items():
            if len(elems) > len(signature):
                continue
            if any(name != signature[i][0] for i, (name, _) in enumerate(elems)):
                continue
            for shape in shapes:
                found = _below(shape, elems)
                if found is not None:
                    out.append(found)
        return sorted(set(out), key=lambda t: (t[0].value, t[1] or "", -1 if t[2] is None
                                               else t[2]))

    def _by_shape(self, elems: tuple[Elem, ...]) -> tuple[int, Hit] | None:
        signature = tuple((name, tuple(k for k, _ in keys)) for name, keys in elems)
        for shape in self._shapes.get(signature, ()):
            if any(dict(elems[i][1])[k] != v for i, k, v in shape.literals):
                continue
            port = dict(elems[shape.port[0]][1])[shape.port[1]]
            if not port or "]" in port:
                continue  # what the regex's `[^\]]+` refuses
            if shape.key is None:
                return shape.order, (shape.leaf.metric, port, None)
            key = dict(elems[shape.key[0]][1])[shape.key[1]]
            if key.isdecimal():  # `\d+`, Unicode digits included, as the regex
                return shape.order, (shape.leaf.metric, port, int(key))
        return None

    def _by_pattern(self, norm: str) -> Hit | None:
        for pattern, leaf in self._patterns:
            m = pattern.fullmatch(norm)
            if m:
                key = int(m.group("key")) if leaf.keyed else None
                return leaf.metric, m.group("port"), key
        return None


def _below(shape: _Shape, elems: tuple[Elem, ...]
           ) -> tuple[Metric, str | None, int | None] | None:
    """A shape's leaves under a (deleted) path: its port and key where the path fixes them."""
    port: str | None = None
    key: int | None = None
    literals = {(i, k): v for i, k, v in shape.literals}
    for i, (_, keys) in enumerate(elems):
        for k, v in keys:
            if (i, k) in literals:
                if literals[(i, k)] != v:
                    return None
            elif shape.port == (i, k):
                port = v
            elif shape.key == (i, k):
                if not v.isdecimal():
                    return None
                key = int(v)
            else:
                return None  # a key this leaf does not have
    return shape.leaf.metric, port, key


FLATFAB: Final = PathTable("flatfab", LEAVES, COUNTER_SUBSCRIPTIONS, STATE_SUBSCRIPTIONS)


def metric_of(path: str) -> Hit | None:
    """(metric, port, key) for one of flatfab's own leaf paths, None for any other leaf."""
    return FLATFAB.metric_of(path)


# OpenConfig oper-status (openconfig-interfaces.yang, interfaces/interface/state)
OPER_STATUSES: Final = frozenset({"UP", "DOWN", "TESTING", "UNKNOWN", "DORMANT", "NOT_PRESENT",
                                  "LOWER_LAYER_DOWN"})


def sample_value(metric: Metric, value: Number | str) -> Number:
    """A served value back to what a `Sample` carries: an integer for a counter (exact: a
    float with a fraction is refused) and a state (oper-status UP -> 1), a float for a gauge
    (a decimal64 arrives as a number or, in JSON IETF, a string, RFC 7951 6.1; not a finite
    number is refused). A value that is not an oper-status at all raises ValueError (unread,
    never "down"); JSON IETF may qualify an enum with its module
    (`openconfig-interfaces:UP`, RFC 7951 6.4/6.8)."""
    if metric is Metric.OPER_UP:
        status = str(value).rpartition(":")[2].upper()
        if status not in OPER_STATUSES:
            raise ValueError(f"not an oper-status: {value!r}")
        return 1 if status == OPER_STATUS_UP else 0
    if metric in GAUGES:
        level = float(value)
        if not math.isfinite(level):
            raise ValueError(f"{metric.value}: not a finite number: {value!r}")
        return level
    if isinstance(value, float):
        if not value.is_integer():
            raise ValueError(f"{metric.value}: a counter is a whole number, not {value!r}")
        return int(value)
    return int(value)


def matches(request: tuple[Elem, ...], leaf: tuple[Elem, ...]) -> bool:
    """Does the requested path cover `leaf`? A request selects its node and every descendant
    (openconfig/reference rpc/gnmi/gnmi-path-conventions.md): a missing key or a `*` key
    value matches any entry, a `*` element any one name, and `...` any number of elements,
    none included (XPath's `//`): what follows it must still match."""
    return _matches(request, 0, leaf, 0)


def _matches(request: tuple[Elem, ...], i: int, leaf: tuple[Elem, ...], j: int) -> bool:
    while i < len(request):
        name, keys = request[i]
        if name == "...":
            if i + 1 == len(request):
                return True
            return any(_matches(request, i + 1, leaf, k) for k in range(j, len(leaf) + 1))
        if j >= len(leaf):
            return False
        lname, lkeys = leaf[j]
        if name not in ("*", lname):
            return False
        if keys:
            have = dict(lkeys)
            if any(v != "*" and have.get(k) != v for k, v in keys):
                return False
        i, j = i + 1, j + 1
    return True


_MODULE = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*:(?=[A-Za-z_])")


def strip_module(name: str) -> str:
    """`openconfig-interfaces:state` -> `state`: the module qualifier RFC 7951 puts on a JSON
    member (and some targets on path elements) where the module changes."""
    m = _MODULE.match(name)
    return name[m.end():] if m else name


def strip_modules(elems: tuple[Elem, ...]) -> tuple[Elem, ...]:
    return tuple((strip_module(n), keys) for n, keys in elems)


# --- wire form (gNMI `Path` messages); the protos are generated and untyped ---------------

def to_proto(path: str | tuple[Elem, ...], origin: str = "") -> Any:
    # the telemetry extra's protos: the path tables above serve a core install too
    from pygnmi.spec.v080 import gnmi_pb2  # noqa: PLC0415

    elems = parse(path) if isinstance(path, str) else path
    return gnmi_pb2.Path(origin=origin,
                         elem=[gnmi_pb2.PathElem(name=n, key=dict(k)) for n, k in elems])


def from_proto(path: Any, prefix: Any = None) -> tuple[Elem, ...]:
    """A gNMI `Path` (after its optional `prefix`) as elements; `origin` and `target` are
    not elements (see `origin_of`)."""
    elems: list[Elem] = []
    for p in (prefix, path):
        if p is not None:
            elems.extend((e.name, tuple(sorted(e.key.items()))) for e in p.elem)
    return tuple(elems)


def origin_of(path: Any, prefix: Any = None) -> str:
    """The origin a path names, in its prefix or itself ("" where neither does)."""
    return (prefix.origin if prefix is not None else "") or (path.origin if path is not None
                                                             else "")
