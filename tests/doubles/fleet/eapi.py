"""EOS switches of the fleet: the stateful EosDouble (tests/doubles/eos.py) behind eAPI, one
HTTP port for every switch, as NAPALM's eos driver reaches it with `optional_args:
{transport: http, port: N}` (pyeapi's HttpEapiConnection).

The wire is eAPI's as pyeapi 1.x speaks it (pyeapi/eapilib.py `request`, `send`,
`_parse_error_message`): `POST /command-api` with HTTP basic authentication and a JSON-RPC 2.0
`runCmds` body (`cmds`, each a string or `{cmd, input}`, and `format` json or text); the
answer is `result`, one object per command, or `error` with `code`, `message` and `data` (the
results of the commands before the failed one, then `{"errors": [...]}`), which pyeapi turns
into the CommandError NAPALM catches. The basic-auth user names the switch (as the SSH user
does on the fleet's SSH port); the password is FLATFAB_PASSWORD of the fleet's environment,
the variable flatfab's drivers read, so it is never written into the inventory. A wrong user
or password is refused with HTTP 401 (which pyeapi reports as a ConnectionError).

The double starts holding the plan's render (or, with `start_factory`, FACTORY below) and
answers show commands with `healthy_shows` of the plan. It keeps a config as the statements
NAPALM sends (no indentation); EOS prints its running config indented, so `show running-config`
of a config the fleet knows (the render, the factory config) is printed as that config's text,
any other as the double holds it (the configs it knows include a replace's merge of what
flatfab does not own with the render). Not modelled: eAPI's own configuration (the fleet answers
whatever `management api http-commands` the running config holds or lacks).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import hmac
import json
from collections.abc import Callable
from typing import Any

from pyeapi.eapilib import CommandError

from flatfab.model.state import DeviceState, FabricState
from flatfab.platforms.eos import PLATFORM
from flatfab.platforms.eos.sections import merge_into
from tests.doubles.eos import EosDouble, healthy_shows
from tests.doubles.fleet.shell import Clock, Faults
from tests.doubles.rib import FabricRib

PASSWORD_ENV = "FLATFAB_PASSWORD"
PATH = "/command-api"
BOOTED = 1000.0  # the double's uptime when the fleet starts
# a switch fresh from the factory as flatfab finds it: reachable over eAPI, nothing of the
# fabric configured (the shape of cEOS's startup-config; the fleet's own choice of lines)
FACTORY = """! device: {name} (cEOSLab, EOS-4.33.0F)
!
no aaa root
!
username admin privilege 15 role network-admin nopassword
!
hostname {name}
!
management api http-commands
   no shutdown
