"""The Nautobot service's parts that need no service: settings, configs, daemons, errors."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from flatfab.sot.client import _reason
from flatfab.sot.errors import SotError
from flatfab.sot.seed import _differs, _plain
from labs.nautobot.processes import Daemon, run, running, spawn, stop
from labs.nautobot.server import _bootstrap_sql, password_hash
from labs.nautobot.settings import Settings, nautobot_config, redis_config


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"name": "Bad Name"}, "service name"),
    ({"pg_port": 58080}, "ports must differ"),
    ({"http_port": 80}, "1024-65535"),
])
def test_settings_refuse(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(SotError, match=message):
        Settings(**kwargs)  # type: ignore[arg-type]


def test_env_port_must_be_a_port(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLATFAB_NAUTOBOT_HTTP_PORT", "http")
    with pytest.raises(SotError, match="FLATFAB_NAUTOBOT_HTTP_PORT='http' is not a TCP port"):
        Settings.from_env()


def test_configs_hold_no_secret(tmp_path: Path) -> None:
    settings = Settings(state_root=tmp_path)
    config = nautobot_config(settings)
    compile(config, "nautobot_config.py", "exec")  # valid Python
    assert "DEBUG = False" in config and '"PORT": "55432"' in config
    assert "_secret(\"secret_key\")" in config
    redis = redis_config(settings, "s3cret")
    assert "port 56379" in redis and "bind 127.0.0.1" in redis and 'save ""' in redis


def test_password_hash_is_django_format() -> None:
    encoded = password_hash("pw", "salt", iterations=1000)
    algorithm, iterations, salt, digest = encoded.split("$")
    assert (algorithm, iterations, salt, len(digest)) == ("pbkdf2_sha256", "1000", "salt", 44)


def test_bootstrap_sql_refuses_quotes() -> None:
    with pytest.raises(SotError):
        _bootstrap_sql("x'; DROP TABLE auth_user; --", "a" * 40)
    assert "'" + "a" * 40 + "'" in _bootstrap_sql("pbkdf2_sha256$1$s$AbC+/=", "a" * 40)


def test_seed_compares_as_written() -> None:
    related = {"id": "42", "object_type": "dcim.device", "url": "http://x/api/dcim/devices/42/"}
    assert _plain(related) == "42"
    assert _plain({"value": "m", "label": "Meters"}) == "m"
    assert not _differs("42", related)
    assert not _differs({"bgp_asn": 65000}, {"bgp_asn": 65000, "other": 1})
    assert _differs({"bgp_asn": 65001}, {"bgp_asn": 65000})
    assert not _differs(3, 3.0)


def test_api_error_is_one_line() -> None:
    assert _reason(b'{"name": ["This field is required."]}') == "name: This field is required."
    assert _reason(b'[{}, {"status": ["Invalid."]}]') == "status: Invalid."
    assert _reason(b"<html>\nboom") == "<html>"


def test_failed_command_is_one_line() -> None:
    with pytest.raises(SotError) as caught:
        run([sys.executable, "-c", "import sys; print('noise'); sys.exit('the reason')"],
            what="doing a thing")
    assert "\n" not in str(caught.value)
    assert str(caught.value).startswith("doing a thing: `")
    assert str(caught.value).endswith("failed: the reason")


def test_daemon_stops_by_pid_and_a_reused_pid_is_spared(tmp_path: Path) -> None:
    daemon = spawn([sys.executable, "-c", "import time; time.sleep(60)"],
                   log=tmp_path / "d.log")
    assert running(daemon)
    impostor = Daemon(daemon.pid, daemon.started + 1)  # the pid, given to another program
    assert stop(impostor, term_grace=0.5, kill_grace=0.5)
    assert running(daemon)
    assert stop(daemon, term_grace=5, kill_grace=2)
    assert not running(daemon)
