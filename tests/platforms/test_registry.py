"""Platforms are found through the entry-point group `flatfab.platforms`: flatfab's own in a
fixed order, a plugin's after them, and a plugin that cannot be used is one line naming its
distribution and entry point, never a traceback.

Plugins here are real distributions: a `*.dist-info` folder (METADATA, entry_points.txt) on
the path, as pip installs one, read by importlib.metadata as any other."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
import yaml

from flatfab.platforms import registry
from flatfab.platforms.registry import PLATFORMS, PlatformPluginError, Platforms
from tests.support.flatfab import flatfab
from tests.support.paths import ROOT


def _distribution(site: Path, name: str, points: dict[str, str],
                  modules: dict[str, str] | None = None) -> None:
    """An installed distribution `name` 0.1 declaring `points` in the group, with `modules`
    (module name -> source) beside it."""
    info = site / f"{name.replace('-', '_')}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n",
                                   encoding="utf-8")
    lines = [f"[{registry.GROUP}]", *(f"{k} = {v}" for k, v in points.items())]
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    for module, source in (modules or {}).items():
        (site / f"{module}.py").write_text(source, encoding="utf-8")


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "site"
    folder.mkdir()
    monkeypatch.syspath_prepend(str(folder))
    return folder


def _platform_module(site: Path, module: str, name: str) -> None:
    """A module whose PLATFORM is a Platform built from a data file naming it `name`."""
    facts = yaml.safe_load(PLATFORMS["eos"].facts_file.read_text(encoding="utf-8"))
    facts["name"] = name
    (site / f"{module}.yaml").write_text(yaml.safe_dump(facts), encoding="utf-8")
    (site / f"{module}.py").write_text(
        "from pathlib import Path\n"
        "from flatfab.platforms.eos import EosPlatform\n"
        f"PLATFORM = EosPlatform(Path(__file__).with_name('{module}.yaml'))\n",
        encoding="utf-8")


def test_flatfab_s_own_platforms_come_first_in_their_order_then_plugins_by_name(
        site: Path) -> None:
    _platform_module(site, "zeta_platform", "zeta")
    _platform_module(site, "alpha_platform", "alpha")
    _distribution(site, "flatfab-zeta", {"zeta": "zeta_platform:PLATFORM"})
    _distribution(site, "flatfab-alpha", {"alpha": "alpha_platform:PLATFORM"})
    found = Platforms()
    assert list(found) == [*registry.BUILTIN, "alpha", "zeta"]
    assert found["zeta"].name == "zeta" and "alpha" in found
    assert list(PLATFORMS)[:len(registry.BUILTIN)] == list(registry.BUILTIN)


@pytest.mark.parametrize(("points", "modules", "why"), [
    ({"broken": "acme_missing:PLATFORM"}, {},
     "cannot be loaded: ModuleNotFoundError: No module named 'acme_missing'"),
    ({"broken": "acme_raises:PLATFORM"}, {"acme_raises": "raise RuntimeError('no ASIC SDK')\n"},
     "cannot be loaded: RuntimeError: no ASIC SDK"),
    ({"broken": "acme_other:PLATFORM"}, {"acme_other": "PLATFORM = 42\n"},
     "is a int, not a flatfab Platform"),
])
def test_a_broken_plugin_is_one_line_naming_its_distribution_and_entry_point(
        site: Path, points: dict[str, str], modules: dict[str, str], why: str) -> None:
    _distribution(site, "flatfab-broken", points, modules)
    found = Platforms()
    assert "broken" in found  # registered: only loading it fails
    with pytest.raises(PlatformPluginError) as caught:
        found["broken"]
    text = str(caught.value)
    assert "\n" not in text
    assert text.startswith(f"platform plugin 'broken' (entry point broken = "
                           f"{points['broken']} of flatfab-broken 0.1) ")
    assert text.endswith(why), text


def test_a_plugin_whose_data_file_names_another_platform_is_refused(site: Path) -> None:
    _platform_module(site, "acme_named", "acme2")
    _distribution(site, "flatfab-acme", {"acme": "acme_named:PLATFORM"})
    with pytest.raises(PlatformPluginError, match=r"^platform plugin 'acme' \(entry point acme "
                       r"= acme_named:PLATFORM of flatfab-acme 0.1\) names itself 'acme2' in "
                       r"its data file: the two must agree$"):
        Platforms()["acme"]


def test_two_distributions_registering_one_name_are_refused(site: Path) -> None:
    _distribution(site, "flatfab-frr-fork", {"frr": "frr_fork:PLATFORM"})
    with pytest.raises(PlatformPluginError) as caught:
        list(Platforms())
    text = str(caught.value)
    assert "\n" not in text
    assert text.startswith("platform 'frr' is registered twice (entry point frr = ")
    assert "frr = flatfab.platforms.frr:PLATFORM of flatfab " in text
    assert "frr = frr_fork:PLATFORM of flatfab-frr-fork 0.1" in text
    assert text.endswith("uninstall one of them")


def test_an_install_without_flatfab_s_own_entry_points_says_reinstall() -> None:
    with pytest.raises(PlatformPluginError, match=r"flatfab's own platforms are not "
                       r"registered \(flatfab.platforms entry points: frr, linux_host, eos, "
                       r"sonic, nxos, srlinux, junos, nvue missing\): reinstall flatfab"):
        list(Platforms(plugins=list))


def test_a_test_s_platform_is_known_beside_the_registered_ones(
        monkeypatch: pytest.MonkeyPatch) -> None:
    eos = PLATFORMS["eos"]
    monkeypatch.setitem(PLATFORMS, "testos", eos)
    assert "testos" in PLATFORMS and list(PLATFORMS)[-1] == "testos"
    monkeypatch.undo()
    assert "testos" not in PLATFORMS and PLATFORMS["eos"] is eos


def test_the_command_line_names_a_broken_plugin_in_one_line(site: Path, tmp_path: Path) -> None:
    """A fabric that runs a broken plugin's platform is refused in one line naming it; one
    that does not is planned as ever (a run imports only its fabric's platforms)."""
    _distribution(site, "flatfab-broken", {"broken": "acme_missing:PLATFORM"})
    env = {"PYTHONPATH": os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")]))}
    assert flatfab("--fabric", "lab", "plan", env=env).code == 0
    project = tmp_path / "project"
    shutil.copytree(ROOT / "intents" / "lab", project / "intents" / "lab")
    fabric = project / "intents" / "lab" / "fabric.yaml"
    fabric.write_text(fabric.read_text().replace("platform: frr", "platform: broken", 1))
    ran = flatfab("--root", str(project), "--fabric", "lab", "plan", env=env)
    assert ran.code == 2, ran.stdout + ran.stderr
    assert "Traceback" not in ran.stderr
    assert ran.stderr.strip() == (
        "error: platform plugin 'broken' (entry point broken = acme_missing:PLATFORM of "
        "flatfab-broken 0.1) cannot be loaded: ModuleNotFoundError: No module named "
        "'acme_missing'")
