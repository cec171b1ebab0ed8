"""A GPU host NIC's lossless settings: one `qos` line per data NIC in the host config.

    qos <nic> trust <dscp|pcp> pfc <prios> tos <0-255> cnp <dscp>/<prio> ecn-np <prios>
        ecn-rp <prios> dcqcn <on|off> strict <tcs> tc-bw <8 percents> pfc-prevention <ms>
        dscp2prio <dscp:prio,...>

(one line; lists are comma-separated, `-` for none; dscp2prio lists only the entries that
differ from the ConnectX default map, priority = DSCP >> 3).

On a real host these become ConnectX settings (mlnx_qos, sysfs ecn, RDMA-CM ToS:
`connectx_commands`). In the lab the kernel does what it can: nftables marks RoCEv2
(UDP 4791) with the ToS and CNPs (BTH opcode 0x81) with the CNP DSCP on the way out of the
NIC, and the rest is the lab's virtual NIC state. Reading back takes ToS and CNP DSCP from the
nftables rules actually loaded, so a marking that differs shows up as drift. The same table
counts the virtual NIC's CNPs and ECN-CE packets (nic_counters.py says what is real there).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

from flatfab.model.state import NicQos

ROCE_PORT = 4791
CNP_OPCODE = 0x81
NFT_TABLE = "flatfab"
NFT_CHAIN = "roce_marking"
# the lab's virtual NIC counters: chains of flatfab's table, one counter rule per NIC and what
NFT_COUNT_IN = "nic_counters_in"
NFT_COUNT_OUT = "nic_counters_out"
COUNT_CNP_RX = "cnp_rx"  # CNPs received
COUNT_CE_RX = "ecn_ce_rx"  # RoCE packets received marked ECN-CE
COUNT_CNP_TX = "cnp_tx"  # CNPs sent
DSCP_NAMES = {"cs0": 0, "cs1": 8, "cs2": 16, "cs3": 24, "cs4": 32, "cs5": 40, "cs6": 48,
              "cs7": 56, "af11": 10, "af12": 12, "af13": 14, "af21": 18, "af22": 20,
              "af23": 22, "af31": 26, "af32": 28, "af33": 30, "af41": 34, "af42": 36,
              "af43": 38, "ef": 46, "va": 44, "le": 1}
ECN_NAMES = {"not-ect": 0, "ect1": 1, "ect0": 2, "ce": 3}
LINE_RE = re.compile(
    r"^qos (?P<nic>\S+) trust (?P<trust>dscp|pcp) pfc (?P<pfc>\S+) tos (?P<tos>\d+) "
    r"cnp (?P<cnp_dscp>\d+)/(?P<cnp_prio>\d+) ecn-np (?P<np>\S+) ecn-rp (?P<rp>\S+) "
    r"dcqcn (?P<dcqcn>on|off) strict (?P<strict>\S+) tc-bw (?P<bw>\S+) "
    r"pfc-prevention (?P<prevention>\d+) dscp2prio (?P<map>\S+)$")


class NicQosError(ValueError):
    """A qos line or nftables output that cannot be read."""


@dataclass(frozen=True)
class NicSettings:
    trust: str
    pfc: tuple[int, ...]
    tos: int
    cnp_dscp: int
    cnp_priority: int
    ecn_np: tuple[int, ...]
    ecn_rp: tuple[int, ...]
    dcqcn: bool
    strict: tuple[int, ...]
    tc_bw: tuple[int, ...]
    pfc_prevention_ms: int
    dscp_to_priority: tuple[int, ...]  # 64 entries

    def line(self, nic: str) -> str:
        return _line(self, nic)


@lru_cache(maxsize=256)
def _line(settings: NicSettings, nic: str) -> str:
    """The qos line; thousands of hosts share a few (settings, NIC name) pairs."""
    s = settings
    changed = [f"{d}:{p}" for d, p in enumerate(s.dscp_to_priority) if p != d >> 3]
    return (f"qos {nic} trust {s.trust} pfc {_list(s.pfc)} tos {s.tos} "
            f"cnp {s.cnp_dscp}/{s.cnp_priority} ecn-np {_list(s.ecn_np)} "
            f"ecn-rp {_list(s.ecn_rp)} dcqcn {'on' if s.dcqcn else 'off'} "
            f"strict {_list(s.strict)} tc-bw {','.join(map(str, s.tc_bw))} "
            f"pfc-prevention {s.pfc_prevention_ms} dscp2prio {','.join(changed) or '-'}")


def _list(values: tuple[int, ...]) -> str:
    return ",".join(map(str, values)) or "-"


def _ints(text: str, where: str, low: int, high: int) -> tuple[int, ...]:
    if text == "-":
        return ()
    try:
        values = tuple(int(v) for v in text.split(","))
    except ValueError:
        raise NicQosError(f"{where}: {text!r} is not a list of numbers") from None
    if any(not low <= v <= high for v in values):
        raise NicQosError(f"{where}: values must lie in {low}..{high}: {text!r}")
    return values


def parse_line(line: str, number: int) -> tuple[str, NicSettings]:
    match = LINE_RE.match(line)
    if match is None:
        raise NicQosError(f"line {number}: cannot parse qos line {line!r}")
    where = f"line {number}"
    table = [d >> 3 for d in range(64)]
    if match["map"] != "-":
        for item in match["map"].split(","):
            dscp, _, prio = item.partition(":")
            if not (dscp.isdigit() and prio.isdigit() and int(dscp) < 64 and int(prio) < 8):
                raise NicQosError(f"{where}: bad dscp2prio entry {item!r}")
            table[int(dscp)] = int(prio)
    bw = _ints(match["bw"], f"{where} tc-bw", 0, 100)
    if len(bw) != 8:
        raise NicQosError(f"{where}: tc-bw needs 8 values, got {len(bw)}")
    tos, cnp_dscp, cnp_prio = int(match["tos"]), int(match["cnp_dscp"]), int(match["cnp_prio"])
    if tos > 255 or cnp_dscp > 63 or cnp_prio > 7:
        raise NicQosError(f"{where}: tos 0..255, cnp DSCP 0..63 and priority 0..7")
    return match["nic"], NicSettings(
        trust=match["trust"], pfc=_ints(match["pfc"], f"{where} pfc", 0, 7), tos=tos,
        cnp_dscp=cnp_dscp, cnp_priority=cnp_prio,
        ecn_np=_ints(match["np"], f"{where} ecn-np", 0, 7),
        ecn_rp=_ints(match["rp"], f"{where} ecn-rp", 0, 7), dcqcn=match["dcqcn"] == "on",
        strict=_ints(match["strict"], f"{where} strict", 0, 7), tc_bw=bw,
        pfc_prevention_ms=int(match["prevention"]), dscp_to_priority=tuple(table))


def from_model(nic: NicQos) -> NicSettings:
    return NicSettings(
        trust=nic.trust, pfc=tuple(nic.pfc), tos=nic.roce_tos, cnp_dscp=nic.cnp_dscp,
        cnp_priority=nic.cnp_priority, ecn_np=tuple(nic.ecn_np), ecn_rp=tuple(nic.ecn_rp),
        dcqcn=nic.dcqcn, strict=tuple(nic.strict_tcs), tc_bw=tuple(nic.tc_bw),
        pfc_prevention_ms=nic.pfc_prevention_ms, dscp_to_priority=tuple(nic.dscp_to_priority))


def to_model(settings: NicSettings, *, virtual: bool) -> NicQos:
    return NicQos(
        trust=settings.trust, pfc=list(settings.pfc), dscp_to_priority=list(
            settings.dscp_to_priority), roce_tos=settings.tos, cnp_dscp=settings.cnp_dscp,
        cnp_priority=settings.cnp_priority, ecn_np=list(settings.ecn_np),
        ecn_rp=list(settings.ecn_rp), dcqcn=settings.dcqcn, strict_tcs=list(settings.strict),
        tc_bw=list(settings.tc_bw), pfc_prevention_ms=settings.pfc_prevention_ms,
        virtual=virtual)


# ---- the lab: nftables marking -------------------------------------------------------------


def nft_ruleset(qos: dict[str, NicSettings]) -> str:
    """An nft script that replaces flatfab's table (and removes it when there is no NIC):
    the marking chain, and the virtual NIC's counters (nic_counters.py reads them)."""
    lines = [f"table inet {NFT_TABLE} {{}}", f"delete table inet {NFT_TABLE}"]
    if qos:
        lines += [f"table inet {NFT_TABLE} {{", f"  chain {NFT_CHAIN} {{",
                  "    type filter hook output priority mangle; policy accept;"]
        for nic, s in sorted(qos.items()):
            match = f'oifname "{nic}" udp dport {ROCE_PORT}'
            lines.append(f"    {match} @th,64,8 {CNP_OPCODE:#x} ip dscp set {s.cnp_dscp} accept")
            lines.append(f"    {match} ip dscp set {s.tos >> 2} ip ecn set {s.tos & 3}")
        lines += ["  }", *_counter_chains(sorted(qos)), "}"]
    return "\n".join(lines) + "\n"


