"""`python -m labs.nautobot.seed --fabric lab`: write a fabric's plan into the local Nautobot
(or another one with --url), through tasks/sot/seed.py."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from flatfab.errors import FlatfabError
from flatfab.lab.topology import LabOptions
from flatfab.sot.client import Nautobot
from flatfab.sot.errors import SotError
from flatfab.sot.seed import fabric_input, seed
from labs.nautobot.settings import ROOT, Settings


def _token(settings: Settings) -> str:
    env = os.environ.get("FLATFAB_NAUTOBOT_TOKEN")
    if env:
        return env
    try:
        return settings.secret("api_token").read_text(encoding="utf-8").strip()
    except OSError:
        raise SotError(f"no API token: start the service (`make nautobot-up`) or set "
                       f"FLATFAB_NAUTOBOT_TOKEN (looked in {settings.secret('api_token')})"
                       ) from None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m labs.nautobot.seed",
                                     description=__doc__.split("\n\n", 1)[0] if __doc__ else None)
    parser.add_argument("--fabric", default="lab", help="intents/<fabric>/ (default lab)")
    parser.add_argument("--root", type=Path, default=ROOT, help="project root")
    parser.add_argument("--name", help="the local service to seed (FLATFAB_NAUTOBOT_NAME)")
    parser.add_argument("--http-port", type=int,
                        help="its port, if not the default (FLATFAB_NAUTOBOT_HTTP_PORT)")
    parser.add_argument("--url", help="another Nautobot (token in FLATFAB_NAUTOBOT_TOKEN)")
    parser.add_argument("--mgmt-subnet", default=LabOptions().mgmt_subnet,
                        help="management addresses, allotted as `flatfab lab up` does")
    args = parser.parse_args(argv)
    try:
        settings = Settings.from_env(args.name, http_port=args.http_port)
        data = fabric_input(args.root.resolve(), args.fabric, args.mgmt_subnet)
        with Nautobot(args.url or settings.url, _token(settings)) as api:
            report = seed(api, data)
        print(f"seeded fabric {args.fabric!r} into {api.url}: {report.line()}")
    except FlatfabError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
