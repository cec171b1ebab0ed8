"""The worker and beat services shipped in runbooks/schedule/: every flatfab command in them
parses with the real CLI, secrets come from files or Secrets (never a value), and the
Kubernetes example keeps one beat and device credentials on the workers only."""

from __future__ import annotations

import shlex
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from flatfab.cli.app import app
from tests.support.paths import ROOT

SCHEDULE = ROOT / "runbooks" / "schedule"


def _parses(args: list[str]) -> None:
    result = CliRunner().invoke(app, [*args, "--help"])
    assert result.exit_code == 0, f"flatfab {' '.join(args)}: {result.output}"


@pytest.mark.parametrize("unit", ["flatfab-worker.service", "flatfab-beat.service"])
def test_a_unit_runs_a_flatfab_command_with_the_broker_from_a_file(unit: str) -> None:
    text = (SCHEDULE / unit).read_text(encoding="utf-8")
    [start] = [line.split("=", 1)[1] for line in text.splitlines()
               if line.startswith("ExecStart=")]
    binary, *args = shlex.split(start)
    assert binary == "/opt/flatfab/.venv/bin/flatfab"
    _parses(args)
    assert "EnvironmentFile=/etc/flatfab/broker.env" in text
    assert "redis://:" not in text.replace("redis://:...@", "")  # no password written out


def _containers(doc: dict[str, Any]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = doc["spec"]["template"]["spec"]["containers"]
    return found


def test_the_kubernetes_example() -> None:
    docs = list(yaml.safe_load_all((SCHEDULE / "flatfab-distributed.k8s.yaml").read_text()))
    kinds = {(d["kind"], d["metadata"]["name"]): d for d in docs}
    secret = kinds[("Secret", "flatfab-credentials")]
    assert all("REPLACE-ME" in v for v in secret["stringData"].values())
    worker = kinds[("Deployment", "flatfab-worker")]
    beat = kinds[("Deployment", "flatfab-beat")]
    assert beat["spec"]["replicas"] == 1 and beat["spec"]["strategy"]["type"] == "Recreate"
    for deployment, wants_password in ((worker, True), (beat, False)):
        [container] = _containers(deployment)
        _parses(container["args"])
        names = {e["name"] for e in container["env"]}
        assert "FLATFAB_BROKER_URL" in names
        assert ("FLATFAB_PASSWORD" in names) is wants_password
        assert all("value" not in e for e in container["env"])  # secrets by reference only
        assert container["securityContext"]["readOnlyRootFilesystem"] is True
