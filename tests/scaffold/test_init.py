"""`flatfab init`: every example on every switch platform (and mixed roles) is written, then
planned, checked and rendered by the CLI clean; its inventory validates and plain Nornir
loads it; its runbooks load against the fabric; nothing is ever overwritten."""

from __future__ import annotations

import ipaddress
import os
import shutil
from pathlib import Path

import pytest
from nornir import InitNornir
from nornir.core import Nornir

from flatfab import bundled
from flatfab.checks import CATALOG
from flatfab.errors import InputError
from flatfab.intent.loader import load_intent
from flatfab.model.state import FabricState
from flatfab.plan.planner import plan as make_plan
from flatfab.platforms.registry import PLATFORMS
from flatfab.runbook.loader import check_against_fabric, load_runbook
from flatfab.scaffold import files as scaffold_files
from flatfab.scaffold.inventory import PLACEHOLDER_NETS, password_variable
from flatfab.scaffold.inventory import files as inventory_files
from flatfab.workflows.devices import inventory
from flatfab.workflows.devices.credentials import Credentials
from flatfab.workflows.project.layout import Project
from flatfab.yamlio import load_yaml
from tests.support.inprocess import run
from tests.support.inventory import key_file, known_hosts
from tests.support.paths import ROOT

EXAMPLES = bundled.examples()
# --platform values; "roles": a different platform per role (a generated fabric, whose
# switches share one platform, gets one per role that agrees)
CHOICES = {name: [name] for name in ("frr", "eos", "sonic", "nvue", "junos", "nxos",
                                     "srlinux")}
CHOICES["roles"] = ["spine=eos", "leaf=sonic"]
GENERATED = {"rail"}
ROLES_GENERATED = ["superspine=nvue", "spine=nvue", "leaf=nvue"]


def _platform_args(example: str, choice: str) -> list[str]:
    values = ROLES_GENERATED if choice == "roles" and example in GENERATED else CHOICES[choice]
    return [arg for value in values for arg in ("--platform", value)]


def _expected(example: str, choice: str, role: str) -> str:
    if role == "host":
        return "linux_host"
    if choice != "roles":
        return choice
    if example in GENERATED:
        return "nvue"
    return {"spine": "eos", "leaf": "sonic"}[role]


def _nornir(folder: Path) -> Nornir:
    return InitNornir(inventory={"plugin": "SimpleInventory", "options": {
        "host_file": str(folder / "hosts.yaml"), "group_file": str(folder / "groups.yaml"),
        "defaults_file": str(folder / "defaults.yaml")}}, logging={"enabled": False})


def _keys(node: object) -> set[str]:
    if isinstance(node, dict):
        return {str(k) for k in node} | {k for v in node.values() for k in _keys(v)}
    if isinstance(node, list):
        return {k for v in node for k in _keys(v)}
    return set()


def _operator_home(home: Path, nornir: Nornir) -> dict[str, str]:
    """An operator's environment once the inventory is filled in: a key of their own and
    every device's host key in ~/.ssh, FLATFAB_PASSWORD exported (HTTPS platforms)."""
    ssh = home / ".ssh"
    key_file(ssh)
    known_hosts(ssh / "known_hosts", {str(h.hostname) for h in nornir.inventory.hosts.values()})
    return {"HOME": str(home), "FLATFAB_PASSWORD": "typed-by-the-operator"}


