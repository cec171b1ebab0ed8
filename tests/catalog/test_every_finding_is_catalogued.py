"""Every finding id flatfab raises is in the one catalog (flatfab.catalog), two ways:

- in the source: every construction of a finding in tasks/ (`Finding(...)`, and every helper
  that passes an id it is given on to one: `not_judged`, `unmanaged_finding`, ...) names
  an id the catalog holds, as a literal, a module's constant, a loop over a module's
  constants, or a check's own `.id`; and every id the catalog holds from outside the
  checks is raised somewhere;
- in runs: the static checks on every example intent, the live checks on a healthy,
  an unread and a blank lab, the health engine on streams with faults, verify --traffic's
  judgement of counters and the source-of-truth audit of a broken snapshot; every finding
  made meanwhile (whoever made it) has a catalog id.

A new finding id is declared where it is raised: a check (`@check` with its docstring) or
a `FindingKind` in the `KINDS` that flatfab.catalog collects (docs/development/index.md).
"""

from __future__ import annotations

import ast
import importlib
import typing
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from flatfab.catalog import Source, entries
from flatfab.checks import CheckContext, Stage, run_checks
from flatfab.checks.base import Finding
from flatfab.intent.loader import load_intent
from flatfab.model.state import FabricState
from flatfab.plan.planner import plan
from flatfab.plan.traffic import hops, plan_flows
from flatfab.sot.audit import sot_findings
from flatfab.telemetry import conditions
from flatfab.telemetry.health import HealthEngine
from flatfab.telemetry.samples import Metric
from flatfab.workflows.commands.traffic import Counters, _judge
from tests.support.checks import PLAN, healthy
from tests.support.paths import ROOT
from tests.support.sot_snapshot import LAB, MAPPING, snapshot_of
from tests.support.telemetry_streams import Stream, lab_plan

TASKS = ROOT / "tasks"
IDS = set(entries())
OUTSIDE_CHECKS = {i for i, e in entries().items() if e.source is not Source.CHECK}
OWN_ID = "a check's own id"  # `item.id`, `self.id`: in the catalog by construction


# --- the source ------------------------------------------------------------------------------

def _module(path: Path) -> Any:
    parts = path.relative_to(TASKS).with_suffix("").parts
    dotted = ".".join(("flatfab", *(parts[:-1] if parts[-1] == "__init__" else parts)))
    return importlib.import_module(dotted)


def _values(value: object) -> list[str] | None:
    """The ids a module's constant holds: a string, or a collection (a dict's keys) of them."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, tuple | list | set | frozenset | dict) and value and all(
            isinstance(v, str) for v in value):
        return list(value)
    return None


class _Source:
    """One module of tasks/: its tree with parents, and the module to read constants from."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        self.parent: dict[ast.AST, ast.AST] = {}
        self.calls: list[ast.Call] = []  # every call, walked once (the fixpoint below re-reads)
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Call):
                self.calls.append(node)
            for child in ast.iter_child_nodes(node):
                self.parent[child] = node
        self._loaded: Any = None

    @property
    def module(self) -> Any:
        if self._loaded is None:
            self._loaded = _module(self.path)
        return self._loaded

    def where(self, node: ast.AST) -> str:
        return f"{self.path.relative_to(ROOT)}:{getattr(node, 'lineno', '?')}"

    def function(self, node: ast.AST) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        while node in self.parent:
            node = self.parent[node]
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                return node
        return None

    def resolve(self, expr: ast.expr, at: ast.AST) -> list[str] | str | None:
        """The ids `expr` can be, "param" (the enclosing function passes on an id it is
        given), OWN_ID, or None (not resolved)."""
        if isinstance(expr, ast.Constant):
            return [expr.value] if isinstance(expr.value, str) else None
        if isinstance(expr, ast.Attribute):
            if expr.attr == "id":
                return OWN_ID
            if isinstance(expr.value, ast.Name):
                owner = getattr(self.module, expr.value.id, None)
                return _values(getattr(owner, expr.attr, None)) if owner is not None else None
            return None
        if not isinstance(expr, ast.Name):
            return None
        func = self.function(at)
        if func is not None:
            if expr.id in {a.arg for a in [*func.args.posonlyargs, *func.args.args,
                                               *func.args.kwonlyargs]}:
                return "param"
            loops = [_unwrapped(n.iter) for n in ast.walk(func)
                     if isinstance(n, ast.For | ast.comprehension)
                     and isinstance(n.target, ast.Name) and n.target.id == expr.id]
            if loops:
                found: list[str] = []
                for iterable in loops:
                    values = (self.resolve(iterable, at) if not isinstance(iterable, ast.Tuple)
                              else [v for e in iterable.elts
                                    for v in (self.resolve(e, at) or [])])
                    if not isinstance(values, list):
                        return None
                    found += values
                return found
        return _values(getattr(self.module, expr.id, None))


