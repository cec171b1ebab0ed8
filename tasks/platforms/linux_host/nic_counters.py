"""A GPU host NIC's congestion counters, read-only: per-priority PFC pause frames, CNPs sent
(DCQCN notification point), CNPs handled (reaction point), ECN-CE received, out-of-buffer.

One NIC's counters are a dict of the names below; a counter the NIC does not keep is absent,
never 0. What they are read from:

- ConnectX (mlx5, `nic_backend: connectx`): all real. `ethtool -S <nic>` gives the per-priority
  pause frames (`rx_prio<p>_pause`, `tx_prio<p>_pause`, kept only on PFC priorities) and the
  Ethernet queues' `rx_out_of_buffer`; the RDMA device behind the netdev
  (/sys/class/net/<nic>/device/infiniband/<dev>) keeps the RoCE ones in
  ports/<port>/hw_counters/: `np_cnp_sent`, `rp_cnp_handled`, `rp_cnp_ignored`,
  `np_ecn_marked_roce_packets` and the RDMA queues' `out_of_buffer` (preferred to ethtool's
  where both exist: RoCE is what DCQCN is about).
- The lab (veth NICs): the kernel counts real packets with nftables counters in flatfab's
  table (nic_qos.nft_ruleset): CNPs received on the NIC (UDP 4791, BTH opcode 0x81, input
  hook), RoCE packets received marked ECN-CE (input), CNPs sent (output). What is virtual is
  the reaction to them: the lab's NIC reacts to the CNPs it receives only while its qos line
  says `dcqcn on`, so they count as handled then and as ignored otherwise (handled reads 0,
  flat: DCQCN off). The lab's NIC sends no CNP of its own in answer to CE (flatfab's test
  traffic carries its CNPs), so CE received with no CNP sent is what the lab shows under
  marking. A veth has no pause frames and no receive buffers: those counters are absent.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from flatfab.platforms.base import (
    NIC_CNP_HANDLED,
    NIC_CNP_IGNORED,
    NIC_CNP_SENT,
    NIC_ECN_MARKED_RX,
    NIC_OUT_OF_BUFFER,
    nic_pfc,
)
from flatfab.platforms.linux_host import nic_qos

CNP_SENT, CNP_HANDLED, CNP_IGNORED = NIC_CNP_SENT, NIC_CNP_HANDLED, NIC_CNP_IGNORED
ECN_MARKED_RX, OUT_OF_BUFFER = NIC_ECN_MARKED_RX, NIC_OUT_OF_BUFFER


class NicCounterError(ValueError):
    """NIC counter output that cannot be read (the message names the NIC and the read)."""


# ---- ConnectX: ethtool -S and the RDMA hw_counters ----------------------------------------

ETHTOOL_PAUSE = re.compile(r"^(rx|tx)_prio([0-7])_pause$")
HW_COUNTERS = {"np_cnp_sent": CNP_SENT, "rp_cnp_handled": CNP_HANDLED,
               "rp_cnp_ignored": CNP_IGNORED, "np_ecn_marked_roce_packets": ECN_MARKED_RX,
               "out_of_buffer": OUT_OF_BUFFER}
HW_LINE = re.compile(r"^/sys/class/net/[^/]+/device/infiniband/(?P<dev>[^/]+)/ports/"
                     r"(?P<port>\d+)/hw_counters/(?P<name>\w+):(?P<value>\d+)\s*$")
NIC_MARK = "@@flatfab-nic@@"


def connectx_command(qos_file: str) -> str:
    """One shell line reading every NIC of the host's qos file: `ethtool -S` and the RDMA
    hw_counters of the device behind it, each after a NIC_MARK line (stderr kept: a NIC
    that cannot be read says why)."""
    files = " ".join(f'/sys/class/net/"$nic"/device/infiniband/*/ports/*/hw_counters/{name}'
                     for name in HW_COUNTERS)
    return (f"for nic in $(sed -n 's/^qos \\([^ ]*\\) .*/\\1/p' {qos_file} 2>/dev/null); do "
            f'echo "{NIC_MARK} $nic ethtool"; ethtool -S "$nic" 2>&1; '
            f'echo "{NIC_MARK} $nic rdma"; grep -H . {files} 2>&1; done')


def split_connectx(text: str) -> dict[str, dict[str, str]]:
    """connectx_command's output -> NIC -> {"ethtool": text, "rdma": text}."""
    found: dict[str, dict[str, list[str]]] = {}
    current: list[str] | None = None
    for line in text.splitlines():
        if line.startswith(NIC_MARK + " "):
            nic, _, part = line[len(NIC_MARK) + 1:].rpartition(" ")
            current = found.setdefault(nic, {}).setdefault(part, [])
        elif current is not None:
            current.append(line)
    return {nic: {part: "\n".join(lines) for part, lines in parts.items()}
            for nic, parts in found.items()}


