"""A source-of-truth snapshot of a planned fabric, as a seeded Nautobot would give it, and the
lab's plan it is taken of."""

from __future__ import annotations

from flatfab.intent.loader import load_intent
from flatfab.model.state import FabricState, LinkKind, Role
from flatfab.plan.planner import plan
from flatfab.platforms.registry import PLATFORMS
from flatfab.sot.importer import SotMapping, role_key
from flatfab.sot.snapshot import Snapshot, SotCable, SotDevice, SotRef, SotTenant
from tests.support.paths import ROOT

LAB = plan(load_intent(ROOT / "intents" / "lab", known_platforms=PLATFORMS))

MAPPING = SotMapping(roles={"spine": "spine", "leaf": "leaf", "gpu-host": "host"},
                     platforms={"frr": "frr", "linux": "linux_host", "arista_eos": "eos",
                                "sonic": "sonic"})
ROLE = {"spine": "spine", "leaf": "leaf", "host": "gpu-host"}
# an AI back-end's roles, as the seed and `sot sync --create` name them
CLOS_MAPPING = SotMapping(roles={"super-spine": "superspine", "spine": "spine", "leaf": "leaf",
                                 "gpu-host": "host", "storage-host": "storage"},
                          platforms=MAPPING.platforms)
CLOS_ROLE = {"superspine": "super-spine", **ROLE, "storage": "storage-host"}
DRIVER = {"frr": "frr", "linux_host": "linux", "eos": "arista_eos", "sonic": "sonic"}


def ref(kind: str, label: str) -> SotRef:
    return SotRef(kind=kind, id=f"id-{label}", label=label)


def snapshot_of(state: FabricState) -> Snapshot:
    """Each switch's plane, pod, SU and rail as `sot sync` records them (custom fields)."""
    devices = [SotDevice(ref=ref("dcim.device", d.name), name=d.name,
                         role=CLOS_ROLE[role_key(d)], platform=DRIVER[d.platform],
                         loopback=(d.loopback or "").split("/")[0] or None, asn=d.asn,
                         tenant=d.tenant,
                         **({} if d.role is Role.HOST else
                            {"plane": d.plane, "pod": d.pod, "su": d.su, "rail": d.rail}))
               for d in sorted(state.devices.values(), key=lambda d: d.name)]
    cables = [SotCable(ref=ref("dcim.cable", f"{link.a.device}:{link.a.port}-"
                                             f"{link.b.device}:{link.b.port}"),
                       a_device=link.a.device, a_port=link.a.port,
                       b_device=link.b.device, b_port=link.b.port)
              for link in state.links
              if link.parent is None
              and link.kind in (LinkKind.FABRIC, LinkKind.HOST)]
    tenants = [SotTenant(ref=ref("tenancy.tenant", name), name=name)
               for name in sorted(state.tenants)]
    return Snapshot(source="https://sot.test/api/", devices=devices, cables=cables,
                    tenants=tenants)
