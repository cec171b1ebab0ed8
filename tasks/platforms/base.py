"""The platform contract: everything that differs between switch OSes, behind one interface.

Planner, checks, drift, audit, traffic, lab and rollout use a platform only through
`Platform` below and the `DeviceDriver` protocol its connection yields. A platform is one
Python package (flatfab's own under tasks/platforms/, or a package of its own), one data
file beside its module (`platform.yaml`: naming, capabilities, connection, lab node) and one
entry point in the group `flatfab.platforms` (registry.py).
"""

from __future__ import annotations

import difflib
import fnmatch
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, model_validator

from flatfab.model.physical import PortPhysical
from flatfab.model.state import DeviceState, HashField, Probe
from flatfab.yamlio import load_yaml

if TYPE_CHECKING:
    from flatfab.telemetry.paths import PathTable
    from flatfab.telemetry.platform_paths import PlatformPaths


class Facts(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class CommitConfirm(StrEnum):
    NATIVE = "native"  # the OS has a commit timer of its own (EOS session timer)
    EMULATED = "emulated"  # flatfab runs a revert timer on the device (frr, sonic)
    NONE = "none"  # backup + re-apply only


class ReadOnlyGuard(StrEnum):
    TRANSPORT = "transport"  # the SSH transport refuses mutating commands
    DRIVER = "driver"  # a wrapper refuses every config method and non-show command


class Naming(Facts):
    """How the platform spells the neutral interface roles of the plan.

    A physical port number n (1-based, from the fabric's port scheme) is index
    `first + (n - 1) * step` in `physical` ("swp{index}", "Ethernet{index}").
    """

    physical: str
    first: int = 1
    step: int = Field(default=1, ge=1)
    subinterface: str = "{port}.{vlan}"
    short_subinterface: str | None = None  # used when the long form exceeds max_length
    loopback: str
    gateway: str  # host-facing L3 gateway of one VRF: "br{vlan}", "Vlan{vlan}"
    default_gateway_vlan: int = 0  # the gateway "VLAN" of the default VRF
    vrf: str = "{tenant}"  # the device's own name of a tenant VRF
    vrf_pattern: str = r"^[A-Za-z][A-Za-z0-9_-]*$"
    max_length: int = 15  # interface names
    ports: str  # regex: the physical port names intents may use on this platform


# the lossless settings (as collect's `unknown` maps name them) a feature a family cannot
# express covers: a switch family without buffer knobs states none of these
FEATURE_SETTINGS: dict[str, tuple[str, ...]] = {
    "buffers": ("pools.*", "profiles.*", "pgs.*", "queues.*.profile"),
}


class HashFieldSets(Facts):
    """The only ECMP hash field lists an OS renders (a fixed set of modes), and why."""

    sets: tuple[frozenset[HashField], ...]
    why: str


class Capabilities(Facts):
    commit_confirm: CommitConfirm
    read_only: ReadOnlyGuard
    # each of these decides behaviour, and the platform's class must implement exactly the
    # method it names (checked when the platform is built): one source of truth
    traffic_source: bool = False  # send_test_traffic: the sources of verify --traffic
    class_counters: bool = False  # class_counters: per-TC queue counters verify --traffic reads
    nic_counters: bool = False  # nic_counters: a host NIC's pause, CNP, ECN and buffer counters
    # run_engine, stop_engine and rdma_side: the test engines of `flatfab accept` on a host
    acceptance_engines: bool = False
    # what the platform (or a hardware family of it) cannot express: feature -> why. The
    # intent's load refuses what is listed here; renders rely on that and check none of it
    unsupported: dict[str, str] = Field(default_factory=dict)
    # the hash field lists the OS can render, where it cannot take any (None: any); another
    # list in fabric.yaml `load_balancing` is refused at load with `why`
    hash_fields: HashFieldSets | None = None
    # the ASIC families (or family lines: "tomahawk" covers tomahawk-3..5) the OS runs on;
    # an intent that gives the platform another (qos.asics) is refused at load. Empty: any
    asic_families: tuple[str, ...] = ()
    # family (or family line) -> unsupported
    families: dict[str, dict[str, str]] = Field(default_factory=dict)
    # lossless settings the OS never states, whatever the device's configuration: a pattern
    # of the setting as collect's `unknown` maps name it (fnmatch: "pools.*.mode",
    # "watchdog.poll_ms") -> why. Each is a limitation of the platform, listed once per run;
    # any other setting a device leaves unread makes the run incomplete
    unreadable: dict[str, str] = Field(default_factory=dict)

    def unreadable_match(self, setting: str,
                         family: str | None = None) -> tuple[str, str] | None:
        """(the declared pattern, why) if the OS never states `setting` (on switches of
        `family`, whose limits may leave a whole feature unstated: a family without buffer
        knobs states no pool or profile); None: it should have been read."""
        declared = dict(self.unreadable)
        for feature, why in (self.family_limits(family).items() if family else ()):
            declared.update(dict.fromkeys(FEATURE_SETTINGS.get(feature, ()), why))
        return next(((pattern, why) for pattern, why in declared.items()
                     if fnmatch.fnmatchcase(setting, pattern)), None)

    def family_limits(self, family: str) -> dict[str, str]:
        """What an ASIC family cannot express: its own entry or its family line's."""
        found: dict[str, str] = {}
        for line, unsupported in sorted(self.families.items()):
            if _in_line(family, line):
                found.update(unsupported)
        return found

    def runs_on(self, family: str) -> bool:
        """Whether the OS runs on switches of this ASIC family."""
        return not self.asic_families or any(_in_line(family, line)
                                             for line in self.asic_families)


def _in_line(family: str, line: str) -> bool:
    """A family is its own line and in the line its name starts with ("tomahawk-5")."""
    return family == line or family.startswith(f"{line}-")


class Connection(Facts):
    """How Nornir reaches the device: any registered Nornir connection plugin (nornir_napalm's
    `napalm`, nornir_netmiko's `netmiko`, nornir_scrapli's `scrapli`, or one the platform's
    package registers for its own API client); `adapt` turns the opened connection into a
    DeviceDriver."""

    plugin: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    driver: str  # what the plugin calls the platform: NAPALM driver, netmiko device_type, ...
    port: int = 22
    # flatfab's extra that installs the plugin or driver (none: the core has them); planning
    # and rendering never need it, reaching a device does
    extra: str | None = None


class SourceOfTruth(Facts):
    """How a source of truth (Nautobot) spells the platform: the seed writes these, `sot
    import` maps `network_driver` back to the platform."""

    network_driver: str  # Nautobot's Platform.network_driver (netutils' driver names)
    manufacturer: str
    device_type: str
    napalm_driver: str = ""  # "" where flatfab does not reach the platform through NAPALM


@dataclass(frozen=True)
class Login:
    """How a device's connection plugin logs in, read from its options as the plugin spells
    them: what the inventory is checked for before any connection. Option keys are relative
    to the plugin's entry under connection_options (`extras.optional_args.key_file`)."""

    transport: Literal["ssh", "https"]  # https: a password is the only way in
    port: object = None  # the port the options set (None: Nornir's `port`, else the default)
    port_key: str = ""
    key_file: str | None = None  # a private key the options name
    key_file_key: str = ""
    # the known_hosts file the plugin checks host keys against (None: ~/.ssh/known_hosts);
    # reads_known_hosts false: the options name none (a problem says so)
    known_hosts: str | None = None
    reads_known_hosts: bool = True
    agent: bool = False  # the plugin asks an SSH agent, where one runs (SSH_AUTH_SOCK)
    default_keys: bool = False  # the plugin tries the user's own keys (~/.ssh/id_*)
    # (option key, why) for options that would leave host keys unchecked or unreadable
    problems: tuple[tuple[str, str], ...] = ()


class EmbeddedRuntime(Facts):
    """How the embedded lab (network namespaces on this machine's own binaries,
    tasks/lab/netns.py) runs a node of the platform: what is the node's own, what starts
    it, what `lab status` looks at, what serves its telemetry."""

    # folders of the node's own, bind-mounted over these paths inside its mount namespace
    binds: tuple[str, ...]
    # where the day-0 files `lab_node` writes for containerlab go (copied in from the
    # topology's binds, through `Platform.embedded_config`), and which of them there must be
    config_dir: str | None = None
    config_files: tuple[str, ...] = ()
    # bound folder -> its owner (user:group), for daemons that run as a user of their own
    owners: dict[str, str] = Field(default_factory=dict)
    # what the machine must have installed to run it (beyond the lab's own tools)
    commands: tuple[str, ...] = ()
    # groups the lab's login user joins where they exist (the OS's CLI without sudo)
    user_groups: tuple[str, ...] = ()
    # the command, inside the node, that starts its daemons; their pid files in pid_dir,
    # one per daemon, are what `lab status` checks
    start: tuple[str, ...] = ()
    pid_dir: str | None = None
    daemons: tuple[str, ...] = ()
    # `module:function` serving a switch's gNMI telemetry in the lab
    # (flatfab.telemetry.gnmi_target's `source`)
    telemetry: str | None = None


class LabNode(Facts):
    kind: str  # containerlab kind
    image: str
    type: str | None = None  # containerlab node type (a hardware model the kind emulates)
    embedded: bool  # the embedded netns lab can run it
    runtime: EmbeddedRuntime | None = None  # how it does (an embedded platform's only)

    @model_validator(mode="after")
    def _runtime_of_embedded(self) -> LabNode:
        if self.embedded != (self.runtime is not None):
            raise ValueError("lab.runtime is how the embedded lab runs the platform: give it "
                             "exactly when lab.embedded is true")
        return self


class LabNodeSpec(Facts):
    """One node of a lab topology: containerlab kind and image, the files bound into it
    (path in the node -> content) and the commands it runs after deploy."""

    kind: str
    image: str
    type: str | None = None
    files: dict[str, str] = Field(default_factory=dict)
    exec: tuple[str, ...] = ()


class Evidence(Facts):
    """What is proven about a platform, and how: the documentation's platform table. Never
    "tested" on an OS it did not run on: say where each output and oracle comes from."""

    rendered: str  # how its render is checked (golden files, the vendor's own validator)
    driver: str  # what its driver was tested against (a double of the OS, recorded outputs)
    live: str  # where it ran live (the embedded lab), or what a live run needs
    # what its physical-layer reader (verify --physical) was tested on
    physical: str = "not read: `verify --physical` names each of its ports not judged"


class PlatformFacts(Facts):
    name: str
    role: Literal["switch", "host"]
    description: str
    sections: tuple[str, ...]  # named config sections, in render order
    naming: Naming | None = None  # switches only
    # where the device has its management address: never a fabric port or NIC, and the
    # drivers refuse a candidate that touches it (unless the inventory names others)
    management_interfaces: tuple[str, ...]
    capabilities: Capabilities
    connection: Connection
    source_of_truth: SourceOfTruth
    lab: LabNode
    # regexes of names that are this platform's own spelling (table, profile and pool names):
    # the layers above the platforms must never write them (a conformance test fences them)
    vocabulary: tuple[str, ...] = ()
    proven: Evidence
    # how flatfab drives the OS, for the platforms page (Markdown)
    notes: str = ""


@dataclass(frozen=True)
class InventoryOption:
    """One connection option of a real inventory for this platform's devices, as `flatfab
    init` writes it under `connection_options.<plugin>` with why above it: `key` is its
    dotted path there (`extras.optional_args.key_file`); `active` options are written as
    settings (what keeps host keys or certificates checked), the others commented out with
    an example value, for the operator to fill in."""

    key: str
    value: str | int | float | bool | list[str] | dict[str, str]
    why: str
    active: bool = False


@runtime_checkable
class DeviceDriver(Protocol):
    """What workflows may call on any platform's driver (NAPALM's base API, typed)."""

    def open(self) -> None: ...
    def close(self) -> None: ...
    def load_replace_candidate(self, filename: str | None = None,
                               config: str | None = None) -> None: ...
    def load_merge_candidate(self, filename: str | None = None,
                             config: str | None = None) -> None: ...
    def compare_config(self) -> str: ...
    def discard_config(self) -> None: ...
    def commit_config(self, message: str = "", revert_in: int | None = None) -> None: ...
    def confirm_commit(self) -> None: ...
    def has_pending_commit(self) -> bool: ...
    def rollback(self) -> None: ...
    def get_config(self, retrieve: str = "all", full: bool = False,
                   sanitized: bool = False, format: str = "text") -> dict[str, str]: ...
    def get_facts(self) -> dict[str, Any]: ...
    def cli(self, commands: list[str], encoding: str = "text") -> dict[str, Any]: ...


# the names Platform.nic_counters reports a host NIC's counters by
NIC_CNP_SENT = "cnp_sent"  # CNPs the NIC sent (DCQCN notification point)
NIC_CNP_HANDLED = "cnp_handled"  # CNPs the NIC reacted to (reaction point)
NIC_CNP_IGNORED = "cnp_ignored"  # CNPs the NIC received and did not react to
NIC_ECN_MARKED_RX = "ecn_marked_rx"  # RoCE packets received marked ECN-CE
NIC_OUT_OF_BUFFER = "out_of_buffer"  # receive drops for lack of buffer
NIC_PFC_RE = re.compile(r"^pfc_(rx|tx)\.([0-7])$")  # pause frames per priority: pfc_rx.3


def nic_pfc(direction: Literal["rx", "tx"], priority: int) -> str:
    """The name of a NIC's pause frame counter for one direction and priority."""
    return f"pfc_{direction}.{priority}"


def nic_pfc_key(name: str) -> tuple[str, int] | None:
    """("rx" | "tx", priority) of a NIC pause counter's name; None for the others."""
    match = NIC_PFC_RE.match(name)
    return (match.group(1), int(match.group(2))) if match else None


class NotSupportedError(Exception):
    """The platform cannot do this (its capabilities say so)."""


@dataclass(frozen=True)
class EngineRun:
    """One run of a test engine on a host: what it printed (stdout; stderr's last lines in
    `errors`) and its exit status, None when it was killed at its timeout. A background
    run's `handle` is what stop_engine reaps it by."""

    output: str = ""
    errors: str = ""
    exit_status: int | None = None
    handle: str | None = None


@dataclass(frozen=True)
class Timeouts:
    """How long a run waits on a device before naming it unread: its session to open (TCP,
    SSH handshake, login), and one show command to answer. A change (a commit, a reload)
    keeps its driver's own, longer limit."""

    connect: float = 10.0
    command: float = 60.0


DEFAULT_TIMEOUTS = Timeouts()


@dataclass(frozen=True)
class Endpoint:
    """Where a device's session goes, as errors name it."""

    host: str
    port: int
    username: str | None = None
    known_hosts: str | None = None


class Platform(ABC):
    """One switch OS or host kind: a subclass per platform package, built once as the
    package's `PLATFORM` from the data file beside it
    (`Path(__file__).with_name("platform.yaml")`), so the package works wherever it is
    installed; its other data files (`telemetry.yaml`, templates) are found beside it."""

    def __init__(self, facts_file: Path) -> None:
        self.facts_file = facts_file
        self.facts = PlatformFacts.model_validate(load_yaml(facts_file))
        self._check_capabilities(facts_file)
        self._folder = facts_file.parent

    def _check_capabilities(self, facts_file: Path) -> None:
        """A declared capability is a method the platform implements, and an implemented
        method is declared: a mismatch fails at import, never half-way through a run."""
        caps = self.facts.capabilities
        for flag, method in (("traffic_source", "send_test_traffic"),
                             ("class_counters", "class_counters"),
                             ("nic_counters", "nic_counters"),
                             ("acceptance_engines", "run_engine"),
                             ("acceptance_engines", "stop_engine"),
                             ("acceptance_engines", "rdma_side")):
            implemented = getattr(type(self), method) is not getattr(Platform, method)
            if implemented != getattr(caps, flag):
                raise ValueError(f"{facts_file}: capabilities.{flag} is {getattr(caps, flag)}"
                                 f" but {type(self).__name__}.{method} is "
                                 f"{'' if implemented else 'not '}implemented")

    @property
    def name(self) -> str:
        return self.facts.name

    @property
    def commit_confirm(self) -> bool:
        """commit_config(revert_in=...) reverts by itself unless confirmed."""
        return self.facts.capabilities.commit_confirm is not CommitConfirm.NONE

    @cached_property
    def names(self) -> InterfaceNames:
        if self.facts.naming is None:
            raise NotSupportedError(f"platform {self.name} names no switch ports")
        return InterfaceNames(self.facts.naming)

    # ---- streaming telemetry ----------------------------------------------------------------

    @cached_property
    def telemetry(self) -> PlatformPaths | None:
        """The platform's gNMI paths with their sources (`telemetry.yaml` beside
        platform.yaml), None where it has no such file (a host). Read on first use: only
        `watch` needs it, and a bad file is that command's InputError, not an import error."""
        from flatfab.telemetry import platform_paths  # noqa: PLC0415 - grpc only for watch

        file = self._folder / platform_paths.FILE_NAME
        return platform_paths.load(file, self.name) if file.exists() else None

    def telemetry_paths(self) -> PathTable | None:
        """The table a gNMI subscriber decodes this platform's updates with."""
        found = self.telemetry
        return None if found is None else found.table

    # ---- render and read back ---------------------------------------------------------

    @abstractmethod
    def render(self, device: DeviceState) -> str:
        """The device's whole config, deterministic, made of `facts.sections`."""

    @abstractmethod
    def sections(self, config: str) -> dict[str, list[str]]:
        """A config (rendered or running) split into its named sections, for drift."""

    @abstractmethod
    def collect(self, driver: DeviceDriver, planned: DeviceState,
                probes: list[Probe]) -> DeviceState:
        """Observed DeviceState from the device, with show-type reads only."""

    def collect_physical(self, driver: DeviceDriver,
                         planned: DeviceState) -> dict[str, PortPhysical]:
        """Each cabled port's physical layer (module, diagnostics, FEC, flaps), with
        show-type reads only; asked for by `verify --physical` alone. {}: the platform reads
        none (phy.unread names its devices)."""
        return {}

    def change_notes(self, running: str, intended: str) -> list[str]:
        """What a change from running to intended needs beyond a normal commit (a change the
        OS's safe-commit path refuses, a disruptive reload); shown by plan and dry-run."""
        return []

    # ---- connection -----------------------------------------------------------------------

    # a driver that takes one timeout for connecting and for every request (eAPI) gets the
    # command timeout: its port is tried first within the connect timeout
    tries_port_first = False

    def open_timeout(self, timeouts: Timeouts) -> float:
        """How long opening the connection may take with these timeouts (what a reason that
        it timed out names)."""
        return timeouts.command if self.tries_port_first else timeouts.connect

    def connection_extras(self, extras: dict[str, Any], *, read_only: bool,
                          timeouts: Timeouts = DEFAULT_TIMEOUTS) -> dict[str, Any]:
        """The connection plugin's `extras` for a run: the inventory's, plus what tells the
        driver the run's mode (NAPALM drivers: optional_args.read_only) and the run's
        timeouts where the inventory sets none of its own. NAPALM drivers: the driver's
        `timeout` (each request; flatfab's own SSH drivers: each command) and
        optional_args.timeout (flatfab's own SSH drivers: the session's open)."""
        if self.facts.connection.plugin != "napalm":
            return dict(extras)
        optional = dict(extras.get("optional_args") or {})
        optional["read_only"] = read_only
        optional.setdefault("timeout", timeouts.connect)
        return {"timeout": timeouts.command, **extras, "optional_args": optional}

    def endpoint(self, hostname: str, port: int | None, username: str | None,
                 extras: dict[str, Any]) -> Endpoint:
        """Where the plugin connects with these `extras` (NAPALM drivers: optional_args.port,
        else the inventory's port, else the platform's), as errors name it."""
        optional = extras.get("optional_args") or {}
        known = optional.get("known_hosts")
        return Endpoint(hostname, int(optional.get("port") or port
                                      or self.facts.connection.port),
                        username, str(known) if known else None)

    def lab_connection(self, *, key_file: Path, known_hosts: Path) -> dict[str, Any]:
        """The `connection_options` a lab inventory gives a node of this platform: key
        authentication and the lab's known_hosts, spelt for the platform's plugin (NAPALM
        drivers: optional_args)."""
        plugin = self.facts.connection.plugin
        if plugin != "napalm":
            raise NotSupportedError(f"platform {self.name}: no lab connection options for "
                                    f"the {plugin} plugin")
        return {"napalm": {"extras": {"optional_args": {"key_file": str(key_file),
                                                        "known_hosts": str(known_hosts)}}}}

    def inventory_options(self) -> tuple[InventoryOption, ...]:
        """The options an operator may set for real devices of this platform, under
        `connection_options.<facts.connection.plugin>` (`flatfab init` writes them, commented
        out unless `active`): authentication, host key or certificate checks, ports,
        timeouts."""
        return ()

    def login(self, extras: Mapping[str, Any]) -> Login:
        """How the plugin logs in with these `extras` (the inventory's, as Nornir resolves
        them). NAPALM drivers over flatfab's SSH transport (tasks/transport/ssh.py) read
        optional_args key_file, known_hosts and port, and ask the agent and the user's own
        keys when no key_file is given."""
        plugin = self.facts.connection.plugin
        if plugin != "napalm":
            raise NotSupportedError(f"platform {self.name}: no login options for the "
                                    f"{plugin} plugin")
        optional = extras.get("optional_args")
        args: Mapping[str, Any] = optional if isinstance(optional, Mapping) else {}
        key = args.get("key_file")
        return Login(transport="ssh", port=args.get("port"),
                     port_key="extras.optional_args.port",
                     key_file=None if key is None else str(key),
                     key_file_key="extras.optional_args.key_file",
                     known_hosts=None if args.get("known_hosts") is None
                     else str(args["known_hosts"]),
                     agent=key is None, default_keys=key is None)

    def adapt(self, connection: Any, *, read_only: bool) -> DeviceDriver:
        """The driver workflows use, from the opened Nornir connection of
        `facts.connection.plugin` (a NAPALM driver already is one)."""
        if not isinstance(connection, DeviceDriver):
            raise TypeError(f"platform {self.name}: {type(connection).__name__} is not a "
                            "device driver")
        return connection

    def drift_texts(self, driver: DeviceDriver, intended: str) -> tuple[str, str]:
        """(running, intended) in one normal form, read-only, for per-section drift."""
        return driver.get_config(retrieve="running")["running"], intended

    def diff(self, driver: DeviceDriver, intended: str, *, read_only: bool) -> str:
        """What pushing intended would change. Read-only, where only a wrapper guards the
        driver, the diff is made here from the running config: a candidate would need the
        device's config mode (an EOS config session, for one), which read-only never enters."""
        if read_only and self.facts.capabilities.read_only is ReadOnlyGuard.DRIVER:
            running, wanted = self.drift_texts(driver, intended)
            return "".join(difflib.unified_diff(running.splitlines(keepends=True),
                                                wanted.splitlines(keepends=True),
                                                "running", "intended"))
        driver.load_replace_candidate(config=intended)
        found = driver.compare_config()
        driver.discard_config()
        return found

    def lab_node(self, device: DeviceState) -> LabNodeSpec:
        """How a lab runs this device (containerlab kind, image, day-0 files)."""
        return LabNodeSpec(kind=self.facts.lab.kind, image=self.facts.lab.image,
                           type=self.facts.lab.type)

    def embedded_config(self, name: str, text: str) -> str:
        """One of `facts.lab.runtime.config_files` as the embedded lab runs it, from the
        text `lab_node` wrote for containerlab (unchanged unless the platform says)."""
        return text

    # ---- optional capabilities ----------------------------------------------------------

    def class_counters(self, driver: DeviceDriver) -> dict[str, dict[int, dict[str, int]]]:
        """Per port (and VRF sub-port) and traffic class, its counters (packets, drops)."""
        raise NotSupportedError(f"platform {self.name} reports no per-class counters")

    def nic_counters(self, driver: DeviceDriver) -> dict[str, dict[str, int]]:
        """Per host NIC, its congestion counters, read-only, by the NIC_* names above (pause
        frames: nic_pfc); a counter the NIC does not keep is absent, never 0."""
        raise NotSupportedError(f"platform {self.name} reports no NIC counters")

    def send_test_traffic(self, driver: DeviceDriver, address: str, sport_base: int,
                          flows: int, data_packets: int, source: str | None = None) -> int:
        """RoCEv2-shaped flows (data + one CNP per flow) to address, from `source` (a
        multi-NIC server's NIC address; None: the host's choice); datagrams sent."""
        raise NotSupportedError(f"platform {self.name} cannot source test traffic")

    def probe(self, driver: DeviceDriver,
              targets: list[tuple[str, int, bool]]) -> list[dict[str, Any]]:
        """Pings (address, payload size, don't fragment) -> [{replied, detail}]."""
        raise NotSupportedError(f"platform {self.name} cannot send probes")

    def run_engine(self, driver: DeviceDriver, argv: list[str], timeout_s: float, *,
                   background: bool = False, listens_on: int | None = None) -> EngineRun:
        """Run a test engine's command (`flatfab accept`: iperf3, ib_write_bw, mpirun) on
        the host, killed after `timeout_s`. `background`: start it (a server) and return once
        it listens on TCP port `listens_on` (when given) with the handle stop_engine reaps."""
        raise NotSupportedError(f"platform {self.name} cannot run test engines")

    def stop_engine(self, driver: DeviceDriver, handle: str, wait_s: float) -> EngineRun:
        """A background run's output once it ended by itself within `wait_s`, else killed
        (its exit_status None); nothing of it is left on the host either way."""
        raise NotSupportedError(f"platform {self.name} cannot run test engines")

    def rdma_side(self, driver: DeviceDriver, nic: str, address: str) -> tuple[str, int]:
        """(RDMA device, GID index) of the RoCEv2 GID of `address` on `nic`: what
        ib_write_bw's -d and -x take. NotSupportedError: the NIC has no RDMA device."""
        raise NotSupportedError(f"platform {self.name} cannot run test engines")

    def read_only(self, driver: DeviceDriver) -> DeviceDriver:
        """The driver as verify and audit get it. Transport-guarded platforms are opened
        read-only already; others are wrapped so config methods and non-show commands fail."""
        if self.facts.capabilities.read_only is ReadOnlyGuard.TRANSPORT:
            return driver
        return ReadOnlyDriver(driver, self.show_command)

    def show_command(self, command: str) -> bool:
        """Whether a cli() command only reads (used by the read-only guard)."""
        return bool(_SHOW.match(command))


_SHOW = re.compile(r"^\s*show\s[^;|]*(\|\s*json\s*)?$")


class ReadOnlyError(PermissionError):
    """A read-only workflow asked a device to change."""


_READ_METHODS = frozenset({"open", "close", "get_config", "get_facts", "cli", "is_alive",
                           "compare_config", "discard_config", "has_pending_commit"})


class ReadOnlyDriver:
    """Wraps a driver for verify and audit: getters pass, everything else is refused.

    compare_config and discard_config pass (a dry run diffs), but loading a candidate does
    not, so nothing can be compared that was not already there.
    """

    def __init__(self, inner: DeviceDriver, is_show: Callable[[str], bool]) -> None:
        self._inner = inner
        self._is_show = is_show

    def __getattr__(self, name: str) -> Any:
        if name.startswith("get_") or name in _READ_METHODS:
            attribute = getattr(self._inner, name)
            if name == "cli":
                return self._cli
            return attribute
        raise ReadOnlyError(f"read-only: {name}() is refused")

    def _cli(self, commands: list[str], encoding: str = "text") -> dict[str, Any]:
        refused = [c for c in commands if not self._is_show(c)]
        if refused:
            raise ReadOnlyError(f"read-only: refused command {refused[0]!r}")
        result: dict[str, Any] = self._inner.cli(commands, encoding=encoding)
        return result


class InterfaceNames:
    """The neutral interface roles of the plan, spelled the platform's way."""

    def __init__(self, naming: Naming) -> None:
        self.naming = naming
        self._ports = re.compile(naming.ports)
        self._vrf = re.compile(naming.vrf_pattern)

    @property
    def loopback(self) -> str:
        return self.naming.loopback

    def physical(self, number: int) -> str:
        index = self.naming.first + (number - 1) * self.naming.step
        if index < 0:
            raise ValueError(f"port number {number} has no name on this platform "
                             f"(first index {self.naming.first})")
        return self.naming.physical.format(index=index)

    def subinterface(self, port: str, vlan: int) -> str:
        name = self.naming.subinterface.format(port=port, vlan=vlan)
        short = self.naming.short_subinterface
        if len(name) > self.naming.max_length and short is not None:
            digits = re.search(r"(\d+)$", port)
            name = short.format(port=port, vlan=vlan, index=digits.group(1) if digits else "")
        return name

    def gateway(self, vrf_id: int | None) -> str:
        return self.naming.gateway.format(vlan=vrf_id or self.naming.default_gateway_vlan)

    def vrf(self, tenant: str) -> str:
        return self.naming.vrf.format(tenant=tenant)

    def tenant_of(self, vrf: str) -> str | None:
        """The tenant a device VRF name stands for (None when the pattern does not fit)."""
        head, _, tail = self.naming.vrf.partition("{tenant}")
        if vrf.startswith(head) and vrf.endswith(tail) and len(vrf) > len(head) + len(tail):
            return vrf[len(head):len(vrf) - len(tail)]
        return None

    def problem(self, name: str) -> str | None:
        """Why an interface name cannot exist on this platform (None when it can)."""
        if len(name) > self.naming.max_length:
            return f"{name!r} is longer than {self.naming.max_length} characters"
        return None

    def is_port(self, name: str) -> bool:
        return bool(self._ports.match(name))

    def vrf_problem(self, tenant: str) -> str | None:
        vrf = self.vrf(tenant)
        if not self._vrf.match(vrf):
            return f"VRF name {vrf!r} does not match {self.naming.vrf_pattern}"
        # a VRF is an interface too (Linux VRF device): it must not take another's name
        gateway = re.escape(self.naming.gateway).replace(re.escape("{vlan}"), "[0-9]+")
        if self.is_port(vrf) or vrf == self.loopback or re.fullmatch(gateway, vrf) \
                or re.fullmatch(r"(lo|eth[0-9]+|mgmt[0-9]*|docker[0-9]*|bond[0-9]+)", vrf):
            return f"VRF name {vrf!r} is also the name of an interface on this platform"
        return None

