"""flatfab.yaml: found upwards from the working folder, and every way it can be wrong one
line naming the file, the key and the line."""

from __future__ import annotations

from pathlib import Path

import pytest

from flatfab.errors import InputError
from flatfab.workflows.project import projectfile


def _problem(root: Path, text: str) -> str:
    (root / "flatfab.yaml").write_text(text)
    with pytest.raises(InputError) as caught:
        projectfile.load(root)
    assert len(caught.value.problems) == 1
    return str(caught.value.problems[0])


@pytest.mark.parametrize(("text", "expected"), [
    ("fabric: lab\nfabrik: lab\n", "flatfab.yaml:2: fabrik: unknown key 'fabrik'"),
    ("fabric: lab\nconnect_timeout: soon\n",
     "flatfab.yaml:2: connect_timeout: 'soon' is not a number"),
    ("command_timeout: -5\n", "flatfab.yaml:1: command_timeout: Input should be greater than 0"),
    ("connect_timeout: 9999\n",
     "flatfab.yaml:1: connect_timeout: Input should be less than or equal to 600"),
    ("# the fabric\n\nfabric: [lab]\n", "flatfab.yaml:3: fabric: Input should be a valid string"),
    ("fabric: ../../etc\n", "flatfab.yaml:1: fabric: '../../etc' is not a fabric name"),
    ("inventory: 3\n", "flatfab.yaml:1: inventory: Input should be a valid string"),
    ("- fabric: lab\n", "flatfab.yaml:1: top level must be a mapping of settings"),
    ("just a word\n", "flatfab.yaml: top level must be a mapping of settings"),
    ("fabric: lab\n  state_dir: x\n", "flatfab.yaml:2: malformed YAML"),
    ("fabric: lab\nfabric: rail\n", "flatfab.yaml:2: malformed YAML"),
])
def test_a_bad_project_file_is_one_line_naming_file_key_and_line(
        tmp_path: Path, text: str, expected: str) -> None:
    assert _problem(tmp_path, text).startswith(f"{tmp_path}/{expected}")


def test_the_project_file_is_found_upwards_and_read(tmp_path: Path) -> None:
    (tmp_path / "flatfab.yaml").write_text("fabric: site-b\nstate_dir: var/state\n"
                                           "connect_timeout: 5\n")
    inner = tmp_path / "a" / "b"
    inner.mkdir(parents=True)
    assert projectfile.find_root(inner) == tmp_path
    settings = projectfile.load(tmp_path)
    assert (settings.fabric, settings.state_dir, settings.connect_timeout) == (
        "site-b", "var/state", 5)
    assert projectfile.load(inner) == projectfile.ProjectFile()  # none there: the defaults
    (tmp_path / "flatfab.yaml").write_text("# nothing set yet\n")
    assert projectfile.load(tmp_path) == projectfile.ProjectFile()


def test_another_spelling_or_a_dangling_link_is_refused_not_passed_over(tmp_path: Path
                                                                        ) -> None:
    (tmp_path / "flatfab.yml").write_text("fabric: lab\n")
    assert projectfile.find_root(tmp_path) == tmp_path
    with pytest.raises(InputError, match=r"flatfab\.yml: flatfab reads flatfab\.yaml; rename"):
        projectfile.load(tmp_path)
    (tmp_path / "flatfab.yaml").write_text("fabric: lab\n")
    with pytest.raises(InputError, match=r"flatfab\.yml: shadows flatfab\.yaml; keep one"):
        projectfile.load(tmp_path)
    (tmp_path / "flatfab.yml").unlink()
    (tmp_path / "flatfab.yaml").unlink()
    (tmp_path / "flatfab.yaml").symlink_to("gone.yaml")
    with pytest.raises(InputError, match="dangling symbolic link"):
        projectfile.load(tmp_path)
