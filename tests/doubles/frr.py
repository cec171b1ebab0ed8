"""The shell drivers' session double (frr, and linux_host through tests/doubles/linux_host.py).

`FakeShell` has SshSession's `run()` and `log` and answers each command with a recorded
Reply; frr's leaf1 answers come from tests/fixtures/frr/leaf1, recorded on leaf1 of the
embedded lab: default VRF plus VRF namespaces blue and red, eBGP unnumbered to
spine1/spine2. The ip, vtysh and lldpcli files are verbatim lab output; hostname.txt,
proc_uptime.txt, machine_id.txt, uname_m.txt and vtysh_bgpd_not_running.stderr are written
by hand; ecmp_<vrf>.txt is the hashing readback (flatfab.platforms.frr.ecmp) run on Linux
6.18 in a namespace with the lab's day-0 sysctls (policy 1), the same in each namespace.
The drivers batch show commands into one `sh -s` whose script separates them with
`echo '@@flatfab@@ <key>'` lines; FakeShell executes such scripts the way sh would.
`FakeSession` answers by regular expression instead (the offline driver tests use it).
`CapturedShell` answers from the NAPALM getter tests' capture of the same lab after a full
rollout (tests/fixtures/napalm/), lossless state included: the shared collect test's case.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from flatfab.intent.loader import load_intent
from flatfab.plan.planner import plan
from flatfab.platforms.frr import ecmp, kernel_qos
from flatfab.platforms.frr import links as links_mod
from flatfab.platforms.frr.driver import FrrDriver
from flatfab.platforms.shell_driver import MARK
from flatfab.transport.ssh import (
    CommandResult,
    LoggedCommand,
    ReadOnlyError,
    SshOptions,
    SshSession,
)
from tests.doubles import CollectCase
from tests.doubles.napalm import LLDP_SOCKET as CAPTURED_LLDP
from tests.doubles.napalm import MOCKED, mocked_name
from tests.support.paths import FIXTURES, ROOT

LEAF1 = FIXTURES / "frr" / "leaf1"
LLDP_SOCKET = "/run/flatfab/ff/nodes/leaf1/lldpd.socket"
STATE_DIR = "/var/lib/flatfab"


@dataclass(frozen=True)
class Reply:
    stdout: str = ""
    stderr: str = ""
    status: int = 0


def recorded(path: Path) -> Reply:
    return Reply(stdout=path.read_text(encoding="utf-8"))


MARKER_RE = re.compile(rf"^echo; echo '({re.escape(MARK)} [^']*)'$")


def vtysh_shows(command: str) -> list[str] | None:
    """The shows of `vtysh -c A -c B ...` (two or more), else None."""
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    pairs = words[1:]
    if words[:1] != ["vtysh"] or len(pairs) < 4 or len(pairs) % 2 or \
            any(flag != "-c" for flag in pairs[::2]):
        return None
    return pairs[1::2]


@dataclass
class FakeShell:
    """Stands in for SshSession: answers each command with a recorded Reply.

    A non-mutating `sh -s` runs its stdin script like sh: a marker `echo` prints its text,
    every other line is a command answered on its own, stdout and stderr are concatenated
    and the exit status is the last command's. Mutating commands change nothing here; they
    are kept in `applied` so tests can look at what would have run on the switch.
    An unknown command fails the test, so the answers also pin the exact commands.
    """

    answers: dict[str, Reply]
    log: list[LoggedCommand] = field(default_factory=list)
    applied: list[tuple[str, str | None]] = field(default_factory=list)

    def run(self, command: str, *, stdin: str | None = None, mutating: bool = False,
            privileged: bool = False, timeout: float = 60.0) -> CommandResult:
        if mutating:
            self.applied.append((command, stdin))
            reply = Reply()
        elif command == "sh -s" and stdin is not None:
            reply = self._script(stdin)
        else:
            reply = self.answer(command)
        self.log.append(LoggedCommand(command, mutating, reply.status, 0.0))
        return CommandResult(command, reply.stdout, reply.stderr, reply.status)

    def answer(self, command: str) -> Reply:
        if command not in self.answers:
            shows = vtysh_shows(command)
            if shows is not None:  # several -c: each answered as alone, one after another
                replies = [self.answer(f"vtysh -c {shlex.quote(show)}") for show in shows]
                return Reply("".join(r.stdout for r in replies),
                             "".join(r.stderr for r in replies), max(r.status for r in replies))
            raise AssertionError(f"no recorded answer for {command!r}")
        return self.answers[command]

    def _script(self, script: str) -> Reply:
        stdout, stderr, status = [], [], 0
        for line in script.splitlines():
            marker = MARKER_RE.match(line)
            if marker:
                stdout.append("\n" + marker.group(1) + "\n")
                status = 0
            elif line == "echo":
                stdout.append("\n")
                status = 0
            elif line.strip():
                reply = self.answer(line)
                stdout.append(reply.stdout)
                stderr.append(reply.stderr)
                status = reply.status
        return Reply("".join(stdout), "".join(stderr), status)


def leaf1_answers() -> dict[str, Reply]:
    answers = {
        "ip netns list": recorded(LEAF1 / "ip_netns_list.txt"),
        "vtysh -c 'show bgp vrf all summary json'":
            recorded(LEAF1 / "show_bgp_vrf_all_summary.json"),
        "vtysh -c 'show running-config'": recorded(LEAF1 / "show_running_config.txt"),
        "vtysh -c 'show version'": recorded(LEAF1 / "show_version.txt"),
        f"/usr/sbin/lldpcli -u {LLDP_SOCKET} -f json show neighbors":
            recorded(LEAF1 / "lldpcli_show_neighbors.json"),
        "hostname": recorded(LEAF1 / "hostname.txt"),
        "hostname -f 2>/dev/null || hostname": recorded(LEAF1 / "hostname.txt"),
        "cat /proc/uptime": recorded(LEAF1 / "proc_uptime.txt"),
        "cat /etc/machine-id 2>/dev/null || true": recorded(LEAF1 / "machine_id.txt"),
        "uname -m": recorded(LEAF1 / "uname_m.txt"),
        # FRR's own dry-run parser accepts the candidate
        "f=$(mktemp) && cat > $f && vtysh -C -f $f; rc=$?; rm -f $f; exit $rc": Reply(),
        # no revert timer is pending
        f"p=$(cat {STATE_DIR}/revert.pid 2>/dev/null) && kill -0 $p 2>/dev/null "
        "&& echo $p || true": Reply(),
        f"cat {STATE_DIR}/startup.conf 2>/dev/null || true": Reply(),
    }
    for vrf in ("default", "blue", "red"):
        ns = "" if vrf == "default" else f"-n {vrf} "
        answers[f"ip {ns}-j -d link show"] = recorded(LEAF1 / f"ip_link_{vrf}.json")
        answers[f"ip {ns}-j -d addr show"] = recorded(LEAF1 / f"ip_addr_{vrf}.json")
        answers[f"vtysh -c 'show ip route vrf {vrf} json'"] = recorded(
            LEAF1 / f"show_ip_route_vrf_{vrf}.json")
        answers[ecmp.readback_command(vrf)] = recorded(LEAF1 / f"ecmp_{vrf}.txt")
    return answers | no_lossless_state()


def no_lossless_state() -> dict[str, Reply]:
    """A switch before its first lossless rollout: no virtual ASIC file, no flatfab queues."""
    links = links_mod.from_ip_json(
        {vrf: (LEAF1 / f"ip_link_{vrf}.json").read_text() for vrf in ("default", "blue", "red")},
        {"eth0"})
    ports = {name: spec.vrf for name, spec in links.items() if not spec.bridge}
    answers = {command: Reply(stdout="[]\n" if " -j " in command else "")
               for command in kernel_qos.readback_commands(ports).values()}
    answers[f"cat {STATE_DIR}/asic/config_db.json 2>/dev/null || true"] = Reply()
    return answers


def leaf1_driver(*, read_only: bool = False) -> tuple[FrrDriver, FakeShell]:
    driver = FrrDriver("192.0.2.13", "ff-admin", None, optional_args={
        "lldp_socket": LLDP_SOCKET, "read_only": read_only, "mgmt_interfaces": ["eth0"]})
    shell = FakeShell(leaf1_answers())
    driver.session = shell
    return driver, shell


@dataclass
class ReadOnlyShell(FakeShell):
    """Reads come from fixtures; changes go to a real read-only SshSession that never opened."""

    real: SshSession | None = None

    def run(self, command: str, *, stdin: str | None = None, mutating: bool = False,
            privileged: bool = False, timeout: float = 60.0) -> CommandResult:
        if mutating:
            assert self.real is not None
            return self.real.run(command, stdin=stdin, mutating=True, privileged=privileged,
                                 timeout=timeout)
        return super().run(command, stdin=stdin, privileged=privileged, timeout=timeout)


@dataclass
class FakeSession:
    answers: dict[str, tuple[str, int, str]]  # command -> (stdout, exit status, stderr)
    options: SshOptions = field(default_factory=lambda: SshOptions(host="fake", username="u"))
    log: list[LoggedCommand] = field(default_factory=list)

    def run(self, command: str, *, stdin: str | None = None, mutating: bool = False,
            privileged: bool = False, timeout: float = 60.0) -> CommandResult:
        if mutating and self.options.read_only:
            raise ReadOnlyError(f"refused: {command}")
        self.log.append(LoggedCommand(command, mutating, 0, 0.0))
        if command == "sh -s" and stdin is not None:
            return CommandResult(command, self._script(stdin), "", 0)
        out, status, err = self._answer(command)
        return CommandResult(command, out, err, status)

    def _answer(self, command: str) -> tuple[str, int, str]:
        for pattern, answer in self.answers.items():
            if re.fullmatch(pattern, command):
                return answer
        raise AssertionError(f"no recorded answer for {command!r}")

    def _script(self, script: str) -> str:
        out = []
        for line in script.splitlines():
            marker = re.fullmatch(r"echo; echo '(@@flatfab@@ .*)'", line)
            if line == "echo":
                out.append("")
            else:
                out.append("\n" + marker.group(1) if marker else self._answer(line)[0])
        return "\n".join(out) + "\n"


# ---- the conformance suite's collect test (tests/conformance/test_platforms.py) --------

# leaf1 after a full rollout of intents/lab: the NAPALM getter tests' mocked data, recorded
# by tests/fixtures/napalm/capture.py on the embedded lab (FRR 8.4.4, iproute2, tc, lldpd;
# tests/fixtures/napalm/README.md), virtual ASIC file and tc queues included. The getters
# never read the RIB, so `show ip route vrf <vrf> json` is the only answer taken from the
# older leaf1 recording (tests/fixtures/frr/leaf1, same lab, before the lossless plane).
CAPTURED_TEST = "test_get_config"  # holds the lossless state; its counters are one moment's
RIB_READS = re.compile(r"vtysh( -c 'show ip route vrf \S+ json')+")


@dataclass
class CapturedShell(ReadOnlyShell):
    """Reads answered from the embedded lab's NAPALM capture of a driver's node (then from
    `answers`); a change goes to the driver's own read-only SshSession, which refuses it."""

    driver: str = "frr"

    def answer(self, command: str) -> Reply:
        cases = MOCKED / self.driver / "mocked_data"
        for folder in (cases / CAPTURED_TEST, *sorted(cases.iterdir())):
            path = folder / "normal" / mocked_name(command)
            if path.is_file():
                return recorded(path)
        return super().answer(command)


