"""Golden files: every example fabric's rendered configs, plan and lab topology.

Regenerate with `make golden` (FLATFAB_REGEN_GOLDEN=1) and review the diff.
"""

from __future__ import annotations

import difflib
import os
from functools import cache
from pathlib import Path

import pytest

from flatfab.intent.loader import load_intent
from flatfab.lab import topology
from flatfab.model.state import FabricState
from flatfab.plan.planner import plan
from flatfab.platforms.registry import PLATFORMS
from flatfab.workflows.commands.rollout import render_all
from flatfab.yamlio import dump_yaml
from tests.support.oracles import ORACLES, usable
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


@cache
def _plan(fabric: str) -> FabricState:
    return FabricState.model_validate_json((GOLDEN / fabric / "plan.json").read_text(
        encoding="utf-8"))


def _platform_of(path: Path) -> str:
    return str(_plan(path.parent.parent.name).devices[path.stem].platform)


def _golden_configs() -> list[Path]:
    return sorted(GOLDEN.glob("*/configs/*.conf"))


# every golden config whose platform has an oracle; nxos has none (its goldens are checked
# against Cisco's documented syntax, tests/platforms/nxos/): see the test after this one
CHECKED = [p for p in _golden_configs() if _platform_of(p) in ORACLES]


@pytest.mark.parametrize("path", CHECKED, ids=lambda p: f"{p.parent.parent.name}/{p.stem}"
                         f"-{_platform_of(p)}")
def test_golden_config_passes_its_platforms_oracle(path: Path) -> None:
    """Each golden config of every example fabric is judged by its platform's oracle
    (tests/support/oracles.py): the vendors' schemas (pyavd, SONiC, SR Linux and Junos
    YANG, nvueschema) or flatfab's own parsers (frr, linux_host)."""
    planned = _plan(path.parent.parent.name).devices[path.stem]
    oracle = usable(ORACLES[planned.platform])
    found = oracle.validate(path.stem, path.read_text(encoding="utf-8"), planned)
    assert found == [], "\n".join(found)


def test_nxos_is_the_only_platform_without_an_oracle() -> None:
    assert set(ORACLES) <= set(PLATFORMS)
    assert set(PLATFORMS) - set(ORACLES) == {"nxos"}
    unchecked = [p for p in _golden_configs() if p not in CHECKED]
    assert {_platform_of(p) for p in unchecked} == {"nxos"}  # multivendor's spine2
