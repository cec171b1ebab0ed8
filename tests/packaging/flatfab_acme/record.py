"""Write recorded/leaf1/: what an Acme switch would show with flatfab's plan of its `lab`
example (every switch on acme) applied, in the shapes acme_platform/collect.py reads.
There is no Acme NOS: these outputs are written for the example, from the plan.

    python record.py    (flatfab and this package installed)
"""

from __future__ import annotations

import json
from typing import Any

from acme_platform.double import FILES, RECORDED

from flatfab.model.state import DeviceState
from flatfab.platforms.names import sort_interfaces
from flatfab.platforms.registry import PLATFORMS
from flatfab.testing.conformance import example_plan


def outputs(device: DeviceState) -> dict[str, Any]:
    """The three shows' replies, by file name."""
    names = PLATFORMS["acme"].names
    ports = sort_interfaces(list(device.interfaces))
    interfaces = [{"name": n, "admin": "up" if i.up else "down", "mtu": i.mtu or 1500,
                   "vrf": names.vrf(i.vrf) if i.vrf != "default" else "default",
                   "ipv4": i.addresses, "parent": i.parent, "speed_mbps": i.speed_mbps}
                  for n in ports for i in [device.interfaces[n]]]
    qos = [{"port": n, "trust": q.trust, "pfc": q.pfc, "mtu": q.mtu,
            "speed_mbps": q.speed_mbps}
           for n in ports for q in [device.interfaces[n].qos] if q is not None]
    bgp = [{"vrf": names.vrf(b.vrf) if b.vrf != "default" else "default", "as": b.asn,
            "router_id": b.router_id,
            "neighbors": [{"neighbor": p.key, "interface": p.interface, "address": p.address,
                           "remote_as": p.remote_asn, "state": "Established"}
                          for p in b.peers.values()]}
           for b in sorted(device.bgp.values(), key=lambda b: b.vrf)]
    return {FILES["show interfaces | json"]: {"interfaces": interfaces},
            FILES["show qos interfaces | json"]: {"ports": qos},
            FILES["show bgp neighbors | json"]: {"instances": bgp}}


def main() -> None:
    device = example_plan("acme").devices["leaf1"]
    folder = RECORDED / device.name
    folder.mkdir(parents=True, exist_ok=True)
    for name, reply in outputs(device).items():
        (folder / name).write_text(json.dumps(reply, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
