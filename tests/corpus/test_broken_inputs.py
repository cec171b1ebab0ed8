"""The broken-input corpus: every static command (plan, check, render, lab generate,
rollout --dry-run) on every broken input ends with exit 2 and one error line per problem,
each naming the file (or the option) at fault: never a traceback, never "internal error".
The valid inputs end with exit 0 or 1.

Cases are built in a temporary project root (`--root`), so nothing lands in the project.
File-level breakage (a FIFO, a symlink loop, UTF-16, an alias bomb, ...) is applied to each
intent file in turn; value-level breakage reuses the intent error cases of the unit tests.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from flatfab.lab import topology
from flatfab.workflows.project.layout import Project
from tests.support.inprocess import run
from tests.support.intent_cases import RAIL_REFUSALS, VALUE_CASES
from tests.support.intent_edits import Edit, append, bad_copy, replace
from tests.support.inventory import lab_like
from tests.support.paths import ROOT

INTENT_FILES = ("fabric.yaml", "hosts.yaml", "tenants.yaml", "qos.yaml")
FABRIC_CLASS = "fabric: {speed: 100G, cable_m: 3"
# value-level refusals beyond the intent error cases: optics reach, override port patterns
VALUE_REFUSALS: dict[str, tuple[Edit, ...]] = {
    "cable-beyond-media-reach": (
        replace("fabric.yaml", FABRIC_CLASS, "fabric: {speed: 100G, media: dac, cable_m: 30"),),
    "media-not-offered-at-speed": (
        replace("fabric.yaml", FABRIC_CLASS, "fabric: {speed: 10G, media: dr, cable_m: 3"),),
    "unknown-media": (
        replace("fabric.yaml", FABRIC_CLASS, "fabric: {speed: 100G, media: om4, cable_m: 3"),),
    "cable-beyond-any-optic": (
        replace("fabric.yaml", FABRIC_CLASS, "fabric: {speed: 100G, cable_m: 50000"),),
    # the physical layer: a FEC the lane rate cannot run, lanes a speed has no form of,
    # thresholds out of range
    "fec-none-on-pam4-lanes": (
        replace("fabric.yaml", FABRIC_CLASS, "fabric: {speed: 100G, lanes: 2, fec: none, "
                "cable_m: 3"),),
    "fec-kp4-on-nrz-lanes": (
        replace("fabric.yaml", FABRIC_CLASS, "fabric: {speed: 100G, fec: rs544, cable_m: 3"),),
    "unknown-fec": (
        replace("fabric.yaml", FABRIC_CLASS, "fabric: {speed: 100G, fec: rs272, cable_m: 3"),),
    "lanes-slower-than-10g": (
        replace("fabric.yaml", FABRIC_CLASS, "fabric: {speed: 25G, lanes: 4, cable_m: 3"),),
    "ber-margin-below-one": (
        replace("fabric.yaml", "underlay:", "physical: {ber_margin: 0.5}\nunderlay:"),),
    "flap-window-too-short": (
        replace("fabric.yaml", "underlay:", "physical: {flap_window_s: 5}\nunderlay:"),),
    "physical-unknown-key": (
        replace("fabric.yaml", "underlay:", "physical: {ber_limit: 1e-5}\nunderlay:"),),
    "override-port-matches-no-port": (
        append("qos.yaml", "overrides:\n  - devices: [leaf1]\n    ports: [swp99]\n"
                           "    trust: pcp\n"),),
    "override-port-of-another-platform": (
        append("qos.yaml", "overrides:\n  - devices: ['*']\n    ports: [Ethernet0]\n"
                           "    ecn_enabled: false\n"),),
    # merge keys: what a merge brings in is judged, and named, like what is written
    "merge-lacks-required-key": (
        replace("tenants.yaml", "  - name: blue\n    vrf_id: 100\n    prefixes: [10.100.0.0/16]",
                "  - &t {name: blue, vrf_id: 100}\n  - <<: *t\n    name: green"),),
    "merge-brings-unknown-key": (
        replace("fabric.yaml", "leaf_asns: {first", "leaf_asns: &la {first"),
        replace("fabric.yaml", "  - name: leaf1\n", "  - name: leaf1\n    <<: *la\n")),
    "merge-brings-a-clash": (
        replace("tenants.yaml", "  - name: red\n    vrf_id: 200",
                "  - name: red\n    <<: {vrf_id: 100}"),),
    # AS numbers: a YAML float is refused, never truncated (tasks/asn.py)
    "asn-float": (replace("fabric.yaml", "spine_asn: 65000", "spine_asn: 65000.0"),),
    "asn-range-float": (replace("fabric.yaml", "last: 65199}", "last: 65199.0}"),),
    "asn-unquoted-asdot": (replace("fabric.yaml", "spine_asn: 65000", "spine_asn: 1.10"),),
    # ECMP cut short: fewer paths than a leaf has spines
    "maximum-paths-below-the-spines": (
        replace("fabric.yaml", "  max_spines: 16\n", "  max_spines: 16\n  maximum_paths: 1\n"),),
    # a GPU host's fabric NIC
    "nic-is-loopback": (replace("hosts.yaml", "nic: eth1", "nic: lo"),),
    "nic-is-management": (
        append("hosts.yaml", "leaves:\n  leaf1:\n    hosts: [{nic: eth0}, {}]\n"),),
    # qos: a DSCP map entry that would be ignored, ASICs of platforms that do not exist
    "dscp-map-moves-roce": (append("qos.yaml", "dscp_to_tc: {26: 0}\n"),),
    "dscp-map-moves-cnp": (append("qos.yaml", "dscp_to_tc: {48: 1}\n"),),
    "asic-of-misspelt-platform": (
        replace("qos.yaml", "  frr: {family: spectrum-4}", "  ffr: {family: spectrum-4}"),),
    "asic-of-host-platform": (
        replace("qos.yaml", "  frr: {family: spectrum-4}", "  linux_host: {family: generic}"),),
    "asic-unknown-family": (
        replace("qos.yaml", "  frr: {family: spectrum-4}", "  frr: {family: spectrum-9}"),),
    # a platform that cannot express the watchdog's action (EOS has no forward)
    "watchdog-forward-on-eos": (
        replace("fabric.yaml", "platform: frr", "platform: eos"),
        replace("qos.yaml", "action: drop", "action: forward"),
        replace("qos.yaml", "  frr: {family: spectrum-4}", "  eos: {family: trident-4}")),
    # the folder is intents/lab/, the name in it another: --fabric and fabric.yaml disagree
    "fabric-name-is-not-the-folder": (replace("fabric.yaml", "name: lab", "name: lab2"),),
    # unmanaged hosts: `managed` is true or false, nothing YAML 1.2 reads as a string or number
    "managed-is-yaml-1-1-no": (replace("hosts.yaml", "nic: eth1", "nic: eth1\n  managed: no"),),
    "managed-is-null": (replace("hosts.yaml", "nic: eth1", "nic: eth1\n  managed: null"),),
    "managed-of-a-leaf-is-a-number": (
        append("hosts.yaml", "leaves:\n  leaf1: {count: 2, managed: 0}\n"),),
    "managed-of-a-host-is-a-string": (
        append("hosts.yaml", "leaves:\n  leaf1:\n    hosts: [{managed: 'false'}, {}]\n"),),
    "managed-misspelt": (replace("hosts.yaml", "nic: eth1", "nic: eth1\n  unmanaged: true"),),
}
# the same on an AI back-end's server profiles and hand-placed servers
RAIL_MANAGED: dict[str, tuple[tuple[str, str, str], ...]] = {
    "profile-managed-is-a-string": (
        ("hosts.yaml", "storage: {role: storage, nics: {names: [eth1, eth2]}}",
         "storage: {role: storage, nics: {names: [eth1, eth2]}, managed: 'no'}"),),
    "server-managed-is-a-number": (
        ("hosts.yaml", "    profile: storage\n", "    profile: storage\n    managed: 1\n"),),
}
# inputs that load but deserve a word: every static command says why, as one warning line
WARNED: dict[str, tuple[tuple[Edit, ...], str]] = {
    "tenant-without-members": (
        (replace("tenants.yaml", 'members: ["*-h2"]', "members: []"),
         append("hosts.yaml", "host_pool: 10.50.0.0/16\n")),
        "tenants[1]: tenant 'red' has no members"),
    "pfc-priority-no-class-uses": (
        (replace("qos.yaml", "priorities: [3]", "priorities: [3, 4]"),),
        "pfc.priorities[1]: PFC priority 4 carries no class"),
    "override-moves-roce-out-of-its-class": (
        (append("qos.yaml", "overrides:\n  - devices: [leaf1]\n    dscp_to_tc: {26: 0}\n"),),
        "overrides[0].dscp_to_tc[26]: moves RoCE DSCP 26 to class 0 on leaf1"),
    "nic-map-moves-roce-out-of-its-class": (
        (append("qos.yaml", "overrides:\n  - devices: [leaf1-h1]\n"
                            "    nic: {dscp_to_priority: {26: 1}}\n"),),
        "overrides[0].nic.dscp_to_priority[26]: moves RoCE DSCP 26 to class 1"),
    "asic-of-a-platform-no-switch-runs": (
        (replace("qos.yaml", "  frr: {family: spectrum-4}",
                 "  frr: {family: spectrum-4}\n  eos: {family: tomahawk-5}"),),
        "asics.eos: no switch of this fabric runs eos"),
    "public-asn-in-the-underlay": (
        (replace("fabric.yaml", "spine_asn: 65000", "spine_asn: 3356"),),
        "underlay.spine_asn: AS 3356 is a public AS number"),
}
STATIC = (("plan",), ("check",), ("render", "--out", "{root}/out"), ("lab", "generate"),
          ("rollout", "--dry-run"))

Breaker = Callable[[Path], None]  # breaks one file in place


def _write_bytes(data: bytes) -> Breaker:
    return lambda path: path.write_bytes(data)


def _fifo(path: Path) -> None:
    path.unlink()
    os.mkfifo(path)


def _directory(path: Path) -> None:
    path.unlink()
    path.mkdir()


def _loop(path: Path) -> None:
    path.unlink()
    path.symlink_to(path.name)


def _dangling(path: Path) -> None:
    path.unlink()
    path.symlink_to("gone.yaml")


def _shadow(path: Path) -> None:
    shutil.copy(path, path.with_suffix(".yml"))


def _renamed(path: Path) -> None:
    path.rename(path.with_suffix(".yml"))


def _upper_case_extension(path: Path) -> None:
    path.rename(path.with_suffix(".YAML"))


def _utf16(path: Path) -> None:
    path.write_bytes(path.read_text(encoding="utf-8").encode("utf-16"))


def _nul(path: Path) -> None:
    path.write_bytes(path.read_bytes() + b"\n# \x00\n")


def _latin1(path: Path) -> None:
    path.write_bytes(path.read_bytes() + "# caf\u00e9\n".encode("latin-1"))


def _unreadable_device(path: Path) -> None:
    # root reads any mode; /proc/self/mem opens and then fails to read (EIO) for anyone
    path.unlink()
    path.symlink_to("/proc/self/mem")


def _unreadable(path: Path) -> None:
    # root reads any mode: a directory where the file's parent path expects a file instead
    path.unlink()
    path.mkdir()
    (path / "inner.yaml").write_text("x: 1\n")


LAUGHS = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{c}: &{c} [{', '.join([f'*{p}'] * 10)}]\n"
    for p, c in zip("abcdefgh", "bcdefghi", strict=True))
# the parser spends time quadratic in merge keys: 3000 merges of one anchor took minutes
MERGE_FLOOD = "a: &a {" + ", ".join(f"k{i}: {i}" for i in range(100)) + "}\n" + "".join(
    f"b{i}: {{<<: *a}}\n" for i in range(3000))
MERGE_CHAIN = "a0: &a0 {k: 1}\n" + "".join(f"a{i}: &a{i} {{<<: *a{i - 1}, k{i}: 1}}\n"
                                            for i in range(1, 1500))
MERGE_BOMB = "a: &a {k0: 1, k1: 1}\n" + "".join(
    f"{c}: &{c}\n  <<: *{p}\n  " + "\n  ".join(f"m{i}: *{p}" for i in range(10)) + "\n"
    for p, c in zip("abcdefgh", "bcdefghi", strict=True))

FILE_BREAKERS: dict[str, Breaker] = {
    "fifo": _fifo,
    "directory": _directory,
    "directory-with-content": _unreadable,
    "symlink-loop": _loop,
    "dangling-symlink": _dangling,
    "shadowed-by-yml": _shadow,
    "yml-spelling": _renamed,
    "upper-case-extension": _upper_case_extension,
    "utf-16": _utf16,
    "utf-32": _write_bytes("name: lab\n".encode("utf-32")),
    "nul-byte": _nul,
    "not-utf-8": _latin1,
    "binary": _write_bytes(bytes(range(256)) * 4),
    "alias-bomb": _write_bytes(LAUGHS.encode()),
    "merge-key-bomb": _write_bytes(MERGE_BOMB.encode()),
    "merge-key-flood": _write_bytes(MERGE_FLOOD.encode()),
    "merge-key-chain": _write_bytes(MERGE_CHAIN.encode()),
    "merge-of-itself": _write_bytes(b"a: &a {x: 1, <<: *a}\n"),
    "merge-of-a-bomb": _write_bytes((LAUGHS + "t: {<<: {z: *i}}\n").encode()),
    "key-is-an-alias-bomb": _write_bytes((LAUGHS + "? *i\n: 1\n").encode()),
    "key-is-a-mapping": _write_bytes(b"? {a: 1}\n: 1\n"),
    "unreadable-device": _unreadable_device,
    "deep-nesting": _write_bytes(b"x: " + b"[" * 5000 + b"]" * 5000 + b"\n"),
    "deep-mapping": _write_bytes("".join("  " * i + f"k{i}:\n" for i in range(200)).encode()),
    "recursive-alias": _write_bytes(b"x: &a [1, *a]\n"),
    "malformed": _write_bytes(b"name: [unclosed\n"),
    "tab-indent": _write_bytes(b"defaults:\n\tcount: 2\n"),
    "duplicate-key": _write_bytes(b"name: a\nname: b\n"),
    "top-level-list": _write_bytes(b"- 1\n- 2\n"),
    "top-level-scalar": _write_bytes(b"just text\n"),
    "too-large": _write_bytes(b"# " + b"x" * (17 << 20) + b"\n"),
}


@dataclass(frozen=True)
class Corpus:
    id: str
    make: Callable[[Path], None]  # builds intents/lab/ under a root
    broken: bool = True
    # what every error line must name: a file of the intent, or the option at fault
    names: str = "intents/lab/"
    warns: str | None = None  # a valid input that every command warns about, saying this
    fabric: str = "lab"


def _copy(root: Path) -> Path:
    target = root / "intents" / "lab"
    shutil.copytree(ROOT / "intents" / "lab", target)
    return target


def _file_case(file: str, breaker: Breaker) -> Callable[[Path], None]:
    def make(root: Path) -> None:
        path = _copy(root) / file
        if not path.exists():
            path.write_text("{}\n")
        breaker(path)

    return make


def _value_case(edits: tuple[Edit, ...]) -> Callable[[Path], None]:
    return lambda root: bad_copy(root / "intents" / "lab", *edits) and None


def _rail_case(edits: tuple[tuple[str, str, str], ...]) -> Callable[[Path], None]:
    """intents/rail/ (an AI back-end: SUs, pods, planes) with (file, old, new) edits."""
    def make(root: Path) -> None:
        target = root / "intents" / "rail"
        shutil.copytree(ROOT / "intents" / "rail", target)
        for file, old, new in edits:
            text = (target / file).read_text(encoding="utf-8")
            assert old in text, f"{old!r} not in {file}"
            (target / file).write_text(text.replace(old, new, 1), encoding="utf-8")
    return make


# the project file (flatfab.yaml at the root): each value it can get wrong
PROJECT_FILE = "fabric: lab\nstate_dir: .flatfab\n"
PROJECT_VALUES: dict[str, str] = {
    "unknown-key": "fabric: lab\nfabrik: lab\n",
    "fabric-not-a-name": "fabric: ../../etc\n",
    "fabric-a-list": "fabric: [lab]\n",
    "inventory-a-number": "inventory: 3\n",
    "timeout-a-word": "connect_timeout: soon\n",
    "timeout-negative": "command_timeout: -1\n",
    "timeout-beyond-reason": "connect_timeout: 86400\n",
    "empty-key": "fabric: lab\n: x\n",
}


def _project_file_case(breaker: Breaker) -> Callable[[Path], None]:
    """intents/lab/ and a flatfab.yaml at the root, broken by `breaker`."""
    def make(root: Path) -> None:
        _copy(root)
        path = root / "flatfab.yaml"
        path.write_text(PROJECT_FILE)
        breaker(path)

    return make


def _corpus() -> list[Corpus]:
    cases = [Corpus(f"{file.split('.')[0]}-{kind}", _file_case(file, breaker))
             for file in INTENT_FILES for kind, breaker in FILE_BREAKERS.items()]
    cases += [Corpus(f"value-{case.id}", _value_case(case.edits)) for case in VALUE_CASES]
    cases += [Corpus(f"value-{name}", _value_case(edits))
              for name, edits in VALUE_REFUSALS.items()]
    cases += [Corpus(f"warned-{name}", _value_case(edits), broken=False, warns=phrase)
              for name, (edits, phrase) in WARNED.items()]
    cases += [
        Corpus("no-intent-directory", lambda root: (root / "intents").mkdir(),
               names="intents/lab"),
        Corpus("intent-directory-is-a-file",
               lambda root: ((root / "intents").mkdir(), (root / "intents" / "lab").touch()),
               names="intents/lab"),
        Corpus("unknown-intent-file",
               lambda root: (_copy(root) / "extra.yaml").write_text("x: 1\n")),
        # an intent folder that cannot be read: a dangling link, a link loop, a FIFO
        Corpus("intent-directory-dangling-link",
               lambda root: _intents(root).joinpath("lab").symlink_to("gone"),
               names="intents/lab"),
        Corpus("intent-directory-link-loop",
               lambda root: _intents(root).joinpath("lab").symlink_to("lab"),
               names="intents/lab"),
        Corpus("intent-directory-is-a-fifo",
               lambda root: os.mkfifo(_intents(root) / "lab"), names="intents/lab"),
        Corpus("intents-is-a-file", lambda root: (root / "intents").touch(),
               names="intents/lab"),
        Corpus("valid-lab", lambda root: _copy(root) and None, broken=False),
        Corpus("valid-lab-every-host-unmanaged",
               _value_case((replace("hosts.yaml", "nic: eth1", "nic: eth1\n  managed: false"),)),
               broken=False),
        Corpus("valid-rail", _rail_case(()), broken=False, names="intents/rail/",
               fabric="rail"),
    ]
    cases += [Corpus(f"rail-{case.id}", _rail_case(case.edits), names="intents/rail/",
                     fabric="rail") for case in RAIL_REFUSALS]
    cases += [Corpus(f"rail-{name}", _rail_case(edits), names="intents/rail/", fabric="rail")
              for name, edits in RAIL_MANAGED.items()]
    cases += [Corpus(f"project-file-{kind}", _project_file_case(breaker),
                     names="flatfab.yaml") for kind, breaker in FILE_BREAKERS.items()]
    cases += [Corpus(f"project-file-{kind}", _project_file_case(_write_bytes(text.encode())),
                     names="flatfab.yaml") for kind, text in PROJECT_VALUES.items()]
    cases.append(Corpus("valid-project-file", _project_file_case(lambda _: None),
                        broken=False))
    return cases


def _intents(root: Path) -> Path:
    (root / "intents").mkdir()
    return root / "intents"


CORPUS = _corpus()


def test_the_corpus_is_large_enough() -> None:
    assert sum(c.broken for c in CORPUS) >= 100


@pytest.mark.parametrize("case", CORPUS, ids=lambda c: c.id)
def test_every_static_command_refuses_broken_input_in_one_line_each(
        case: Corpus, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    case.make(tmp_path)
    for command in STATIC:
        args = [a.format(root=tmp_path) for a in command]
        code, out, err = run(["--root", str(tmp_path), "--fabric", case.fabric, *args],
                             capsys)
        where = " ".join(command)
        assert "internal error" not in err and "Traceback" not in err, f"{where}: {err}"
        if not case.broken:
            if command[0] != "rollout":  # needs an inventory: refused as such
                assert code in (0, 1), f"{where}: {code} {err}"
            warnings = [line for line in err.splitlines() if line.startswith("warning: ")]
            if case.warns is None:
                assert not warnings, f"{where}: {err}"
            else:
                assert len(warnings) == 1 and case.warns in warnings[0] \
                    and case.names in warnings[0], f"{where}: {err}"
            continue
        lines = err.strip().splitlines()
        assert code == 2, f"{where}: exit {code}\n{out}{err}"
        assert lines and all(line.startswith("error: ") for line in lines), f"{where}: {err}"
        assert all(case.names in line or "--" in line.split(":")[1] for line in lines), \
            f"{where}: {err}"


def _runbook(root: Path, breaker: Breaker) -> Path:
    path = root / "runbook.yaml"
    shutil.copy(ROOT / "runbooks" / "first-bring-up.yaml", path)
    breaker(path)
    return path


@pytest.mark.parametrize(("option", "make"), [
    ("--out", lambda root: ["render", "--out", str(_touch(root / "file"))]),
    ("--out", lambda root: ["render", "--out", str(_touch(root / "file") / "below")]),
    ("--out", lambda root: ["render", "--out", "/proc/flatfab-out"]),
    ("--device", lambda root: ["render", "--out", str(root / "o"), "--device", "nope"]),
    ("runbook.yaml", lambda root: ["rollout", "--dry-run", "--runbook",
                                   str(_runbook(root, _fifo))]),
    ("runbook.yaml", lambda root: ["rollout", "--dry-run", "--runbook",
                                   str(_runbook(root, _utf16))]),
    ("runbook.yaml", lambda root: ["rollout", "--dry-run", "--runbook",
                                   str(_runbook(root, _write_bytes(LAUGHS.encode())))]),
    ("runbook.yaml", lambda root: ["rollout", "--dry-run", "--runbook",
                                   str(_runbook(root, _loop))]),
    # a device's file name taken by a directory: refused before any config is written
    ("--out", lambda root: ["render", "--out", str(_mkdir(root / "o" / "leaf3.conf").parent)]),
    # labs/ and what lab generate writes there, taken by the wrong kind of file
    ("labs", lambda root: [_touch(root / "labs") and "lab", "generate"]),
    ("labs/lab.clab.yml", lambda root: [_mkdir(root / "labs" / "lab.clab.yml") and "lab",
                                        "generate"]),
    ("labs/lab:", lambda root: [_touch(_mkdir(root / "labs") / "lab") and "lab", "generate"]),
    ("labs/lab/spine1/frr.conf", lambda root: [
        _mkdir(root / "labs" / "lab" / "spine1" / "frr.conf") and "lab", "generate"]),
    # a management subnet inside the fabric's pools (no planned address in it yet)
    ("--mgmt-subnet", lambda root: ["lab", "generate", "--mgmt-subnet", "10.100.200.0/24"]),
    ("--mgmt-subnet", lambda root: ["lab", "generate", "--mgmt-subnet", "10.0.0.128/26"]),
    ("--mgmt-subnet", lambda root: [_generated(root) and "lab", "up", "--mgmt-subnet",
                                    "10.200.128.0/24"]),
    ("labs/lab/leaf1/frr.conf", lambda root: [
        _generated(root, _mkdir_over(root / "labs" / "lab" / "leaf1" / "frr.conf")) and "lab",
        "up"]),
    ("--gnmi-mutual-tls", lambda root: ["lab", "up", "--runtime", "clab",
                                        "--gnmi-mutual-tls"]),
    # a burn-in: a duration that is none, options that would narrow or split it, reports
    # without it (refused before any device is read)
    ("--burn-in", lambda root: ["verify", "--burn-in", "soon"]),
    ("--check", lambda root: ["verify", "--burn-in", "1m", "--check", "bgp.session"]),
    ("--distributed", lambda root: ["verify", "--burn-in", "1m", "--distributed"]),
    ("--report-dir", lambda root: ["verify", "--report-dir", str(root / "r")]),
    ("--report-dir", lambda root: ["verify", "--burn-in", "1m", "--report-dir",
                                   str(_touch(root / "file"))]),
    ("--report-dir", lambda root: ["audit", "--report-dir", str(_touch(root / "file"))]),
    ("--report-dir", lambda root: ["watch", "--report-dir", str(_touch(root / "file"))]),
], ids=["out-is-a-file", "out-below-a-file", "out-unwritable", "unknown-device",
        "runbook-fifo", "runbook-utf16", "runbook-alias-bomb", "runbook-symlink-loop",
        "out-device-file-is-a-directory", "labs-is-a-file", "topology-is-a-directory",
        "labs-fabric-folder-is-a-file", "bound-file-is-a-directory", "mgmt-in-tenant-pool",
        "mgmt-in-loopback-pool", "lab-up-mgmt-in-tenant-pool", "lab-up-bound-file-directory",
        "lab-up-clab-mutual-tls", "burn-in-not-a-duration", "burn-in-with-check",
        "burn-in-distributed", "report-dir-without-burn-in", "burn-in-report-dir-is-a-file",
        "audit-report-dir-is-a-file", "watch-report-dir-is-a-file"])
def test_bad_options_and_side_files_are_one_line(option: str, make: Callable[[Path], list[str]],
                                                 tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    _copy(tmp_path)
    _inventory(tmp_path)
    code, _, err = run(["--root", str(tmp_path), "--fabric", "lab", *make(tmp_path)], capsys)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and option in lines[0], err
    assert "internal error" not in err


def _inventory(root: Path) -> Path:
    """inventory/lab/ as `lab up` writes it, its key and known_hosts beside it."""
    return lab_like(root / "inventory" / "lab", Project(root=root, fabric="lab").plan)


def _touch(path: Path) -> Path:
    path.write_text("")
    return path


def _mkdir(path: Path) -> Path:
    path.mkdir(parents=True)
    return path


def _mkdir_over(path: Path) -> Callable[[], None]:
    """After generating: the file at `path` replaced by a directory."""
    def swap() -> None:
        path.unlink()
        path.mkdir()

    return swap


def _generated(root: Path, then: Callable[[], None] | None = None) -> Path:
    """labs/lab.clab.yml written as `lab generate` writes it (then `then` applied)."""
    project = Project(root=root, fabric="lab")
    doc, files = topology.generate(project.plan, topology.LabOptions(), project.address_spaces)
    path = topology.write(doc, files, project.labs_dir)
    if then is not None:
        then()
    return path


# -- the source of truth's settings: inventory/lab/source.yaml ------------------------------

SOURCE = "inventory/lab/source.yaml"
GOOD_SOURCE = ("nautobot:\n  url: http://127.0.0.1:9/\n  token_env: FFC_TOKEN\n"
               "  filters: {location: lab}\n")
SOURCE_VALUES = {
    "no-nautobot-key": "other: {}\n",
    "unknown-key": GOOD_SOURCE + "  verify: false\n",
    "url-not-http": GOOD_SOURCE.replace("http://127.0.0.1:9/", "ftp://127.0.0.1/"),
    "url-with-space": GOOD_SOURCE.replace("http://127.0.0.1:9/", "'http://a b/'"),
    "token-env-lowercase": GOOD_SOURCE.replace("FFC_TOKEN", "ffc-token"),
    "role-unknown": GOOD_SOURCE + "  roles: {spine: router}\n",
    "platform-unknown": GOOD_SOURCE + "  platforms: {vyos: vyos}\n",
    "filter-nested": GOOD_SOURCE.replace("{location: lab}", "{location: {name: lab}}"),
    "inventory-unknown": GOOD_SOURCE + "  inventory: netbox\n",
    "empty": "",
}
SOT_COMMANDS = (("sot", "check"), ("sot", "import"), ("sot", "sync"), ("audit", "--sot"))


def _source_case(make: Callable[[Path], None]) -> Callable[[Path], None]:
    def build(root: Path) -> None:
        _copy(root)
        make(_inventory(root) / "source.yaml")

    return build


def _source(text: str) -> Breaker:
    return _write_bytes(text.encode())


def _then(*steps: Breaker) -> Breaker:
    def both(path: Path) -> None:
        for step in steps:
            step(path)

    return both


SOURCE_CASES = (
    [Corpus(f"source-{kind}", _source_case(_then(_source(GOOD_SOURCE), breaker)), names=SOURCE)
     for kind, breaker in FILE_BREAKERS.items()
     if kind != "shadowed-by-yml"]  # source.yaml is intact then: a stray .yml is not read
    + [Corpus(f"source-{kind}", _source_case(_source(text)), names=SOURCE)
       for kind, text in SOURCE_VALUES.items()]
    + [Corpus("source-missing", _source_case(lambda path: None), names=SOURCE),
       # a good file whose token variable is unset, then one whose URL nobody answers
       Corpus("source-token-unset", _source_case(_source(GOOD_SOURCE.replace(
           "FFC_TOKEN", "FFC_UNSET"))), names=SOURCE),
       Corpus("source-silent-url", _source_case(_source(GOOD_SOURCE)),
              names="http://127.0.0.1:9/api/")])


@pytest.mark.parametrize("case", SOURCE_CASES, ids=lambda c: c.id)
def test_every_sot_command_refuses_a_broken_source_in_one_line_each(
        case: Corpus, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing is sent anywhere before the settings are sound; nobody listens on port 9."""
    monkeypatch.setenv("FFC_TOKEN", "0" * 40)
    monkeypatch.delenv("FFC_UNSET", raising=False)
    case.make(tmp_path)
    for command in SOT_COMMANDS:
        code, out, err = run(["--root", str(tmp_path), "--fabric", "lab", *command], capsys)
        where = " ".join(command)
        lines = err.strip().splitlines()
        assert "internal error" not in err and "Traceback" not in err, f"{where}: {err}"
        assert code == 2, f"{where}: exit {code}\n{out}{err}"
        assert lines and all(line.startswith("error: ") and case.names in line
                             for line in lines), f"{where}: {err}"
        assert "0" * 40 not in err


