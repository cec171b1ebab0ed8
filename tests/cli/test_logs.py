"""What flatfab's log handlers write never holds a password: FLATFAB_PASSWORD* values, secrets
registered from a prompt, password-like keys in dict reprs and key=value text, and URL
credentials are masked, tracebacks included. Without --debug or --log-file the libraries'
records go nowhere (never Python's last-resort handler on the console)."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from flatfab.cli import logs


@pytest.fixture(autouse=True)
def quiet_after() -> Iterator[None]:
    yield
    logs.configure(debug=False, log_file=None)


def test_environment_passwords_and_registered_secrets_are_masked(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLATFAB_PASSWORD", "env-pass-1")
    monkeypatch.setenv("FLATFAB_PASSWORD_SPINES", "env-pass-1-longer")
    logs.hide("prompted-pw")
    text = logs.masked("a env-pass-1 b env-pass-1-longer c prompted-pw d")
    assert text == f"a {logs.MASK} b {logs.MASK} c {logs.MASK} d"


@pytest.mark.parametrize(("text", "shown"), [
    ("{'hostname': 'h', 'password': 'p@ss w'}", "{'hostname': 'h', 'password': '********'}"),
    ('{"secret": "s3", "port": 22}', '{"secret": "********", "port": 22}'),
    ("open(password=hunter2, port=22)", "open(password=********, port=22)"),
    ("auth_password: topsecret", "auth_password: ********"),
    ("ssh_password=x1 enable_secret='y 2'", "ssh_password=******** enable_secret='********'"),
    ("https://admin:pw123@192.0.2.1/command-api",
     "https://admin:********@192.0.2.1/command-api"),
    ("no secret here: timed out", "no secret here: timed out"),
])
def test_password_like_values_are_masked(text: str, shown: str) -> None:
    assert logs.masked(text) == shown


def test_a_log_file_gets_tracebacks_without_the_password(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLATFAB_PASSWORD", "in-the-traceback-9")
    log = tmp_path / "run.log"
    logs.configure(debug=False, log_file=log)
    try:
        raise ConnectionError("login as admin with in-the-traceback-9 refused")
    except ConnectionError:
        logging.getLogger("nornir.core.task").error("Host 'leaf1': task failed",
                                                    exc_info=True)
    logs.configure(debug=False, log_file=None)  # closes the file
    text = log.read_text()
    assert "Traceback (most recent call last)" in text and "Host 'leaf1'" in text
    assert "in-the-traceback-9" not in text and logs.MASK in text


def test_without_debug_or_a_file_records_go_to_a_null_handler() -> None:
    logs.configure(debug=False, log_file=None)
    mine = [h for h in logging.getLogger().handlers if h in logs._installed]
    assert [type(h) for h in mine] == [logging.NullHandler]
    # a root handler: Python's last resort (stderr) never sees the libraries' records
    assert logging.getLogger("nornir.core").getEffectiveLevel() == logging.WARNING
    logs.configure(debug=True, log_file=None)
    mine = [h for h in logging.getLogger().handlers if h in logs._installed]
    assert [type(h) for h in mine] == [logging.StreamHandler] and logs.debugging()
