"""ECMP hashing of an EOS switch, read back from its running config's `ip load-sharing` lines.

flatfab renders no hashing for EOS: AVD's `eos_cli_config_gen` schema (pyavd 6.4.0), which
every EOS render must pass (tests/support/oracles.py), has no key that prints `ip
load-sharing` (its hashing keys are Jericho `load-balance sand profile` UDP-payload fields,
Trident port-channel UDF bytes and dynamic load balancing). platform.yaml therefore refuses
`ecmp_hash` and `ecmp_hash_seed` at load, and a replace keeps these lines (sections.py owns
none of them): flatfab leaves the switch's hashing alone. What the switch holds is read all
the same, so the live checks judge it (a hash without the UDP source port spreads no RoCE
queue pairs; adjacent tiers with one seed polarize).

The running config is the source, not a show: no documented eAPI reply states the hash. The
forms (Arista EOS User Manual, IPv4 chapter, ECMP, as docs/development/load-balancing.md
gathers it: the seed `ip load-sharing <hardware> <seed>`, the fields `ip load-sharing trident
fields ...`; how a switch prints them is not confirmed against one):

    ip load-sharing <hardware> fields ip <field>...      the IPv4 hash inputs
    ip load-sharing <hardware> fields ipv6 <field>...    the IPv6 ones
    ip load-sharing <hardware> <seed>                    the hash seed

The field keywords are those of the Trident default field sets EOS leaves out of its running
config, as recorded by the public annet tool (github.com/annetutil/annet, annet/implicit.py):
source-ip, destination-ip, source-port, destination-port, flow-label (IPv6) and
ingress-interface. No source gave the protocol's keyword: a word flatfab does not know, like
ingress-interface which no flatfab field stands for, is named in `not_modelled`, never read as
a field.

EOS prints a setting only where it differs from its default, so without a `fields ip` line
the switch hashes on its hardware's default set, which differs per ASIC and is not assumed:
the hash reads as unknown (None). As for the kernel (frr/ecmp.py), flatfab's fields are the
IPv4 ones plus the flow label where the IPv6 line names it (IPv4 has none).
"""

from __future__ import annotations

import re

from flatfab.model.state import HashField, LoadBalancing
from flatfab.platforms.eos.running import EosConfig

PREFIX = "ip load-sharing "
_LINE = re.compile(r"^ip load-sharing (?P<hardware>\S+) (?:fields (?P<family>ip|ipv6)"
                   r"(?P<fields>(?: \S+)*)|(?P<seed>\d+))$")
FIELDS: dict[str, dict[str, HashField]] = {
    "ip": {"source-ip": HashField.SRC_IP, "destination-ip": HashField.DST_IP,
           "source-port": HashField.SRC_PORT, "destination-port": HashField.DST_PORT}}
FIELDS["ipv6"] = {**FIELDS["ip"], "flow-label": HashField.FLOW_LABEL}
_FAMILY = {"ip": "IPv4", "ipv6": "IPv6"}
# hash inputs EOS has and flatfab's HashField does not
UNMODELLED = {"ingress-interface": "the port a packet came in on"}


def _words(family: str, words: list[str], notes: dict[str, str]) -> set[HashField]:
    found = set()
    for word in words:
        field = FIELDS[family].get(word)
        if field is not None:
            found.add(field)
            continue
        what = UNMODELLED.get(word)
        notes[f"{PREFIX}fields {family} {word}"] = (
            f"EOS also hashes {_FAMILY[family]} on {what}; flatfab's hash fields have no such input"
            if what is not None else
            "a hash input flatfab does not know: not read as one of its fields")
    return found


def read(config: EosConfig) -> tuple[LoadBalancing | None, dict[str, str]]:
    """The switch's hashing (None: not stated, or not readable) and what of its `ip
    load-sharing` lines flatfab does not model, by name with why."""
    notes: dict[str, str] = {}
    fields: dict[str, list[str]] = {}
    hardware: set[str] = set()
    seed: int | None = None
    for block in config.blocks:
        if not block.line.startswith(PREFIX):
            continue
        match = _LINE.match(block.line)
        if match is None:
            notes[block.line] = "an `ip load-sharing` form flatfab does not read"
            continue
        hardware.add(match["hardware"])
        if match["seed"] is not None:
            seed = int(match["seed"])
        else:
            fields[match["family"]] = match["fields"].split()
    if len(hardware) > 1:
        # one switch has one forwarding ASIC: which of these applies is not stated
        notes[PREFIX.strip()] = (f"lines for several hardware ({', '.join(sorted(hardware))}): "
                                 "the hashing is not read")
        return None, notes
    if "ip" not in fields:
        if hardware:
            notes[PREFIX.strip()] = ("no `fields ip` line: the switch hashes on its hardware's "
                                     "default fields, which flatfab does not assume; the "
                                     "hashing is not read")
        return None, notes
    hashed = _words("ip", fields["ip"], notes)
    if HashField.FLOW_LABEL in _words("ipv6", fields.get("ipv6", []), notes):
        hashed.add(HashField.FLOW_LABEL)
    return LoadBalancing(hash_fields=[f for f in HashField if f in hashed], seed=seed), notes
