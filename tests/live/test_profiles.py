"""Moving the live lab between congestion profiles with the runbooks (runbooks/to-lossy.yaml,
to-lossless.yaml): a runbook in the wrong order is refused before anything is touched; half
way, verify accepts the leaves lossy below spines still lossless, and names a leaf left half
changed; once moved, PFC left on one port of the lossy fabric is named; with packet trimming
and link-level retry on, a trim DSCP equal to RoCE's and a link retrying one way are named;
and the fabric comes back to lossless, clean after each move."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.support.lab import ASIC_DB, Lab
from tests.support.paths import ROOT

pytestmark = pytest.mark.live
RUNBOOKS = ROOT / "runbooks"
LOSSY_HEAD = "profile: lossy\n"
# the lab's qos.yaml spells out lossless's PFC priorities, which the lossy profile refuses
LOSSY_DROP = ("priorities:",)


def _root(tmp: Path, head: str, drop: tuple[str, ...] = (), *, llr: bool = False) -> Path:
    """The lab's intent with `head` before its qos.yaml, less the lines holding `drop`; its
    fabric links retrying at the link layer where `llr`."""
    shutil.copytree(ROOT / "intents" / "lab", tmp / "intents" / "lab")
    qos = tmp / "intents" / "lab" / "qos.yaml"
    kept = [line for line in qos.read_text().splitlines() if not any(w in line for w in drop)]
    qos.write_text(head + "\n".join(kept) + "\n")
    if llr:
        fabric = tmp / "intents" / "lab" / "fabric.yaml"
        fabric.write_text(fabric.read_text().replace("mtu: 9216}", "mtu: 9216, llr: true}", 1))
    return tmp


@pytest.fixture(scope="module")
def roots(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("profiles")
    return {"to-lossy": _root(base / "a", LOSSY_HEAD + "transition_from: lossless\n",
                              LOSSY_DROP),
            "lossy": _root(base / "b", LOSSY_HEAD, LOSSY_DROP),
            # the lab's ets.strict [6] would leave the trim TC 7 weighted: the profile's own
            "trimming": _root(base / "d", "profile: lossy-trimming\n",
                              (*LOSSY_DROP, "strict:"), llr=True),
            "to-lossless": _root(base / "c", "transition_from: lossy-trimming\n")}


def _verify(lab: Lab, root: Path | None = None) -> dict[str, Any]:
    where = ["--root", str(root)] if root is not None else []
    result = lab.cli(*where, "verify", "--lossless", "--no-probes", "--format", "json")
    assert result.code in (0, 1), result.stdout[-2000:] + result.stderr
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def _rollout(lab: Lab, root: Path | None, runbook: Path | None = None) -> None:
    where = ["--root", str(root)] if root is not None else []
    plan = ["--runbook", str(runbook)] if runbook is not None else []
    result = lab.cli(*where, "rollout", *plan, "--format", "json", timeout=900)
    assert result.code == 0, lab.rollout_failed(result)


def _named(data: dict[str, Any]) -> set[tuple[str, str, str | None]]:
    return {(f["check"], f["device"], f["port"]) for f in data["findings"]
            if f["severity"] not in ("info", "not-judged")}


def test_the_lab_moves_to_lossy_and_back_batch_by_batch(lab: Lab, roots: dict[str, Path],
                                                        tmp_path: Path) -> None:
    _rollout(lab, None)  # the lab's own intent: lossless
    # spines before the leaves below them: refused, naming the pair, before any change
    wrong = lab.cli("--root", str(roots["to-lossy"]), "rollout", "--runbook",
                    str(RUNBOOKS / "to-lossless.yaml"))
    assert wrong.code == 2, wrong.stdout + wrong.stderr
    assert "spine1 changes to lossy" in wrong.stderr and "before leaf" in wrong.stderr
    assert "from the edge to the core" in wrong.stderr
    # the edge first: every leaf with its hosts
    leaves = tmp_path / "leaves.yaml"
    text = (RUNBOOKS / "to-lossy.yaml").read_text()
    leaves.write_text(text[:text.index("  - name: spines")] + "failure: {rollback: phase}\n")
    _rollout(lab, roots["to-lossy"], leaves)
    half = _verify(lab, roots["to-lossy"])
    assert half["passed"], half["findings"]
    assert "congestion.transition" in half["checks"]
    # one uplink of leaf2 pauses again: leaf2 is half changed
    lab.edit_asic("leaf2", "d['PORT_QOS_MAP']['swp51']['pfc_enable'] = '3'")
    found = _named(_verify(lab, roots["to-lossy"]))
    assert {("congestion.transition", "leaf2", "swp51"),
            ("pfc.lossy_fabric", "leaf2", "swp51")} <= found, found
    assert {device for _, device, _ in found} == {"leaf2"}, found
    # then the spines, one by one: the whole fabric lossy, leaf2 repaired on the way
    _rollout(lab, roots["to-lossy"], RUNBOOKS / "to-lossy.yaml")
    for root in (roots["to-lossy"], roots["lossy"]):
        done = _verify(lab, root)
        assert done["passed"], done["findings"]
    assert "pfc_enable" not in lab.sh("spine1", f"cat {ASIC_DB}")
    # PFC left on one port of the lossy fabric
    lab.edit_asic("spine2", "d['PORT_QOS_MAP']['swp3']['pfc_enable'] = '3'")
    found = _named(_verify(lab, roots["lossy"]))
    assert ("pfc.lossy_fabric", "spine2", "swp3") in found, found
    # lossy with trimming, and link-level retry on the fabric links (spine2 repaired on the
    # way): neither profile pauses, no order to keep
    _rollout(lab, roots["trimming"])
    trimming = _verify(lab, roots["trimming"])
    assert trimming["passed"], trimming["findings"]
    assert {"trim.dscp", "trim.queue", "trim.intent", "llr.link"} <= set(trimming["checks"])
    # spine1 re-marks trimmed packets towards the fabric with RoCE's DSCP; leaf3 stops
    # retrying on its uplink to spine2
    lab.edit_asic("spine1", "d['TC_TO_DSCP_MAP']['FLATFAB_TRIM_45']['7'] = '26'")
    lab.edit_asic("leaf3", "d['LLR_PORT'].pop('swp52')")
    found = _named(_verify(lab, roots["trimming"]))
    assert {("trim.dscp", "spine1", "swp1"), ("trim.intent", "spine1", "swp1"),
            ("llr.link", "leaf3", "swp52")} <= found, found
    assert {device for _, device, _ in found} == {"spine1", "leaf3"}, found
    # and back: the core first, spine1 repaired on the way
    _rollout(lab, roots["to-lossless"], RUNBOOKS / "to-lossless.yaml")
    for root in (roots["to-lossless"], None):
        back = _verify(lab, root)
        assert back["passed"], back["findings"]
