"""Dynamic load balancing (DLB) of an EOS switch, read back from its running config.

flatfab renders no way of balancing beyond the hash for EOS: every EOS render must be AVD's
own print of a structured config its schema accepts (tests/support/oracles.py), and AVD's
`eos_cli_config_gen` (pyavd 6.4.0) has, for this:

- `ip_hardware.fib.load_balance_distribution.dynamic.enabled`, printed as
  `ip hardware fib load-balance distribution dynamic`, and
- `...dynamic.flow_set_size` (1-7: how the flow-set table is cut into ECMP groups), printed
  as `ip hardware fib load-balance distribution dynamic flow-set-size <n>`;

no key for DLB's inactivity time (fabric.yaml `flowlet_us`, which mode `flowlet` requires) and
none for resilient ECMP (`ip hardware fib ecmp resilience ...`). platform.yaml therefore
refuses `lb_flowlet` and `lb_resilient` at load; a replace keeps these lines (sections.py owns
none of them), so flatfab leaves the switch's DLB alone.

What the switch holds is read all the same, so `lb.mode` and `lb.intent` see a switch that
balances otherwise than its tier or its plan. The forms are the two lines AVD's template
prints (pyavd `eos/ip-hardware.j2`); Arista's TOI for EOS 4.30.2F ("Dynamic Load Balancing
(DLB)" on ECMP groups, arista.com/en/support/toi, tag load-balancing) describes the feature:
egress members picked by their load. flatfab's name for that is `flowlet` (LbMode: "dynamic
(DLB)"). How a switch prints the inactivity time, if it prints one, no public source found:
`flowlet_us` reads as unknown (None), and any other `dynamic` form is named, never guessed at.

A way of balancing is stated in flatfab's model only with the hash it refines
(LoadBalancing.hash_fields is required): a switch whose `ip load-sharing` fields are not read
(eos/hashing.py) states no mode either, and its DLB is named in `not_modelled` with why.
"""

from __future__ import annotations

import re

from flatfab.model.state import LbMode, LoadBalancing
from flatfab.platforms.eos.running import EosConfig

DYNAMIC = "ip hardware fib load-balance distribution dynamic"
_SIZE = re.compile(rf"^{re.escape(DYNAMIC)} flow-set-size [1-7]$")
TIMER_NOTE = f"{DYNAMIC} (inactivity time)"


def read(config: EosConfig, lb: LoadBalancing | None
         ) -> tuple[LoadBalancing | None, dict[str, str]]:
    """`lb` (the switch's hashing, eos/hashing.py) with the way the switch balances on top,
    and what of its DLB lines flatfab does not model, by name with why."""
    notes: dict[str, str] = {}
    lines = [b.line for b in config.blocks
             if b.line == DYNAMIC or b.line.startswith(DYNAMIC + " ")]
    for line in lines:
        if line == DYNAMIC:
            continue
        notes[line] = ("the DLB flow-set table's cut into ECMP groups: flatfab has no such "
                       "setting" if _SIZE.match(line) else
                       "a dynamic load balancing form flatfab does not read")
    if DYNAMIC not in lines:
        # without the line DLB is off (EOS prints a setting only where it differs from its
        # default): plain hashing, which `lb` already says
        return lb, notes
    if lb is None:
        notes[DYNAMIC] = ("the switch balances dynamically (DLB), but its hash is not read "
                          "(eos/hashing.py) and flatfab states a way of balancing only with "
                          "the hash fields: the mode is not read")
        return None, notes
    notes[TIMER_NOTE] = ("no line flatfab reads states DLB's inactivity time (AVD has no key "
                         "for it): `flowlet_us` is not read")
    return lb.model_copy(update={"mode": LbMode.FLOWLET, "flowlet_us": None}), notes
