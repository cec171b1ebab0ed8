"""A SONiC switch of the fleet: the stateful SonicDouble (tests/doubles/sonic.py) behind the
interactive shell that netmiko's `linux` device type drives.

What netmiko 4.8's LinuxSSH needs (netmiko/linux/linux_ssh.py, base_connection.py): a shell
on a PTY (it asks for vt100, 511 columns); after login it sends a newline and reads until a
prompt character `$` or `#` (`session_preparation`); before every command it sends a newline
and takes the last line read as the prompt (`find_prompt`); it writes the command as one line
and reads its echo (`cmd_verify`), then the output up to the prompt; leaving, it sends `exit`.
The shell here answers in the shape Debian 12's bash 5.2 answers on a vt100 PTY (recorded on
this machine from a real bash under a pseudo-terminal, 80 and 511 columns): a banner, then the
prompt `user@host:~$ ` after bracketed paste is switched on (ESC[?2004h); every line echoed
with CRLF, bracketed paste off (ESC[?2004l, CR), the output with CRLF line ends (the
terminal's onlcr), and the next prompt; `exit` echoed twice. bash 5.2 echoes a line longer
than the terminal is wide as sent (no wrap sequences: older bash inserted " \r" at the
width, netmiko issue 1661), and so does this shell: flatfab's driver writes 3,000-character
lines. Each command line goes to the device's SonicDouble, which answers flatfab's
`<command>; echo @@flatfab-rc=$?` as netmiko would read it; a line without that marker is
not something flatfab sends and is answered `command not found`.

The double starts as a switch after a push of its plan (or factory-fresh: `start_factory`),
made as tests/support/sonic.py makes it; its show outputs are `healthy_outputs` of the plan
(the fleet's converged routes).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import asyncssh

from flatfab.model.state import DeviceState, FabricState
from flatfab.platforms.sonic import PLATFORM
from tests.doubles.fleet.shell import Clock, Faults
from tests.doubles.rib import FabricRib
from tests.doubles.sonic import RC_MARK, SonicDouble, healthy_outputs
from tests.support.sonic import sonic_double

BANNER = ("Linux {name} 6.1.0-29-2-amd64 x86_64\r\n"
          "You are on a simulated SONiC switch (flatfab's fleet, tests/doubles/fleet)\r\n\r\n")
LINE_ENDS = (b"\r\n", b"\r")
PASTE_ON, PASTE_OFF = "\x1b[?2004h", "\x1b[?2004l\r"  # bash 5.1+: bracketed paste


class SonicDevice:
    """One SONiC switch of the fleet (module docstring)."""

    platform = "sonic"

    def __init__(self, planned: DeviceState, fabric: FabricState, rib: FabricRib,
                 clock: Clock) -> None:
        self.name, self.planned, self.fabric = planned.name, planned, fabric
        self._rib, self.clock = rib, clock
        self.faults = Faults()
        self.start_factory = False
        self.timer_errors: list[str] = []  # revert timers whose command failed
        self._double: SonicDouble | None = None
        self._born = clock.now()

    @property
    def double(self) -> SonicDouble:
        if self._double is None:
            self._double = sonic_double(self.planned, pushed=not self.start_factory)
            self._double.outputs = healthy_outputs(self.fabric, self.name, PLATFORM.names.vrf,
                                                   rib=self._rib.of(self.name))
        return self._double

    def tick(self) -> None:
        """The double's timers run on the fleet's clock (a revert timer fires on its own)."""
        if self._double is not None:
            behind = self.clock.now() - self._born - self._double.now
            if behind > 0:
                try:
                    self._double.advance(behind)
                except Exception as exc:  # noqa: BLE001 - a failed unit leaves the switch up
                    self.timer_errors.append(str(exc))

    def run(self, line: str) -> str:
        """One command line as the shell runs it: what netmiko reads before the prompt."""
        self.tick()
        if not line.endswith(RC_MARK):
            return f"-bash: {line.split(maxsplit=1)[0]}: command not found\n"
        return self.double.send_command(line)


async def serve_shell(process: asyncssh.SSHServerProcess[bytes], device: SonicDevice,
                      count: Callable[[int], None]) -> None:
    """Run the interactive shell of `device` on `process` until `exit` or EOF; `count` is
    told the bytes of every answer (the server's stats)."""
    user = process.get_extra_info("username")
    prompt = f"{user}@{device.name}:~$ "
    process.stdout.write((BANNER.format(name=device.name) + PASTE_ON + prompt).encode())
    pending = b""
    while True:
        try:
            chunk = await process.stdin.read(65536)
        except (asyncssh.TerminalSizeChanged, asyncssh.BreakReceived,
                asyncssh.SignalReceived):
            continue
        if not chunk:
            break
        for end in LINE_ENDS:  # the terminal's icrnl: a carriage return ends a line too
            chunk = chunk.replace(end, b"\n")
        pending += chunk
        while b"\n" in pending:
            raw, pending = pending.split(b"\n", 1)
            line = raw.decode(errors="replace")
            command = line.strip()
            if command in ("exit", "logout"):
                process.stdout.write(f"{line}\r\n{PASTE_OFF}{command}\r\n".encode())
                process.exit(0)
                return
            answer = ""
            if command:
                if device.faults.delay_s:
                    await asyncio.sleep(device.faults.delay_s)
                answer = device.run(command).replace("\n", "\r\n")
            out = f"{line}\r\n{PASTE_OFF}{answer}{PASTE_ON}{prompt}".encode()
            count(len(out))
            process.stdout.write(out)
    process.exit(0)