def parse_ethtool(nic: str, text: str) -> dict[str, int]:
    """Pause frames per priority and rx_out_of_buffer from `ethtool -S <nic>` (mlx5 names;
    `NIC statistics:` then one `name: value` line each)."""
    lines = text.strip().splitlines()
    if not lines or lines[0].strip() != "NIC statistics:":
        said = lines[0].strip()[:120] if lines else "no output"
        raise NicCounterError(f"{nic}: `ethtool -S {nic}` printed no statistics: {said}")
    counters: dict[str, int] = {}
    for line in lines[1:]:
        name, _, value = line.strip().partition(":")
        pause = ETHTOOL_PAUSE.match(name)
        if pause is None and name != "rx_out_of_buffer":
            continue  # hundreds of others (rings, vport, phy): not read here
        if not value.strip().isdigit():
            raise NicCounterError(f"{nic}: `ethtool -S {nic}`: cannot read {line.strip()!r}")
        if pause is None:
            counters[OUT_OF_BUFFER] = int(value)
        else:
            direction: Literal["rx", "tx"] = "rx" if pause.group(1) == "rx" else "tx"
            counters[nic_pfc(direction, int(pause.group(2)))] = int(value)
    return counters


def parse_hw_counters(nic: str, text: str) -> dict[str, int]:
    """The RoCE counters from `grep -H . <hw_counters files>` (`<path>:<value>` lines). No
    RDMA device behind the NIC (grep: no such file) leaves them absent; two devices or ports
    behind one NIC cannot be told apart and are an error."""
    counters: dict[str, int] = {}
    seen: set[tuple[str, str]] = set()
    for line in text.splitlines():
        match = HW_LINE.match(line.strip())
        if match is None:
            if line.strip() and "No such file or directory" not in line:
                raise NicCounterError(f"{nic}: RDMA hw_counters: cannot read "
                                      f"{line.strip()[:120]!r}")
            continue
        seen.add((match["dev"], match["port"]))
        if len(seen) > 1:
            raise NicCounterError(f"{nic}: more than one RDMA device port behind it "
                                  f"({', '.join(sorted('/'.join(p) for p in seen))})")
        if match["name"] in HW_COUNTERS:
            counters[HW_COUNTERS[match["name"]]] = int(match["value"])
    return counters


def read_connectx(text: str) -> dict[str, dict[str, int]]:
    """connectx_command's output -> NIC -> counters."""
    result: dict[str, dict[str, int]] = {}
    for nic, parts in sorted(split_connectx(text).items()):
        counters = parse_ethtool(nic, parts.get("ethtool", ""))
        counters.update(parse_hw_counters(nic, parts.get("rdma", "")))  # RDMA's buffer wins
        result[nic] = counters
    return result


# ---- the lab: nftables counters of the virtual NIC ----------------------------------------


def nft_counts(text: str) -> dict[str, dict[str, int]]:
    """NIC -> {what: packets} of flatfab's counter rules in `nft -j list table inet flatfab`
    (nftables 0.9.x to 1.x JSON; a rule is named by its `<nic> <what>` comment)."""
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except ValueError:
        raise NicCounterError("`nft -j list table inet flatfab` did not print JSON: "
                              f"{text.strip()[:120]}") from None
    items = data.get("nftables") if isinstance(data, dict) else None
    if not isinstance(items, list):
        raise NicCounterError("`nft -j list table inet flatfab` printed no `nftables` list")
    counts: dict[str, dict[str, int]] = {}
    for item in items:
        rule = item.get("rule") if isinstance(item, dict) else None
        if not isinstance(rule, dict) or rule.get("chain") not in (nic_qos.NFT_COUNT_IN,
                                                                     nic_qos.NFT_COUNT_OUT):
            continue
        nic, _, what = str(rule.get("comment", "")).rpartition(" ")
        packets = _packets(rule.get("expr"))
        if not nic or packets is None:
            raise NicCounterError(f"nftables: a rule of chain {rule.get('chain')} has no "
                                  f"`<nic> <what>` comment or no counter: {rule.get('comment')!r}")
        counts.setdefault(nic, {})[what] = packets
    return counts


def _packets(expr: Any) -> int | None:
    for statement in expr if isinstance(expr, list) else []:
        counter = statement.get("counter") if isinstance(statement, dict) else None
        packets = counter.get("packets") if isinstance(counter, dict) else None
        if isinstance(packets, int) and not isinstance(packets, bool):
            return packets
    return None


def read_lab(nft_text: str, qos: dict[str, nic_qos.NicSettings]) -> dict[str, dict[str, int]]:
    """NIC -> counters of the lab's virtual NICs: the kernel's counts, CNPs received handled
    or ignored by the NIC's DCQCN setting (module docstring)."""
    counts = nft_counts(nft_text)
    missing = sorted(nic for nic in qos if not {nic_qos.COUNT_CNP_RX, nic_qos.COUNT_CE_RX,
                                                nic_qos.COUNT_CNP_TX} <= set(counts.get(nic, {})))
    if missing:
        raise NicCounterError(f"nftables table inet {nic_qos.NFT_TABLE} counts nothing for "
                              f"{', '.join(missing)} (its qos was loaded before flatfab "
                              "counted NIC counters: roll the host out again)")
    result: dict[str, dict[str, int]] = {}
    for nic, settings in sorted(qos.items()):
        got = counts[nic]
        received = got[nic_qos.COUNT_CNP_RX]
        result[nic] = {CNP_SENT: got[nic_qos.COUNT_CNP_TX],
                       ECN_MARKED_RX: got[nic_qos.COUNT_CE_RX],
                       CNP_HANDLED: received if settings.dcqcn else 0,
                       CNP_IGNORED: 0 if settings.dcqcn else received}
    return result
