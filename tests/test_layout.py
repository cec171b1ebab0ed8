"""The test tree is laid out like the code: tests/<layer>/ and tests/platforms/<name>/ hold
test modules, tests/doubles/ every double, tests/support/ the helpers and data they share.

What keeps it so: a test module is imported by no other module (what two need is in
tests/support/ or tests/doubles/), no module imports a conftest (conftests hold fixtures
only), a double lives under tests/doubles/, and every directory holding test modules is a
package, up to tests/ (pytest then imports each as tests.<dir>...<module>, so two modules of
one name in two directories never clash).

Imports are read from the source (`import` and `from ... import` statements, relative ones
resolved); a module imported some other way (importlib) is not seen.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from pathlib import Path

from tests.support.paths import ROOT

TESTS = ROOT / "tests"
DOUBLES = TESTS / "doubles"
# projects of their own kept in the tree for a test that builds and installs them (their
# own pyproject, package, double and tests; tests/packaging/test_platform_package.py): laid
# out as such a project is, not as flatfab's tests
OWN_PROJECTS = (TESTS / "packaging" / "flatfab_acme",)


def _modules() -> list[Path]:
    return sorted(p for p in TESTS.rglob("*.py") if "__pycache__" not in p.parts
                  and not any(p.is_relative_to(project) for project in OWN_PROJECTS))


def _is_test_module(path: Path) -> bool:
    return path.name.startswith("test_") or path.name.endswith("_test.py")


def _dotted(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported(path: Path) -> Iterator[tuple[int, str]]:
    """(line, dotted name) of every module or module attribute `path` imports."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    package = _dotted(path) if path.name == "__init__.py" else _dotted(path).rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[:len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, *([base] if base else [])])
            yield node.lineno, base
            for alias in node.names:
                yield node.lineno, f"{base}.{alias.name}"


def _file_of(dotted: str) -> Path | None:
    """The module file under tests/ a dotted name is, if it is one."""
    if dotted != "tests" and not dotted.startswith("tests."):
        return None
    path = ROOT.joinpath(*dotted.split(".")).with_suffix(".py")
    return path if path.is_file() else None


def _imports_of(predicate: Callable[[Path], bool]) -> list[str]:
    found = []
    for path in _modules():
        for line, dotted in _imported(path):
            target = _file_of(dotted)
            if target is not None and predicate(target):
                found.append(f"{path.relative_to(ROOT)}:{line} imports {dotted}")
    return found


def test_no_module_imports_a_test_module() -> None:
    found = _imports_of(_is_test_module)
    assert found == [], "move what is shared to tests/support/ or tests/doubles/:\n" + \
        "\n".join(found)


def test_no_module_imports_a_conftest() -> None:
    found = _imports_of(lambda target: target.name == "conftest.py")
    assert found == [], "conftests hold fixtures; helpers go to tests/support/:\n" + \
        "\n".join(found)


def _is_double(name: str) -> bool:
    return "double" in name.lower() or name.lower().startswith("fake")


def test_doubles_live_in_tests_doubles() -> None:
    found = []
    for path in _modules():
        if path.is_relative_to(DOUBLES):
            continue
        where = path.relative_to(ROOT)
        if _is_double(path.stem):
            found.append(f"{where}: a module named like a double")
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        found += [f"{where}:{node.lineno}: class {node.name}" for node in ast.walk(tree)
                  if isinstance(node, ast.ClassDef) and _is_double(node.name)]
    assert found == [], "doubles belong in tests/doubles/:\n" + "\n".join(found)


def test_every_directory_of_test_modules_is_a_package() -> None:
    missing = set()
    for path in _modules():
        if not _is_test_module(path):
            continue
        folder = path.parent
        while folder.is_relative_to(TESTS):
            if not (folder / "__init__.py").is_file():
                missing.add(str(folder.relative_to(ROOT)))
            folder = folder.parent
    assert sorted(missing) == [], "add an empty __init__.py to each of these"


def test_the_guards_see_what_they_guard() -> None:
    """The guards are not vacuous: the import reader sees names imported from a module, and
    tells a module file from a name in it."""
    module = TESTS / "platforms" / "frr" / "test_frr_driver.py"
    assert "tests.doubles.frr.FakeShell" in {dotted for _, dotted in _imported(module)}
    assert _file_of("tests.doubles.frr.FakeShell") is None
    assert _file_of("tests.doubles.frr") == DOUBLES / "frr.py"
    assert _file_of("tests.conftest") == TESTS / "conftest.py"
    assert _is_double("EosDouble") and _is_double("FakeShell") and not _is_double("Refusal")
