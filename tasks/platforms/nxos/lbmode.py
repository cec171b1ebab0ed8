"""How a Nexus 9000 picks among equal-cost paths beyond the plain hash (fabric.yaml
`load_balancing.mode`): resilient ECMP hashing rendered, read back and announced before a push;
NX-OS dynamic load balancing (DLB) refused, and named when a switch has it.

Sources, Cisco's own documentation:
- Cisco Nexus 9000 Series NX-OS Interfaces Configuration Guide, Release 10.3(x), "Configuring
  Port Channels", "Enabling ECMP Resilient Hashing": "Resilient ECMP ensures minimal impact to
  the existing flows when members are deleted from an ECMP group"; the steps `configure
  terminal`, `hardware profile ecmp resilient` (global configuration mode; NX-OS answers
  "Warning: The command will take effect after next reload"), `copy running-config
  startup-config`, `reload`; "This command is not supported on Cisco Nexus 9808 platform
  switches".
- The same guide, Release 10.6(x), "Resilient Hashing": the flows of a failed link are
  redistributed among the remaining links, "The existing flows through the working links are
  not rehashed"; IPv4 and IPv6 unicast, not IPv4 multicast; "Resilient hashing is supported on
  all the Cisco Nexus 9000 Series platforms" (9.3(3) adds the 92160YC-X, 92304QC, 9272Q,
  9232C, 9236C, 92300YC); "Guidelines and Limitations for ECMP": "ECMP resilient hashing is not
  supported for traffic flows over tunnel".
- Cisco Nexus 9000 Series NX-OS Unicast Routing Configuration Guide, Release 10.5(x),
  "Configure Dynamic Load Balancing" (what DLB is: the switch "can monitor the traffic load on
  each path and select a path with least link utilization") and the Quality of Service
  Configuration Guide, Release 10.6(x), "Configure Policy-driven Dynamic Load Balancing" (the
  two DLB modes: flowlet, "load balancing occurs at flowlet level based on DRE metrics", the
  default; per-packet, "distributes traffic packet by packet across all available links in a
  DLB ECMP group", for endpoints that accept packets out of order).

What the Cisco text at hand did not give: the DLB configuration commands themselves (`hardware
profile dlb`, its `mode`, `flowlet-aging` and `dlb-interface` lines), the flowlet aging range
and unit, the switches DLB runs on, and whether it needs a reload. Those appear only in
third-party material (a book's example, test suites, a fabric controller's data model), so
flatfab renders no DLB: `flowlet`, `adaptive` and `spray` are refused at load (platform.yaml
`lb_*`) and here. A switch that has a `hardware profile dlb` block is named in `not_modelled`:
flatfab does not read what it does.
"""

from __future__ import annotations

from flatfab.model.state import LbMode, LoadBalancing

RESILIENT = "hardware profile ecmp resilient"
DLB = "hardware profile dlb"
# the mode each line stands for, and the modes flatfab renders on NX-OS
RENDERED = (LbMode.HASH, LbMode.RESILIENT)
_NO_DLB = ("Cisco's configuration text for NX-OS dynamic load balancing (`hardware profile "
           "dlb`) was not found, only third-party examples of it")
REFUSED: dict[LbMode, str] = {
    LbMode.FLOWLET: f"NX-OS DLB flowlet mode is documented, but {_NO_DLB}",
    LbMode.ADAPTIVE: ("Cisco describes per-packet DLB as spreading packets over every link of "
                      "a DLB ECMP group, not as sending each to the least loaded one, and "
                      f"{_NO_DLB}"),
    LbMode.SPRAY: f"NX-OS per-packet DLB is documented, but {_NO_DLB}",
}


def refusal(lb: LoadBalancing) -> str | None:
    """Why flatfab renders no NX-OS config for this way of balancing (None: it does)."""
    if lb.mode in RENDERED:
        return None
    return f"load balancing mode {lb.mode.value}: {REFUSED[lb.mode]}"


def render(lb: LoadBalancing) -> list[str]:
    """The global lines of the plan's mode beyond the `ip load-sharing` line (hashing.py):
    `hardware profile ecmp resilient` for `resilient`, nothing for `hash`. The caller has
    refused the other modes (refusal())."""
    return [RESILIENT] if lb.mode is LbMode.RESILIENT else []


def owned(line: str) -> bool:
    """A top-level line that belongs to the plan's way of balancing (with `ip load-sharing`)."""
    return line == RESILIENT or line.startswith(RESILIENT + " ")


def read(heads: list[str], dlb: list[str]) -> tuple[LbMode, dict[str, str]]:
    """The mode the running config's `hardware profile ...` lines set (`heads`: its
    `hardware profile ecmp resilient` lines; `dlb`: the lines of a `hardware profile dlb`
    block), and what flatfab cannot map (statement -> why), for `not_modelled`. The running
    config states the configured mode: NX-OS applies the resilient line only after a
    reload."""
    beyond: dict[str, str] = {}
    mode = LbMode.HASH
    for head in heads:
        if head == RESILIENT:
            mode = LbMode.RESILIENT
        else:
            beyond[head] = "an option of resilient hashing flatfab does not know"
    if dlb:
        beyond[DLB] = ("dynamic load balancing (DLB) is configured: flatfab renders none on "
                       "NX-OS and does not read its mode, timer or interfaces; the mode "
                       "stated is the ECMP hashing of the other routes")
    return mode, beyond


def change_notes(running: str, intended: str) -> list[str]:
    """What a push of `intended` over `running` (both only the lines flatfab owns) needs
    beyond the commit: resilient hashing set or removed takes effect only after a reload."""
    before, after = (any(owned(line.strip()) for line in text.splitlines()
                         if not line.startswith(" ")) for text in (running, intended))
    if after and not before:
        return [f"{RESILIENT} added: NX-OS applies it only after the next reload (Cisco: "
                "\"The command will take effect after next reload\"); reload the switch after "
                "the commit (flatfab saves the startup config), or it keeps hashing as before "
                "while its running config says resilient"]
    if before and not after:
        return [f"{RESILIENT} removed: Cisco documents a reload to set it and no other way "
                "for removing it to take effect; reload the switch after the commit, or it "
                "keeps resilient hashing while its running config says otherwise"]
    return []
