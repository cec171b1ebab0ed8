"""Slurm's own controller as the judge of a topology.conf: Debian's `slurmctld` started on
127.0.0.1 with a test configuration (auth/none: no munge daemon), asked `scontrol show
topology`, and stopped.

slurmctld reads topology.conf at start: a switch listing an undefined child is fatal, a node
the configuration does not define an error; `scontrol show topology` then prints the switch
hierarchy as the controller built it (each switch's level, and every node under it).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from flatfab.cluster.hostlist import compress, expand
from tests.support.sockets import closed_port
from tests.support.waiting import wait_for

SLURMCTLD = shutil.which("slurmctld") or "/usr/sbin/slurmctld"
SCONTROL = shutil.which("scontrol") or "/usr/bin/scontrol"


def missing() -> str | None:
    """Why Slurm cannot judge here (None: it can)."""
    for tool in (SLURMCTLD, SCONTROL):
        if not Path(tool).exists():
            return f"{Path(tool).name} is not installed (Debian: slurmctld slurm-client)"
    if os.geteuid() != 0:
        return "slurmctld runs as SlurmUser root here: needs root"
    return None


@dataclass(frozen=True)
class ShownSwitch:
    name: str
    level: int
    nodes: frozenset[str]
    switches: frozenset[str]


@dataclass(frozen=True)
class Judged:
    switches: dict[str, ShownSwitch]
    errors: list[str]  # the controller's log lines about the topology or its nodes


_FIELD = re.compile(r"(\w+)=(\S*)")


def _shown(text: str) -> dict[str, ShownSwitch]:
    out: dict[str, ShownSwitch] = {}
    for line in text.splitlines():
        fields = dict(_FIELD.findall(line))
        if "SwitchName" in fields:
            out[fields["SwitchName"]] = ShownSwitch(
                fields["SwitchName"], int(fields.get("Level", "0")),
                frozenset(expand(fields.get("Nodes", ""))),
                frozenset(expand(fields.get("Switches", ""))))
    return out


def judge(topology: str, nodes: Iterable[str], folder: Path) -> Judged:
    """Start slurmctld on `topology` with `nodes` defined, and return what it shows."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "state").mkdir(exist_ok=True)
    port = closed_port()
    conf = folder / "slurm.conf"
    (folder / "topology.conf").write_text(topology)
    conf.write_text("\n".join([
        "ClusterName=flatfabtest", "SlurmctldHost=localhost(127.0.0.1)",
        f"SlurmctldPort={port}", f"SlurmdPort={closed_port()}",
        "AuthType=auth/none", "CredType=cred/none", "SlurmUser=root",
        f"StateSaveLocation={folder / 'state'}", f"SlurmdSpoolDir={folder / 'spool'}",
        f"SlurmctldPidFile={folder / 'slurmctld.pid'}",
        f"SlurmctldLogFile={folder / 'slurmctld.log'}", "MailProg=/bin/true",
        "TopologyPlugin=topology/tree", "SelectType=select/cons_tres",
        "ProctrackType=proctrack/linuxproc", "MpiDefault=none",
        f"NodeName={compress(nodes)} CPUs=1 State=UNKNOWN NodeAddr=127.0.0.1",
        "PartitionName=all Nodes=ALL Default=YES State=UP", ""]))
    env = {**os.environ, "SLURM_CONF": str(conf)}
    daemon = subprocess.Popen([SLURMCTLD, "-D", "-i", "-f", str(conf)], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT,
                              start_new_session=True)
    try:
        def answers() -> bool:
            if daemon.poll() is not None:
                return True  # it stopped: the log says why
            return subprocess.run([SCONTROL, "ping"], env=env, capture_output=True,
                                  text=True, check=False).stdout.count("UP") > 0

        wait_for(answers, "slurmctld answering scontrol ping", timeout=30)
        shown = subprocess.run([SCONTROL, "show", "topology"], env=env, capture_output=True,
                               text=True, check=False)
        switches = _shown(shown.stdout) if daemon.poll() is None else {}
    finally:
        if daemon.poll() is None:
            os.killpg(daemon.pid, signal.SIGTERM)
            daemon.wait(timeout=30)
    log = (folder / "slurmctld.log").read_text(errors="replace").splitlines()
    # a first start has no saved state: its "could not open ... state file" is not the file's
    errors = [line for line in log if ("error" in line or "fatal" in line)
              and "state file" not in line
              and any(word in line for word in ("witch", "topology", "node"))]
    return Judged(switches, errors)
