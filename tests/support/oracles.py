"""The offline oracles that judge a rendered config, one per platform that has one.

`ORACLES` maps a platform name to its `Oracle`: `missing()` says in one line why it cannot
run here (None when it can), `load()` loads it once (later calls return what the first
loaded), `validate(device_name, config_text, planned)` lists what it finds wrong with the
config (empty: accepted). Used by the golden-file tests (every example fabric's configs),
each platform's own tests, and benchmarks/render_cost.py.

- eos: pyavd. AVD's schema accepts the structured config flatfab builds for the planned
  device, without violations or deprecations, and AVD's templates print the config text
  exactly. Needs the planned device (EOS text does not read back into AVD's model).
- sonic: SONiC's YANG models (shared/schemas/sonic-yang, libyang) judge the CONFIG_DB
  section, on top of the hardware's PORT lanes.
- nvue: nvueschema, strictly: the config read back as `nv config patch` reads it validates
  on every release of the target line and comes back from the models key for key, and its
  cross references (what nvueschema leaves unchecked) hold.
- junos: Juniper's QFX YANG and the oracle's commit rules (shared/schemas/junos-yang) judge
  the tree the config is printed from; the config is exactly that tree printed. Needs the
  planned device (the oracle reads Junos JSON, not curly-brace text).
- srlinux: Nokia's SR Linux YANG (shared/schemas/srlinux-yang) judges the config's replaces.
- frr, linux_host: flatfab's own parsers read the config back (links section and FRR
  config; the host config).

nxos has none: its goldens are checked against Cisco's documented syntax by hand
(tests/golden/platforms/nxos/README.md).
"""

from __future__ import annotations

import difflib
import importlib.util
import json
from functools import cached_property
from pathlib import Path
from types import ModuleType
from typing import Any

from flatfab.model.state import DeviceState
from tests.support.paths import SHARED, SONIC_YANG, sonic_yang_missing

JUNOS_YANG = SHARED / "schemas" / "junos-yang"
SRLINUX_YANG = SHARED / "schemas" / "srlinux-yang"
LIBYANG = "libyang not installed (apt libyang2-dev; pip libyang==2.7.1)"