def _unwrapped(iterable: ast.expr) -> ast.expr:
    """`sorted(X)`, `list(X)`, ... as X: the same ids."""
    if (isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name)
            and iterable.func.id in {"sorted", "list", "tuple", "set"} and len(iterable.args) == 1):
        return iterable.args[0]
    return iterable


def _id_argument(call: ast.Call, maker: tuple[str, int]) -> ast.expr | None:
    keyword, index = maker
    for kw in call.keywords:
        if kw.arg == keyword:
            return kw.value
    return call.args[index] if len(call.args) > index else None


def _callee(call: ast.Call) -> str | None:
    func = call.func
    return func.id if isinstance(func, ast.Name) else \
        func.attr if isinstance(func, ast.Attribute) else None


@cache
def _constructions() -> tuple[tuple[_Source, ast.Call, ast.expr | None], ...]:
    """Every call in tasks/ that makes a finding, with the expression of its id: calls of
    Finding, then of every function that passes an id it is given on to a finding. Found
    once per session: two tests read it, and parsing all of tasks/ costs seconds."""
    sources = [_Source(p) for p in sorted(TASKS.rglob("*.py")) if "__pycache__" not in p.parts]
    makers: dict[str, tuple[str, int]] = {"Finding": ("check", 0)}
    calls: dict[int, tuple[_Source, ast.Call, ast.expr | None]] = {}
    grew = True
    while grew:  # until no more helpers pass an id on
        grew = False
        for source in sources:
            for call in source.calls:
                name = _callee(call)
                if name not in makers or id(call) in calls:
                    continue
                expr = _id_argument(call, makers[name])
                calls[id(call)] = (source, call, expr)
                func = source.function(call)
                if isinstance(expr, ast.Name) and func is not None and func.name not in makers:
                    params = [a.arg for a in [*func.args.posonlyargs, *func.args.args]]
                    if params and params[0] in {"self", "cls"}:
                        params = params[1:]
                    if expr.id in params:
                        makers[func.name] = (expr.id, params.index(expr.id))
                        grew = True
                    elif expr.id in {a.arg for a in func.args.kwonlyargs}:
                        makers[func.name] = (expr.id, 10**6)  # keyword only
                        grew = True
    return tuple(calls.values())


def test_every_finding_made_in_the_source_names_a_catalog_id() -> None:
    unknown, unresolved, raised = [], [], set()
    for source, call, expr in _constructions():
        if expr is None:
            unresolved.append(f"{source.where(call)}: a finding without an id")
            continue
        ids = source.resolve(expr, call)
        if ids is None:
            unresolved.append(f"{source.where(call)}: {ast.unparse(expr)}")
        elif isinstance(ids, list):
            raised |= set(ids)
            unknown += [f"{source.where(call)}: {i}" for i in ids if i not in IDS]
    assert not unresolved, ("an id this test cannot follow to a constant; name a module's "
                            "constant:\n" + "\n".join(unresolved))
    assert not unknown, ("ids raised but not in the catalog: declare each as a check or a "
                         "FindingKind in the KINDS flatfab.catalog collects:\n"
                         + "\n".join(unknown))
    assert not OUTSIDE_CHECKS - raised, f"declared but raised nowhere: {OUTSIDE_CHECKS - raised}"


def test_the_source_guard_sees_what_it_guards() -> None:
    """Not vacuous: it finds the helpers and the ids of each kind of finding."""
    found = {(source.path.name, ast.unparse(expr)) for source, _, expr in _constructions()
             if expr is not None}
    assert ("conditions.py", "PAUSE_STORM") in found  # through _finding
    assert ("traffic.py", "check") in found  # a loop over TRAFFIC_CHECKS, through not_judged
    assert ("audit.py", "DEVICES") in found and ("watch.py", "conditions.SILENT") in found
    assert ("base.py", "self.id") in found


