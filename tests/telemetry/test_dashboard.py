"""The Grafana dashboard in dashboards/ reads only what flatfab exports, and shows what exists.

Read statically: every PromQL expression of every panel names exported metrics (by name, or by
a `{__name__=~"..."}` selector matching some) and only the labels those metrics carry (or a
label its own label_replace() adds), and every template variable's label_values() is a real
selector/label pair; the port variable reads every metric that carries a port.

Evaluated by Prometheus's own engine (`promtool test rules`, Debian's `prometheus` package,
installed by `make deps`) on the series a scrape of one switch and one GPU host of the lab
gives, with what the lab does not serve absent (pauses sent, out-of-buffer drops): every panel
query, its variables substituted as Grafana does, returns series; picking a switch port or a
host NIC leaves every panel that has data for it with data; the port variable lists switch
ports and host NICs alike. The sum the dashboard had (`a + b`, empty where b is absent) is
evaluated too, as the control that this harness sees what it is for.

What is exported is taken from TelemetryMetrics itself (one sample of every Metric and one
finding observed, then the registry collected), not from a list kept here, so renaming a
metric or a label in tasks/telemetry/metrics.py fails this test until the dashboard follows.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from flatfab.checks.base import Finding, Severity
from flatfab.telemetry.metrics import FINDING, TelemetryMetrics
from flatfab.telemetry.samples import Metric, Sample
from tests.support.dashboard import (
    BEFORE_PORTS,
    BEFORE_WORST_PORTS,
    METRIC_NAME,
    PICKS,
    Choice,
    Query,
    dashboard,
    label_values,
    panels,
    queries,
    substitute,
    template_variables,
    variable_query,
)
from tests.support.prometheus import JOB, promtool_eval
from tests.support.telemetry_streams import Stream, lab_plan

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
_NAME_MATCHER = re.compile(r'__name__\s*(=~|=)\s*"((?:[^"\\]|\\.)*)"')
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_STRING_ARG = r'\s*,\s*"(?:[^"\\]|\\.)*"'
# the end of a label_replace() call: its four string arguments, the first one the label it adds
_LABEL_REPLACE_TAIL = re.compile(r',\s*"([^"]*)"' + 3 * _STRING_ARG + r"\s*\)")
_LABEL_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")
_LIST = re.compile(rf"\b({'|'.join(LABEL_LISTS)})\s*\(([^)]*)\)")
_VARIABLE = re.compile(r"\$\{?(\w+)(?::\w+)?\}?")
_NUMBER = re.compile(r"(?<![\w:])\d+(?:\.\d+)?(?:[eE][+-]?\d+)?[smhdwy]?(?![\w:])")
_WORD = re.compile(rf"({_IDENT})(\s*\()?")
_LEGEND = re.compile(r"\{\{\s*(\w+)\s*\}\}")

# What the lab does not serve: its switches count no PFC pauses sent (the virtual ASIC cannot
# say which ingress a real switch would pause: tasks/platforms/frr/asic_telemetry.py) and its
# veth NICs keep no receive buffers (tasks/platforms/linux_host/nic_counters.py).
LAB_UNSERVED = frozenset({Metric.PFC_TX, Metric.NIC_OUT_OF_BUFFER})
SWITCH, SWITCH_PORT, HOST, NIC = "leaf1", "swp1", "leaf1-h1", "eth1"
# the physical layer's panels: a switch port's FEC codewords, pre-FEC BER (and as a share
# of the bound the plan gives it), link state changes
PHYSICAL_PANELS = ("FEC codewords corrected and uncorrectable", "Pre-FEC BER",
                   "Pre-FEC BER as a share of its bound", "Link state changes")
POINTS, EVAL_S = 120, 60  # one sample a second for two minutes, evaluated in the middle


@cache
def exported() -> Exported:
    # a lab port with the plan: queue 3 is lossless there, so the plan's marks show too
    metrics = TelemetryMetrics(targets=["leaf2"], plan=lab_plan())
    metrics.observe(Sample("leaf2", "swp1", m, 3 if m is not Metric.OPER_UP else None, 1, 1.0)
                    for m in Metric)
    metrics.set_findings([Finding(check="telemetry.watchdog", severity=Severity.ERROR,
                                  device="leaf2", port="swp1", message="m")])
    names: dict[str, set[str]] = {}
    collected = list(metrics.registry.collect())
    # a family with no series is not in a scrape: the feed above must cover every one
    assert sorted(f.name for f in collected) == sorted(metrics.families())
    for family in collected:
        for s in family.samples:
            names.setdefault(s.name, set()).update(s.labels)
    return {name: frozenset(labels) | SCRAPE_LABELS for name, labels in names.items()}


def _labels(names: str) -> list[str]:
    return [n.strip() for n in names.split(",") if n.strip()]


def _named_by(body: str, known: Exported) -> list[str] | None:
    """The exported metrics a selector's `__name__` matcher picks (None: it has none).
    Prometheus anchors a regex matcher at both ends."""
    m = _NAME_MATCHER.search(body)
    if m is None:
        return None
    op, pattern = m.group(1), m.group(2).replace("\\\\", "\\")
    if op == "=":
        return [pattern] if pattern in known else []
    return sorted(n for n in known if re.fullmatch(pattern, n))


def expr_problems(expr: str, known: Exported, variables: frozenset[str] = frozenset()
                  ) -> tuple[list[str], frozenset[str]]:
    """What in `expr` is not exported, and the labels its result can carry (for legends)."""
    problems: list[str] = []
    for var in _VARIABLE.findall(expr):
        if var not in variables and var not in GRAFANA_BUILTINS:
            problems.append(f"${var}: no such template variable")
    metrics: list[str] = []
    for name, body in _SELECTOR.findall(expr):
        picked = [name] if name else _named_by(body, known)
        if picked is None:
            problems.append(f"{{{body}}}: a selector without a metric name")
            continue
        if not picked:
            problems.append(f"{{{body}}}: matches no metric flatfab exports")
            continue
        if not name:
            metrics += picked
        for label in _MATCHER.findall(body):
            problems += [f"{n}: no label {label!r}" for n in picked
                         if label != "__name__" and n in known and label not in known[n]]
    added = _LABEL_REPLACE_TAIL.findall(expr)
    if len(added) != expr.count("label_replace("):
        problems.append("label_replace(): arguments not understood")
    problems += [f"label_replace(): {label!r} is not a label name" for label in added
                 if not _LABEL_NAME.fullmatch(label)]
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
    # a label label_replace() adds is carried from there on
    common = (frozenset.intersection(*carried) if carried else frozenset()) | frozenset(added)
    for kw, labels in lists:
        for label in labels:
            if label not in common:
                problems.append(f"{kw} ({label}): not a label of every metric in the expression")
    grouped = [frozenset(ls) for kw, ls in lists if kw == "by"]
    result = (frozenset.intersection(*grouped) if grouped
              else frozenset().union(*carried) | frozenset(added))
    return problems, result


def label_values_problems(query: str, known: Exported) -> list[str]:
    try:
        selector, label = label_values(query)
    except ValueError as exc:
        return [str(exc)]
    if not selector:  # label_values(label): any metric carrying it
        union = frozenset().union(*known.values())
        return [] if label in union else [f"no metric carries {label!r}"]
    problems, _ = expr_problems(selector, known, _variables())
    m = _SELECTOR.match(selector)
    if m is None:
        names = [selector]
    else:
        names = [m.group(1)] if m.group(1) else _named_by(m.group(2), known) or []
    problems += [f"{n}: no label {label!r}" for n in names if n in known and label not in known[n]]
    return problems


def _template_vars() -> list[dict[str, Any]]:
    return list(template_variables().values())


@cache
def _variables() -> frozenset[str]:
    return frozenset(template_variables())


def _exprs() -> list[tuple[str, str, dict[str, Any]]]:
    return [(p["title"], t["refId"], t) for p in panels() for t in p.get("targets", [])]


def test_the_dashboard_is_a_grafana_dashboard() -> None:
    dash = dashboard()
    assert dash["uid"] and dash["title"]
    assert 36 <= dash["schemaVersion"] <= 41
    ids = [p["id"] for p in panels()]
    assert len(ids) == len(set(ids)), "panel ids must be unique"
    for panel in panels():
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
        assert variable_query(by_name[name]).startswith("label_values(")
        assert variable_query(by_name[name]).rstrip(")").endswith(name)
        assert by_name[name]["datasource"]["uid"] == "${datasource}"
        # "All" as .*: it must also match series whose port is empty (device-wide)
        assert by_name[name]["allValue"] == ".*"


def test_the_expected_panels_are_there() -> None:
    titles = {p["title"] for p in panels()}
    assert {
        "Worst ports by PFC pause rate", "Lossless queue drops", "ECN marks per queue",
        "PFC pauses vs ECN marks", "PFC watchdog storms", "NIC CNP sent vs handled",
        "Active findings", "Target up / silent",
        *PHYSICAL_PANELS,
    } <= titles
    worst = next(p for p in panels() if p["title"] == "Worst ports by PFC pause rate")
    assert all(re.search(r"\btopk\(.*\brate\(", t["expr"]) for t in worst["targets"])
    # one query per panel: counters a device may not serve are or-ed inside it, so no query
    # of a panel is empty while another shows (and none adds one counter to another)
    assert all(len(p["targets"]) == 1 for p in panels())


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
    for panel in panels():
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
    assert label_values_problems(variable_query(var), exported()) == []
    if "definition" in var:
        assert var["definition"] == variable_query(var)


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
    bad_selectors = {
        '{device="x"}': "a selector without a metric name",
        '{__name__=~"flatfab_nope_.+"}': "matches no metric flatfab exports",
        '{__name__=~"flatfab_nic_.+", queue="3"}': "no label 'queue'",
        # partly matched names do not count: Prometheus anchors the regex
        '{__name__=~"pfc_pause"}': "matches no metric",
        'sum by (counter) (rate(flatfab_queue_dropped_packets_total[1m]))': "by (counter)",
        'label_replace(flatfab_port_oper_up, "a-b", "x", "", "")': "not a label name",
    }
    for expr, problem in bad_selectors.items():
        problems, _ = expr_problems(expr, known, _variables())
        assert any(problem in p for p in problems), (expr, problems)
    assert label_values_problems("label_values(flatfab_port_oper_up, queue)", known)
    assert label_values_problems("label_values(flatfab_gone, device)", known)
    assert label_values_problems("label_values(nolabel)", known)
    assert label_values_problems('label_values({__name__=~"flatfab_nic_.+"}, queue)', known)
    good = ("topk(5, sum by (device) (rate(flatfab_pfc_pause_frames_sent_total"
            '{device=~"$device"}[$__rate_interval]) offset 5m)) > 0.5e1')
    assert expr_problems(good, known, _variables()) == ([], frozenset({"device"}))
    relabelled = ('sum by (device, counter) (label_replace(rate(flatfab_queue_dropped_packets'
                  '_total[1m]), "counter", "drops", "", "") or label_replace(rate('
                  'flatfab_queue_ecn_marked_packets_total[1m]), "counter", "marks", "", ""))')
    assert expr_problems(relabelled, known) == ([], frozenset({"device", "counter"}))


def test_the_port_variable_reads_every_metric_that_carries_a_port() -> None:
    """Switch ports and host NICs alike: every exported metric with a port label but the
    findings (which name a port, they are not its data)."""
    known = exported()
    selector, label = label_values(variable_query(template_variables()["port"]))
    m = _SELECTOR.fullmatch(selector.strip())
    assert m is not None and label == "port", selector
    read = set([m.group(1)] if m.group(1) else _named_by(m.group(2), known) or [])
    with_a_port = {n for n, labels in known.items() if "port" in labels and n != FINDING}
    assert read == with_a_port
    assert "flatfab_nic_cnp_sent_packets_total" in read and "flatfab_port_oper_up" in read


# ---- evaluated by Prometheus's engine, on what the lab serves -----------------------------

@cache
def lab_scrape() -> list[tuple[str, dict[str, str], str, float]]:
    """leaf1 and its GPU host leaf1-h1 as a scrape of `flatfab watch` on the lab shows them,
    with a finding active: (sample name, labels, family type, value). Empty labels are
    dropped, as Prometheus drops them."""
    stream = Stream(lab_plan(), interval_s=1.0)
    samples = [s for s in stream.step()
               if s.device in (SWITCH, HOST) and s.metric not in LAB_UNSERVED]
    ports = sorted({s.port for s in samples if s.device == SWITCH and s.port})
    samples += [Sample(SWITCH, port, Metric.OPER_UP, None, 1, stream.time) for port in ports]
    metrics = TelemetryMetrics(targets=[SWITCH, HOST], plan=lab_plan())
    metrics.observe(samples)
    metrics.set_findings([Finding(check="telemetry.lossless_drops", severity=Severity.CRITICAL,
                                  device=SWITCH, port=SWITCH_PORT, message="m")])
    return [(s.name, {k: v for k, v in s.labels.items() if v}, family.type, s.value)
            for family in text_string_to_metric_families(metrics.exposition().decode())
            for s in family.samples]


def _input_series() -> dict[str, str]:
    """The scrape as promtool's input: counters growing, everything else flat."""
    out: dict[str, str] = {}
    for name, labels, kind, value in lab_scrape():
        scraped = labels | {"instance": "127.0.0.1:9464", "job": JOB}
        selector = name + "{" + ",".join(f'{k}="{v}"' for k, v in sorted(scraped.items())) + "}"
        start = f"{value:.0f}" if value.is_integer() else repr(value)
        out[selector] = f"{start}+10x{POINTS}" if kind == "counter" else f"{start}x{POINTS}"
    return out


