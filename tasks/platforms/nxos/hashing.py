"""ECMP hashing on a Nexus 9000: the global `ip load-sharing` line, rendered from the plan's
`DeviceState.lb` and read back from `show running-config`.

Sources: Cisco Nexus 9000 Series NX-OS Interfaces Configuration Guide, Release 10.3(x),
"Configuring ECMP Load Balancing" (global configuration mode; the syntax `ip load-sharing
address {destination port destination | source-destination [port source-destination | gre |
gtpu | ipv6-flowlabel | ttl | udf ... | symmetric | inner ...]} [universal-id seed] [rotate
rotate] [concatenation]`; "The universal-id range is from 1 to 4294967295"; rotate 1-63,
default 32; concatenation off by default); Cisco Nexus 3000 and 9000 Series NX-API REST SDK
User Guide, "Configuring Load Sharing in the Unicast FIB" (`source-destination` load sharing
keeps each source/destination address pair on one path) and "Configuring ECMP Load
Balancing" (one switch-wide object, `sys/ipv4/inst/iploadsharing`: no VRF has its own);
the NX-OS Unicast Routing Configuration Guides' "Configuring Load Sharing in the Unicast
FIB" (Nexus 3600 10.5(x), 3000, 7000: the load-share mode selects the path on the
destination address and port, or on the source and destination address and port).

What those pages say each mode hashes is addresses and layer-4 ports, never the IP
protocol: no Cisco page found says whether the protocol is part of the hash. flatfab
therefore states no mode as the 5-tuple. It renders one line, the four fields Cisco names
for `address source-destination port source-destination`; any other list (the 5-tuple
among them) is refused here, and at load through platform.yaml. It reads back the three
documented modes as exactly their documented fields, and names every option it does not
model (a different field set, a rotation, a concatenated hash) or a line it cannot map,
rather than guessing.
"""

from __future__ import annotations

from flatfab.errors import FlatfabError
from flatfab.model.state import HashField, LoadBalancing
from flatfab.platforms.nxos import lbmode

COMMAND = "ip load-sharing"
SEED = "universal-id"
MIN_SEED, MAX_SEED = 1, 2**32 - 1  # the documented universal-id range
# each address/port mode Cisco documents -> the packet fields it names
MODES: dict[str, tuple[HashField, ...]] = {
    "address source-destination port source-destination": (
        HashField.SRC_IP, HashField.DST_IP, HashField.SRC_PORT, HashField.DST_PORT),
    "address source-destination": (HashField.SRC_IP, HashField.DST_IP),
    "address destination port destination": (HashField.DST_IP, HashField.DST_PORT),
}
RENDERED = "address source-destination port source-destination"
FIELDS = MODES[RENDERED]  # the one field list flatfab renders
_BY_LENGTH = sorted(MODES, key=lambda mode: len(mode.split()), reverse=True)
# options after the mode that add a field of their own or take the ports' place (the
# documented alternatives to `port source-destination`): the line's fields are then not
# the mode's, and flatfab cannot state them
_FIELDS_OTHER = {
    "gre": "hashes on the GRE key",
    "gtpu": "hashes on the GTP tunnel endpoint identifier",
    "ipv6-flowlabel": "hashes on the IPv6 flow label",
    "ttl": "hashes on the TTL (the IPv6 hop limit)",
    "udf": "hashes on a user-defined field",
}
# options that keep the mode's fields for routed IP but change how the hash is formed
_MODIFIERS = {
    "rotate": "rotates the hash's bit stream: another path per flow than the seed alone gives",
    "concatenation": "ties the ECMP hash to the port-channel hash (a 64-bit hash)",
    "symmetric": "hashes both directions of a flow alike",
    "inner": "hashes GRE packets on their inner headers",
    "gre-outer": "hashes GRE packets on their outer header",
    "hardware": "shifts the hash key in hardware",
}
# how many values follow each option in the documented syntax
_VALUES = {"rotate": 1, "udf": 4, SEED: 1}