def _check_inventory(project: Path, fabric: str, plan: FabricState) -> Nornir:
    folder = project / "inventory" / fabric
    spaces = Project(root=project, fabric=fabric).address_spaces
    # as a command that reads the inventory validates it; one that logs in checks the logins
    # too, which only the operator can fill (placeholders, no key or password yet)
    inventory.validate(folder, plan, spaces, connects=False)
    with pytest.raises(InputError):
        inventory.validate(folder, plan, spaces, credentials=Credentials(environ={
            "HOME": str(project.parent / "empty-home")}))
    environ = _operator_home(project.parent / "home", _nornir(folder))
    inventory.validate(folder, plan, spaces, credentials=Credentials(environ=environ))
    nornir = _nornir(folder)
    assert set(nornir.inventory.hosts) == set(plan.devices)
    placeholders = [ipaddress.ip_network(n) for n in PLACEHOLDER_NETS]
    for name, host in nornir.inventory.hosts.items():
        device = plan.devices[name]
        assert host.platform == device.platform, name  # as Nornir resolves it
        assert any(ipaddress.ip_address(host.hostname) in n for n in placeholders)
        assert host.username
        plugin = PLATFORMS[device.platform].facts.connection.plugin
        params = host.get_connection_parameters(plugin)  # what a connection is opened with
        assert params.password is None
    for name in inventory.FILES:
        assert "password" not in _keys(load_yaml(folder / name)), name
        assert all(len(line) <= 100 for line in (folder / name).read_text().splitlines())
    return nornir


def _check_runbooks(project: Path, plan: FabricState, nornir: Nornir) -> list[str]:
    groups = {n: [g.name for g in h.groups] for n, h in nornir.inventory.hosts.items()}
    names = sorted(p.name for p in (project / "runbooks").glob("*.yaml"))
    for name in names:
        rollout, doc = load_runbook(project / "runbooks" / name)
        scheduled = check_against_fabric(rollout, doc, name, plan, groups, CATALOG)
        assert not scheduled.unselected, (name, scheduled.unselected)
    return names