def collect_cases() -> list[CollectCase]:
    driver = FrrDriver("192.0.2.13", "ff-admin", None, optional_args={
        "lldp_socket": CAPTURED_LLDP, "read_only": True, "mgmt_interfaces": ["eth0"]})
    shell = CapturedShell({c: r for c, r in leaf1_answers().items() if RIB_READS.fullmatch(c)},
                          real=driver.session)
    driver.session = shell
    # captured before the lab's intent set ECMP hashing: the kernel held its defaults then,
    # so the plan it is read against leaves the hashing alone (tests/platforms/frr/
    # test_ecmp.py reads a rendered hash back)
    planned = plan(load_intent(ROOT / "intents" / "lab")).devices["leaf1"]
    return [CollectCase(
        name="frr-lab-leaf1-rolled-out", driver=driver,
        planned=planned.model_copy(update={"lb": None}),
        commands=lambda: [entry.command for entry in shell.log],
        source="captured on the embedded lab (intents/lab, FRR 8.4.4) on leaf1 after a full "
               "rollout by tests/fixtures/napalm/capture.py, 2026-11-25 (tests/fixtures/napalm/"
               "README.md); the RIB, which NAPALM's getters do not read, from the earlier "
               "capture in tests/fixtures/frr/leaf1 (2026-11-22, same lab and FRR)")]