!
interface Management1
!
no ip routing
!
end
"""
SHOW_CONFIG = frozenset({"show running-config", "show startup-config"})


def statements(config: str) -> list[str]:
    """A config as NAPALM's eos driver sends it into a session (`_load_config`): every line
    stripped, `!` comments and `end` left out (empty lines the double drops itself)."""
    out = []
    for raw in config.splitlines():
        line = raw.strip()
        if not line or line == "end" or (line.startswith("!") and not line.startswith("!!")):
            continue
        out.append(line)
    return out


class EosDevice:
    """One EOS switch of the fleet (module docstring)."""

    platform = "eos"

    def __init__(self, planned: DeviceState, fabric: FabricState, rib: FabricRib,
                 clock: Clock) -> None:
        self.name, self.planned, self.fabric = planned.name, planned, fabric
        self._rib, self.clock = rib, clock
        self.faults = Faults()
        self.start_factory = False
        self.intended = PLATFORM.render(planned)
        self.factory = FACTORY.format(name=self.name)
        # a replace keeps the running config's blocks flatfab does not own (the platform's
        # driver merges them in front of the render): those merges are known texts too
        mgmt = PLATFORM.facts.management_interfaces
        texts = [self.intended, self.factory,
                 *(merge_into(held, pushed, mgmt) for held in (self.intended, self.factory)
                   for pushed in (self.intended, self.factory))]
        self._known = [(statements(c), c) for c in dict.fromkeys(texts)]
        self._double: EosDouble | None = None
        self._born = clock.now()

    @property
    def double(self) -> EosDouble:
        if self._double is None:
            config = self.factory if self.start_factory else self.intended
            self._double = EosDouble(running=statements(config), clock=BOOTED,
                                     shows=healthy_shows(self.fabric, self.name,
                                                         rib=self._rib.of(self.name)))
        return self._double

    def tick(self) -> None:
        """The double's commit timer runs on the fleet's clock."""
        if self._double is not None:
            behind = BOOTED + self.clock.now() - self._born - self._double.clock
            if behind > 0:
                self._double.advance(behind)

    def run(self, cmds: list[Any], encoding: str) -> list[dict[str, Any]]:
        """One runCmds request; a failed command raises CommandError (with `output`)."""
        self.tick()
        enable = bool(cmds) and _command(cmds[0]) == "enable"  # pyeapi sends it first
        rest = cmds[1:] if enable else cmds
        try:
            results = self.double.run_commands(rest, encoding) if rest else []
        except CommandError as exc:
            if enable:
                exc.output = [{}, *(exc.output or [])]
            raise
        for entry, result in zip(rest, results, strict=True):
            if _command(entry) in SHOW_CONFIG and "output" in result:
                result["output"] = self.canonical(result["output"])
        return [{}, *results] if enable else results

    def canonical(self, text: str) -> str:
        """The running config as EOS prints it, where the fleet knows its text."""
        held = statements(text)
        return next((config for lines, config in self._known if lines == held), text)


def _command(entry: Any) -> str:
    return str(entry["cmd"]) if isinstance(entry, dict) else str(entry)


class EapiServer:
    """eAPI on one port of 127.0.0.1 for every EOS switch `device(name)` gives (the fleet's,
    made on first use); `password` is what every switch accepts; `count` is told the bytes
    of every answered request (the fleet server's stats)."""

    def __init__(self, device: Callable[[str], object], password: str, port: int = 0,
                 count: Callable[[int], None] = lambda _: None) -> None:
        self.device, self.password, self.port, self.count = device, password, port, count
        self.requests = self.refused = 0
        self._server: asyncio.Server | None = None

    async def start(self) -> int:
        self._server = await asyncio.start_server(self._client, "127.0.0.1", self.port)
        self.port = self._server.sockets[0].getsockname()[1]
        return self.port

    def close(self) -> None:
        if self._server is not None:
            self._server.close()

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while await self._request(reader, writer):
                pass
        except (asyncio.IncompleteReadError, ConnectionError, ValueError):
            pass
        finally:
            writer.close()

    async def _request(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        method, path, _ = lines[0].split(" ", 2)
        headers = {k.strip().lower(): v.strip()
                   for k, _, v in (line.partition(":") for line in lines[1:] if line)}
        body = await reader.readexactly(int(headers.get("content-length", "0")))
        self.requests += 1
        if method != "POST" or path != PATH:
            await self._send(writer, 404, "Not Found", b"not found\n")
            return True
        device = self._login(headers.get("authorization", ""))
        if device is None:
            self.refused += 1
            await self._send(writer, 401, "Unauthorized", b"Unauthorized\n")
            return True
        if device.faults.delay_s:
            await asyncio.sleep(device.faults.delay_s)
        answer = json.dumps(self._rpc(device, body)).encode()
        self.count(len(answer))
        await self._send(writer, 200, "OK", answer)
        return headers.get("connection", "").lower() != "close"

    def _login(self, authorization: str) -> EosDevice | None:
        scheme, _, token = authorization.partition(" ")
        try:
            user, _, password = base64.b64decode(token, validate=True).decode().partition(":")
        except (binascii.Error, UnicodeDecodeError):
            return None
        # compare the password always, in constant time: no hint which part was wrong
        good = hmac.compare_digest(password.encode(), self.password.encode())
        try:
            device = self.device(user) if scheme == "Basic" else None
        except KeyError:  # not a device of the fleet
            device = None
        if not good or not isinstance(device, EosDevice) or device.faults.refuse:
            return None
        return device

    @staticmethod
    def _rpc(device: EosDevice, body: bytes) -> dict[str, Any]:
        try:
            request = json.loads(body)
            params = request["params"]
            cmds, encoding = list(params["cmds"]), str(params.get("format") or "json")
        except (ValueError, KeyError, TypeError):
            return {"jsonrpc": "2.0", "id": None,
                    "error": {"code": -32700, "message": "Parse error"}}
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": request.get("id")}
        if request.get("method") != "runCmds":
            reply["error"] = {"code": -32601, "message": "Method not found"}
            return reply
        try:
            reply["result"] = device.run(cmds, encoding)
        except CommandError as exc:
            data = exc.output or [{"errors": [exc.error_text]}]
            failed = len(data)
            reply["error"] = {"code": exc.error_code, "data": data,
                              "message": f"CLI command {failed} of {len(cmds)} "
                                         f"'{_command(cmds[failed - 1])}' failed: "
                                         f"{exc.error_text}"}
        return reply

    async def _send(self, writer: asyncio.StreamWriter, status: int, reason: str,
                    body: bytes) -> None:
        writer.write(f"HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\n"
                     f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
        await writer.drain()
