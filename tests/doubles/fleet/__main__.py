"""Serve a fleet in its own process:

    python -m tests.doubles.fleet --intent intents/lab --dir /tmp/fleet \
        [--factory] [--gnmi] [--fault leaf1=mtu:swp51=1500]

Serves SSH for frr, linux_host and sonic devices (the fleet's key, or FLATFAB_PASSWORD where
the environment has it); eAPI for eos devices (one HTTP port: the fleet needs
FLATFAB_PASSWORD in its environment, the password every eos device takes);
with --gnmi a gNMI target for every switch. Writes into --dir: the fleet's keys and
known_hosts, `gnmi/` (CA, credentials file), `inventory/` (a plain Nornir inventory of every
device), `ready.json` (port, eapi_port, gnmi ports, pid) once it accepts logins, and
`stats.json` every second (connections open/peak/total, commands, bytes sent, the server's
CPU seconds and peak RSS; SIGUSR1 starts the counts afresh). Runs until SIGTERM or SIGINT.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sys
from pathlib import Path

from flatfab.intent.loader import load_intent
from flatfab.plan.planner import plan
from flatfab.platforms.registry import PLATFORMS
from tests.doubles.fleet import Fleet
from tests.doubles.fleet.eapi import PASSWORD_ENV, EapiServer
from tests.doubles.fleet.faults import FaultError, inject
from tests.doubles.fleet.gnmi import GnmiFleet, switches
from tests.doubles.fleet.inventory import write_inventory
from tests.doubles.fleet.server import FleetServer, Keys


async def _serve(fleet: Fleet, folder: Path, port: int, *, password: str | None,
                 with_gnmi: bool) -> None:
    server = FleetServer(fleet, Keys.make(folder / "keys"), port, password=password)
    port = await server.start()
    eapi = None
    if password is not None and any(d.platform == "eos" for d in fleet.plan.devices.values()):
        eapi = EapiServer(fleet.device, password, count=server.count)
        await eapi.start()
    targets = GnmiFleet(switches(fleet.plan), folder / "gnmi") if with_gnmi else None
    ports = await targets.start() if targets else {}
    write_inventory(folder / "inventory", fleet.plan, server.keys, port,
                    eapi_port=eapi.port if eapi else None,
                    gnmi={n: targets.connection(n) for n in ports} if targets else None)
    (folder / "ready.json").write_text(json.dumps({
        "port": port, "eapi_port": eapi.port if eapi else None, "gnmi": ports,
        "pid": os.getpid()}) + "\n")
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    loop.add_signal_handler(signal.SIGUSR1, server.reset)
    stats = asyncio.create_task(server.serve(folder / "stats.json"))
    await stop.wait()
    stats.cancel()
    server.close()
    if eapi is not None:
        eapi.close()
    if targets is not None:
        await targets.stop()
    server.snapshot()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.doubles.fleet")
    parser.add_argument("--intent", type=Path, required=True, help="an intent folder")
    parser.add_argument("--dir", type=Path, required=True, help="where the fleet's files go")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--factory", action="store_true",
                        help="devices start factory-fresh (a rollout brings them up)")
    parser.add_argument("--gnmi", action="store_true",
                        help="a gNMI target for every switch (for `flatfab watch`)")
    parser.add_argument("--fault", action="append", default=[], metavar="DEVICE=FAULT",
                        help="a fault (tests/doubles/fleet/faults.py) on one device")
    args = parser.parse_args(argv)
    fleet = Fleet(plan(load_intent(args.intent, known_platforms=PLATFORMS)),
                  factory=args.factory)
    for item in args.fault:
        name, _, fault = item.partition("=")
        try:
            inject(fleet.device(name), fault)
        except (KeyError, FaultError) as exc:
            print(f"error: --fault {item}: {exc}", file=sys.stderr)
            return 2
    has_eos = any(d.platform == "eos" for d in fleet.plan.devices.values())
    password = os.environ.get(PASSWORD_ENV) or None
    if has_eos and password is None:
        print(f"error: eos devices are served over eAPI with the password in {PASSWORD_ENV}, "
              "which is not set", file=sys.stderr)
        return 2
    args.dir.mkdir(parents=True, exist_ok=True)
    (args.dir / "ready.json").unlink(missing_ok=True)
    asyncio.run(_serve(fleet, args.dir, args.port, password=password, with_gnmi=args.gnmi))
    return 0


if __name__ == "__main__":
    sys.exit(main())