class HashingError(FlatfabError):
    """The plan's hashing has no NX-OS `ip load-sharing` line flatfab renders."""


def _names(fields: list[HashField] | tuple[HashField, ...]) -> str:
    return "[" + ", ".join(f.value for f in fields) + "]"


def render(lb: LoadBalancing) -> str:
    """The `ip load-sharing` line of a planned switch's hashing (its mode's own lines:
    lbmode.render)."""
    refused = lbmode.refusal(lb)
    if refused is not None:  # refused at load (lb_* in platform.yaml)
        raise HashingError(refused)
    if lb.hash_fields != list(FIELDS):  # refused at load (ecmp_hash in platform.yaml)
        why = (" Cisco documents no NX-OS load-sharing mode that hashes on the IP protocol"
               if HashField.PROTOCOL in lb.hash_fields else "")
        raise HashingError(
            f"ECMP hash fields {_names(lb.hash_fields)}: flatfab renders only "
            f"{_names(FIELDS)} on NX-OS (`{COMMAND} {RENDERED}`).{why}")
    line = f"{COMMAND} {RENDERED}"
    if lb.seed is not None:
        if not MIN_SEED <= lb.seed <= MAX_SEED:
            raise HashingError(f"ECMP hash seed {lb.seed}: NX-OS's {SEED} is "
                               f"{MIN_SEED}..{MAX_SEED}")
        line += f" {SEED} {lb.seed}"
    return line


def _mode(words: list[str]) -> str | None:
    for mode in _BY_LENGTH:
        if words[:len(mode.split())] == mode.split():
            return mode
    return None


def read(lines: list[str]) -> tuple[LoadBalancing | None, dict[str, str]]:
    """The hashing the running config's `ip load-sharing` line sets (None: no line, the
    switch's own, which flatfab does not state), and what the line sets beyond flatfab's
    model (statement -> why), for `not_modelled`. A line whose fields flatfab cannot state
    reads as hashing on no field flatfab can name, and is named itself."""
    found = [line.strip() for line in lines if line.strip().startswith(COMMAND + " ")]
    if not found:
        return None, {}
    line = found[-1]
    words = line.split()[2:]
    beyond: dict[str, str] = {}
    mode = _mode(words)
    mapped = mode is not None
    seed: int | None = None
    at = len(mode.split()) if mode else 0
    while at < len(words):
        word = words[at]
        values = words[at + 1:at + 1 + _VALUES.get(word, 0)]
        at += 1 + len(values)
        if word == SEED:
            if len(values) == 1 and values[0].isdigit() \
                    and MIN_SEED <= int(values[0]) <= MAX_SEED:
                seed = int(values[0])
            else:
                beyond[f"{COMMAND} {SEED}"] = "a seed flatfab cannot read"
        elif word in _FIELDS_OTHER:
            beyond[f"{COMMAND} {word}"] = _FIELDS_OTHER[word]
            mapped = False
        elif word in _MODIFIERS:
            beyond[f"{COMMAND} {word}"] = _MODIFIERS[word]
            if word == "hardware":  # lb-keyshift <v> lb-2nd-hier-keyshift <v>
                at = len(words)
            elif word == "inner" and at < len(words) and words[at] in ("all", "greheader"):
                at += 1
        elif mode is not None:  # a word Cisco's syntax does not have here
            beyond[f"{COMMAND} {word}"] = "an option flatfab does not know"
            mapped = False
    if mode is None:
        beyond[line] = "a load-sharing mode flatfab cannot map to the packet fields it hashes"
    elif not mapped:
        beyond.setdefault(line, "its hash fields are not the mode's alone: flatfab cannot "
                                "state them")
    fields = list(MODES[mode]) if mode is not None and mapped else []
    return LoadBalancing(hash_fields=fields, seed=seed), beyond
