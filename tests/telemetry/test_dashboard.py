"""The Grafana dashboard in dashboards/ reads only what flatfab exports: every PromQL expression
of every panel names exported metrics and only the labels those metrics carry, and every
template variable's label_values() is a real metric/label pair.

What is exported is taken from TelemetryMetrics itself (one sample of every Metric and one
finding observed, then the registry collected), not from a list kept here, so renaming a
metric or a label in tasks/telemetry/metrics.py fails this test until the dashboard follows.
"""

from __future__ import annotations

import json
import re
from functools import cache
from typing import Any

import pytest

from flatfab.checks.base import Finding, Severity
from flatfab.telemetry.metrics import TelemetryMetrics
from flatfab.telemetry.samples import Metric, Sample
from tests.support.paths import ROOT
from tests.support.telemetry_streams import lab_plan

DASHBOARD = ROOT / "dashboards" / "flatfab-lossless.json"
Exported = dict[str, frozenset[str]]  # sample name -> its label names

# labels Prometheus attaches when it scrapes, on every series
SCRAPE_LABELS = frozenset({"instance", "job"})
GRAFANA_BUILTINS = frozenset({"__rate_interval", "__interval", "__range", "__interval_ms",
                              "__range_s", "__range_ms"})
FUNCTIONS = frozenset({
    # aggregation operators
    "sum", "min", "max", "avg", "group", "stddev", "stdvar", "count", "count_values",
    "bottomk", "topk", "quantile", "limitk", "limit_ratio",
    # functions
    "abs", "absent", "absent_over_time", "ceil", "changes", "clamp", "clamp_max", "clamp_min",
    "day_of_month", "day_of_week", "day_of_year", "days_in_month", "delta", "deriv", "exp",
    "floor", "histogram_quantile", "holt_winters", "double_exponential_smoothing", "hour",
    "idelta", "increase", "irate", "label_join", "label_replace", "ln", "log2", "log10",
    "minute", "month", "predict_linear", "rate", "resets", "round", "scalar", "sgn", "sort",
    "sort_desc", "sqrt", "time", "timestamp", "vector", "year", "avg_over_time",
    "min_over_time", "max_over_time", "sum_over_time", "count_over_time",
    "quantile_over_time", "stddev_over_time", "stdvar_over_time", "last_over_time",
    "present_over_time",
})
KEYWORDS = frozenset({"and", "or", "unless", "bool", "offset", "atan2", "inf", "nan"})
LABEL_LISTS = ("by", "without", "on", "ignoring", "group_left", "group_right")

_IDENT = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
_SELECTOR = re.compile(rf"({_IDENT})?\s*\{{([^}}]*)\}}")
_MATCHER = re.compile(r"([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)\s*\"")
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_LIST = re.compile(rf"\b({'|'.join(LABEL_LISTS)})\s*\(([^)]*)\)")
_VARIABLE = re.compile(r"\$\{?(\w+)(?::\w+)?\}?")
_NUMBER = re.compile(r"(?<![\w:])\d+(?:\.\d+)?(?:[eE][+-]?\d+)?[smhdwy]?(?![\w:])")
_WORD = re.compile(rf"({_IDENT})(\s*\()?")
_LEGEND = re.compile(r"\{\{\s*(\w+)\s*\}\}")
_LABEL_VALUES = re.compile(r"^\s*label_values\((.*)\)\s*$", re.DOTALL)


@cache
def exported() -> Exported:
    # a lab port with the plan: queue 3 is lossless there, so the plan's marks show too
    metrics = TelemetryMetrics(targets=["leaf2"], plan=lab_plan())
    metrics.observe(Sample("leaf2", "swp1", m, 3 if m is not Metric.OPER_UP else None, 1, 1.0)
                    for m in Metric)
    metrics.set_findings([Finding(check="telemetry.watchdog", severity=Severity.ERROR,
                                  device="leaf2", port="swp1", message="m")])
    names: dict[str, set[str]] = {}
    for family in metrics.registry.collect():
        # a family with no sample would hide its labels: the feed above must cover all
        assert family.samples, f"{family.name}: nothing observed, labels unknown"
        for s in family.samples:
            names.setdefault(s.name, set()).update(s.labels)
    return {name: frozenset(labels) | SCRAPE_LABELS for name, labels in names.items()}