# `flatfab init`'s arguments: (arguments after the project folder, the option or file each
# error line names, in order); nothing is written for any of them
INIT_REFUSALS: dict[str, tuple[list[str], list[str]]] = {
    "unknown-example": (["--example", "nope"], ["--example"]),
    "fabric-a-path": (["--fabric", "../up"], ["--fabric"]),
    "fabric-upper-case": (["--fabric", "Lab"], ["--fabric"]),
    "fabric-too-long": (["--fabric", "f" * 40], ["--fabric"]),
    "unknown-platform": (["--platform", "ios"], ["--platform"]),
    "host-platform": (["--platform", "linux_host"], ["--platform"]),
    "unknown-role": (["--platform", "tor=eos"], ["--platform"]),
    "role-of-hosts": (["--platform", "host=eos"], ["--platform"]),
    "empty-platform": (["--platform", ""], ["--platform"]),
    "two-platforms-for-all": (["--platform", "eos", "--platform", "sonic"], ["--platform"]),
    "one-role-twice": (["--platform", "spine=eos", "--platform", "spine=sonic"],
                       ["--platform"]),
    "role-the-example-lacks": (["--platform", "superspine=eos"], ["--platform"]),
    "generated-fabric-split": (["--example", "rail", "--platform", "leaf=eos"],
                               ["--platform"]),
    "every-argument-wrong": (["--example", "nope", "--fabric", "../x", "--platform", "ios",
                              "--platform", "tor=eos"],
                             ["--example", "--fabric", "--platform", "--platform"]),
}


