"""Platform `srlinux`: Nokia SR Linux on 7220 IXR (JSON config over napalm-srlinux).

Decisions (platform.yaml has the names):
- the rendered config is napalm-srlinux's gNMI-style `{"replaces": [...]}`: one replace per
  interface and network-instance flatfab renders, plus `/routing-policy` and `/qos` whole,
  and `/system/load-balancing/hash-options` where the intent sets ECMP hashing; never `/`
  (mgmt0, the mgmt network-instance and the rest of /system stay the box's own);
- host gateways: a mac-vrf `bridge-<vlan>` per gateway holds the host ports' bridged
  subinterface 0 and `irb0.<vlan>`, whose address is the gateway, in the tenant's ip-vrf;
- a fabric port that carries VRF VLANs and routes untagged too (VRF-lite on the fabric
  links): SR Linux allows `untagged` only on bridged subinterfaces, so subinterface 0 is
  bridged into a mac-vrf `native-<n>` with `irb1.<n>`, which holds the port's addresses or
  its unnumbered BGP (the way netlab realises a routed native VLAN on SR Linux);
- the underlay is numbered or unnumbered as planned: unnumbered peers are BGP dynamic
  neighbors on the subinterface, set up by received IPv6 router advertisements, with IPv4
  routes over IPv6 next hops (RFC 8950);
- commit confirmed is SR Linux's own (JSON-RPC `set` with `confirm-timeout`, accepted with
  `tools system configuration confirmed-accept`); read-only is a driver wrapper (JSON-RPC
  has no read-only session).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from flatfab.model.physical import PortPhysical
from flatfab.model.state import DeviceState, Probe
from flatfab.platforms.base import (
    DEFAULT_TIMEOUTS,
    DeviceDriver,
    Endpoint,
    InventoryOption,
    Login,
    Platform,
    Timeouts,
)
from flatfab.platforms.srlinux.collect import collect, physical
from flatfab.platforms.srlinux.render import render
from flatfab.platforms.srlinux.sections import entries_of, normalized_running, split

# reads only: `info` (from state/running) and `show`, no pipes but `| as json`; never
# `/tools`, `enter`, `commit`, `set`, `delete` (SR Linux CLI guide)
_READ = re.compile(r"^\s*(show|info)(\s+from\s+(state|running))?\s[^;|]*(\|\s*as\s+json\s*)?$")


HTTPX_DEFAULT_S = 5.0  # httpx's timeout where none is given


class SrlinuxPlatform(Platform):
    def connection_extras(self, extras: dict[str, Any], *, read_only: bool,
                          timeouts: Timeouts = DEFAULT_TIMEOUTS) -> dict[str, Any]:
        """napalm-srlinux hands its `timeout` to httpx with each JSON-RPC request: given as
        httpx's (connect, read, write, pool) it bounds the connect and the answer apart
        (opening the session is httpx's own 5 s HEAD request)."""
        found = super().connection_extras(extras, read_only=read_only, timeouts=timeouts)
        if "timeout" not in extras:
            found["timeout"] = (timeouts.connect, timeouts.command, timeouts.command,
                                timeouts.connect)
        return found

    def open_timeout(self, timeouts: Timeouts) -> float:
        return HTTPX_DEFAULT_S  # the driver's opening HEAD request runs on httpx's default

    def endpoint(self, hostname: str, port: int | None, username: str | None,
                 extras: dict[str, Any]) -> Endpoint:
        """napalm-srlinux's JSON-RPC port: optional_args.jsonrpc_port, else 80 for plain
        HTTP (insecure), else 443."""
        optional = extras.get("optional_args") or {}
        default = 80 if optional.get("insecure") else self.facts.connection.port
        return Endpoint(hostname, int(optional.get("jsonrpc_port") or default), username)

    def render(self, device: DeviceState) -> str:
        return render(device, self.names)

    def sections(self, config: str) -> dict[str, list[str]]:
        return split(config)

    def drift_texts(self, driver: DeviceDriver, intended: str) -> tuple[str, str]:
        """Running (JSON of `/`) as the intended replaces, projected onto what they set."""
        running = str(driver.get_config(retrieve="running")["running"])
        return normalized_running(running, intended), intended

    def change_notes(self, running: str, intended: str) -> list[str]:
        """What the replaces leave alone: SR Linux keeps any interface or network-instance
        the intended config no longer names (flatfab never replaces `/`)."""
        try:
            have = {path for path, _ in entries_of(json.loads(running))}
            wanted = {path for path, _ in entries_of(json.loads(intended))}
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            return [f"running config unreadable: {exc}"]
        return [f"{path} is on the switch but not in the intended config: the push leaves "
                "it as it is (delete it by hand if flatfab put it there)"
                for path in sorted(have - wanted) if "mgmt" not in path]

    def show_command(self, command: str) -> bool:
        return bool(_READ.match(command))

    def inventory_options(self) -> tuple[InventoryOption, ...]:
        args = "extras.optional_args"
        return (
            InventoryOption(f"{args}.tls_ca", "/etc/flatfab/srlinux-ca.pem",
                            "the CA that signed the switches' JSON-RPC (HTTPS) certificates "
                            "(default: this workstation's CAs); never skip_verify or "
                            "insecure outside a lab"),
            InventoryOption(f"{args}.jsonrpc_port", 443, "JSON-RPC port"),
            InventoryOption("extras.timeout", 60,
                            "seconds one JSON-RPC call may take (default: flatfab's command "
                            "timeout)"),
        )

    def login(self, extras: Mapping[str, Any]) -> Login:
        """JSON-RPC over HTTPS: a password is the only way in."""
        optional = extras.get("optional_args")
        args: Mapping[str, Any] = optional if isinstance(optional, Mapping) else {}
        return Login(transport="https", port=args.get("port"),
                     port_key="extras.optional_args.port")

    def adapt(self, connection: Any, *, read_only: bool) -> DeviceDriver:
        """The NAPALM connection must be napalm-srlinux's driver (JSON-RPC): the rendered
        replaces are its input format, and revert_in is its commit confirmed."""
        from napalm_srlinux import (  # noqa: PLC0415
            NokiaSRLinuxDriver,  # napalm is heavy: imported when a connection opens
        )

        if not isinstance(connection, NokiaSRLinuxDriver):
            raise TypeError(f"platform srlinux needs NAPALM driver "
                            f"{self.facts.connection.driver!r} (napalm-srlinux), not "
                            f"{type(connection).__name__}")
        return super().adapt(connection, read_only=read_only)

    def collect(self, driver: DeviceDriver, planned: DeviceState,
                probes: list[Probe]) -> DeviceState:
        return collect(driver, planned, self.names)

    def collect_physical(self, driver: DeviceDriver,
                         planned: DeviceState) -> dict[str, PortPhysical]:
        return physical(driver, planned)


PLATFORM = SrlinuxPlatform(Path(__file__).with_name("platform.yaml"))