def _counter_chains(nics: list[str]) -> list[str]:
    """Per NIC, count what really crosses it: CNPs in and out, CE-marked RoCE in. Each
    counter's rule is named by its comment (`<nic> <what>`), which is how it is read back."""
    cnp = f"udp dport {ROCE_PORT} @th,64,8 {CNP_OPCODE:#x}"
    lines = [f"  chain {NFT_COUNT_IN} {{",
             "    type filter hook input priority filter; policy accept;"]
    for nic in nics:
        lines.append(f'    iifname "{nic}" {cnp} counter comment "{nic} {COUNT_CNP_RX}"')
        lines.append(f'    iifname "{nic}" udp dport {ROCE_PORT} ip ecn ce counter '
                     f'comment "{nic} {COUNT_CE_RX}"')
    lines += ["  }", f"  chain {NFT_COUNT_OUT} {{",
              "    type filter hook output priority filter; policy accept;"]
    lines += [f'    oifname "{nic}" {cnp} counter comment "{nic} {COUNT_CNP_TX}"'
              for nic in nics]
    return [*lines, "  }"]


def _value(value: Any, names: dict[str, int], what: str) -> int:
    """A DSCP or ECN value as nft prints it: a number, a numeric text or a name (af41)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str):
        text = value.strip().lower()
        if text in names:
            return names[text]
        try:
            return int(text, 0)
        except ValueError:
            pass
    raise NicQosError(f"nftables: unknown {what} value {value!r}")


def _opcode(value: Any) -> int | None:
    """The raw transport-header byte a rule matches (nft prints a number, or hex text)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    try:
        return int(value, 0) if isinstance(value, str) else None
    except ValueError:
        return None