@pytest.mark.parametrize("case", sorted(INIT_REFUSALS))
def test_init_refuses_bad_arguments_in_one_line_each(case: str, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]
                                                     ) -> None:
    arguments, named = INIT_REFUSALS[case]
    target = tmp_path / "project"
    code, out, err = run(["init", str(target), *arguments], capsys)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == len(named), err
    for line, option in zip(lines, named, strict=True):
        assert line.startswith(f"error: {option}: "), line
    assert "internal error" not in err and "Traceback" not in err and not out
    assert not target.exists()


@pytest.mark.parametrize("blocker", ["file", "intents-file", "taken", "dangling"])
def test_init_refuses_a_folder_it_cannot_fill_in_one_line(blocker: str, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]
                                                          ) -> None:
    target = tmp_path / "project"
    if blocker == "file":
        target.write_text("")
    else:
        target.mkdir()
        {"intents-file": lambda: (target / "intents").write_text(""),
         "taken": lambda: (target / "flatfab.yaml").write_text("fabric: mine\n"),
         "dangling": lambda: (target / ".gitignore").symlink_to("gone")}[blocker]()
    before = sorted(target.iterdir()) if target.is_dir() else None
    code, _, err = run(["init", str(target)], capsys)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and lines[0].startswith(f"error: {target}: "), err
    assert "nothing was written" in lines[0]
    assert (sorted(target.iterdir()) if target.is_dir() else None) == before
