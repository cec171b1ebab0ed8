"""The test engines of `flatfab accept` on a Linux host, over the driver's SSH shell.

A client runs in the foreground under coreutils' `timeout` (exit 124: it was still running
at the limit, 137: it had to be killed). A server runs in the background in a session of its
own (setsid), so that it outlives the SSH command that started it and every process of it
can be found by its session (coreutils' timeout moves itself to a process group of its own,
so the group would miss it): its output, its exit status and its process id go to a
private folder under /tmp (mktemp), which the stop reads and removes. A server that has not
ended by itself (iperf3 -s -1 ends after one test) is killed, session and all; its `timeout`
kills it anyway if flatfab never comes back. Nothing here touches what flatfab configures.
"""

from __future__ import annotations

import re
import shlex
from typing import Protocol, runtime_checkable

from flatfab.platforms.base import DeviceDriver, EngineRun, NotSupportedError
from flatfab.transport.ssh import CommandResult

TIMED_OUT = (124, 137)  # timeout(1): the command timed out / was killed with -k
KILL_AFTER_S = 2  # timeout -k: a command that ignores SIGTERM is killed this long after
MARK = "@@flatfab-accept"
HANDLE = re.compile(r"^/tmp/flatfab-accept\.[A-Za-z0-9]+$")
_ERRORS_KEPT = 5  # stderr's last lines an EngineRun keeps


@runtime_checkable
class Shell(Protocol):
    """The linux_host driver's shell (ShellDriver._run): this package's own driver."""

    hostname: str

    def _run(self, command: str, *, stdin: str | None = None, mutating: bool = False,
             check: bool = True, timeout: float | None = None) -> CommandResult: ...


class TestRunner:
    """Runs an engine's command on the host: never a change (not `mutating`: a read-only
    session runs it, as it runs the traffic sender), its exit status the caller's to judge."""

    def __init__(self, shell: Shell) -> None:
        self.hostname = shell.hostname
        self._shell = shell

    def run_test_command(self, command: str, timeout: float) -> CommandResult:
        return self._shell._run(command, check=False, timeout=timeout)


def runner(driver: DeviceDriver) -> TestRunner:
    if isinstance(driver, TestRunner):
        return driver
    if not isinstance(driver, Shell):
        raise TypeError(f"the linux_host platform needs its own driver, not "
                        f"{type(driver).__name__}")
    return TestRunner(driver)


def _timed(argv: list[str], timeout_s: float) -> str:
    return (f"timeout -k {KILL_AFTER_S} {max(int(timeout_s + 0.999), 1)} "
            + " ".join(shlex.quote(word) for word in argv))


def _tail(text: str) -> str:
    return "\n".join(text.strip().splitlines()[-_ERRORS_KEPT:])


def start_script(argv: list[str], timeout_s: float, listens_on: int | None) -> str:
    """Start `argv` in the background; print the handle, then whether it listens."""
    wait = "" if listens_on is None else (
        # ss(8)'s filter: a listening TCP socket on the port; 5 s for the server to bind
        f'i=0; while ! ss -Hltn "sport = :{int(listens_on)}" | grep -q .; do '
        f'kill -0 "$p" 2>/dev/null || break; i=$((i+1)); [ $i -gt 50 ] && break; '
        f'sleep 0.1; done; ss -Hltn "sport = :{int(listens_on)}" | grep -q . && '
        f'echo "{MARK} listening"; ')
    return (f'd=$(mktemp -d /tmp/flatfab-accept.XXXXXX) || exit 1; '
            # $0 the folder, $1 the command: no quoting of one inside the other
            f'setsid sh -c \'eval "$1"; echo $? > "$0/rc"\' "$d" '
            f'{shlex.quote(_timed(argv, timeout_s))} > "$d/out" 2> "$d/err" < /dev/null & '
            f'p=$!; echo "$p" > "$d/pid"; echo "{MARK} handle $d"; {wait}true')


def stop_script(handle: str, wait_s: float) -> str:
    """Wait for the run to end (at most `wait_s`), kill its group if it did not, print its
    exit status, stderr and stdout, and remove its folder."""
    d = shlex.quote(handle)
    polls = max(int(wait_s * 10), 1)
    return (f'd={d}; p=$(cat "$d/pid" 2>/dev/null); i=0; '
            f'while [ -n "$p" ] && [ ! -s "$d/rc" ] && [ $i -lt {polls} ]; do '
            f'i=$((i+1)); sleep 0.1; done; '
            f'if [ ! -s "$d/rc" ] && [ -n "$p" ]; then pkill -KILL -s "$p" 2>/dev/null; '
            f'echo "{MARK} killed"; fi; '
            f'echo "{MARK} rc $(cat "$d/rc" 2>/dev/null)"; echo "{MARK} err"; '
            f'cat "$d/err" 2>/dev/null; echo "{MARK} out"; cat "$d/out" 2>/dev/null; '
            f'rm -rf "$d"')