def _has_data(query: Query, choice: Choice) -> bool:
    """Does a metric the query reads have a series matching the choice (of the variables the
    query uses)?"""
    names = set(METRIC_NAME.findall(query.expr))
    picked = {var: values for var, values in choice.items() if query.uses(var) and values}
    return any(name in names and all(labels.get(var) in values for var, values in picked.items())
               for name, labels, _, _ in lab_scrape())


def _picked(choice: Choice) -> list[Query]:
    """The queries a choice changes that have data for it."""
    return [q for q in queries() if any(q.uses(v) for v in choice) and _has_data(q, choice)]


def test_every_query_returns_series_where_the_lab_serves_only_some_counters(
        tmp_path: Path) -> None:
    assert not any(name.startswith(("flatfab_pfc_pause_frames_sent",
                                    "flatfab_nic_out_of_buffer")) for name, *_ in lab_scrape())
    some: list[tuple[str, list[tuple[str, float]]]] = [
        ("absent(" + substitute(q.expr) + ")", []) for q in queries()]
    for choice in PICKS:
        some += [("absent(" + substitute(q.expr, choice) + ")", []) for q in _picked(choice)]
    # the control: the sum the dashboard had is empty here, and this harness says so
    some.append(("absent(" + substitute(BEFORE_WORST_PORTS) + ")", [("{}", 1.0)]))
    done = promtool_eval(tmp_path, _input_series(), some, eval_s=EVAL_S)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-3000:]
    # the picks reached the panels they are about: a host NIC's, a switch port's
    by_port = {p: {q.panel for q in _picked({"port": [p]})} for p in (SWITCH_PORT, NIC)}
    assert {"NIC CNP sent vs handled",
            "NIC ECN-marked received and out-of-buffer drops"} <= by_port[NIC]
    assert {"Worst ports by PFC pause rate", "Lossless queue drops", "PFC watchdog storms",
            "Port oper state", *PHYSICAL_PANELS} <= by_port[SWITCH_PORT]
    assert not set(PHYSICAL_PANELS) & by_port[NIC]  # a host NIC streams no physical layer