def read_marks(text: str) -> tuple[dict[str, tuple[int, int]], dict[str, str]]:
    """(NIC -> (RoCE ToS, CNP DSCP) as the loaded rules mark them, NIC -> why unreadable).

    nftables 0.9.x to 1.x JSON: a `nftables` list of objects (`metainfo`, `table`,
    `chain`, `rule`, ...); what flatfab does not use (counters, comments, other chains) is
    ignored. A rule of flatfab's chain whose value cannot be read names its NIC ("*" for
    output that is not nft's JSON at all).
    """
    if not text.strip():
        return {}, {}
    try:
        data = json.loads(text)
    except ValueError:
        return {}, {"*": "`nft -j list table` did not print JSON"}
    items = data.get("nftables") if isinstance(data, dict) else None
    if not isinstance(items, list):
        return {}, {"*": "`nft -j list table` printed no `nftables` list"}
    problems: dict[str, str] = {}
    rules: list[tuple[str, bool, int | None, int | None, bool]] = []
    for item in items:
        rule = item.get("rule") if isinstance(item, dict) else None
        if not isinstance(rule, dict) or rule.get("chain") != NFT_CHAIN:
            continue
        nic, is_cnp, dscp, ecn, accept = None, False, None, None, False
        try:
            for expr in rule.get("expr") or []:
                match = expr.get("match") if isinstance(expr, dict) else None
                mangle = expr.get("mangle") if isinstance(expr, dict) else None
                accept = accept or (isinstance(expr, dict) and "accept" in expr)
                left = match.get("left") if isinstance(match, dict) else None
                if isinstance(left, dict) and (left.get("meta") or {}).get("key") == "oifname":
                    nic = str(match.get("right")) if isinstance(match, dict) else None
                elif isinstance(left, dict) and (left.get("payload") or {}).get("base") == "th":
                    is_cnp = (_opcode(match.get("right")) if isinstance(match, dict)
                              else None) == CNP_OPCODE
                elif isinstance(mangle, dict):
                    key = mangle.get("key")
                    payload = key.get("payload") if isinstance(key, dict) else None
                    field = payload.get("field") if isinstance(payload, dict) else None
                    if field == "dscp":
                        dscp = _value(mangle.get("value"), DSCP_NAMES, "DSCP")
                    elif field == "ecn":
                        ecn = _value(mangle.get("value"), ECN_NAMES, "ECN")
        except NicQosError as exc:
            problems[nic or "*"] = str(exc)
            continue
        if nic is not None:
            rules.append((nic, is_cnp, dscp, ecn, accept))
    marks = {nic: _marked(rules, nic) for nic in sorted({r[0] for r in rules if r[2] is not None})
             if nic not in problems}
    return marks, problems


