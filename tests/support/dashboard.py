"""The Grafana dashboard of `flatfab watch` as Grafana runs it: the panels' queries and the
template variables read from dashboards/flatfab-lossless.json, and each query with its
variables substituted the way Grafana's Prometheus data source does before sending it.

Grafana's rules, as applied here:
- a variable left at "All" becomes its `allValue` (".*" on this dashboard), unescaped;
- one chosen value inside a regex matcher is regex-escaped (`prometheusSpecialRegexEscape`),
  several become `(a|b)` of escaped values;
- `$__rate_interval` is max(`$__interval` + the data source's scrape interval, 4 x the scrape
  interval); `$__interval` is the panel's step, never below the scrape interval (Grafana's
  `timeInterval` of the data source). The tests scrape every second and look at a few minutes,
  so both are 1 s here: `$__rate_interval` is 4 s.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from tests.support.paths import ROOT

DASHBOARD = ROOT / "dashboards" / "flatfab-lossless.json"
SCRAPE_S = 1.0  # the scrape interval the tests give Prometheus (and the data source)

_VARIABLE = re.compile(r"\$(?:\{(\w+)(?::\w+)?\}|(\w+))")
_LABEL_VALUES = re.compile(r"^\s*label_values\((?:(.*),)?\s*(\w+)\s*\)\s*$", re.DOTALL)
_REGEX_SPECIAL = re.compile(r"[$^*{}\[\]'+?.()|]")
# a metric name a query reads, as written (a `{__name__=~...}` selector names none)
METRIC_NAME = re.compile(r"\bflatfab_[a-z0-9_]+\b")

Choice = Mapping[str, Sequence[str] | None]  # variable -> chosen values (None: All)
ALL: Choice = {}

# Before they were made to survive absent counters, as controls: the pause panel's sum (`a + b`
# is empty wherever b, pauses sent, is absent) and the port variable (switch ports alone).
BEFORE_WORST_PORTS = (
    'topk(10, sum by (device, port) (rate(flatfab_pfc_pause_frames_received_total'
    '{device=~"$device", port=~"$port"}[$__rate_interval])) + sum by (device, port) '
    '(rate(flatfab_pfc_pause_frames_sent_total{device=~"$device", port=~"$port"}'
    '[$__rate_interval])))')
BEFORE_PORTS = 'flatfab_port_oper_up{device=~"$device"}'

# What a user picks on the lab: a switch port, a host NIC, a GPU host, a switch and its port.
PICKS: tuple[Choice, ...] = (
    {"port": ["swp1"]}, {"port": ["eth1"]}, {"device": ["leaf1-h1"]},
    {"device": ["leaf1"], "port": ["swp1"]})


@dataclass(frozen=True)
class Query:
    panel: str  # the panel's title
    ref: str  # its refId
    expr: str  # as written, variables and all
    legend: str

    @property
    def name(self) -> str:
        return f"{self.panel}/{self.ref}"

    def uses(self, variable: str) -> bool:
        return variable in variables_in(self.expr)


@cache
def dashboard() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    return data


def panels() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for panel in dashboard()["panels"]:
        out.append(panel)
        out.extend(panel.get("panels", []))  # panels inside collapsed rows
    return out


def queries() -> list[Query]:
    return [Query(p["title"], t["refId"], t["expr"], t.get("legendFormat", ""))
            for p in panels() for t in p.get("targets", [])]


def template_variables() -> dict[str, dict[str, Any]]:
    return {v["name"]: v for v in dashboard()["templating"]["list"]}


def variable_query(var: Mapping[str, Any]) -> str:
    query = var["query"]
    return str(query["query"] if isinstance(query, dict) else query)


def label_values(query: str) -> tuple[str, str]:
    """`label_values(selector, label)` -> (selector, label); the selector may be "" (any
    metric). Anything else is not a variable query this dashboard uses."""
    m = _LABEL_VALUES.match(query)
    if m is None:
        raise ValueError(f"{query!r}: not label_values(...)")
    return (m.group(1) or "").strip(), m.group(2)


def variables_in(expr: str) -> set[str]:
    return {a or b for a, b in _VARIABLE.findall(expr)}


def rate_interval(interval_s: float = SCRAPE_S, scrape_s: float = SCRAPE_S) -> str:
    return f"{max(interval_s + scrape_s, 4 * scrape_s):g}s"


def _regex_escaped(value: str) -> str:
    # a backslash doubled twice: once for the regex, once for the PromQL string holding it
    value = value.replace("\\", "\\\\\\\\")
    return _REGEX_SPECIAL.sub(lambda m: "\\\\" + m.group(0), value)


def substitute(expr: str, chosen: Choice = ALL, *, interval_s: float = SCRAPE_S,
               scrape_s: float = SCRAPE_S) -> str:
    """`expr` as Grafana sends it with the template variables at `chosen` (All elsewhere)."""
    declared = template_variables()
    builtins = {"__rate_interval": rate_interval(interval_s, scrape_s),
                "__interval": f"{interval_s:g}s", "__interval_ms": f"{interval_s * 1000:g}"}

    def value(m: re.Match[str]) -> str:
        name = m.group(1) or m.group(2)
        if name in builtins:
            return builtins[name]
        if name not in declared:
            raise KeyError(f"${name}: no such template variable")
        picked = chosen.get(name)
        if not picked:
            return str(declared[name].get("allValue") or ".*")
        escaped = [_regex_escaped(v) for v in picked]
        return escaped[0] if len(escaped) == 1 else "(" + "|".join(escaped) + ")"

    return _VARIABLE.sub(value, expr)
