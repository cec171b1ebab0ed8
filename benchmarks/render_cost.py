"""Render cost per device, with each platform's offline oracle off and on; prints a table.

    python benchmarks/render_cost.py [--fabric rail multivendor] [--platform eos ...]
                                     [--repeat 3]

`rail` (intents/rail) is planned once per platform with its switches on that platform, as
the platform tests do it (tests/support/<platform>.py; junos: tests/doubles/junos.py); frr
and linux_host are rail as written, whose hosts are linux_host. `multivendor` is planned as
written: one switch of each OS, its hosts on linux_host.

Per fabric and platform: ms per device to render; ms per device to render and validate the
text with the platform's oracle (tests/support/oracles.py: pyavd, SONiC / SR Linux / Junos
YANG, nvueschema, flatfab's own parsers for frr and linux_host; nxos has none); and, on the
row where the oracle is first used, its one-time load (models, schemas, imports). Every
figure is the best of --repeat runs after one warm-up pass (template and module loading is
not render cost; what an oracle loads on its first validate rather than in load() falls in
that pass). Oracles reading the shared material find it through
tests/support/paths.py (FLATFAB_SHARED); one missing here is named in one line and its rows
show render only. Figures are wall-clock milliseconds on this machine, to quote, not assert.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # tests.support, and tasks from this checkout

from flatfab.intent.loader import load_intent  # noqa: E402
from flatfab.model.state import DeviceState, FabricState  # noqa: E402
from flatfab.plan.planner import plan  # noqa: E402
from flatfab.platforms.registry import PLATFORMS  # noqa: E402
from tests.support.oracles import ORACLES  # noqa: E402

FABRICS = ("rail", "multivendor")


def _native(name: str) -> FabricState:
    return plan(load_intent(ROOT / "intents" / name, known_platforms=PLATFORMS))


def rail_on(platform: str, tmp: Path) -> FabricState:
    """intents/rail with its switches on `platform`, as that platform's tests plan it."""
    # imported here: each helper pulls in its platform's test doubles
    if platform == "eos":
        from tests.support.eos import eos_fabric  # noqa: PLC0415

        return eos_fabric("rail")
    if platform == "sonic":
        from tests.support.sonic import fabric as sonic_fabric  # noqa: PLC0415

        return sonic_fabric("rail", tmp)
    if platform == "nvue":
        from tests.support.nvue import fabric as nvue_fabric  # noqa: PLC0415

        return nvue_fabric("rail")
    if platform == "junos":
        from tests.doubles.junos import junos_fabric  # noqa: PLC0415

        return junos_fabric("rail")
    if platform == "srlinux":
        from tests.support.srlinux import srlinux_intent  # noqa: PLC0415

        return plan(load_intent(srlinux_intent("rail", tmp), known_platforms=PLATFORMS))
    if platform == "nxos":
        from tests.support.nxos import nxos_fabric  # noqa: PLC0415

        return nxos_fabric("rail")
    return _native("rail")  # frr switches, linux_host hosts


def best_ms(func: Callable[[], object], repeat: int, devices: int) -> float:
    """The fastest of `repeat` runs of `func`, in ms per device."""
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        func()
        times.append(time.perf_counter() - started)
    return 1000 * min(times) / devices


def measure(platform: str, devices: list[DeviceState], repeat: int) -> dict[str, str]:
    """One table row: render ms/device, render + validate ms/device, the oracle's load."""
    render = PLATFORMS[platform].render
    render(devices[0])  # warm-up: templates and modules load once
    row = {"devices": str(len(devices)),
           "render": f"{best_ms(lambda: [render(d) for d in devices], repeat, len(devices)):.2f}",
           "checked": "-", "load": "-", "verdict": "no oracle"}
    oracle = ORACLES.get(platform)
    if oracle is None or oracle.missing():
        row["verdict"] = "no oracle" if oracle is None else "oracle unavailable"
        return row
    if "_loaded" not in vars(oracle):  # its first use in this process: the one-time load
        started = time.perf_counter()
        oracle.load()
        row["load"] = f"{1000 * (time.perf_counter() - started):.0f}"
    found: list[str] = []

    def checked() -> None:
        found.clear()
        for device in devices:
            found.extend(oracle.validate(device.name, render(device), device))

    checked()  # warm-up, as for render
    row["checked"] = f"{best_ms(checked, repeat, len(devices)):.2f}"
    row["verdict"] = "accepted" if not found else f"{len(found)} violations"
    return row


COLUMNS = (("fabric", "fabric", "<"), ("platform", "platform", "<"), ("devices", "devices", ">"),
           ("render", "render ms/dev", ">"), ("checked", "render+oracle ms/dev", ">"),
           ("load", "oracle load ms", ">"), ("verdict", "oracle", "<"))


def table(rows: list[dict[str, str]]) -> str:
    widths = {key: max(len(title), *(len(r[key]) for r in rows)) for key, title, _ in COLUMNS}
    lines = ["  ".join(f"{title:{align}{widths[key]}}" for key, title, align in COLUMNS)]
    lines.append("  ".join("-" * widths[key] for key, _, _ in COLUMNS))
    lines += ["  ".join(f"{r[key]:{align}{widths[key]}}" for key, _, align in COLUMNS)
              for r in rows]
    return "\n".join(line.rstrip() for line in lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fabric", nargs="+", choices=FABRICS, default=list(FABRICS))
    parser.add_argument("--platform", nargs="+", choices=sorted(PLATFORMS),
                        help="only these platforms (default: every one)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure (best of)")
    args = parser.parse_args()
    platforms = args.platform or sorted(PLATFORMS)
    for platform in platforms:
        oracle = ORACLES.get(platform)
        if oracle is None:
            print(f"{platform}: no offline oracle exists (render only)", flush=True)
        elif why := oracle.missing():
            print(f"oracle {platform} unavailable: {why}", flush=True)
    rows = []
    with tempfile.TemporaryDirectory(prefix="render-cost-") as tmp:
        for fabric in args.fabric:
            native = _native(fabric) if fabric != "rail" else None
            for platform in platforms:
                state = native or rail_on(platform, Path(tmp))
                devices = [d for d in state.devices.values() if d.platform == platform]
                if devices:
                    rows.append({"fabric": fabric, "platform": platform,
                                 **measure(platform, devices, args.repeat)})
    print(table(rows))


if __name__ == "__main__":
    main()