@pytest.mark.parametrize("choice", sorted(CHOICES))
@pytest.mark.parametrize("example", EXAMPLES)
def test_an_initialised_project_plans_checks_and_renders_clean(
        example: str, choice: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / "fabric-project"
    code, out, err = run(["init", str(project), "--example", example,
                          *_platform_args(example, choice)], capsys)
    assert code == 0 and not err, err
    assert f"wrote fabric {example}" in out
    monkeypatch.chdir(project)  # found from the project file, as an operator runs it
    code, out, err = run(["plan", "--format", "json"], capsys)
    assert code == 0 and not err, err
    plan = FabricState.model_validate_json(out)
    assert plan.fabric == example
    for device in plan.devices.values():
        assert device.platform == _expected(example, choice, device.role.value), device.name
    code, out, err = run(["check", "--format", "json"], capsys)
    assert code == 0 and not err, err
    assert '"findings": []' in out
    code, out, err = run(["render", "--out", str(tmp_path / "configs")], capsys)
    assert code == 0 and err.startswith(f"wrote {len(plan.devices)} configs"), err
    assert len(list((tmp_path / "configs").iterdir())) == len(plan.devices)
    nornir = _check_inventory(project, example, plan)
    plans = _check_runbooks(project, plan, nornir)
    expected_plans = {"rail-bring-up.yaml"} if example in GENERATED else {
        "first-bring-up.yaml", "lossless-change.yaml"}
    assert expected_plans <= set(plans)
    assert f"runbooks/{'rail' if example in GENERATED else 'first'}-bring-up.yaml" in (
        project / "README.md").read_text()


def test_the_written_project_holds_what_the_brief_lists(tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]
                                                       ) -> None:
    project = tmp_path / "p"
    code, _, err = run(["init", str(project), "--fabric", "pod-a", "--platform", "spine=eos",
                        "--platform", "leaf=sonic"], capsys)
    assert code == 0, err
    written = sorted(str(p.relative_to(project)) for p in project.rglob("*") if p.is_file())
    assert written == [".gitignore", "README.md", "flatfab.yaml",
                       "intents/pod-a/fabric.yaml", "intents/pod-a/hosts.yaml",
                       "intents/pod-a/qos.yaml", "intents/pod-a/tenants.yaml",
                       "inventory/pod-a/defaults.yaml", "inventory/pod-a/groups.yaml",
                       "inventory/pod-a/hosts.yaml", "runbooks/add-leaf.yaml",
                       "runbooks/first-bring-up.yaml", "runbooks/fleet-bring-up.yaml",
                       "runbooks/lossless-change.yaml", "runbooks/to-lossless.yaml",
                       "runbooks/to-lossy.yaml"]
    project_file = load_yaml(project / "flatfab.yaml")
    assert dict(project_file) == {"fabric": "pod-a"}  # the other keys are comments
    text = (project / "flatfab.yaml").read_text()
    for key in ("inventory", "state_dir", "connect_timeout", "command_timeout"):
        assert f"# {key}: " in text
    fabric = (project / "intents" / "pod-a" / "fabric.yaml").read_text()
    assert "name: pod-a" in fabric
    assert "# The demo fabric: 2 spines, 4 leaves" in fabric  # the example's comments kept
    assert "spine=eos" in " ".join(fabric.splitlines()[:2])  # the change, said at the top
    # the example's untouched files are byte for byte the example's
    example = bundled.folder("examples") / "lab"
    for name in ("hosts.yaml", "tenants.yaml"):
        assert (project / "intents" / "pod-a" / name).read_bytes() == (
            example / name).read_bytes()
    qos = (project / "intents" / "pod-a" / "qos.yaml").read_text()
    assert "buffers removed: eos sizes its own" in qos and "\nbuffers:" not in qos
    assert "# RoCE data: AF31" in qos
    groups = (project / "inventory" / "pod-a" / "groups.yaml").read_text()
    for needed in ("FLATFAB_PASSWORD_SPINES", "FLATFAB_PASSWORD_LEAFS", "--ask-pass",
                   "ssh_strict: true", "enforce_verification: true", "# gnmi:",
                   "key_file", "known_hosts", "conn_timeout", "username_env"):
        assert needed in groups, needed
    defaults = (project / "inventory" / "pod-a" / "defaults.yaml").read_text()
    assert "ssh-keyscan -H" in defaults and "trusts whatever answers" in defaults
    ignored = (project / ".gitignore").read_text().splitlines()
    assert "/.flatfab/" in ignored and "/reports/" in ignored
    readme = (project / "README.md").read_text()
    for command in ("flatfab plan", "flatfab check", "flatfab render", "lab up",
                    "flatfab rollout --dry-run", "flatfab verify", "flatfab audit"):
        assert command in readme, command


def test_a_role_that_mixes_platforms_gets_a_group_per_platform(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    project = tmp_path / "p"
    code, _, err = run(["init", str(project), "--example", "mixed"], capsys)
    assert code == 0, err
    nornir = _nornir(project / "inventory" / "mixed")
    leaf3, leaf1 = nornir.inventory.hosts["leaf3"], nornir.inventory.hosts["leaf1"]
    assert [g.name for g in leaf3.groups] == ["leafs-frr", "leafs"]
    assert leaf3.platform == "frr" and leaf1.platform == "sonic"
    assert leaf3.username == "admin"  # from the role's group: one credential set
    extras = leaf1.get_connection_parameters("netmiko").extras or {}
    assert extras["ssh_strict"] is True and extras["system_host_keys"] is True
    assert password_variable("leafs") == "FLATFAB_PASSWORD_LEAFS"
    assert password_variable("leaf-eos.1") == "FLATFAB_PASSWORD_LEAF_EOS_1"


def test_the_platforms_named_per_role_keep_the_others(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]
                                                      ) -> None:
    """multivendor with spine=srlinux: leaves keep their own platforms; the watchdog of the
    SR Linux spines (which cannot drop) becomes an override of theirs."""
    project = tmp_path / "p"
    code, _, err = run(["init", str(project), "--example", "multivendor", "--platform",
                        "spine=srlinux"], capsys)
    assert code == 0, err
    plan = Project(root=project, fabric="multivendor").plan
    assert {n: d.platform for n, d in plan.devices.items() if d.role.value == "leaf"} == {
        "leaf1": "frr", "leaf2": "eos", "leaf3": "sonic", "leaf4": "srlinux",
        "leaf5": "nvue"}
    qos = load_yaml(project / "intents" / "multivendor" / "qos.yaml")
    actions = {tuple(o["devices"]): o["watchdog"]["action"] for o in qos["overrides"]}
    assert actions == {("leaf4",): "forward", ("spine1", "spine2"): "forward"}