def run_engine(driver: DeviceDriver, argv: list[str], timeout_s: float, *,
               background: bool = False, listens_on: int | None = None) -> EngineRun:
    host = runner(driver)
    if not background:
        done = host.run_test_command(_timed(argv, timeout_s),
                                     timeout=timeout_s + KILL_AFTER_S + 10)
        status = None if done.exit_status in TIMED_OUT else done.exit_status
        return EngineRun(output=done.stdout, errors=_tail(done.stderr), exit_status=status)
    started = host.run_test_command(start_script(argv, timeout_s, listens_on), timeout=30)
    found = re.search(rf"^{MARK} handle (\S+)$", started.stdout, re.MULTILINE)
    if found is None or not HANDLE.match(found.group(1)):
        raise RuntimeError(f"{host.hostname}: {argv[0]} did not start: "
                           f"{_tail(started.stderr or started.stdout) or 'no handle'}")
    handle = found.group(1)
    if listens_on is not None and f"{MARK} listening" not in started.stdout:
        stopped = stop_engine(driver, handle, 0)
        said = stopped.errors or _tail(stopped.output) or "no output"
        raise RuntimeError(f"{host.hostname}: {argv[0]} never listened on TCP port "
                           f"{listens_on}: {said}")
    return EngineRun(handle=handle)


def stop_engine(driver: DeviceDriver, handle: str, wait_s: float) -> EngineRun:
    host = runner(driver)
    if not HANDLE.match(handle):  # the handle names a folder the stop removes
        raise ValueError(f"{handle!r} is not a handle of run_engine's")
    done = host.run_test_command(stop_script(handle, wait_s), timeout=wait_s + 30)
    head, _, output = done.stdout.partition(f"{MARK} out\n")
    head, _, errors = head.partition(f"{MARK} err\n")
    status = re.search(rf"^{MARK} rc (\d*)$", head, re.MULTILINE)
    killed = f"{MARK} killed" in head
    code = int(status.group(1)) if status and status.group(1) else None
    if killed or code in TIMED_OUT:
        code = None
    return EngineRun(output=output, errors=_tail(errors), exit_status=code, handle=handle)


def rdma_script(nic: str, address: str) -> str:
    """The RDMA device whose port 1 has a RoCE v2 GID of `address` on `nic`, and its index
    (sysfs: /sys/class/infiniband/<dev>/ports/<port>/gids, gid_attrs/ndevs and types; an
    IPv4 address's GID is its IPv4-mapped IPv6 address)."""
    octets = [int(part) for part in address.split(".")]
    mapped = f"0000:0000:0000:0000:0000:ffff:{octets[0]:02x}{octets[1]:02x}:" \
             f"{octets[2]:02x}{octets[3]:02x}"
    return (f'for g in /sys/class/infiniband/*/ports/1/gids/*; do '
            f'[ -e "$g" ] || continue; i=${{g##*/}}; a=${{g%/gids/*}}/gid_attrs; '
            f'[ "$(cat "$g" 2>/dev/null)" = {shlex.quote(mapped)} ] || continue; '
            f'[ "$(cat "$a/ndevs/$i" 2>/dev/null)" = {shlex.quote(nic)} ] || continue; '
            f'[ "$(cat "$a/types/$i" 2>/dev/null)" = "RoCE v2" ] || continue; '
            f'dev=${{g#/sys/class/infiniband/}}; echo "{MARK} gid ${{dev%%/*}} $i"; '
            f'break; done; true')


def rdma_side(driver: DeviceDriver, nic: str, address: str) -> tuple[str, int]:
    host = runner(driver)
    done = host.run_test_command(rdma_script(nic, address), timeout=30)
    found = re.search(rf"^{MARK} gid (\S+) (\d+)$", done.stdout, re.MULTILINE)
    if found is None:
        raise NotSupportedError(f"{host.hostname}: {nic} has no RDMA device with a RoCE v2 "
                                f"GID of {address} (/sys/class/infiniband)")
    return found.group(1), int(found.group(2))
