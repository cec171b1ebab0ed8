"""Bad intent input gives one precise error (file, key path, line, reason), never a traceback.

Each case copies intents/lab/ into a temporary directory, breaks it in one way and checks
the InputError that load_intent raises. Expected line numbers are looked up in the edited
text (the line carrying a marker), so the cases do not depend on the example's layout.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from tasks.errors import InputError, InputProblem
from tasks.intent.loader import load_intent
from tasks.intent.models import Intent
from tasks.yamlio import load_yaml
from tests.support.flatfab import flatfab
from tests.support.paths import ROOT

LAB = ROOT / "intents" / "lab"
FABRIC, HOSTS, TENANTS = "fabric.yaml", "hosts.yaml", "tenants.yaml"

# An edit names one file of the copy and maps its text (None: absent) to new text (None: delete).
Edit = tuple[str, Callable[[str | None], str | None]]


def replace(file: str, old: str, new: str) -> Edit:
    def apply(text: str | None) -> str:
        # a stale `old` would silently test the unmodified example: refuse it
        assert text is not None and old in text, f"{old!r} not found in {file}"
        return text.replace(old, new, 1)

    return file, apply


def append(file: str, extra: str) -> Edit:
    return file, lambda text: (text or "") + extra


def write(file: str, text: str) -> Edit:
    return file, lambda _: text


def delete(file: str) -> Edit:
    return file, lambda _: None


def bad_copy(directory: Path, *edits: Edit) -> Path:
    """Copy intents/lab/ to `directory` and apply the edits there."""
    shutil.copytree(LAB, directory)
    for name, apply in edits:
        path = directory / name
        new = apply(path.read_text(encoding="utf-8") if path.exists() else None)
        if new is None:
            path.unlink()
        else:
            path.write_text(new, encoding="utf-8")
    return directory


def load_error(tmp_path: Path, *edits: Edit) -> tuple[InputError, Path]:
    """The InputError of a broken copy (any other exception fails the test: no tracebacks)."""
    directory = bad_copy(tmp_path / "lab", *edits)
    with pytest.raises(InputError) as info:
        load_intent(directory)
    return info.value, directory


def line_of(path: Path, marker: str) -> int:
    """1-based number of the single line of `path` that contains `marker`."""
    lines = [n for n, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if marker in text]
    assert len(lines) == 1, f"marker {marker!r} must be on exactly one line of {path.name}"
    return lines[0]


def describe(problems: list[InputProblem]) -> str:
    return "\n".join(f"{p.file}:{p.line}: {p.path}: {p.reason}" for p in problems)


# the default full-mesh cabling written out for spine1, to edit `links:` cases from
LINKS = "links:\n" + "".join(f"  - {{leaf: leaf{i}, spine: spine1}}\n" for i in range(1, 5))
# numbered mode also needs a p2p_pool per tenant; these give each one a roomy pool
TENANT_POOLS = (
    replace(TENANTS, '    members: ["*-h1"]', '    p2p_pool: 172.17.0.0/22\n    members: ["*-h1"]'),
    replace(TENANTS, '    members: ["*-h2"]', '    p2p_pool: 172.18.0.0/22\n    members: ["*-h2"]'),
)


@dataclass(frozen=True)
class Case:
    id: str
    edits: tuple[Edit, ...]
    file: str  # name of the file the problem must name
    path: str  # the key path, exactly
    reason: str  # a phrase the reason must contain (picks the problem when there are several)
    marker: str | None  # text on the line the problem must point at; None: no line
    alone: bool = True  # False: the edit inherently causes other problems too


CASES = [
    # --- unknown keys and wrong values, caught by the pydantic models
    Case("unknown-top-level-key", (replace(FABRIC, "roce_mtu:", "roce_mtuu:"),),
         FABRIC, "roce_mtuu", "unknown key 'roce_mtuu'", "roce_mtuu"),
    # a typo in a required key also reports the key as missing: two problems by nature
    Case("unknown-nested-key", (replace(FABRIC, "spine_asn:", "spine_asm:"),),
         FABRIC, "underlay.spine_asm", "unknown key 'spine_asm'", "spine_asm", alone=False),
    Case("wrong-type", (replace(FABRIC, "spine_asn: 65000", "spine_asn: abc"),),
         FABRIC, "underlay.spine_asn", "'abc' is not an integer", "spine_asn: abc"),
    Case("invalid-speed", (replace(FABRIC, "fabric: {speed: 100G", "fabric: {speed: 123G"),),
         FABRIC, "link_classes.fabric.speed", "unknown speed '123G'", "123G"),
    Case("invalid-roce-mtu", (replace(FABRIC, "roce_mtu: 4096", "roce_mtu: 3000"),),
         FABRIC, "roce_mtu", "RoCE MTU must be one of", "roce_mtu: 3000"),
    Case("hold-below-3x-keepalive",
         (replace(FABRIC, "  max_spines: 16\n",
                  "  max_spines: 16\n  timers: {keepalive: 5, hold: 10}\n"),),
         FABRIC, "underlay.timers", "hold (10) must be at least 3 x keepalive (5)", "timers:"),
    Case("numbered-without-p2p-pool",
         (replace(FABRIC, "mode: unnumbered", "mode: numbered"), *TENANT_POOLS),
         FABRIC, "underlay", "mode 'numbered' needs a p2p_pool", "underlay:"),
    Case("invalid-name", (replace(FABRIC, "- name: spine2", "- name: Spine2"),),
         FABRIC, "spines[1].name", "'Spine2' is not a safe name: it holds 'S'", "Spine2"),
    Case("prefix-with-host-bits", (replace(TENANTS, "10.100.0.0/16", "10.100.0.1/16"),),
         TENANTS, "tenants[0].prefixes", "host bits", "10.100.0.1/16"),
    Case("reserved-tenant-name", (replace(TENANTS, "name: red", "name: default"),),
         TENANTS, "tenants[1].name", "'default' is reserved", "name: default"),
    Case("count-and-hosts",
         (append(HOSTS, "leaves:\n  leaf1:  # both\n    count: 2\n    hosts: [{}]\n"),),
         HOSTS, "leaves.leaf1", "either 'count' or 'hosts'", "# both"),
    # --- switches: names, ids, ASNs
    Case("duplicate-device-name", (replace(FABRIC, "- name: spine2", "- {name: spine1, id: 2}"),),
         FABRIC, "spines[1].name", "duplicate device name 'spine1'", "{name: spine1, id: 2}"),
    Case("duplicate-switch-id", (replace(FABRIC, "- name: spine2", "- {name: spine2, id: 1}"),),
         FABRIC, "spines[1]", "already used by 'spine1'", "{name: spine2, id: 1}"),
    Case("name-without-number-or-id", (replace(FABRIC, "- name: spine2", "- name: spinex"),),
         FABRIC, "spines[1]", "'spinex' needs an 'id'", "spinex"),
    Case("spine-id-above-max-spines", (replace(FABRIC, "- name: spine2", "- name: spine17"),),
         FABRIC, "spines[1]", "exceeds underlay.max_spines (16)", "spine17"),
    Case("asn-range-too-small", (replace(FABRIC, "last: 65199", "last: 65103"),),
         FABRIC, "leaves[3]", "ASN range too small", "- name: leaf4"),
    Case("spine-asn-inside-leaf-range", (replace(FABRIC, "spine_asn: 65000", "spine_asn: 65150"),),
         FABRIC, "underlay.spine_asn", "lies inside leaf_asns 65101-65199", "spine_asn: 65150"),
    # --- pools
    Case("loopback-pool-exhausted", (replace(FABRIC, "10.0.0.0/24", "10.0.0.0/28"),),
         FABRIC, "leaves[0]", "loopback_pool 10.0.0.0/28 exhausted", "- name: leaf1"),
    Case("p2p-pool-exhausted",
         (replace(FABRIC, "mode: unnumbered", "mode: numbered\n  p2p_pool: 172.16.0.0/28"),
          *TENANT_POOLS),
         FABRIC, "underlay.p2p_pool", "p2p_pool 172.16.0.0/28 exhausted", "172.16.0.0/28"),
    Case("tenant-prefix-overlaps-loopback-pool",
         (replace(TENANTS, "10.100.0.0/16", "10.0.0.0/16"),),
         TENANTS, "tenants[0].prefixes[0]", "10.0.0.0/16 overlaps 10.0.0.0/24", "10.0.0.0/16"),
    # --- explicit cabling
    Case("link-to-unknown-spine", (append(FABRIC, LINKS + "  - {leaf: leaf1, spine: spine9}\n"),),
         FABRIC, "links[4].spine", "link to unknown spine 'spine9'", "spine9"),
    # the same pair written the other way round is still the same link
    Case("duplicate-link",
         (append(FABRIC, LINKS + "  - {spine: spine1, leaf: leaf1}  # again\n"),),
         FABRIC, "links[4]", "duplicate link leaf1 - spine1", "# again"),
    Case("unknown-link-class",
         (append(FABRIC, LINKS + "  - {leaf: leaf1, spine: spine2, class: fast}\n"),),
         FABRIC, "links[4].class", "unknown link class 'fast'", "class: fast"),
    Case("leaf-without-link", (append(FABRIC, LINKS.replace("  - {leaf: leaf4, spine: spine1}\n",
                                                            "")),),
         FABRIC, "leaves[3]", "leaf 'leaf4' has no link to any spine", "- name: leaf4"),
    # --- tenants
    Case("vrf-id-clash", (replace(TENANTS, "vrf_id: 200", "vrf_id: 100  # clash"),),
         TENANTS, "tenants[1].vrf_id", "VRF id 100 already used by tenant 'blue'", "# clash"),
    Case("host-in-two-tenants",
         (replace(TENANTS, 'members: ["*-h2"]', 'members: ["*-h2", "leaf1-h1"]'),),
         TENANTS, "tenants[1].members[1]", "'leaf1-h1' is already in tenant 'blue'", "leaf1-h1"),
    Case("member-pattern-matches-no-host",
         (replace(TENANTS, 'members: ["*-h2"]', 'members: ["*-h2", "gpu-*"]'),),
         TENANTS, "tenants[1].members[1]", "'gpu-*' matches no host", "gpu-*"),
    # --- hosts
    # every host inherits the default MTU, so every host is reported, all at defaults.mtu
    Case("mtu-too-small-for-roce", (replace(HOSTS, "mtu: 9000", "mtu: 1500"),),
         HOSTS, "defaults.mtu", "MTU 1500 (of leaf1-h1 and hosts sharing this setting) is too "
         "small for RoCE MTU 4096", "mtu: 1500"),
    Case("host-mtu-too-small-for-roce",
         (append(HOSTS, "leaves:\n  leaf1:\n    hosts:\n      - {mtu: 1500}\n      - {}\n"),),
         HOSTS, "leaves.leaf1.hosts[0].mtu", "needs at least 4192", "mtu: 1500"),
    Case("host-mtu-above-link-class",
         (append(HOSTS, "leaves:\n  leaf1:\n    hosts:\n      - {mtu: 9216}\n      - {}\n"),),
         HOSTS, "leaves.leaf1.hosts[0].mtu", "exceeds the MTU 9000 of its link class 'host'",
         "mtu: 9216"),
    Case("unknown-leaf-in-hosts", (append(HOSTS, "leaves:\n  leaf9: {count: 1}\n"),),
         HOSTS, "leaves.leaf9", "unknown leaf 'leaf9'", "leaf9"),
    # uplinks at swp51.. moved to swp2..: port 2 of every leaf collides, one problem per leaf
    Case("host-port-is-uplink-port",
         (replace(FABRIC, "link_classes:", "ports: {leaf_uplink_base: 1}\nlink_classes:"),),
         HOSTS, "defaults.count", "host port number 2 on leaf1 collides with a spine uplink",
         "count: 2", alone=False),
    Case("explicit-host-port-is-uplink-port",
         (append(HOSTS, "leaves:\n  leaf1:\n    hosts:\n      - {port: 1}\n"
                        "      - {name: leaf1-h2, port: 51}\n"),),
         HOSTS, "leaves.leaf1.hosts[1]", "host port number 51 on leaf1 collides", "port: 51"),
    # --- YAML syntax and files
    Case("bad-indentation", (replace(HOSTS, "  nic: eth1", " nic: eth1"),),
         HOSTS, "", "malformed YAML", "nic: eth1"),
    # the parser notices the missing '}' on the next line, where a ':' cannot be
    Case("unclosed-bracket", (replace(FABRIC, "last: 65199}", "last: 65199"),),
         FABRIC, "", "malformed YAML: while parsing a flow mapping", "loopback_pool:"),
    Case("duplicate-yaml-key",
         (replace(FABRIC, "  max_spines: 16\n", "  max_spines: 16\n  spine_asn: 65001\n"),),
         FABRIC, "", 'duplicate key "spine_asn"', "spine_asn: 65001"),
    Case("top-level-not-a-mapping", (write(TENANTS, "- name: blue\n"),),
         TENANTS, "", "top level must be a mapping", "- name: blue"),
    Case("missing-fabric-yaml", (delete(FABRIC),), FABRIC, "", "file not found", None),
    Case("unknown-intent-file", (write("tenant.yaml", "tenants: []\n"),),
         "tenant.yaml", "", "unknown intent file", None),
]


def test_cases_are_distinct() -> None:
    assert len({c.id for c in CASES}) == len(CASES) >= 18


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
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
def test_yaml_shapes_refused_before_they_are_built(tmp_path: Path, text: str,
                                                  reason: str) -> None:
    path = tmp_path / "f.yaml"
    path.write_text(text)
    with pytest.raises(InputError) as info:
        load_yaml(path)
    [problem] = info.value.problems
    assert reason in problem.reason and problem.line is not None, problem


def test_a_few_merges_still_load(tmp_path: Path) -> None:
    path = tmp_path / "f.yaml"
    path.write_text("base: &b {count: 2, nic: eth1}\n"
                    + "".join(f"leaf{i}: {{<<: *b, count: {i}}}\n" for i in range(1, 200)))
    doc = load_yaml(path)
    assert doc["leaf7"] == {"count": 7, "nic": "eth1"}