def _marked(rules: list[tuple[str, bool, int | None, int | None, bool]],
            nic: str) -> tuple[int, int]:
    """(RoCE ToS, CNP DSCP) one NIC's packets leave with, as the kernel walks the chain: in
    order, each rule that matches the packet sets what it mangles, and one that accepts ends
    the walk (so a rule inserted above flatfab's wins, as it does in the kernel). A rule
    without the CNP match matches CNPs too."""
    found = {}
    for cnp_packet in (False, True):
        dscp, ecn = 0, 0
        for name, cnp_only, set_dscp, set_ecn, accept in rules:
            if name != nic or (cnp_only and not cnp_packet):
                continue
            dscp = set_dscp if set_dscp is not None else dscp
            ecn = set_ecn if set_ecn is not None else ecn
            if accept:
                break
        found[cnp_packet] = (dscp, ecn)
    (data_dscp, data_ecn), (cnp_dscp, _) = found[False], found[True]
    return data_dscp << 2 | data_ecn, cnp_dscp


def marks_from_nft(text: str) -> dict[str, tuple[int, int]]:
    """NIC -> (RoCE ToS, CNP DSCP) as the loaded nftables rules mark them; NicQosError when
    any of flatfab's rules cannot be read (read_marks names the NIC instead)."""
    marks, problems = read_marks(text)
    if problems:
        raise NicQosError("nftables: " + "; ".join(f"{nic}: {why}"
                                                   for nic, why in sorted(problems.items())))
    return marks


def with_marks(qos: dict[str, NicSettings], marks: dict[str, tuple[int, int]],
               keep: set[str] | None = None) -> dict[str, NicSettings]:
    """The virtual NIC state with ToS and CNP DSCP as the kernel really marks them (NICs in
    `keep`, whose marking could not be read, or every NIC when it holds "*", keep theirs)."""
    kept = keep or set()
    return {nic: s if nic in kept or "*" in kept else
            replace(s, tos=marks.get(nic, (0, 0))[0], cnp_dscp=marks.get(nic, (0, 0))[1])
            for nic, s in qos.items()}


# ---- real hosts: ConnectX --------------------------------------------------------------------


