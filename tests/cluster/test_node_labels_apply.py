"""`flatfab cluster labels --apply` through the Kubernetes client, against a stand-in of the
API server on 127.0.0.1 that keeps nodes and answers the two calls the client makes (read a
node, patch its labels: a merge in which null removes a key, as the API server's strategic
merge patch does for labels)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from flatfab.cluster import labels as node_labels
from flatfab.cluster import tree
from flatfab.intent.loader import load_intent
from flatfab.plan.planner import plan
from flatfab.workflows.commands.node_labels import apply_labels, label_patch
from tests.support.inprocess import in_process
from tests.support.paths import ROOT

pytest.importorskip("kubernetes", reason="the kubernetes extra is not installed")

PREFIX = node_labels.PREFIX


class _Api(BaseHTTPRequestHandler):
    nodes: dict[str, dict[str, Any]]
    patches: list[tuple[str, str, dict[str, Any]]]

    def log_message(self, *_: Any) -> None:  # quiet
        pass

    def _name(self) -> str | None:
        prefix = "/api/v1/nodes/"
        return self.path.split("?")[0][len(prefix):] if self.path.startswith(prefix) else None

    def _send(self, code: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _missing(self, name: str) -> None:
        self._send(404, {"kind": "Status", "apiVersion": "v1", "status": "Failure",
                         "reason": "NotFound", "code": 404,
                         "message": f'nodes "{name}" not found'})

    def do_GET(self) -> None:
        name = self._name()
        if name is None or name not in self.nodes:
            self._missing(name or "")
            return
        self._send(200, self.nodes[name])

    def do_PATCH(self) -> None:
        name = self._name()
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if name is None or name not in self.nodes:
            self._missing(name or "")
            return
        self.patches.append((name, self.headers["Content-Type"], body))
        labels = self.nodes[name]["metadata"].setdefault("labels", {})
        for key, value in body["metadata"]["labels"].items():
            if value is None:
                labels.pop(key, None)
            else:
                labels[key] = value
        self._send(200, self.nodes[name])


@contextmanager
def _cluster(nodes: dict[str, dict[str, str]], folder: Path
             ) -> Iterator[tuple[Path, type[_Api]]]:
    handler = type("Api", (_Api,), {"patches": [], "nodes": {
        name: {"apiVersion": "v1", "kind": "Node",
               "metadata": {"name": name, "labels": dict(labels)}}
        for name, labels in nodes.items()}})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    kubeconfig = folder / "kubeconfig"
    kubeconfig.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "lab",
        "clusters": [{"name": "lab", "cluster": {
            "server": f"http://127.0.0.1:{server.server_address[1]}"}}],
        "users": [{"name": "me", "user": {"token": "not-a-secret"}}],
        "contexts": [{"name": "lab", "context": {"cluster": "lab", "user": "me"}}]}))
    try:
        yield kubeconfig, handler
    finally:
        server.shutdown()
        server.server_close()


def _wanted() -> dict[str, dict[str, str]]:
    fabric = plan(load_intent(ROOT / "intents" / "lab"))
    return node_labels.node_labels(fabric, tree.planned_tree(fabric))


def test_a_patch_sets_what_differs_and_removes_only_flatfab_s_stale_labels() -> None:
    current = {f"{PREFIX}block": "leaf9", f"{PREFIX}old": "x", "team": "ml"}
    assert label_patch(current, {f"{PREFIX}block": "leaf1", f"{PREFIX}fabric": "lab"}) == {
        f"{PREFIX}block": "leaf1", f"{PREFIX}fabric": "lab", f"{PREFIX}old": None}
    assert label_patch({f"{PREFIX}block": "leaf1"}, {f"{PREFIX}block": "leaf1"}) == {}


def test_apply_labels_every_node_the_cluster_has_and_names_the_others(tmp_path: Path) -> None:
    wanted = _wanted()
    present = {name: {"kubernetes.io/hostname": name} for name in wanted if name != "leaf4-h2"}
    present["leaf1-h1"] |= wanted["leaf1-h1"]  # already right
    present["leaf2-h1"] |= {**wanted["leaf2-h1"], f"{PREFIX}block": "leaf9",
                            f"{PREFIX}retired": "yes"}
    with _cluster(present, tmp_path) as (kubeconfig, api):
        done = apply_labels(wanted, kubeconfig, None)
        assert done.missing == ["leaf4-h2"]
        assert done.unchanged == ["leaf1-h1"]
        assert done.changed["leaf2-h1"] == "block=leaf2, retired removed"
        assert len(done.changed) == len(wanted) - 2
        for name, labels in wanted.items():
            if name in api.nodes:  # flatfab's labels as planned, the cluster's own kept
                held = api.nodes[name]["metadata"]["labels"]
                assert {k: v for k, v in held.items() if k.startswith(PREFIX)} == labels
                assert held["kubernetes.io/hostname"] == name
        assert {content for _, content, _ in api.patches} == {
            "application/strategic-merge-patch+json"}
        again = apply_labels(wanted, kubeconfig, None)
        assert not again.changed and again.missing == ["leaf4-h2"]


def test_the_cli_applies_and_exits_1_for_a_node_the_cluster_lacks(tmp_path: Path) -> None:
    wanted = _wanted()
    with _cluster({name: {} for name in wanted if name != "leaf3-h1"}, tmp_path) as (
            kubeconfig, _):
        run = in_process("--root", str(ROOT), "--fabric", "lab", "cluster", "labels",
                         "--apply", "--kubeconfig", str(kubeconfig))
    assert run.code == 1, run.stderr
    assert "not in the cluster: leaf3-h1" in run.stderr
    assert "labels lab: 7 nodes changed, 0 already labelled, 1 not in the cluster" in run.stderr
    refused = in_process("--root", str(ROOT), "--fabric", "lab", "cluster", "labels",
                         "--context", "lab")
    assert refused.code == 2 and "--context: only with --apply" in refused.stderr


def test_an_unreachable_api_server_is_one_line(tmp_path: Path) -> None:
    with _cluster({}, tmp_path) as (kubeconfig, _):
        pass  # stopped: nothing listens there now
    run = in_process("--root", str(ROOT), "--fabric", "lab", "cluster", "labels", "--apply",
                     "--kubeconfig", str(kubeconfig))
    assert run.code == 2
    [line] = run.stderr.strip().splitlines()
    assert line.startswith("error: Kubernetes API unreachable"), line
