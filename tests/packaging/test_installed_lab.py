"""A project that `flatfab init` made outside the checkout, run as root from the installed
package (the core alone: its switches serve no gNMI, so nothing of the telemetry extra is
needed): its embedded lab comes up, the fabric rolls out in phases, verifies and audits
clean. The lab has a prefix and subnet of its own (marker `own_lab`: `make test` runs it in
the ownlab session)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support import installed
from tests.support.flatfab import Run

pytestmark = [pytest.mark.live, pytest.mark.own_lab]

PREFIX = "ffw"
SUBNET = "172.31.235.0/24"
LAB_INVENTORY = "inventory/lab-lab"  # the lab's own: init's inventory is the real devices'


@dataclass
class Project:
    operator: installed.Installed
    root: Path

    def root_run(self, *args: str, timeout: float = 900) -> Run:
        """flatfab as root in the project, against its lab's inventory."""
        return self.operator.run("--inventory", LAB_INVENTORY, *args, cwd=self.root,
                                 as_root=True, timeout=timeout)


@pytest.fixture(scope="module")
def project(operator: installed.Installed) -> Iterator[Project]:
    root = operator.folder("dc1")
    made = operator.run("init", str(root), cwd=operator.home)
    assert made.code == 0, made.stderr
    generated = operator.run("lab", "generate", cwd=root)
    assert generated.code == 0, generated.stderr
    here = Project(operator, root)
    here.root_run("lab", "down", "--sweep", "--prefix", PREFIX)
    up = here.root_run("lab", "up", "--prefix", PREFIX, "--mgmt-subnet", SUBNET)
    try:
        assert up.code == 0, up.stdout + up.stderr
        yield here
    finally:
        down = here.root_run("lab", "down", "--sweep", "--prefix", PREFIX)
        assert down.code == 0, down.stdout + down.stderr


def test_an_initialized_project_rolls_out_verifies_and_audits_its_lab_clean(
        project: Project) -> None:
    rolled = project.root_run("rollout", "--yes", "--runbook", "runbooks/first-bring-up.yaml")
    assert rolled.code == 0, rolled.stdout[-4000:] + rolled.stderr[-4000:]
    again = project.root_run("rollout", "--dry-run")
    assert again.code == 0, again.stdout[-4000:] + again.stderr[-4000:]
    assert "0 of 14 devices would change" in again.stdout
    verified = project.root_run("verify", "--lossless")
    assert verified.code == 0, verified.stdout[-4000:] + verified.stderr[-4000:]
    audited = project.root_run("audit", "--report-dir", "reports")
    assert audited.code == 0, audited.stdout[-4000:] + audited.stderr[-4000:]
    assert (project.root / "reports" / "flatfab-audit-lab.html").is_file()
    # nothing of the run went into the checkout: every file is the project's
    assert (project.root / ".flatfab" / "runs").is_dir()