# -- the inventory, checked before any connection: inventory/<fabric>/ -----------------------

def _yaml_edit(file: str, change: Callable[[dict[str, Any]], object]) -> Breaker:
    """A change to one of the inventory's YAML files (`file`, beside the one broken)."""
    def edit(folder: Path) -> None:
        path = folder / file
        doc = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        change(doc)
        path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    return edit


def _unplatformed(*names: str) -> Breaker:
    return _yaml_edit("hosts.yaml", lambda h: [h[n].pop("platform") for n in names])


def _defaults_options(change: Callable[[dict[str, Any]], object]) -> Breaker:
    return _yaml_edit("defaults.yaml", lambda d: change(
        d["connection_options"]["napalm"]["extras"]["optional_args"]))


def _without_spine1_key(folder: Path) -> None:
    hosts = yaml.safe_load((folder / "hosts.yaml").read_text(encoding="utf-8"))
    known = folder / "known_hosts"
    known.write_text("".join(line + "\n" for line in known.read_text().splitlines()
                             if line.split()[0] != hosts["spine1"]["hostname"]))


INVENTORY_CASES: dict[str, tuple[str, tuple[Breaker, ...]]] = {
    "platform-in-a-group": ("lab", (_unplatformed("spine1", "spine2"), _yaml_edit(
        "groups.yaml", lambda g: g["spines"].update(platform="sonic")))),
    "platform-in-the-defaults": ("lab", (_unplatformed("leaf1-h1"), _yaml_edit(
        "defaults.yaml", lambda d: d.update(platform="frr")))),
    "platform-nowhere": ("lab", (_unplatformed("leaf2"),)),
    "platform-of-the-host": ("lab", (_yaml_edit(
        "hosts.yaml", lambda h: h["leaf2"].update(platform="eos")),)),
    "no-user-name": ("lab", (_yaml_edit("defaults.yaml", lambda d: d.pop("username")),)),
    "no-way-to-log-in": ("lab", (_defaults_options(lambda o: o.pop("key_file")),)),
    "key-file-missing": ("lab", (lambda folder: (folder / "id_ed25519").unlink(),)),
    "known-hosts-missing": ("lab", (lambda folder: (folder / "known_hosts").unlink(),)),
    "known-hosts-is-a-directory": ("lab", (lambda folder: (folder / "known_hosts").unlink(),
                                           lambda folder: (folder / "known_hosts").mkdir())),
    "known-hosts-lacks-a-device": ("lab", (_without_spine1_key,)),
    "address-not-a-name": ("lab", (_yaml_edit(
        "hosts.yaml", lambda h: h["leaf1"].update(hostname="leaf1..oob")),)),
    "address-not-an-ip": ("lab", (_yaml_edit(
        "hosts.yaml", lambda h: h["leaf1"].update(hostname="192.0.2.256")),)),
    "port-out-of-range": ("lab", (_defaults_options(lambda o: o.update(port=70000)),)),
    "port-not-a-number": ("lab", (_yaml_edit(
        "hosts.yaml", lambda h: h["leaf1"].update(port="ssh")),)),
    "password-on-a-host": ("lab", (_yaml_edit(
        "hosts.yaml", lambda h: h["leaf1"].update(password="hunter2")),)),
    "password-in-a-group-s-options": ("lab", (_yaml_edit("groups.yaml", lambda g: g[
        "leafs"].update(connection_options={"napalm": {"password": "hunter2"}})),)),
    "secret-in-driver-options": ("lab", (_defaults_options(
        lambda o: o.update(passphrase="hunter2")),)),
    "unknown-group": ("lab", (_yaml_edit(
        "hosts.yaml", lambda h: h["leaf1"].update(groups=["leafs", "rack9"])),)),
    "groups-not-a-list": ("lab", (_yaml_edit(
        "hosts.yaml", lambda h: h["leaf1"].update(groups="leafs")),)),
    "host-not-a-mapping": ("lab", (_yaml_edit(
        "hosts.yaml", lambda h: h.update({"leaf1": "192.0.2.1"})),)),
    # every platform's plugin spelt as lab up spells it; EOS (eAPI) needs a password
    "eapi-without-a-password": ("mixed", ()),
    "netmiko-without-strict-host-keys": ("mixed", (_yaml_edit("hosts.yaml", lambda h: h[
        "leaf1"]["connection_options"]["netmiko"]["extras"].update(ssh_strict=False)),)),
}
CONNECTING = (("rollout", "--dry-run"), ("verify",), ("audit",),
              ("watch", "--count", "1"))


