"""The `nccl` lines of the linux_host config text, and the nccl.conf file the driver writes
from them and reads back.

    nccl hca <nic>[,<nic>...]      NCCL_IB_HCA: the RDMA devices of these data NICs, rail order
    nccl <NCCL_VARIABLE>=<value>   any other NCCL variable, as nccl.conf spells it

The config text names NICs, not RDMA devices: the plan knows netdevs only. The driver maps
each NIC to its RDMA device with the inventory's `rdma_devices` when it writes the file
(`NCCL_IB_HCA==mlx5_2,mlx5_0`, names exact) and back when it reads it. Without a device for
every NIC (the embedded lab has no RDMA device) the file leaves NCCL_IB_HCA out, since a
list without one rail's device would leave that rail idle, and a comment says why; reading
that comment back gives the `nccl hca` line again, so drift stays clean where the file says
all flatfab could write.

Facts (NVIDIA NCCL documentation, "Environment Variables"): NCCL reads KEY=VALUE lines of
/etc/nccl.conf, a variable already set in the environment wins, and in a file the first line
of a key wins. NCCL's param.cc (`setEnvFile`) reads any line with a `=` as a setting in older
releases, comment or not, so no comment written here holds one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from flatfab.cluster.nccl import HCA, NcclConfError, parse_nccl_conf
from flatfab.cluster.rdma import RdmaPort

HCA_WORD = "hca"
DEFAULT_PATH = "/etc/nccl.conf"
# the file's first line: a file without it is not flatfab's (never rewritten without a copy
# of it kept first, never deleted)
MARKER = "# NCCL settings written by flatfab from the fabric plan: flatfab rewrites this file."
_LEFT_OUT = re.compile(r"^# NCCL_IB_HCA left out \(NICs (?P<nics>[^)]*)\): ")
VARIABLE_RE = re.compile(r"^NCCL_[A-Z0-9_]+$")
_NIC_RE = re.compile(r"^[a-zA-Z][a-zA-Z0-9_.-]{0,14}$")


class NcclLineError(ValueError):
    """An `nccl` config line that does not parse."""


@dataclass(frozen=True)
class NcclConfig:
    """What flatfab writes to a host's nccl.conf: `hca`, the data NICs whose RDMA devices
    NCCL uses (rail order); `variables`, the other NCCL variables by name."""

    hca: tuple[str, ...] = ()
    variables: tuple[tuple[str, str], ...] = ()

    def lines(self) -> list[str]:
        """The config lines: `nccl hca` first, then the variables by name."""
        found = [f"nccl {HCA_WORD} {','.join(self.hca)}"] if self.hca else []
        return found + [f"nccl {key}={value}" for key, value in sorted(self.variables)]


def parse_line(line: str, number: int) -> tuple[str, str]:
    """(`hca`, the NICs) or (variable, value) of one `nccl ...` line."""
    words = line.split()
    if len(words) == 3 and words[1] == HCA_WORD:
        nics = words[2].split(",")
        bad = [n for n in nics if not _NIC_RE.match(n)]
        if bad or len(set(nics)) != len(nics):
            raise NcclLineError(f"line {number}: nccl hca {words[2]!r} is not a list of "
                                "distinct NIC names")
        return HCA_WORD, words[2]
    key, equals, value = words[1].partition("=") if len(words) == 2 else ("", "", "")
    if not equals or not VARIABLE_RE.match(key) or not value:
        raise NcclLineError(f"line {number}: cannot parse {line!r} (nccl hca <nic>,... or "
                            "nccl NCCL_<VARIABLE>=<value>)")
    return key, value


def from_lines(items: list[tuple[str, str, int]]) -> NcclConfig | None:
    """The `nccl` lines (key, value, line number) of one config; None: there are none."""
    if not items:
        return None
    seen: dict[str, int] = {}
    for key, _, number in items:
        if key in seen:
            raise NcclLineError(f"line {number}: nccl {key} is given twice (line {seen[key]})")
        seen[key] = number
    if HCA_WORD in seen and HCA in seen:
        raise NcclLineError(f"line {seen[HCA]}: {HCA} and `nccl hca` both set NCCL_IB_HCA")
    values = {key: value for key, value, _ in items}
    hca = values.pop(HCA_WORD, None)
    return NcclConfig(hca=tuple(hca.split(",")) if hca else (),
                      variables=tuple(sorted(values.items())))


# --- the file ----------------------------------------------------------------------------


def device_port(value: str) -> RdmaPort:
    """An inventory `rdma_devices` value: `mlx5_0`, `mlx5_0:1` or `mlx5_0/1`."""
    device, sep, port = value.replace("/", ":").partition(":")
    return RdmaPort(device, int(port)) if sep and port.isdigit() else RdmaPort(device)


def _left_out(nics: tuple[str, ...], rdma: Mapping[str, str]) -> str:
    missing = " ".join(n for n in nics if n not in rdma)
    return (f"# NCCL_IB_HCA left out (NICs {' '.join(nics)}): no RDMA device known for "
            f"{missing} (the linux_host inventory's rdma_devices names them).")


def file_text(config: NcclConfig, rdma: Mapping[str, str]) -> str:
    """The nccl.conf flatfab writes: its marker, a comment per choice, then the settings
    (NCCL_IB_HCA first, names exact: without `=` NCCL reads `mlx5_1` as a prefix that also
    selects mlx5_10 to mlx5_19)."""
    lines = [MARKER]
    variables = dict(config.variables)
    if config.hca and all(n in rdma for n in config.hca):
        lines.append(f"# NCCL_IB_HCA: the RDMA devices of {' '.join(config.hca)}, rail 1 "
                     "first.")
        variables = {HCA: "=" + ",".join(str(device_port(rdma[n])) for n in config.hca),
                     **variables}
    elif config.hca:
        lines.append(_left_out(config.hca, rdma))
    lines += [f"{key}={value}" for key, value in variables.items()]
    return "\n".join(lines) + "\n"


def _hca_nics(value: str, rdma: Mapping[str, str]) -> tuple[str, ...] | None:
    """The NICs whose devices an exact NCCL_IB_HCA lists, when the map names each one."""
    if not value.startswith("="):
        return None
    netdevs = {str(device_port(device)): nic for nic, device in rdma.items()}
    found = tuple(netdevs.get(entry.strip(), "") for entry in value[1:].split(","))
    return None if not all(found) else found


def _hca_left_out(text: str, rdma: Mapping[str, str]) -> tuple[str, ...]:
    """The NICs of a `left out` comment, if the driver would write that same comment now."""
    for line in text.splitlines():
        match = _LEFT_OUT.match(line)
        if match:
            nics = tuple(match["nics"].split())
            return nics if nics and line == _left_out(nics, rdma) else ()
    return ()


def read_file(text: str, path: str, rdma: Mapping[str, str]) -> NcclConfig:
    """flatfab's nccl.conf back as config: NCCL_IB_HCA back to its NICs where the map names
    each device (else the variable as written, so drift shows it). A line NCCL would not
    read as meant is an NcclConfError naming the file and line."""
    conf = parse_nccl_conf(text, path)
    values = dict(conf.values)
    hca: tuple[str, ...] = ()
    if HCA in values:
        nics = _hca_nics(values[HCA], rdma)
        if nics is not None:
            hca = nics
            del values[HCA]
    else:
        hca = _hca_left_out(text, rdma)
    return NcclConfig(hca=hca, variables=tuple(sorted(values.items())))


def owned(text: str) -> bool:
    """Whether a nccl.conf is flatfab's (its first line is flatfab's marker)."""
    return text.split("\n", 1)[0] == MARKER


__all__ = [
    "DEFAULT_PATH",
    "MARKER",
    "NcclConfError",
    "NcclConfig",
    "NcclLineError",
    "device_port",
    "file_text",
    "from_lines",
    "owned",
    "parse_line",
    "read_file",
]
