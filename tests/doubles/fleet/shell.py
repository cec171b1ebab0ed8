"""One simulated shell-configured device (frr switch, Linux host) of the fleet: what its shell
answers, and the state its commit mechanism keeps.

Reads are answered from the device's state through `reads()` (the platform's emitter says
what each command prints); batches (`sh -s` with flatfab's markers) run as FakeShell runs
them. Changes are the ShellDriver's own: the backup and revert script it writes, the revert
timer (a deadline on the fleet's clock), the save, and `sh -s` transition scripts. A
transition is accepted when it is the script (up to the order of its lines) the platform's
driver writes to move this device, as it reads back now, to one of the configs it knows (the plan's
intended config, the backup it was given, its factory config); the device then holds that
config. Anything else is refused with exit status 1, so a fleet never pretends to apply a
change it cannot model.

Each device also has the modules in its ports the embedded lab would state (`phy`: the
lab's phy.json for the device, flatfab.lab.hardware), read with the device's clock.
"""

from __future__ import annotations

import re
import shlex
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from flatfab.platforms import lab_phy
from flatfab.platforms.shell_driver import MARK, ShellDriver
from flatfab.transport.ssh import CommandResult, LoggedCommand
from tests.doubles.frr import FakeShell, Reply

S = TypeVar("S")
STATE_DIR = "/var/lib/flatfab"
SUDO = re.compile(r"^sudo -n sh -c (?P<command>.+)$", re.S)
TIMER = re.compile(r"^rm -f \S+/revert.pid; setsid sh -c 'echo \$\$ > \S+/revert.pid; "
                   r"sleep (?P<seconds>\d+); sh ")
FILE_WRITE = re.compile(r"^(?:mkdir -p \S+ && )?cat > (?P<path>\S+)$")
NOT_SIMULATED = 127
# what a driver's get_physical asks a lab device (flatfab.platforms.lab_phy)
PHY_READ = f"cat {shlex.quote(f'{STATE_DIR}/{lab_phy.FILE}')} 2>/dev/null || true"
CLOCK_READ = "date +%s.%N"
CARRIER_READ = lab_phy.carrier_read(f"{STATE_DIR}/{lab_phy.FILE}")  # no watchers: no output

Answer = Reply | Callable[[], Reply]


@dataclass
class Clock:
    """The fleet's time: real by default, advanced by hand in tests."""

    offset: float = 0.0

    def now(self) -> float:
        return time.monotonic() + self.offset

    def advance(self, seconds: float) -> None:
        self.offset += seconds


@dataclass
class Faults:
    """What is wrong with a device: its reads rewritten, or its every answer slowed."""

    delay_s: float = 0.0
    refuse: bool = False  # every login refused
    # command -> output rewrite, applied to the emitted output of that command
    rewrites: dict[str, Callable[[str], str]] = field(default_factory=dict)


class LocalSession:
    """The device's shell where an SshSession would be, with no network: its own driver
    computes through it, against what the device reads back, the scripts a change would
    send; in-process tests drive a device through it as sshd would run their commands."""

    def __init__(self, device: ShellDevice[Any]) -> None:
        self.device = device
        self.log: list[LoggedCommand] = []

    def run(self, command: str, *, stdin: str | None = None, mutating: bool = False,
            privileged: bool = False, timeout: float = 60.0) -> CommandResult:
        reply = self.device.execute(command, stdin)
        return CommandResult(command, reply.stdout, reply.stderr, reply.status)