def connectx_commands(nic: str, s: NicSettings, rdma_device: str = "mlx5_0",
                      port: int = 1) -> list[str]:
    """The ConnectX settings of the lossless-domain reference §6.1 for one NIC."""
    pfc = ",".join("1" if p in s.pfc else "0" for p in range(8))
    cmds = [f"mlnx_qos -i {nic} --trust {s.trust}", f"mlnx_qos -i {nic} --pfc {pfc}",
            f"mlnx_qos -i {nic} --tc_bw {','.join(map(str, s.tc_bw))}"]
    tsa = ",".join("strict" if tc in s.strict else "ets" for tc in range(8))
    cmds.append(f"mlnx_qos -i {nic} --tsa {tsa}")
    cmds += [f"mlnx_qos -i {nic} --dscp2prio set,{d},{p}"
             for d, p in enumerate(s.dscp_to_priority) if p != d >> 3]
    cm = f"/sys/kernel/config/rdma_cm/{rdma_device}"
    cmds += [f"mkdir -p {cm}", f"echo 'RoCE v2' > {cm}/ports/{port}/default_roce_mode",
             f"echo {s.tos} > {cm}/ports/{port}/default_roce_tos",
             f"echo {s.tos} > /sys/class/infiniband/{rdma_device}/tc/{port}/traffic_class"]
    for prio in range(8):
        cmds.append(f"echo {int(prio in s.ecn_np)} > /sys/class/net/{nic}/ecn/roce_np/enable/"
                    f"{prio}")
        cmds.append(f"echo {int(prio in s.ecn_rp)} > /sys/class/net/{nic}/ecn/roce_rp/enable/"
                    f"{prio}")
    cmds += [f"echo {s.cnp_dscp} > /sys/class/net/{nic}/ecn/roce_np/cnp_dscp",
             f"echo {s.cnp_priority} > /sys/class/net/{nic}/ecn/roce_np/cnp_802p_prio",
             f"ethtool --set-tunable {nic} pfc-prevention-tout {s.pfc_prevention_ms}"]
    return cmds


# ---- real hosts: reading ConnectX back -----------------------------------------------------

MLNX_TRUST_RE = re.compile(r"^\s*Priority trust state:\s*(\w+)", re.M)
MLNX_DSCP_RE = re.compile(r"^\s*prio:\s*(\d)\s+dscp:\s*([\d,\s]*?)\s*$", re.M)
MLNX_PFC_RE = re.compile(r"^\s*enabled\s+((?:[01]\s*){8})$", re.M)
MLNX_TC_RE = re.compile(r"^\s*tc:\s*(\d)\b[^\n]*?tsa:\s*(\w+)(?:,\s*bw:\s*(\d+)\s*%)?", re.M)
SYSFS_VALUES = ("cnp_dscp", "cnp_802p_prio")


def parse_mlnx_qos(text: str) -> tuple[dict[str, Any], str | None]:
    """trust, pfc, dscp_to_priority, strict_tcs and tc_bw from `mlnx_qos -i <nic>` text
    (MLNX_OFED 5.x to DOCA-OFED 24.x); ({}, why) when a section is missing."""
    trust = MLNX_TRUST_RE.search(text)
    pfc = MLNX_PFC_RE.search(text)
    tcs = MLNX_TC_RE.findall(text)
    if trust is None or pfc is None or len({tc for tc, _, _ in tcs}) != 8:
        return {}, ("`mlnx_qos` printed no trust state, PFC table or 8 TCs"
                    + (f": {text.strip().splitlines()[0][:120]}" if text.strip() else ""))
    table = [d >> 3 for d in range(64)]
    for prio, dscps in MLNX_DSCP_RE.findall(text):
        for dscp in (d for d in dscps.replace(" ", "").split(",") if d):
            if int(dscp) < 64:
                table[int(dscp)] = int(prio)
    bw = [0] * 8
    strict = []
    for tc, tsa, share in tcs:
        if tsa == "strict":
            strict.append(int(tc))
        bw[int(tc)] = int(share) if share else 0
    return {"trust": trust.group(1).lower(), "pfc": [p for p, v in enumerate(
        pfc.group(1).split()) if v == "1"], "dscp_to_priority": table,
        "strict_tcs": sorted(strict), "tc_bw": bw}, None


