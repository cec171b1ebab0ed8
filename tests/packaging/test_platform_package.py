"""A platform as a package of its own, with no change to flatfab: `flatfab-acme`
(tests/packaging/flatfab_acme/: its data file, a render through its own templates, a
collect, a double of the switch with recorded outputs, and its own conformance tests) is
built into a wheel and installed beside flatfab's wheel into a fresh venv of a user who is
not root, offline from the wheelhouse (flatfab's `testing` extra brings pytest).

There, outside the checkout: `flatfab init` with every switch on acme, then plan, check and
render with acme's configs written; and acme's own test module, the importable conformance
suite on acme, passes: its collect reads the recorded switch back as planned.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.support import installed

ACME = Path(__file__).with_name("flatfab_acme")


@pytest.fixture(scope="module")
def acme(dist: tuple[Path, Path],
         tmp_path_factory: pytest.TempPathFactory) -> Iterator[installed.Installed]:
    """flatfab's wheel with the testing extra, then acme's wheel, in the user's venv."""
    why = installed.not_possible()
    if why is not None:
        pytest.skip(why)
    source = tmp_path_factory.mktemp("acme-source") / "flatfab-acme"
    shutil.copytree(ACME, source, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info",
                                                                "build"))
    wheel = installed.build_wheel(source, tmp_path_factory.mktemp("acme-dist"))
    made = installed.install(dist[1], extras=("testing",))
    made.pip_install(wheel)
    yield made
    installed.remove(made)


def _no_traceback(*texts: str) -> None:
    for text in texts:
        assert "Traceback" not in text and "internal error" not in text, text


def test_the_acme_wheel_is_a_package_of_its_own(acme: installed.Installed) -> None:
    """Its data file and templates are in its wheel, outside flatfab's package, and flatfab
    finds it through its entry point."""
    wheel = next(acme.home.glob("flatfab_acme-*.whl"))
    names = installed.wheel_names(wheel)
    assert {"acme_platform/platform.yaml", "acme_platform/templates/acme.conf.j2",
            "acme_platform/recorded/leaf1/bgp.json"} <= set(names)
    assert not [n for n in names if n.startswith("flatfab/")]
    found = acme.command("python", "-c", "from flatfab.platforms.registry import PLATFORMS; "
                         "print(' '.join(PLATFORMS)); print(PLATFORMS['acme'].facts_file)",
                         cwd=acme.folder("empty"))
    assert found.code == 0, found.stderr
    listed, facts_file = found.stdout.splitlines()
    assert listed.split() == ["frr", "linux_host", "eos", "sonic", "nxos", "srlinux", "junos",
                              "nvue", "acme"]
    assert "/site-packages/acme_platform/platform.yaml" in facts_file


def test_flatfab_plans_checks_and_renders_a_fabric_of_acme_switches(
        acme: installed.Installed) -> None:
    home = acme.folder("acme-walk")
    made = acme.run("init", "dc1", "--fabric", "dc1", "--platform", "acme", cwd=home)
    assert made.code == 0, made.stderr
    project = home / "dc1"
    assert "asics.acme added" in (project / "README.md").read_text(encoding="utf-8")
    planned = acme.run("plan", "--format", "json", cwd=project)
    assert planned.code == 0, planned.stderr
    platforms = {d["name"]: d["platform"] for d in planned.json()["devices"].values()}
    switches = sorted(n for n, p in platforms.items() if p == "acme")
    assert switches == ["leaf1", "leaf2", "leaf3", "leaf4", "spine1", "spine2"]
    # init gave acme the `generic` family, as for any platform no example names: its buffer
    # is too small for the example's pools, which check names, as for any platform
    first = acme.run("check", cwd=project)
    _no_traceback(first.stdout, first.stderr)
    assert first.code == 1 and "buffer.budget" in first.stdout
    # the operator sets the switches' ASIC, as the README says; then the checks pass
    qos_file = project / "intents" / "dc1" / "qos.yaml"
    qos = yaml.safe_load(qos_file.read_text(encoding="utf-8"))
    qos["asics"]["acme"] = {"family": "spectrum-4"}
    qos_file.write_text(yaml.safe_dump(qos), encoding="utf-8")
    for args in (("plan",), ("check",), ("render", "--out", str(project / "configs"))):
        done = acme.run(*args, cwd=project)
        _no_traceback(done.stdout, done.stderr)
        assert done.code == 0, (args, done.stdout[-2000:], done.stderr[-2000:])
    configs = {p.stem: p.read_text(encoding="utf-8") for p in (project / "configs").glob("*")}
    assert len(configs) == 14
    leaf1 = configs["leaf1"]
    assert leaf1.startswith("!! system\nhostname leaf1\nrouter-id ")
    assert re.search(r"^interface ge51\n  mtu 9216\n  no shutdown\n", leaf1, re.M)
    assert "\n!! bgp\nbgp vrf blue as " in leaf1
    assert all(configs[name].startswith("!! system\n") for name in switches)


def test_acme_s_own_conformance_run_passes(acme: installed.Installed) -> None:
    """The package's test module, run by its pytest against the installed packages (not
    the source folder): flatfab's suite on acme, its collect over the recorded switch
    included."""
    tests = acme.folder("acme-tests")
    shutil.copy2(ACME / "tests" / "test_conformance.py", tests / "test_conformance.py")
    shutil.chown(tests / "test_conformance.py", installed.USER)
    ran = acme.command("python", "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rA",
                       "test_conformance.py", cwd=tests)
    assert ran.code == 0, ran.stdout[-4000:] + ran.stderr[-2000:]
    assert re.search(r"^PASSED test_conformance\.py::TestAcme::"
                     r"test_collect_reads_recorded_outputs_back_as_planned\[acme-lab-leaf1\]$",
                     ran.stdout, re.M), ran.stdout
    counts = re.search(r"(\d+) passed", ran.stdout)
    assert counts is not None and int(counts.group(1)) >= 15, ran.stdout
    assert "failed" not in ran.stdout, ran.stdout
