"""qos.yaml `telemetry:`: defaults, resolved thresholds, and bad values refused with file, key
path, line and reason like every other intent error; the plan carries no telemetry."""

from __future__ import annotations

from pathlib import Path

import pytest

from flatfab.intent.loader import load_intent
from flatfab.intent.qos import TelemetryIntent
from flatfab.intent.thresholds import thresholds_of
from flatfab.plan.planner import plan
from flatfab.telemetry.thresholds import Thresholds
from tests.support.intent_edits import LAB, append, bad_copy, describe, line_of, load_error

QOS = "qos.yaml"


def test_defaults_agree_with_the_intent_defaults() -> None:
    assert thresholds_of(TelemetryIntent()) == Thresholds()
    assert thresholds_of(load_intent(LAB).qos.telemetry) == Thresholds()
    assert Thresholds().silent_s == 30.0


def test_a_telemetry_section_resolves_to_thresholds(tmp_path: Path) -> None:
    directory = bad_copy(tmp_path / "lab", append(QOS, (
        "telemetry:\n"
        "  interval_s: 5\n"
        "  pause_storm: {pps: 500, for_s: 20}\n"
        "  lossless_drops: 2\n"
        "  silent_after: 4\n")))
    limits = thresholds_of(load_intent(directory).qos.telemetry)
    assert limits == Thresholds(interval_s=5, storm_pps=500, storm_for_s=20, lossless_drops=2,
                                silent_after=4)
    assert limits.silent_s == 20.0


def test_the_plan_carries_no_telemetry(tmp_path: Path) -> None:
    directory = bad_copy(tmp_path / "lab", append(QOS, "telemetry: {interval_s: 2, "
                                                       "pause_storm: {for_s: 4}}\n"))
    assert plan(load_intent(directory)).model_dump_json() == \
        plan(load_intent(LAB)).model_dump_json()


BAD = [
    ("pps-zero", "telemetry:\n  pause_storm:\n    pps: 0\n", "telemetry.pause_storm.pps",
     "greater than or equal to 1", "pps: 0"),
    ("unknown-key", "telemetry:\n  silent_afterr: 3\n", "telemetry.silent_afterr",
     "unknown key 'silent_afterr'", "silent_afterr"),
    ("boolean", "telemetry:\n  interval_s: true\n", "telemetry.interval_s", "is a boolean",
     "interval_s: true"),
    ("negative-drops", "telemetry:\n  lossless_drops: -1\n", "telemetry.lossless_drops",
     "greater than or equal to 0", "lossless_drops: -1"),
    ("not-a-number", "telemetry:\n  silent_after: often\n", "telemetry.silent_after",
     "'often' is not an integer", "silent_after: often"),
    ("interval-too-long", "telemetry:\n  interval_s: 301\n", "telemetry.interval_s",
     "less than or equal to 300", "interval_s: 301"),
    ("storm-shorter-than-interval", "telemetry:\n  interval_s: 60\n  pause_storm: {for_s: 30}\n",
     "telemetry", "shorter than interval_s", "telemetry:"),
]


@pytest.mark.parametrize(("text", "path", "reason", "marker"), [b[1:] for b in BAD],
                         ids=[b[0] for b in BAD])
def test_bad_thresholds_name_file_key_and_line(tmp_path: Path, text: str, path: str,
                                               reason: str, marker: str) -> None:
    error, directory = load_error(tmp_path, append(QOS, text))
    assert len(error.problems) == 1, describe(error.problems)
    problem = error.problems[0]
    assert Path(problem.file).name == QOS and problem.path == path, describe(error.problems)
    assert reason in problem.reason, describe(error.problems)
    assert problem.line == line_of(directory / QOS, marker), describe(error.problems)


def test_direct_construction_is_guarded() -> None:
    with pytest.raises(ValueError, match="silent_after"):
        Thresholds(silent_after=0)