def _labels(names: str) -> list[str]:
    return [n.strip() for n in names.split(",") if n.strip()]


def expr_problems(expr: str, known: Exported, variables: frozenset[str] = frozenset()
                  ) -> tuple[list[str], frozenset[str]]:
    """What in `expr` is not exported, and the labels its result can carry (for legends)."""
    problems: list[str] = []
    for var in _VARIABLE.findall(expr):
        if var not in variables and var not in GRAFANA_BUILTINS:
            problems.append(f"${var}: no such template variable")
    metrics: list[str] = []
    for name, body in _SELECTOR.findall(expr):
        if not name:
            problems.append(f"{{{body}}}: a selector without a metric name")
            continue
        for label in _MATCHER.findall(body):
            if name in known and label not in known[name]:
                problems.append(f"{name}: no label {label!r}")
    rest = _STRING.sub(" ", expr)
    rest = re.sub(r"\{[^}]*\}", " ", rest)
    rest = re.sub(r"\[[^\]]*\]", " ", rest)  # range and subquery durations
    rest = _VARIABLE.sub(" ", rest)
    lists: list[tuple[str, list[str]]] = [(kw, _labels(ls)) for kw, ls in _LIST.findall(rest)]
    rest = _LIST.sub(" ", rest)
    rest = _NUMBER.sub(" ", rest)
    for word, call in _WORD.findall(rest):
        if call:
            if word not in FUNCTIONS:
                problems.append(f"{word}(): not a PromQL function")
        elif word not in KEYWORDS:
            metrics.append(word)
    if not metrics:
        problems.append("names no metric")
    for name in metrics:
        if name not in known:
            problems.append(f"{name}: not a metric flatfab exports")
    carried = [known[n] for n in metrics if n in known]
    common = frozenset.intersection(*carried) if carried else frozenset()
    for kw, labels in lists:
        for label in labels:
            if label not in common:
                problems.append(f"{kw} ({label}): not a label of every metric in the expression")
    grouped = [frozenset(ls) for kw, ls in lists if kw == "by"]
    result = frozenset.intersection(*grouped) if grouped else frozenset().union(*carried)
    return problems, result


def label_values_problems(query: str, known: Exported) -> list[str]:
    m = _LABEL_VALUES.match(query)
    if m is None:
        return [f"{query!r}: not label_values(...)"]
    args = m.group(1)
    head, _, label = args.rpartition(",")
    label = label.strip()
    if not head.strip():  # label_values(label): any metric carrying it
        union = frozenset().union(*known.values())
        return [] if label in union else [f"no metric carries {label!r}"]
    problems, _ = expr_problems(head, known, _variables())
    name = _SELECTOR.match(head.strip())
    metric = name.group(1) if name else head.strip()
    if metric in known and label not in known[metric]:
        problems.append(f"{metric}: no label {label!r}")
    return problems


@cache
def dashboard() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    return data


def _panels() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for panel in dashboard()["panels"]:
        out.append(panel)
        out.extend(panel.get("panels", []))  # panels inside collapsed rows
    return out


def _template_vars() -> list[dict[str, Any]]:
    return list(dashboard()["templating"]["list"])


@cache
def _variables() -> frozenset[str]:
    return frozenset(v["name"] for v in _template_vars())


def _query(var: dict[str, Any]) -> str:
    query = var["query"]
    return str(query["query"] if isinstance(query, dict) else query)


def _exprs() -> list[tuple[str, str, dict[str, Any]]]:
    return [(p["title"], t["refId"], t) for p in _panels() for t in p.get("targets", [])]


def test_the_dashboard_is_a_grafana_dashboard() -> None:
    dash = dashboard()
    assert dash["uid"] and dash["title"]
    assert 36 <= dash["schemaVersion"] <= 41
    ids = [p["id"] for p in _panels()]
    assert len(ids) == len(set(ids)), "panel ids must be unique"
    for panel in _panels():
        assert set(panel["gridPos"]) == {"x", "y", "w", "h"}
        assert panel["gridPos"]["x"] + panel["gridPos"]["w"] <= 24, panel["title"]
        assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}
        assert panel["targets"], panel["title"]
        refs = [t["refId"] for t in panel["targets"]]
        assert len(refs) == len(set(refs)), panel["title"]