def connectx_read_commands(nic: str, rdma_device: str = "mlx5_0", port: int = 1
                           ) -> dict[str, str]:
    """Batch keys -> commands that read back what connectx_commands sets (stderr kept)."""
    ecn = f"/sys/class/net/{nic}/ecn"
    commands = {f"mlnx_qos {nic}": f"mlnx_qos -i {nic} 2>&1"}
    for point in ("np", "rp"):
        for prio in range(8):
            commands[f"ecn {point} {nic} {prio}"] = f"cat {ecn}/roce_{point}/enable/{prio} 2>&1"
    for name in SYSFS_VALUES:
        commands[f"{name} {nic}"] = f"cat {ecn}/roce_np/{name} 2>&1"
    commands[f"tos {nic}"] = (f"cat /sys/kernel/config/rdma_cm/{rdma_device}/ports/{port}/"
                              "default_roce_tos 2>&1")
    commands[f"prevention {nic}"] = f"ethtool --get-tunable {nic} pfc-prevention-tout 2>&1"
    return commands


def _number(text: str) -> int | None:
    value = text.strip()
    return int(value) if value.isdigit() else None


def read_connectx(nic: str, stored: NicSettings, out: dict[str, str]
                  ) -> tuple[NicQos | None, str | None]:
    """The NIC as ConnectX holds it (not virtual); (None, why) when mlnx_qos cannot be read.

    A sysfs or ethtool value that cannot be read is unknown with the reason, its value the
    stored one as a placeholder that no check judges.
    """
    qos, why = parse_mlnx_qos(out.get(f"mlnx_qos {nic}", ""))
    if why is not None:
        return None, why
    unknown: dict[str, str] = {}
    enabled: dict[str, list[int]] = {}
    for point, field in (("np", "ecn_np"), ("rp", "ecn_rp")):
        flags = {p: _number(out.get(f"ecn {point} {nic} {p}", "")) for p in range(8)}
        bad = [p for p, v in flags.items() if v not in (0, 1)]
        if bad:
            line = out.get(f"ecn {point} {nic} {bad[0]}", "").strip()
            unknown[field] = (f"/sys/class/net/{nic}/ecn/roce_{point}/enable/{bad[0]} "
                              f"cannot be read: {line[:120] or 'no output'}")
        enabled[field] = [p for p, v in flags.items() if v == 1]
    values: dict[str, int] = {}
    for key, field, path, low_high in (
            (f"cnp_dscp {nic}", "cnp_dscp", f"/sys/class/net/{nic}/ecn/roce_np/cnp_dscp", 63),
            (f"cnp_802p_prio {nic}", "cnp_priority",
             f"/sys/class/net/{nic}/ecn/roce_np/cnp_802p_prio", 7),
            (f"tos {nic}", "roce_tos", "the RDMA-CM default_roce_tos", 255)):
        value = _number(out.get(key, ""))
        if value is None or value > low_high:
            said = out.get(key, "").strip()[:120] or "no output"
            unknown[field] = f"{path} cannot be read: {said}"
        else:
            values[field] = value
    match = re.search(r"(\d+)\s*(?:ms|msec)?\s*$", out.get(f"prevention {nic}", "").strip())
    if match is None or "timeout" not in out.get(f"prevention {nic}", "").lower():
        unknown["pfc_prevention_ms"] = ("`ethtool --get-tunable pfc-prevention-tout` printed "
                                        "no timeout: " + (out.get(f"prevention {nic}", "")
                                                          .strip()[:120] or "no output"))
    else:
        values["pfc_prevention_ms"] = int(match.group(1))
    if "ecn_rp" in unknown:
        unknown["dcqcn"] = unknown["ecn_rp"]
    base = to_model(stored, virtual=False)
    return base.model_copy(update={
        **qos, **{f: enabled[f] for f in ("ecn_np", "ecn_rp") if f not in unknown},
        **values, **({} if "dcqcn" in unknown else {"dcqcn": bool(enabled["ecn_rp"])}),
        "unknown": unknown}), None