def test_the_port_variable_lists_switch_ports_and_host_nics_alike(tmp_path: Path) -> None:
    selector, label = label_values(variable_query(template_variables()["port"]))
    with_series = {labels["port"]: labels["device"] for name, labels, *_ in lab_scrape()
                   if "port" in labels and name != FINDING}
    assert with_series[SWITCH_PORT] == SWITCH and with_series[NIC] == HOST

    def listed(ports: list[str]) -> list[tuple[str, float]]:
        return [(f'{{{label}="{port}"}}', 1.0) for port in sorted(ports)]

    switch_ports = [p for p, device in with_series.items() if device == SWITCH]
    # label_values(selector, port) lists the port values of the series the selector matches
    cases = [
        (f"group by ({label}) ({substitute(selector)})", listed(list(with_series))),
        (f"group by ({label}) ({substitute(selector, {'device': [HOST]})})", listed([NIC])),
        # the control: the variable it was listed the switch ports alone
        (f"group by ({label}) ({substitute(BEFORE_PORTS)})", listed(switch_ports)),
    ]
    done = promtool_eval(tmp_path, _input_series(), cases, eval_s=EVAL_S)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-3000:]


def test_the_physical_panels_survive_a_device_that_serves_part_of_the_layer(
        tmp_path: Path) -> None:
    """SR Linux counts no corrected codewords, SONiC streams no BER, NVUE a port's BER by
    lane only: each panel still shows what is served (no `a + b`), and the BER panel shows a
    port whose bound the plan does not give."""
    partial = {selector: series for selector, series in _input_series().items()
               if not selector.startswith(("flatfab_port_fec_corrected",
                                           "flatfab_port_pre_fec_ber_bound"))}
    assert len(partial) < len(_input_series())
    by_title = {q.panel: q for q in queries()}
    cases: list[tuple[str, list[tuple[str, float]]]] = [
        ("absent(" + substitute(by_title[title].expr) + ")", [])
        for title in ("FEC codewords corrected and uncorrectable", "Pre-FEC BER",
                      "Link state changes")]
    # the share needs the bound: without it the panel is empty, which it says
    cases.append(("absent(" + substitute(by_title["Pre-FEC BER as a share of its bound"].expr)
                  + ")", [("{}", 1.0)]))
    done = promtool_eval(tmp_path, partial, cases, eval_s=EVAL_S)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-3000:]