class ShellDevice(FakeShell, Generic[S]):
    """A simulated device answering its driver's shell commands (see the module docstring).

    Subclasses give `driver` (the platform's real driver, reading this device through
    LocalSession), the configs it knows (`intended`, `factory`) and `emit(state)`.
    """

    def __init__(self, name: str, driver: ShellDriver[S], intended: str, factory: str,
                 clock: Clock) -> None:
        super().__init__(answers={})
        self.name = name
        self.driver = driver
        self.driver.session = LocalSession(self)
        self.intended, self.factory = intended, factory
        self.clock = clock
        self.files: dict[str, str] = {}
        self.timer_due: float | None = None
        self.faults = Faults()
        self.changes = 0  # transitions applied (commits, reverts, rollbacks)
        self.start_factory = False
        self.phy = ""  # the lab's phy.json for this device ("": no physical link)
        self._state: S | None = None
        self._reads: dict[str, Answer] | None = None

    # ---- state ---------------------------------------------------------------------------

    @property
    def state(self) -> S:
        if self._state is None:
            self._state = self.initial_state()
        return self._state

    def set_state(self, state: S) -> None:
        self._state, self._reads = state, None

    def initial_state(self) -> S:
        """The intended config applied to the factory device (or the factory device itself:
        a fleet that a rollout has yet to bring up)."""
        factory = self.factory_state()
        return factory if self.start_factory else self.desired(factory, self.intended)

    def factory_state(self) -> S:
        raise NotImplementedError

    def desired(self, current: S, config: str) -> S:
        return self.driver._desired_state(current, config, merge=False)

    def emit(self, state: S) -> dict[str, Answer]:
        """command -> what the device prints in `state` (the platform's emitter)."""
        raise NotImplementedError

    def invalidate(self) -> None:
        """Forget cached reads (a fault changed what the device prints)."""
        self._reads = None

    # ---- the shell ---------------------------------------------------------------------

    def execute(self, command: str, stdin: str | None = None) -> Reply:
        """One command as the device's sshd runs it (sudo unwrapped)."""
        self.tick()
        wrapped = SUDO.match(command)
        if wrapped:
            command = shlex.split(wrapped["command"])[0]
        if command == "sh -s" and stdin is not None:
            return self._script_of(stdin)
        write = FILE_WRITE.match(command)
        if write and stdin is not None:
            self.files[write["path"]] = stdin
            return Reply()
        return self._command(command)

    def answer(self, command: str) -> Reply:
        """FakeShell's lookup, from the device's state (a batch's lines come here)."""
        if command == PHY_READ:
            return Reply(self.phy)
        if command == CLOCK_READ:
            return Reply(f"{time.time():.9f}\n")
        if command == CARRIER_READ:
            return Reply()
        if self._reads is None:
            self._reads = self.emit(self.state)
        found = self._reads.get(command)
        if found is None:
            return Reply(stderr=f"fleet: {self.name}: not simulated: {command}\n",
                         status=NOT_SIMULATED)
        reply = found() if callable(found) else found
        rewrite = self.faults.rewrites.get(command)
        return Reply(rewrite(reply.stdout), reply.stderr, reply.status) if rewrite else reply

    def _script_of(self, script: str) -> Reply:
        if f"echo '{MARK} " in script:
            return self._script(script)  # FakeShell: a batch of reads
        if script.startswith(f"cat > {STATE_DIR}/startup.conf <<'FLATFAB_EOF'\n"):
            body = script.split("\n", 1)[1]
            self.files[f"{STATE_DIR}/startup.conf"] = body.split("FLATFAB_EOF\n", 1)[0]
            return Reply()
        special = self.script(script)
        if special is not None:
            return special
        return self._transition(script)

    def script(self, script: str) -> Reply | None:
        """A platform's own `sh -s` scripts that are neither reads nor transitions."""
        return None

    def _command(self, command: str) -> Reply:
        d = STATE_DIR
        if TIMER.match(command):
            seconds = int(TIMER.match(command)["seconds"])  # type: ignore[index]
            self.timer_due = self.clock.now() + seconds
            self.files[f"{d}/revert.pid"] = "4242\n"
            return Reply()
        if command.startswith(f"p=$(cat {d}/revert.pid"):
            return Reply("4242\n" if self.timer_due is not None else "")
        if command.startswith("pkill -TERM -g 4242;"):
            self.timer_due = None
            self.files.pop(f"{d}/revert.pid", None)
            return Reply()
        if command == f"sh {d}/revert.sh":
            return self._run_revert()
        if command == f"cat {d}/rollback.conf":
            backup = self.files.get(f"{d}/rollback.conf")
            return Reply(backup) if backup is not None else Reply(
                stderr=f"cat: {d}/rollback.conf: No such file or directory\n", status=1)
        if command == f"cat {d}/startup.conf 2>/dev/null || true":
            return Reply(self.files.get(f"{d}/startup.conf", ""))
        return self.answer(command)

    def tick(self) -> None:
        """Run the revert timer if it is due."""
        if self.timer_due is not None and self.clock.now() >= self.timer_due:
            self.timer_due = None
            self.files.pop(f"{STATE_DIR}/revert.pid", None)
            self._run_revert()

    def _run_revert(self) -> Reply:
        script = self.files.get(f"{STATE_DIR}/revert.sh")
        if script is None:
            return Reply(stderr="sh: revert.sh: No such file\n", status=2)
        return self._transition(script)

    def _transition(self, script: str) -> Reply:
        """Take the state the script leads to, if it is a transition the driver would write
        to one of the configs this device knows; else refuse it."""
        current = self.driver._read_state()
        known = [self.intended, self.files.get(f"{STATE_DIR}/rollback.conf"), self.factory]
        sent = sorted(script.splitlines())
        for config in (c for c in known if c is not None):
            try:
                target = self.desired(current, config)
            except Exception:  # noqa: BLE001 - a config that does not apply here
                continue
            for tag in ("candidate", "rollback"):
                # the same lines: a revert script is written from the state the commit asked
                # for, whose links it lists in another order than this device reads them
                mine = self.driver._transition(current, target, merge=False, tag=tag)
                if sorted(mine.splitlines()) == sent:
                    self.set_state(target)
                    self.changes += 1
                    return Reply()
        return Reply(stderr=f"fleet: {self.name}: a change the fleet does not model\n",
                     status=1)