def test_templating_has_the_datasource_device_and_port() -> None:
    by_name = {v["name"]: v for v in _template_vars()}
    assert by_name["datasource"]["type"] == "datasource"
    assert by_name["datasource"]["query"] == "prometheus"
    for name in ("device", "port"):
        assert by_name[name]["type"] == "query"
        assert _query(by_name[name]).startswith("label_values(")
        assert _query(by_name[name]).rstrip(")").endswith(name)
        assert by_name[name]["datasource"]["uid"] == "${datasource}"
        # "All" as .*: it must also match series whose port is empty (device-wide)
        assert by_name[name]["allValue"] == ".*"


def test_the_expected_panels_are_there() -> None:
    titles = {p["title"] for p in _panels()}
    assert {
        "Worst ports by PFC pause rate", "Lossless queue drops", "ECN marks per queue",
        "PFC pauses vs ECN marks", "PFC watchdog storms", "NIC CNP sent vs handled",
        "Active findings", "Target up / silent",
    } <= titles
    worst = next(p for p in _panels() if p["title"] == "Worst ports by PFC pause rate")
    assert all(re.search(r"\btopk\(.*\brate\(", t["expr"]) for t in worst["targets"])


@pytest.mark.parametrize(("title", "ref", "target"), _exprs(),
                         ids=[f"{t}/{r}" for t, r, _ in _exprs()])
def test_every_expression_reads_only_exported_metrics_and_labels(
        title: str, ref: str, target: dict[str, Any]) -> None:
    problems, result = expr_problems(target["expr"], exported(), _variables())
    legend = target.get("legendFormat", "")
    problems += [f"legend {{{{{label}}}}}: not a label of the result"
                 for label in _LEGEND.findall(legend) if label not in result]
    assert problems == [], f"{title} {ref}: {target['expr']}"


def test_table_columns_are_labels_of_what_the_table_shows() -> None:
    for panel in _panels():
        names: set[str] = set()
        for step in panel.get("transformations", []):
            options = step.get("options", {})
            for key in ("excludeByName", "indexByName", "renameByName"):
                names.update(options.get(key, {}))
        if not names:
            continue
        carried = frozenset().union(*(expr_problems(t["expr"], exported(), _variables())[1]
                                      for t in panel["targets"]))
        extra = names - carried - {"Time", "Value", "__name__"}
        assert not extra, f"{panel['title']}: columns {sorted(extra)} are no labels"


@pytest.mark.parametrize("var", [v for v in _template_vars() if v["type"] == "query"],
                         ids=lambda v: str(v["name"]))
def test_every_variable_is_a_real_metric_label_pair(var: dict[str, Any]) -> None:
    assert label_values_problems(_query(var), exported()) == []
    if "definition" in var:
        assert var["definition"] == _query(var)


def test_the_checker_catches_what_it_is_for() -> None:
    # a check that passes everything proves nothing: each of these must be caught
    known = exported()
    bad = {
        'rate(flatfab_nope_total{device="x"}[5m])': "not a metric flatfab exports",
        "sum by (vrf) (flatfab_port_oper_up)": "by (vrf)",
        'flatfab_port_oper_up{queue="3"}': "no label 'queue'",
        "flatfab_pfc_pause_frames_received": "not a metric",  # the family name, no _total
        "rated(flatfab_port_oper_up)": "not a PromQL function",
        'flatfab_port_oper_up{port=~"$prot"}': "$prot",
        'sum without (queue) (rate(flatfab_queue_dropped_packets_total[1m])) '
        '/ on (device, priority) flatfab_port_oper_up': "on (priority)",
    }
    for expr, problem in bad.items():
        problems, _ = expr_problems(expr, known, _variables())
        assert any(problem in p for p in problems), (expr, problems)
    assert label_values_problems("label_values(flatfab_port_oper_up, queue)", known)
    assert label_values_problems("label_values(flatfab_gone, device)", known)
    assert label_values_problems("label_values(nolabel)", known)
    good = ("topk(5, sum by (device) (rate(flatfab_pfc_pause_frames_sent_total"
            '{device=~"$device"}[$__rate_interval]) offset 5m)) > 0.5e1')
    assert expr_problems(good, known, _variables()) == ([], frozenset({"device"}))
