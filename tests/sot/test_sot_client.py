"""flatfab's Nautobot client against an API double: pagination and chunked filters, and
every failure (refused token, server error, a reply that is not JSON, nobody listening) as
one ApiError naming the API root and the endpoint, never the token."""

from __future__ import annotations

import socket

import pytest

from flatfab.sot.client import CHUNK, ApiError, Nautobot
from tests.doubles.nautobot import TOKEN, ApiDouble, serving

ROWS = [{"id": f"r{i:04d}", "name": f"dev{i}"} for i in range(2500)]


def test_fetch_follows_pagination_and_fetch_in_reads_in_chunks() -> None:
    with serving(ApiDouble({"dcim/devices/": ROWS})) as double, \
            Nautobot(f"{double.url}/api/", TOKEN) as api:
        assert api.fetch("dcim/devices/") == ROWS
        assert len(double.requests) == 3  # 1000 + 1000 + 500
        double.requests.clear()
        wanted = [f"r{i:04d}" for i in range(0, 2500, 10)]  # 250 ids
        assert [r["id"] for r in api.fetch_in("dcim/devices/", "id", wanted)] == wanted
        assert len(double.requests) == -(-len(wanted) // CHUNK)
        assert api.fetch_in("dcim/devices/", "id", []) == []


@pytest.mark.parametrize(("double", "token", "why"), [
    (ApiDouble({}), "f" * 40, "the token is refused (HTTP 403)"),
    (ApiDouble({}, status=500, body=b'{"detail": "database is locked"}'), TOKEN,
     "HTTP 500: detail: database is locked"),
    (ApiDouble({}, body=b"<html>proxy login</html>"), TOKEN, "unexpected reply (not JSON)"),
    (ApiDouble({}, body=b'{"count": 0}'), TOKEN, "unexpected reply (no list of results)"),
])
def test_a_failed_call_is_one_line_naming_root_and_endpoint(
        double: ApiDouble, token: str, why: str) -> None:
    with serving(double), Nautobot(double.url, token) as api, \
            pytest.raises(ApiError) as caught:
        api.fetch("dcim/devices/", location="dc1")
    assert str(caught.value) == f"{double.url}/api/: dcim/devices/: {why}"
    assert token not in str(caught.value)


def test_nobody_listening_is_no_answer() -> None:
    with socket.socket() as sock:  # a port nobody listens on once closed
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with Nautobot(f"http://127.0.0.1:{port}", TOKEN) as api, pytest.raises(ApiError) as caught:
        api.fetch("extras/roles/")
    assert str(caught.value) == f"http://127.0.0.1:{port}/api/: extras/roles/: no answer " \
                                "(Connection refused)"


def test_a_url_that_is_not_http_is_refused() -> None:
    with pytest.raises(Exception, match="expected http"):
        Nautobot("ftp://nautobot", TOKEN)
