"""A target's credentials from an env_file the inventory names (as the embedded lab writes
one): used where the environment has none, refused when others may read it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from flatfab.errors import InputError
from flatfab.telemetry.targets import gnmi_targets
from flatfab.workflows.devices import inventory as files
from tests.support.telemetry_streams import lab_plan
from tests.telemetry.gnmi_support import gnmi_inventory

USER, PASSWORD = "FLATFAB_TEST_GNMI_USER", "FLATFAB_TEST_GNMI_PASSWORD"


def _inventory(where: Path, env_file: Path) -> Path:
    return gnmi_inventory(where, {"ca_file": "ca.pem", "env_file": str(env_file),
                                  "username_env": USER, "password_env": PASSWORD})


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    # empty counts as unset; monkeypatch puts the variables back as they were afterwards
    monkeypatch.setenv(USER, "")
    monkeypatch.setenv(PASSWORD, "")


def _env_file(where: Path, text: str, mode: int = 0o600) -> Path:
    path = where / "credentials.env"
    path.write_text(text)
    path.chmod(mode)
    return path


def test_the_env_file_supplies_the_variables_the_environment_lacks(tmp_path: Path) -> None:
    env = _env_file(tmp_path, f"{USER}=watcher\n{PASSWORD}=s3cret\nOTHER=ignored\n")
    targets = gnmi_targets(files.build(_inventory(tmp_path, env), lab_plan()), tmp_path)
    assert targets["leaf1"].env_file == env
    assert os.environ[USER] == "watcher" and os.environ[PASSWORD] == "s3cret"
    assert "OTHER" not in os.environ
    assert "s3cret" not in repr(targets["leaf1"])  # only the variable names are held


def test_what_the_operator_exported_wins(tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(USER, "operator")
    env = _env_file(tmp_path, f"{USER}=watcher\n{PASSWORD}=s3cret\n")
    gnmi_targets(files.build(_inventory(tmp_path, env), lab_plan()), tmp_path)
    assert os.environ[USER] == "operator" and os.environ[PASSWORD] == "s3cret"


@pytest.mark.parametrize(("text", "mode", "reason"), [
    ("X=1\n", 0o600, f"does not set {PASSWORD}, {USER}"),
    ("", 0o644, "others may read it"),
])
def test_a_bad_env_file_is_one_line_naming_it(tmp_path: Path, text: str, mode: int,
                                              reason: str) -> None:
    env = _env_file(tmp_path, text, mode)
    with pytest.raises(InputError) as caught:
        gnmi_targets(files.build(_inventory(tmp_path, env), lab_plan()), tmp_path)
    assert str(caught.value).count("\n") == 0
    assert str(env) in str(caught.value) and reason in str(caught.value)


def test_a_missing_env_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="cannot read the gNMI credentials of leaf1"):
        gnmi_targets(files.build(_inventory(tmp_path, tmp_path / "nope.env"), lab_plan()),
                     tmp_path)
