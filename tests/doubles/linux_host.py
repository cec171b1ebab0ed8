"""A Linux host's session double: the FakeShell of tests/doubles/frr.py answering what
LinuxHostDriver reads on host leaf1-h1 of the embedded lab.

Answers come from tests/fixtures/linux_host/leaf1-h1: `ip -j` output recorded on host
leaf1-h1 (data NIC eth1, management NIC eth0, default route via the leaf), byte-for-byte
copies of the recordings in tests/fixtures/recorded. hostname.txt, proc_uptime.txt,
uname_*.txt, machine_id.txt and probe_output.txt are written by hand in the shape the
commands print. The routing tables, rules and per-NIC sysctls (`ip -4 -j route show table
all`, `ip -j rule show`, /proc/sys) are tests/fixtures/linux_host/variants/one_nic_*.json,
captured in a namespace set up as leaf1-h1 is (tests/fixtures/linux_host/capture_multinic.py).
The shared collect test's case reads leaf1-h1 after a full rollout instead, from the NAPALM
getter tests' capture (tests/fixtures/napalm/README.md), NIC state included.
`counting_host_driver` is leaf1-h1 with its NIC counters: in the lab the nftables counters of
tests/fixtures/linux_host/variants/nft_nic_counters.json (captured), on ConnectX the ethtool
and RDMA hw_counters of variants/mlx5_nic_counters.json (derived from documentation).
"""

from __future__ import annotations

import json

from flatfab.intent.loader import load_intent
from flatfab.plan.planner import plan
from flatfab.platforms.linux_host import nic_counters, nic_qos, rdma_state
from flatfab.platforms.linux_host.driver import ROUTE_READ, RULE_READ, SYSCTL_READ, LinuxHostDriver
from tests.doubles import CollectCase
from tests.doubles.frr import CapturedShell, FakeShell, Reply, recorded
from tests.support.paths import FIXTURES, ROOT

HOST = FIXTURES / "linux_host" / "leaf1-h1"
VARIANTS = HOST.parent / "variants"
STATE_DIR = "/var/lib/flatfab"
SYSCTL_RECORD = f"cat {STATE_DIR}/nic/sysctl.conf 2>/dev/null || true"
QOS_READ = f"cat {STATE_DIR}/nic/qos.conf 2>/dev/null || true"
NFT_READ = "nft -j list table inet flatfab 2>/dev/null || true"
# the nccl.conf read back (lab backend: under the state dir; ConnectX: /etc/nccl.conf): none
# there until a rollout of a plan with hosts.yaml `nccl.manage` writes one
LAB_NCCL_READ = rdma_state.file_command(f"{STATE_DIR}/nccl.conf")
ETC_NCCL_READ = rdma_state.file_command("/etc/nccl.conf")


def captured(case: str, what: str) -> Reply:
    """A captured variant's output (tests/fixtures/linux_host/variants/<case>_<what>.json)."""
    data = json.loads((VARIANTS / f"{case}_{what}.json").read_text(encoding="utf-8"))
    return Reply(data["output"])


def host_answers() -> dict[str, Reply]:
    return {
        "ip -j -d link show": recorded(HOST / "ip_link.json"),
        "ip -j addr show": recorded(HOST / "ip_addr.json"),
        "ip -j route show": recorded(HOST / "ip_route.json"),  # get_interfaces' batch
        ROUTE_READ: captured("one_nic", "ip_route_table_all"),
        RULE_READ: captured("one_nic", "ip_rule"),
        SYSCTL_READ: captured("one_nic", "sysctl_proc"),
        SYSCTL_RECORD: Reply(),  # a one-NIC host: no managed sysctls
        # before the first lossless rollout: no virtual NIC state, no nftables marking
        QOS_READ: Reply(),
        NFT_READ: Reply(),
        LAB_NCCL_READ: Reply(rdma_state.NO_FILE + "\n"),
        ETC_NCCL_READ: Reply(rdma_state.NO_FILE + "\n"),
        # get_facts only reads the names; the -d recording has the same ones
        "ip -j link show": recorded(HOST / "ip_link.json"),
        "hostname": recorded(HOST / "hostname.txt"),
        "cat /proc/uptime": recorded(HOST / "proc_uptime.txt"),
        "uname -sr": recorded(HOST / "uname_sr.txt"),
        "uname -m": recorded(HOST / "uname_m.txt"),
        "cat /etc/machine-id 2>/dev/null || true": recorded(HOST / "machine_id.txt"),
        f"p=$(cat {STATE_DIR}/revert.pid 2>/dev/null) && kill -0 $p 2>/dev/null "
        "&& echo $p || true": Reply(),
    }


def host_driver(*, read_only: bool = False) -> tuple[LinuxHostDriver, FakeShell]:
    driver = LinuxHostDriver("192.0.2.17", "ff-admin", None,
                             optional_args={"read_only": read_only})
    shell = FakeShell(host_answers())
    driver.session = shell
    return driver, shell


def collect_cases() -> list[CollectCase]:
    """leaf1-h1 after a full rollout of intents/lab, as the NAPALM getter tests' capture
    recorded it (tests/fixtures/napalm/README.md): NIC state, nftables marking included."""
    driver = LinuxHostDriver("192.0.2.17", "ff-admin", None, optional_args={"read_only": True})
    shell = CapturedShell({}, real=driver.session, driver="linux_host")
    driver.session = shell
    return [CollectCase(
        name="linux_host-lab-leaf1-h1-rolled-out", driver=driver,
        planned=plan(load_intent(ROOT / "intents" / "lab")).devices["leaf1-h1"],
        commands=lambda: [entry.command for entry in shell.log],
        source="captured on the embedded lab (intents/lab, Linux 6.18, iproute2, nftables "
               "1.0.6) on host leaf1-h1 after a full rollout by tests/fixtures/napalm/"
               "capture.py, 2026-11-25 (tests/fixtures/napalm/README.md)")]


def variant_output(name: str) -> str:
    """A variant's output as the command prints it (JSON output as nft prints it)."""
    output = json.loads((VARIANTS / name).read_text(encoding="utf-8"))["output"]
    return output if isinstance(output, str) else json.dumps(output, indent=1) + "\n"


def counting_host_driver(backend: str = "lab", *, dcqcn: bool = True
                         ) -> tuple[LinuxHostDriver, FakeShell]:
    """leaf1-h1 rolled out (eth1's planned qos line, DCQCN on or off) with NIC counters to
    read: the lab's nftables counters or ConnectX's ethtool and hw_counters."""
    planned = plan(load_intent(ROOT / "intents" / "lab")).devices["leaf1-h1"]
    nic = planned.interfaces["eth1"].nic
    assert nic is not None
    line = nic_qos.from_model(nic.model_copy(update={"dcqcn": dcqcn})).line("eth1")
    driver = LinuxHostDriver("192.0.2.17", "ff-admin", None,
                             optional_args={"read_only": True, "nic_backend": backend})
    shell = FakeShell({**host_answers(), QOS_READ: Reply(line + "\n"),
                       NFT_READ: Reply(variant_output("nft_nic_counters.json")),
                       nic_counters.connectx_command(f"{STATE_DIR}/nic/qos.conf"):
                           Reply(variant_output("mlx5_nic_counters.json"))})
    driver.session = shell
    return driver, shell