def _validator(name: str, folder: Path) -> ModuleType:
    """A shared oracle's validate.py, imported from its folder."""
    spec = importlib.util.spec_from_file_location(name, folder / "validate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _yang_missing(what: str, folder: Path) -> str | None:
    if not (folder / "validate.py").is_file():
        return f"{what} YANG oracle not found under {folder} (set FLATFAB_SHARED)"
    try:
        import libyang  # noqa: F401, PLC0415 - optional test dependency
    except ImportError:
        return LIBYANG
    return None


def _diff(expected: str, text: str, name: str, oracle: str) -> list[str]:
    if text == expected:
        return []
    diff = "".join(difflib.unified_diff(expected.splitlines(True), text.splitlines(True),
                                        oracle, name))
    return [f"{name}: differs from what {oracle} prints:\n{diff[:4000]}"]


class Oracle:
    """One platform's oracle. Subclasses say what it needs (`missing`), what loads once
    (`_load`) and how a config is judged (`_validate`)."""

    platform = ""
    needs_plan = False  # validate() needs the planned device, not only the text

    def missing(self) -> str | None:
        """Why the oracle cannot run here, in one line (None: it can)."""
        return None

    def load(self) -> Any:
        """What the oracle loads once (models, modules); the first call pays for it."""
        return self._loaded

    @cached_property
    def _loaded(self) -> Any:
        why = self.missing()
        if why:
            raise RuntimeError(f"oracle {self.platform} unavailable: {why}")
        return self._load()

    def _load(self) -> Any:
        return None

    def validate(self, device_name: str, config_text: str,
                 planned: DeviceState | None = None) -> list[str]:
        """What the oracle finds wrong with `config_text`, the rendered config of
        `device_name` (empty: accepted). `planned`: the device the config was rendered
        from, which oracles with needs_plan judge the text against."""
        if self.needs_plan and planned is None:
            return [f"{device_name}: the {self.platform} oracle needs the planned device"]
        return self._validate(self.load(), device_name, config_text, planned)

    def _validate(self, loaded: Any, name: str, text: str,
                  planned: DeviceState | None) -> list[str]:
        raise NotImplementedError


# ---- eos: pyavd -----------------------------------------------------------------------------


class EosOracle(Oracle):
    platform = "eos"
    needs_plan = True

    def missing(self) -> str | None:
        try:
            import pyavd  # noqa: F401, PLC0415
        except ImportError:
            return "pyavd not installed"
        return None

    def _load(self) -> Any:
        import pyavd  # noqa: PLC0415

        # AVD loads its schema and templates on first use: pay for that here
        checked = pyavd.validate_structured_config({"hostname": "oracle"})
        pyavd.get_device_config(checked.validated_data)
        return pyavd

    def structured(self, planned: DeviceState) -> tuple[Any, list[str]]:
        """AVD's validated structured config of the planned device, and what AVD's schema
        says of flatfab's (violations and deprecations)."""
        from flatfab.platforms.eos import PLATFORM  # noqa: PLC0415
        from flatfab.platforms.eos.avd import structured_config  # noqa: PLC0415

        pyavd = self.load()
        checked = pyavd.validate_structured_config(structured_config(planned, PLATFORM.facts))
        result = checked.validation_result
        found = [f"{planned.name}: AVD schema: {'.'.join(map(str, v.path))}: {v.message}"
                 for v in result.violations]
        found += [f"{planned.name}: AVD deprecation: {'.'.join(map(str, d.path))}: "
                  f"{getattr(d, 'message', d)}" for d in result.deprecations]
        return checked.validated_data, found

    def expected(self, planned: DeviceState) -> str:
        """The config AVD prints for the planned device."""
        data, _ = self.structured(planned)
        return str(self.load().get_device_config(data))

    def _validate(self, pyavd: Any, name: str, text: str,
                  planned: DeviceState | None) -> list[str]:
        assert planned is not None
        data, found = self.structured(planned)
        return found or _diff(str(pyavd.get_device_config(data)), text, name, "pyavd")


# ---- sonic: SONiC YANG ----------------------------------------------------------------------


class SonicOracle(Oracle):
    platform = "sonic"

    def missing(self) -> str | None:
        return sonic_yang_missing()

    def _load(self) -> Any:
        module = _validator("sonic_yang_validate", SONIC_YANG)
        return module, module.Oracle(SONIC_YANG / "yang")

    def config_db_violations(self, db: dict[str, Any]) -> list[str]:
        """SONiC's YANG verdict on a CONFIG_DB, on top of the hardware's PORT lanes."""
        module, oracle = self.load()
        base = {"PORT": {name: {"lanes": ",".join(str(int(name[8:]) + i) for i in range(8))}
                         for name in db.get("PORT", {})}}
        violations, _ = oracle.validate(module.merge(base, json.loads(json.dumps(db))))
        return list(violations)

    def _validate(self, loaded: Any, name: str, text: str,
                  planned: DeviceState | None) -> list[str]:
        from flatfab.platforms import configdb  # noqa: PLC0415
        from flatfab.platforms.sonic import PLATFORM  # noqa: PLC0415

        sections = PLATFORM.sections(text)
        if "config_db" not in sections:
            return [f"{name}: no CONFIG_DB section"]
        db = configdb.load("\n".join(sections["config_db"]))
        return [f"{name}: {v}" for v in self.config_db_violations(db)]


# ---- nvue: nvueschema, strictly -------------------------------------------------------------


class NvueOracle(Oracle):
    platform = "nvue"

    def missing(self) -> str | None:
        try:
            import nvueschema  # noqa: F401, PLC0415
        except ImportError:
            return "nvueschema not installed"
        return None

    def _load(self) -> Any:
        from flatfab.platforms.nvue.oracle import model  # noqa: PLC0415
        from flatfab.platforms.nvue.render import TARGET  # noqa: PLC0415

        for module in TARGET.models:  # the generated models of every release: imported once
            model(module)
        return TARGET.models

    @staticmethod
    def references(nvue: dict[str, Any]) -> list[str]:
        """What nvueschema leaves unchecked (Dict[str, Any] subtrees, cross references): DSCP
        keys 0..63, switch priorities and traffic classes 0..7, bound profiles that exist."""
        problems: list[str] = []
        qos = nvue.get("qos", {})
        assert isinstance(qos, dict)
        for profile in qos.get("mapping", {}).values():
            problems += [f"dscp {d}" for d in profile.get("dscp", {}) if not 0 <= int(d) <= 63]
        for kind in ("pfc", "traffic-pool"):
            for profile in qos.get(kind, {}).values():
                problems += [f"{kind} priority {p}" for p in profile.get("switch-priority", {})
                             if not 0 <= int(p) <= 7]
        for kind in ("congestion-control", "egress-scheduler"):
            for profile in qos.get(kind, {}).values():
                problems += [f"{kind} class {t}" for t in profile.get("traffic-class", {})
                             if not 0 <= int(t) <= 7]
        interfaces = nvue.get("interface", {})
        assert isinstance(interfaces, dict)
        for name, entry in interfaces.items():
            for kind, binding in entry.get("qos", {}).items():
                profile = binding.get("profile")
                if profile is not None and profile not in qos.get(kind, {}):
                    problems.append(f"{name}: qos {kind} profile {profile!r} is not defined")
            base = entry.get("base-interface")
            if base is not None and base not in interfaces:
                problems.append(f"{name}: base-interface {base!r} is not rendered")
        vlans = nvue.get("bridge", {}).get("domain", {}).get("br_default", {}).get("vlan", {})
        for name, entry in interfaces.items():
            access = entry.get("bridge", {}).get("domain", {}).get("br_default", {}).get("access")
            if access is not None and str(access) not in vlans:
                problems.append(f"{name}: access VLAN {access} is not a bridge VLAN")
        return problems

    def _validate(self, models: Any, name: str, text: str,
                  planned: DeviceState | None) -> list[str]:
        from flatfab.platforms.nvue.nvyaml import applied, load_ops  # noqa: PLC0415
        from flatfab.platforms.nvue.oracle import violations  # noqa: PLC0415

        nvue = applied(load_ops(text))
        found = [f"{name} on {module}: {v}" for module in models
                 for v in violations(nvue, module)]
        return found + [f"{name}: {p}" for p in self.references(nvue)]


# ---- junos: Juniper's QFX YANG --------------------------------------------------------------


class JunosOracle(Oracle):
    platform = "junos"
    needs_plan = True

    def missing(self) -> str | None:
        return _yang_missing("Junos", JUNOS_YANG)

    def _load(self) -> Any:
        return _validator("junos_yang_validate", JUNOS_YANG).Oracle(JUNOS_YANG / "yang")

    def tree_violations(self, tree: dict[str, Any]) -> list[str]:
        """The YANG models' and commit rules' verdict on a Junos JSON configuration."""
        violations, _ = self.load().validate(tree)
        return list(violations)

    def _validate(self, loaded: Any, name: str, text: str,
                  planned: DeviceState | None) -> list[str]:
        from flatfab.platforms.junos import PLATFORM  # noqa: PLC0415
        from flatfab.platforms.junos.render import configuration  # noqa: PLC0415
        from flatfab.platforms.junos.text import to_text  # noqa: PLC0415

        assert planned is not None
        tree = configuration(planned, PLATFORM.names)
        body = text.split("\n", 1)[1] if text.startswith("#") else text
        found = _diff(to_text(tree["configuration"]), body, name, "the planned Junos tree")
        return found + [f"{name}: {v}" for v in self.tree_violations(tree)]


# ---- srlinux: Nokia's SR Linux YANG ---------------------------------------------------------


class SrlinuxOracle(Oracle):
    platform = "srlinux"

    def missing(self) -> str | None:
        return _yang_missing("SR Linux", SRLINUX_YANG)

    def _load(self) -> Any:
        module = _validator("srlinux_yang_validate", SRLINUX_YANG)
        return module.Oracle(SRLINUX_YANG / "yang", SRLINUX_YANG / "features-off.txt")

    def tree_violations(self, tree: dict[str, Any]) -> list[str]:
        """The YANG models' verdict on an SR Linux configuration tree."""
        violations, _ = self.load().validate(tree)
        return list(violations)

    def _validate(self, loaded: Any, name: str, text: str,
                  planned: DeviceState | None) -> list[str]:
        from flatfab.platforms.srlinux.render import as_tree  # noqa: PLC0415
        from flatfab.platforms.srlinux.sections import entries_of  # noqa: PLC0415

        try:
            tree = as_tree(entries_of(json.loads(text)))
        except ValueError as exc:
            return [f"{name}: not SR Linux JSON: {exc}"]
        return [f"{name}: {v}" for v in self.tree_violations(tree)]


# ---- frr, linux_host: flatfab's own parsers -------------------------------------------------


class FrrOracle(Oracle):
    platform = "frr"

    def _validate(self, loaded: Any, name: str, text: str,
                  planned: DeviceState | None) -> list[str]:
        from flatfab.platforms.frr.links import LinksError, parse_links, split_sections  # noqa: PLC0415

        links, frr = split_sections(text)
        if links is None:
            return [f"{name}: no links section"]
        try:
            parse_links(links)
        except LinksError as exc:
            return [f"{name}: {exc}"]
        if not (frr.startswith("frr defaults datacenter\n") and frr.endswith("end\n")):
            return [f"{name}: the FRR config does not run from `frr defaults datacenter` "
                    "to `end`"]
        return []


class LinuxHostOracle(Oracle):
    platform = "linux_host"

    def _validate(self, loaded: Any, name: str, text: str,
                  planned: DeviceState | None) -> list[str]:
        from flatfab.platforms.linux_host.config import HostConfigError, parse_config  # noqa: PLC0415

        try:
            parse_config(text)
        except HostConfigError as exc:
            return [f"{name}: {exc}"]
        return []


EOS, SONIC, NVUE = EosOracle(), SonicOracle(), NvueOracle()
JUNOS, SRLINUX = JunosOracle(), SrlinuxOracle()
ORACLES: dict[str, Oracle] = {o.platform: o for o in (
    EOS, SONIC, NVUE, JUNOS, SRLINUX, FrrOracle(), LinuxHostOracle())}


def usable(oracle: Oracle) -> Oracle:
    """`oracle`, or the calling test skipped with the one-line reason it cannot run here."""
    why = oracle.missing()
    if why:
        import pytest  # noqa: PLC0415

        pytest.skip(why)
    return oracle
