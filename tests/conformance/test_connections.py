"""Any Nornir connection plugin carries a platform, with no edit to workflows/: NAPALM,
netmiko, scrapli (nornir-scrapli) or a client the platform's own package registers (an
HTTP/JSON-RPC API). The platform says what a run's mode adds to the plugin's extras and turns
the opened connection into a DeviceDriver."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from nornir.core import Nornir
from nornir.core.configuration import Config
from nornir.core.inventory import ConnectionOptions, Host, Hosts, Inventory
from nornir.core.plugins.connections import ConnectionPluginRegister

from flatfab.model.state import DeviceState, Probe
from flatfab.platforms.base import (
    DEFAULT_TIMEOUTS,
    DeviceDriver,
    Platform,
    ReadOnlyDriver,
    ReadOnlyError,
    Timeouts,
)
from flatfab.platforms.registry import PLATFORMS
from flatfab.workflows.devices import connections

OPENED: list[dict[str, Any]] = []


class JsonRpcClient:
    """What a platform's own API client would be: opened by Nornir, adapted by the platform."""

    def __init__(self) -> None:
        self.connection: Any = None

    def open(self, hostname: str | None, username: str | None, password: str | None,
             port: int | None, platform: str | None, extras: dict[str, Any] | None = None,
             configuration: Config | None = None) -> None:
        OPENED.append({"hostname": hostname, "platform": platform, **(extras or {})})
        self.connection = _Driver()

    def close(self) -> None:
        self.connection = None


class _Driver:
    """The client's DeviceDriver (only what the test touches answers)."""

    def __getattr__(self, name: str) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            return {"running": "hostname x\n"} if name == "get_config" else None
        return call


class ApiPlatform(Platform):
    def render(self, device: DeviceState) -> str:
        return ""

    def sections(self, config: str) -> dict[str, list[str]]:
        return {}

    def collect(self, driver: DeviceDriver, planned: DeviceState,
                probes: list[Probe]) -> DeviceState:
        return planned

    def connection_extras(self, extras: dict[str, Any], *, read_only: bool,
                          timeouts: Timeouts = DEFAULT_TIMEOUTS) -> dict[str, Any]:
        return {**extras, "session": "read" if read_only else "write",
                "timeout_s": timeouts.connect}

    def adapt(self, connection: Any, *, read_only: bool) -> DeviceDriver:
        assert isinstance(connection, _Driver)
        return connection  # type: ignore[return-value]


@pytest.fixture
def api_platform(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Platform]:
    facts = yaml.safe_load(PLATFORMS["eos"].facts_file.read_text(encoding="utf-8"))
    facts.update(name="apitest", connection={"plugin": "apitest_jsonrpc", "driver": "apitest",
                                             "port": 443})
    (tmp_path / "platform.yaml").write_text(yaml.safe_dump(facts), encoding="utf-8")
    ConnectionPluginRegister.register("apitest_jsonrpc", JsonRpcClient)  # type: ignore[arg-type]
    platform = ApiPlatform(tmp_path / "platform.yaml")
    monkeypatch.setitem(PLATFORMS, "apitest", platform)
    yield platform
    ConnectionPluginRegister.deregister("apitest_jsonrpc")


class _Task:
    def __init__(self, host: Host, nornir: Nornir) -> None:
        self.host, self.nornir = host, nornir


def _host() -> tuple[Host, Nornir]:
    options = {"apitest_jsonrpc": ConnectionOptions(extras={"verify": "/etc/ssl/ca.pem"})}
    host = Host("sw1", hostname="192.0.2.1", platform="apitest", connection_options=options)
    return host, Nornir(inventory=Inventory(hosts=Hosts({"sw1": host})))


def test_a_platform_s_own_api_client_is_opened_and_adapted(api_platform: Platform) -> None:
    OPENED.clear()
    host, nornir = _host()
    connections.with_timeouts(nornir, Timeouts(connect=4.0, command=30.0))
    driver = connections.driver(_Task(host, nornir), read_only=True)  # type: ignore[arg-type]
    assert OPENED == [{"hostname": "192.0.2.1", "platform": "apitest",
                       "verify": "/etc/ssl/ca.pem", "session": "read", "timeout_s": 4.0}]
    assert isinstance(driver, ReadOnlyDriver)  # the platform's guard wraps it for reads
    assert driver.get_config(retrieve="running") == {"running": "hostname x\n"}
    with pytest.raises(ReadOnlyError):
        driver.commit_config()
    # the inventory Nornir scripts share keeps its own extras
    assert host.get_connection_parameters("apitest_jsonrpc").extras == {
        "verify": "/etc/ssl/ca.pem"}


def test_napalm_platforms_get_read_only_in_their_optional_args() -> None:
    frr = PLATFORMS["frr"]
    extras = {"optional_args": {"key_file": "k"}}
    assert frr.connection_extras(extras, read_only=True) == {
        "timeout": 60.0, "optional_args": {"key_file": "k", "read_only": True, "timeout": 10.0}}
    assert extras == {"optional_args": {"key_file": "k"}}


def test_the_plugins_flatfab_s_platforms_name_are_installed() -> None:
    """Each platform names a registered plugin (the suite checks that per platform); nxos's,
    nornir-scrapli, comes with the dev install."""
    ConnectionPluginRegister.auto_register()
    assert "scrapli" in ConnectionPluginRegister.available
