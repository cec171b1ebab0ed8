"""Bad intent input gives one precise error (file, key path, line, reason), never a traceback.

Each case copies intents/lab/ into a temporary directory, breaks it in one way and checks
the InputError that load_intent raises. Expected line numbers are looked up in the edited
text (the line carrying a marker), so the cases do not depend on the example's layout.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from flatfab.errors import InputError
from flatfab.intent.loader import load_intent
from flatfab.intent.models import Intent
from flatfab.yamlio import load_yaml
from tests.support.flatfab import flatfab
from tests.support.intent_cases import VALUE_CASES, Case
from tests.support.intent_edits import (
    FABRIC,
    HOSTS,
    TENANTS,
    Edit,
    append,
    bad_copy,
    describe,
    line_of,
    load_error,
    replace,
)
from tests.support.paths import ROOT


def test_cases_are_distinct() -> None:
    assert len({c.id for c in VALUE_CASES}) == len(VALUE_CASES) >= 18


@pytest.mark.parametrize("case", VALUE_CASES, ids=[c.id for c in VALUE_CASES])
def test_bad_input_names_file_key_line_and_reason(tmp_path: Path, case: Case) -> None:
    error, directory = load_error(tmp_path, *case.edits)
    shown = describe(error.problems)
    if case.alone:
        assert len(error.problems) == 1, shown
    found = [p for p in error.problems if case.reason in p.reason]
    assert found, f"no problem says {case.reason!r}:\n{shown}"
    problem = found[0]
    assert Path(problem.file).name == case.file, shown
    assert problem.path == case.path, shown
    expected = None if case.marker is None else line_of(directory / case.file, case.marker)
    assert problem.line == expected, shown
    # the CLI prints str(problem): it carries the same facts on one line
    text = str(problem)
    assert "\n" not in text and case.reason in text
    if expected is not None:
        assert f"{case.file}:{expected}:" in text


def test_the_unedited_copy_loads(tmp_path: Path) -> None:
    # guards the cases above: each fails because of its edit, not because of the copy
    assert isinstance(load_intent(bad_copy(tmp_path / "lab")), Intent)


def test_cli_reports_bad_input_as_one_line_and_exit_2(tmp_path: Path) -> None:
    root = tmp_path / "project"
    directory = bad_copy(root / "intents" / "bad", replace(FABRIC, "spine_asn: 65000",
                                                           "spine_asn: abc"))
    fabric_file = (directory / FABRIC).resolve()
    line = line_of(fabric_file, "spine_asn: abc")
    result = flatfab("--root", str(root), "--fabric", "bad", "plan")
    assert result.code == 2, result.stderr
    lines = [x for x in result.stderr.splitlines() if x.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error:")
    assert f"{fabric_file}:{line}: underlay.spine_asn:" in lines[0]
    assert "'abc' is not an integer" in lines[0]
    assert result.stdout.strip() == ""
    assert "Traceback" not in result.stdout and "Traceback" not in result.stderr


# --- regressions: bugs these tests found in tasks/, now fixed ---


@pytest.mark.parametrize("edits, marker", [
    # hosts on count-based leaves get MTU from defaults.mtu, yet the error names defaults.count
    ((replace(HOSTS, "mtu: 9000", "mtu: 9216"),), "mtu: 9216"),
    # a leaf with its own `count` inherits defaults.mtu, yet the error names leaves.leaf1.count
    ((replace(HOSTS, "mtu: 9000", "mtu: 1500"), append(HOSTS, "leaves:\n  leaf1: {count: 2}\n")),
     "mtu: 1500"),
], ids=["above-link-class", "too-small-for-roce-on-count-leaf"])
def test_host_mtu_error_names_the_mtu_key_once(
        tmp_path: Path, edits: tuple[Edit, ...], marker: str) -> None:
    error, directory = load_error(tmp_path, *edits)
    shown = describe(error.problems)
    line = line_of(directory / HOSTS, marker)
    assert {(p.path, p.line) for p in error.problems} == {("defaults.mtu", line)}, shown


def test_cli_error_line_keeps_bracketed_text_of_the_input(tmp_path: Path) -> None:
    # fnmatch patterns may use [..] classes; the CLI passes the reason to Rich as markup,
    # which swallows "[ab]" and prints a pattern the operator never wrote
    root = tmp_path / "project"
    bad_copy(root / "intents" / "bad",
             replace(TENANTS, 'members: ["*-h2"]', 'members: ["*-h2", "gpu[ab]-*"]'))
    with pytest.raises(InputError) as info:
        load_intent(root / "intents" / "bad")
    assert [p.reason for p in info.value.problems] == ["'gpu[ab]-*' matches no host"]
    result = flatfab("--root", str(root), "--fabric", "bad", "plan")
    assert result.code == 2
    assert "'gpu[ab]-*' matches no host" in result.stderr, result.stderr


# --- merge keys (<<): what a merge brings in is named where it is written ---


@pytest.mark.parametrize(("edits", "file", "path", "reason", "marker"), [
    # the merged mapping lacks a required key: named at the mapping that merges it
    ((replace(TENANTS, "  - name: blue\n    vrf_id: 100\n    prefixes: [10.100.0.0/16]",
              "  - &t {name: blue, vrf_id: 100}  # anchor\n  - <<: *t\n    name: green"),),
     TENANTS, "tenants[0].prefixes", "required key is missing", "# anchor"),
    # a key the merge brought in is named at the line it is written on, in the anchor
    ((replace(FABRIC, "leaf_asns: {first", "leaf_asns: &la {first"),
      replace(FABRIC, "  - name: leaf1\n", "  - name: leaf1\n    <<: *la\n")),
     FABRIC, "leaves[0].first", "unknown key 'first'", "&la"),
    ((replace(TENANTS, "  - name: red\n    vrf_id: 200", "  - name: red\n    <<: {vrf_id: 100}"),),
     TENANTS, "tenants[1].vrf_id", "VRF id 100 already used by tenant 'blue'", "<<:"),
], ids=["merge-lacks-required-key", "merge-brings-unknown-key", "merge-brings-a-clash"])
def test_merged_keys_are_named_where_they_are_written(
        tmp_path: Path, edits: tuple[Edit, ...], file: str, path: str, reason: str,
        marker: str) -> None:
    error, directory = load_error(tmp_path, *edits)
    found = [p for p in error.problems if p.path == path and reason in p.reason]
    assert found, describe(error.problems)
    assert found[0].line == line_of(directory / file, marker), describe(error.problems)


@pytest.mark.parametrize(("text", "reason"), [
    ("a: &a {x: 1, <<: *a}\n", "an alias or merge key refers to the node that holds it"),
    ("a: &a {x: *a}\n", "an alias or merge key refers to the node that holds it"),
    ("? [1, 2]\n: 1\n", "a key is a mapping or a list"),
    ("a: &a {k: 1}\n" + "".join(f"b{i}: {{<<: *a}}\n" for i in range(1001)),
     "merges beyond reason (more than 1000 merge keys"),
    ("a: &a {" + ", ".join(f"k{i}: 1" for i in range(1000)) + "}\n"
     + "".join(f"b{i}: {{<<: *a}}\n" for i in range(60)), "or 50000 merged values"),
], ids=["merge-of-itself", "alias-of-itself", "key-is-a-list", "many-merges",
        "merges-copy-too-much"])
@pytest.mark.parametrize("lines", [True, False], ids=["round-trip", "fast"])
def test_yaml_shapes_refused_before_they_are_built(tmp_path: Path, text: str,
                                                  reason: str, lines: bool) -> None:
    path = tmp_path / "f.yaml"
    path.write_text(text)
    with pytest.raises(InputError) as info:
        load_yaml(path, lines=lines)
    [problem] = info.value.problems
    assert reason in problem.reason and problem.line is not None, problem


@pytest.mark.parametrize("lines", [True, False], ids=["round-trip", "fast"])
def test_a_few_merges_still_load(tmp_path: Path, lines: bool) -> None:
    path = tmp_path / "f.yaml"
    path.write_text("base: &b {count: 2, nic: eth1}\n"
                    + "".join(f"leaf{i}: {{<<: *b, count: {i}}}\n" for i in range(1, 200)))
    doc = load_yaml(path, lines=lines)
    assert doc["leaf7"] == {"count": 7, "nic": "eth1"}


def test_the_fast_read_builds_what_the_round_trip_builds() -> None:
    """Plain dicts from libyaml's parser, equal value for value to the round-trip read
    (YAML 1.2 both: `on` stays a string, `0o17` is octal)."""
    for path in sorted((ROOT / "intents").glob("*/*.yaml")):
        assert load_yaml(path, lines=False) == load_yaml(path), path
    path = ROOT / "intents" / "lab" / "fabric.yaml"
    assert type(load_yaml(path, lines=False)) is dict
