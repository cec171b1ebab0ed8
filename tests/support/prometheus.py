"""Debian's Prometheus server (apt package `prometheus`, `make deps` installs it), run by a
test: its own config and storage in a folder of the test's, listening on 127.0.0.1 only,
scraping the given targets every second; read through its HTTP API as Grafana reads it."""

from __future__ import annotations

import json
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import yaml

from tests.support.sockets import closed_port

PROMETHEUS = "/usr/bin/prometheus"
PROMTOOL = "/usr/bin/promtool"
JOB = "flatfab"


class Prometheus:
    """One server; `with Prometheus(work, ["127.0.0.1:9464"]) as prom: prom.query(...)`."""

    def __init__(self, work: Path, targets: list[str], scrape_s: float = 1.0) -> None:
        self.work = work
        self.targets = targets
        self.scrape_s = scrape_s
        self.port = 0
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def log(self) -> str:
        path = self.work / "prometheus.log"
        return path.read_text(errors="replace")[-3000:] if path.exists() else ""

    def start(self, timeout: float = 30.0) -> None:
        interval = f"{self.scrape_s:g}s"
        config = {"global": {"scrape_interval": interval, "scrape_timeout": interval,
                             "evaluation_interval": interval},
                  "scrape_configs": [{"job_name": JOB, "metrics_path": "/metrics",
                                      "static_configs": [{"targets": self.targets}]}]}
        self.work.mkdir(parents=True, exist_ok=True)
        (self.work / "prometheus.yml").write_text(yaml.safe_dump(config))
        self.port = closed_port()
        with (self.work / "prometheus.log").open("wb") as log:
            self._proc = subprocess.Popen(
                [PROMETHEUS, f"--config.file={self.work / 'prometheus.yml'}",
                 f"--storage.tsdb.path={self.work / 'data'}",
                 f"--web.listen-address=127.0.0.1:{self.port}", "--log.level=warn"],
                stdout=log, stderr=subprocess.STDOUT, cwd=self.work)
        deadline = time.monotonic() + timeout
        while not self._ready():
            if self._proc.poll() is not None:
                raise AssertionError(f"prometheus exited {self._proc.returncode}: {self.log}")
            if time.monotonic() > deadline:
                raise AssertionError(f"prometheus not ready within {timeout:g} s: {self.log}")
            time.sleep(0.1)

    def _ready(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.url}/-/ready", timeout=2) as resp:
                return bool(resp.status == 200)
        except (urllib.error.URLError, ConnectionError):
            return False

    def stop(self) -> None:
        if self._proc is None or self._proc.poll() is not None:
            return
        self._proc.terminate()
        try:
            self._proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait(timeout=5)

    def __enter__(self) -> Prometheus:
        self.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop()

    def api(self, path: str, **params: str | list[str]) -> Any:
        """GET /api/v1/<path>; its `data` (a query Prometheus refuses fails, saying why)."""
        query = urllib.parse.urlencode(params, doseq=True)
        try:
            with urllib.request.urlopen(f"{self.url}/api/v1/{path}?{query}", timeout=10) as resp:
                body = json.loads(resp.read())
        except urllib.error.HTTPError as exc:
            raise AssertionError(f"{path} {params}: HTTP {exc.code} "
                                 f"{exc.read().decode(errors='replace')}") from None
        assert body["status"] == "success", body
        return body["data"]

    def query(self, expr: str) -> list[dict[str, Any]]:
        """An instant query's result series (`metric` labels and `value`)."""
        data = self.api("query", query=expr)
        assert data["resultType"] == "vector", (expr, data["resultType"])
        return list(data["result"])

    def label_values(self, label: str, match: str | None = None) -> list[str]:
        """What Grafana's label_values(match, label) lists."""
        params: dict[str, str | list[str]] = {"match[]": [match]} if match else {}
        return list(self.api(f"label/{label}/values", **params))

    def series(self, match: str) -> list[dict[str, str]]:
        return list(self.api("series", **{"match[]": [match]}))


def promtool_eval(work: Path, series: dict[str, str],
                  expected: list[tuple[str, list[tuple[str, float]]]], *, eval_s: int,
                  interval_s: float = 1.0) -> subprocess.CompletedProcess[str]:
    """Prometheus's own engine, offline (`promtool test rules`): `series` (a series as a
    selector -> its values in promtool's notation, e.g. '0+10x60', one every `interval_s`),
    then each expression with the samples it must give at `eval_s` (labels as a selector
    string such as '{port="swp1"}', value); [] is "no series"."""
    tests = [{"expr": expr, "eval_time": f"{eval_s}s",
              "exp_samples": [{"labels": labels, "value": value} for labels, value in want]}
             for expr, want in expected]
    spec = {"evaluation_interval": f"{interval_s:g}s",
            "tests": [{"interval": f"{interval_s:g}s",
                       "input_series": [{"series": s, "values": v} for s, v in series.items()],
                       "promql_expr_test": tests}]}
    path = work / "dashboard_test.yml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return subprocess.run([PROMTOOL, "test", "rules", str(path)], cwd=work, capture_output=True,
                          text=True, timeout=120, check=False)