@pytest.mark.parametrize("case", sorted(INVENTORY_CASES))
def test_every_connecting_command_refuses_a_broken_inventory_in_one_line_each(
        case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Before any connection or journal: exit 2, one line per problem naming the
    inventory's file and key (or its known_hosts file), the secret never repeated."""
    fabric, breakers = INVENTORY_CASES[case]
    for name in [n for n in os.environ if n.startswith("FLATFAB_PASSWORD")]:
        monkeypatch.delenv(name)
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))  # no key or known_hosts of the operator's
    shutil.copytree(ROOT / "intents" / fabric, tmp_path / "intents" / fabric)
    folder = lab_like(tmp_path / "inventory" / fabric, Project(root=tmp_path,
                                                               fabric=fabric).plan)
    for breaker in breakers:
        breaker(folder)
    for command in CONNECTING:
        code, out, err = run(["--root", str(tmp_path), "--fabric", fabric, "--state-dir",
                              str(tmp_path / "state"), *command], capsys)
        where = " ".join(command)
        lines = err.strip().splitlines()
        assert "internal error" not in err and "Traceback" not in err, f"{where}: {err}"
        assert code == 2, f"{where}: exit {code}\n{out}{err}"
        assert lines and all(line.startswith(f"error: {folder}") for line in lines), \
            f"{where}: {err}"
        assert "hunter2" not in err
        assert not (tmp_path / "state").exists(), where  # no journal, no lock