def test_a_numbered_fabric_gets_its_own_canary(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    project = tmp_path / "p"
    assert run(["init", str(project), "--example", "numbered"], capsys)[0] == 0
    first = load_yaml(project / "runbooks" / "first-bring-up.yaml")
    assert first["phases"][0]["select"]["names"] == ["lf-a"]
    add = load_yaml(project / "runbooks" / "add-leaf.yaml")
    assert add["phases"][0]["select"]["names"] == ["lf-b"]  # the plan's leaf4: the last
    assert "lf-a: this fabric's device for the plan's leaf1" in (
        project / "runbooks" / "first-bring-up.yaml").read_text()


def test_init_into_a_new_folder_and_into_the_working_folder(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    nested = tmp_path / "a" / "b" / "c"
    code, out, _ = run(["init", str(nested)], capsys)
    assert code == 0 and (nested / "flatfab.yaml").is_file()
    assert f"cd {nested}" in out
    here = tmp_path / "here"
    here.mkdir()
    (here / "notes.txt").write_text("kept\n")  # other files are no obstacle
    monkeypatch.chdir(here)
    code, out, _ = run(["init"], capsys)
    assert code == 0 and (here / "intents" / "lab" / "fabric.yaml").is_file()
    assert "next: flatfab plan" in out and (here / "notes.txt").read_text() == "kept\n"


def test_init_never_overwrites_and_then_writes_nothing(tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]
                                                       ) -> None:
    project = tmp_path / "p"
    assert run(["init", str(project)], capsys)[0] == 0
    before = {p: p.read_bytes() for p in project.rglob("*") if p.is_file()}
    code, _, err = run(["init", str(project), "--platform", "eos"], capsys)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1, err
    assert "flatfab.yaml" in lines[0] and "intents/lab/fabric.yaml" in lines[0]
    assert "nothing was written" in lines[0]
    assert {p: p.read_bytes() for p in project.rglob("*") if p.is_file()} == before
    # one file in the way refuses the whole project, and names it
    other = tmp_path / "q"
    (other / "runbooks").mkdir(parents=True)
    (other / "runbooks" / "first-bring-up.yaml").write_text("mine\n")
    code, _, err = run(["init", str(other)], capsys)
    assert code == 2 and err.count("\n") == 1 and "runbooks/first-bring-up.yaml" in err
    assert sorted(p.name for p in other.rglob("*")) == ["first-bring-up.yaml", "runbooks"]
    # a file where a folder goes
    third = tmp_path / "r"
    third.mkdir()
    (third / "intents").write_text("")
    code, _, err = run(["init", str(third)], capsys)
    assert code == 2 and "intents (not a folder)" in err
    assert [p.name for p in third.iterdir()] == ["intents"]
    # a dangling link is something too
    fourth = tmp_path / "s"
    fourth.mkdir()
    (fourth / "README.md").symlink_to("gone")
    code, _, err = run(["init", str(fourth)], capsys)
    assert code == 2 and "README.md already there" in err


def test_a_write_that_fails_part_way_leaves_nothing(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "new" / "project"
    texts = {"a.txt": "a\n", "x/b.txt": "b\n", "x/y/c.txt": "c\n"}
    real_open = os.open
    calls: list[str] = []

    def failing(path: str | os.PathLike[str], flags: int, mode: int = 0o777) -> int:
        calls.append(str(path))
        if str(path).endswith("c.txt"):
            raise OSError(28, "No space left on device")
        return real_open(path, flags, mode)

    monkeypatch.setattr(scaffold_files.os, "open", failing)
    with pytest.raises(InputError, match=r"No space left on device \(nothing was written\)"):
        scaffold_files.write_new(target, texts, str(target))
    assert len(calls) == 3 and not (tmp_path / "new").exists()


def test_lab_up_never_writes_over_the_inventory_init_wrote(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / "p"
    assert run(["init", str(project)], capsys)[0] == 0
    assert run(["--root", str(project), "lab", "generate"], capsys)[0] == 0

    def no_lab(*_: object) -> None:
        raise AssertionError("a lab was started")

    monkeypatch.setattr("flatfab.lab.netns.NetnsRuntime", no_lab)
    code, _, err = run(["--root", str(project), "lab", "up"], capsys)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1, err
    assert "inventory/lab/hosts.yaml: not written by `flatfab lab up`" in lines[0]
    assert f"--inventory {project / 'inventory' / 'lab-lab'} lab up" in lines[0]
    # the lab's own inventory is its to rewrite
    shutil.copytree(ROOT / "inventory" / "lab", tmp_path / "lab-inventory")
    inventory.refuse_hand_written(tmp_path / "lab-inventory")


def test_the_global_root_and_fabric_options_serve_init_too(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["--root", str(tmp_path / "p"), "--fabric", "east", "init",
                        "--example", "rail"], capsys)
    assert code == 0, err
    assert load_yaml(tmp_path / "p" / "flatfab.yaml")["fabric"] == "east"
    assert (tmp_path / "p" / "intents" / "east" / "fabric.yaml").is_file()
    assert sorted(p.name for p in (tmp_path / "p" / "runbooks").iterdir()) == [
        "add-leaf.yaml", "rail-bring-up.yaml"]


def test_the_inventory_init_writes_leaves_unmanaged_hosts_out(tmp_path: Path) -> None:
    """A plan with hosts another team runs (`managed: false`): the written inventory lists
    every device flatfab logs in to, names the unmanaged hosts in a comment only, and
    validates, logins included once the operator's key, host keys and password are there."""
    intent_dir = tmp_path / "intent"
    shutil.copytree(bundled.folder("examples") / "lab", intent_dir)
    hosts = intent_dir / "hosts.yaml"
    hosts.write_text(hosts.read_text().replace("  count: 2\n", "  count: 2\n  managed: false\n"))
    plan = make_plan(load_intent(intent_dir))
    assert len(plan.unmanaged()) == 8
    folder = tmp_path / "inventory"
    folder.mkdir()
    for name, text in inventory_files(plan, "lab", PLATFORMS).items():
        (folder / name).write_text(text)
    text = (folder / "hosts.yaml").read_text()
    assert "managed: false" in text and "needs no entry" in text
    assert f"# unmanaged, no entry needed: {', '.join(plan.unmanaged()[:3])}" in text
    nornir = _nornir(folder)
    assert set(nornir.inventory.hosts) == set(plan.managed()) == {
        n for n, d in plan.devices.items() if d.role.value != "host"}
    assert "hosts" not in nornir.inventory.groups  # no group of hosts nobody logs in to
    inventory.validate(folder, plan, connects=False)
    environ = _operator_home(tmp_path / "home", nornir)
    inventory.validate(folder, plan, credentials=Credentials(environ=environ))


def test_the_cli_names_the_switch_roles_the_scaffold_takes() -> None:
    """`init --platform ROLE=P`: the CLI names the roles without importing the planner's
    models (its help loads fast); they must be the scaffold's own."""
    from flatfab.cli import init as init_cli  # noqa: PLC0415
    from flatfab.scaffold.choices import ROLES  # noqa: PLC0415

    assert set(init_cli.ROLES) == set(ROLES)