# --- runs ------------------------------------------------------------------------------------

@pytest.fixture
def made(monkeypatch: pytest.MonkeyPatch) -> set[str]:
    """The check id of every Finding made while the test runs, wherever it is made."""
    ids: set[str] = set()
    original = Finding.__init__

    def record(self: Finding, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        ids.add(self.check)

    monkeypatch.setattr(Finding, "__init__", record)
    return ids


def _blank(state: FabricState) -> FabricState:
    """Every device read, and reporting nothing: no interface, session, route or setting."""
    blank = state.model_copy(deep=True)
    for device in blank.devices.values():
        device.interfaces, device.bgp, device.routes, device.probes = {}, {}, {}, []
    return blank


def _unstated(state: FabricState) -> FabricState:
    """Every switch read, with a buffer setting it does not state."""
    unstated = state.model_copy(deep=True)
    for device in unstated.devices.values():
        if device.qos is not None:
            device.qos.unknown = {"pool.ingress_lossless": "the buffer manager sizes it"}
    return unstated


def _unread(state: FabricState) -> FabricState:
    unread = state.model_copy(deep=True)
    for device in unread.devices.values():
        device.reachable = False
    return unread


def test_every_finding_of_the_checks_runs_has_a_catalog_id(made: set[str]) -> None:
    for folder in sorted((ROOT / "intents").iterdir()):
        if (folder / "fabric.yaml").is_file():
            planned = plan(load_intent(folder))
            run_checks(CheckContext(state=planned, plan=planned, stage=Stage.STATIC))
    for observed in (healthy(), _unread(healthy()), _blank(healthy()), _unstated(healthy())):
        run_checks(CheckContext(state=observed, plan=PLAN, stage=Stage.LIVE))
    assert {"device.reachable", "interface.present", "state.unknown"} <= made
    assert made <= IDS, made - IDS


def _engine() -> tuple[HealthEngine, Stream]:
    # the thresholds type the engine takes, wherever it is declared
    limits = typing.get_type_hints(HealthEngine.__init__)["thresholds"]()
    return HealthEngine(lab_plan(), limits), Stream(lab_plan(), limits.interval_s)


def test_every_finding_of_the_telemetry_has_a_catalog_id(made: set[str]) -> None:
    engine, stream = _engine()
    stream.set("leaf1", "swp51", Metric.PFC_TX, 3, 100_000)
    stream.set("leaf1", "swp52", Metric.WATCHDOG, 3, 1)
    stream.set("leaf1", "swp51", Metric.QUEUE_DROPS, 3, 1000)
    stream.set("leaf3", "swp51", Metric.FEC_UNCORRECTABLE, None, 4)
    stream.set("leaf3", "swp52", Metric.CARRIER_TRANSITIONS, None, 2)
    stream.level("leaf4", "swp51", Metric.PRE_FEC_BER, 1e-5)
    stream.muted.add("leaf2")
    for _ in range(30):
        engine.feed(stream.step())
        engine.tick(stream.time)
    conditions.silent("leaf2", stream.time - 60, stream.time, engine.thresholds)
    assert {conditions.PAUSE_STORM, conditions.WATCHDOG, conditions.LOSSLESS_DROPS,
            conditions.SILENT, *conditions.PHYSICAL_CONDITIONS} <= made
    assert made <= IDS, made - IDS


def test_every_finding_of_traffic_and_the_source_of_truth_has_a_catalog_id(
        made: set[str]) -> None:
    group = plan_flows(PLAN)[0]
    before: Counters = {}
    after: Counters = {}
    for hop in hops(PLAN, group):
        for port in hop.ports:
            before.setdefault(hop.device, {})[port] = {3: {"packets": 0, "drops": 0}}
            after.setdefault(hop.device, {})[port] = {3: {"packets": 1, "drops": 5}}
    _judge(PLAN, group, before, after)
    whole = snapshot_of(LAB)
    broken = whole.model_copy(update={"devices": whole.devices[1:], "cables": whole.cables[1:]})
    sot_findings(broken, healthy(LAB), MAPPING, LAB)
    sot_findings(whole, _unread(healthy(LAB)), MAPPING, LAB)
    assert {"traffic.class", "traffic.lossless_drops", "sot.devices", "sot.cabling"} <= made
    assert made <= IDS, made - IDS
