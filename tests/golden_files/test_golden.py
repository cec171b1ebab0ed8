"""Golden files: every example fabric's rendered configs, plan and lab topology.

Regenerate with `make golden` (FLATFAB_REGEN_GOLDEN=1) and review the diff.
"""

from __future__ import annotations

import difflib
import json
import os
from pathlib import Path

import pytest

from tasks.intent.loader import load_intent
from tasks.lab import topology
from tasks.plan.planner import plan
from tasks.platforms.registry import PLATFORMS
from tasks.workflows.rollout import render_all
from tasks.yamlio import dump_yaml
from tests.support.paths import ROOT

GOLDEN = ROOT / "tests" / "golden"
FABRICS = sorted(p.parent.name for p in (ROOT / "intents").glob("*/fabric.yaml"))
REGEN = bool(os.environ.get("FLATFAB_REGEN_GOLDEN"))


def _outputs(fabric: str) -> dict[str, str]:
    """Relative golden path -> what flatfab produces for it now."""
    state = plan(load_intent(ROOT / "intents" / fabric, known_platforms=PLATFORMS))
    files = {f"{fabric}/configs/{name}.conf": text for name, text in render_all(state).items()}
    files[f"{fabric}/plan.json"] = state.model_dump_json(indent=1) + "\n"
    doc, bound = topology.generate(state, topology.LabOptions())
    files[f"{fabric}/topology.clab.yml"] = dump_yaml(doc)
    files.update({f"{fabric}/topology/{rel}": text for rel, text in bound.items()})
    return files


@pytest.mark.parametrize("fabric", FABRICS)
def test_outputs_match_golden_files(fabric: str) -> None:
    produced = _outputs(fabric)
    if REGEN:
        for stale in (GOLDEN / fabric).rglob("*"):
            if stale.is_file() and str(stale.relative_to(GOLDEN)) not in produced:
                stale.unlink()
        for relative, text in produced.items():
            (GOLDEN / relative).parent.mkdir(parents=True, exist_ok=True)
            (GOLDEN / relative).write_text(text, encoding="utf-8")
    on_disk = {str(p.relative_to(GOLDEN)) for p in (GOLDEN / fabric).rglob("*") if p.is_file()}
    assert on_disk == set(produced), "golden files differ in number: run `make golden`"
    for relative, text in produced.items():
        expected = (GOLDEN / relative).read_text(encoding="utf-8")
        if text != expected:
            diff = "".join(difflib.unified_diff(expected.splitlines(True), text.splitlines(True),
                                                f"golden/{relative}", "rendered"))
            pytest.fail(f"{relative} differs from its golden file (`make golden` to accept):\n"
                        + diff[:4000])


def test_every_golden_fabric_is_an_example_intent() -> None:
    assert sorted(p.name for p in GOLDEN.iterdir() if p.is_dir()
                   and p.name not in {"reports", "platforms"}) == FABRICS


def test_rendering_is_byte_identical_across_runs() -> None:
    assert _outputs("lab") == _outputs("lab")


def test_committed_lab_topologies_are_up_to_date() -> None:
    """labs/<fabric>.clab.yml is what `flatfab lab generate` writes (lab up checks it too)."""
    for path in sorted((ROOT / "labs").glob("*.clab.yml")):
        fabric = path.name.removesuffix(".clab.yml")
        doc = _outputs(fabric)[f"{fabric}/topology.clab.yml"]
        assert path.read_text(encoding="utf-8").endswith(doc), f"regenerate {path}"


def _golden_configs() -> list[Path]:
    return sorted(GOLDEN.glob("*/configs/*.conf"))


@pytest.mark.parametrize("path", _golden_configs(), ids=lambda p: f"{p.parent.parent.name}/"
                         f"{p.stem}")
def test_golden_config_is_well_formed(path: Path) -> None:
    """Each golden config parses back through its platform's own config parser."""
    from tasks.platforms.frr.links import parse_links, split_sections  # noqa: PLC0415
    from tasks.platforms.linux_host.config import parse_config  # noqa: PLC0415

    plan = json.loads((path.parent.parent / "plan.json").read_text(encoding="utf-8"))
    platform = plan["devices"][path.stem]["platform"]
    if platform not in {"frr", "linux_host"}:
        pytest.skip(f"{platform} configs are checked by its vendor oracle "
                    f"(tests/platforms/{platform}/)")
    text = path.read_text(encoding="utf-8")
    links, frr = split_sections(text)
    if links is not None:
        parse_links(links)
        assert frr.startswith("frr defaults datacenter\n") and frr.endswith("end\n")
    else:
        parse_config(text)
