"""A stand-in for Nautobot's REST API on 127.0.0.1: canned objects per endpoint, filters
applied the way the API applies them (repeated keys are alternatives), pagination by
`limit`/`offset` with absolute `next` links, bulk POST (new ids; a new cable marks its
interfaces cabled) and PATCH (by id), a failing endpoint on demand, and every request
recorded."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

TOKEN = "0123456789abcdef0123456789abcdef01234567"


@dataclass
class ApiDouble:
    objects: dict[str, list[dict[str, Any]]]  # endpoint ("dcim/devices/") -> objects
    status: int = 200  # what every reply says (401, 500, ...)
    body: bytes | None = None  # a reply body instead of the objects
    requests: list[tuple[str, str]] = field(default_factory=list)  # (method, path?query)
    url: str = ""
    fail_writes_to: str | None = None  # an endpoint whose writes answer HTTP 500


def _matches(obj: dict[str, Any], key: str, wanted: list[str]) -> bool:
    """`device_id=x` matches an object whose `device` is x (by id or as a nested object);
    a list value (a cable's devices) matches if any of it does."""
    value = obj.get(key.removesuffix("_id"))
    values = value if isinstance(value, list) else [value]
    return any(str(v.get("id") if isinstance(v, dict) else v) in wanted for v in values)


def _cable(double: ApiDouble, cable: dict[str, Any]) -> None:
    ends = {str(cable.get("termination_a_id")), str(cable.get("termination_b_id"))}
    for iface in double.objects.get("dcim/interfaces/", []):
        if str(iface["id"]) in ends:
            iface["cable"] = cable["id"]


def _handler(double: ApiDouble) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as Nautobot behind uWSGI

        def log_message(self, *_: Any) -> None:
            pass

        def do_GET(self) -> None:
            double.requests.append(("GET", self.path))
            if self.headers.get("Authorization") != f"Token {TOKEN}":
                return self._reply(403, {"detail": "Invalid token."})
            if double.status != 200 or double.body is not None:
                return self._reply(double.status, double.body)
            parts = urlsplit(self.path)
            endpoint = parts.path.removeprefix("/api/")
            query = parse_qs(parts.query)
            limit, offset = int(query.pop("limit", ["1000"])[0]), int(
                query.pop("offset", ["0"])[0])
            rows = [o for o in double.objects.get(endpoint, [])
                    if all(_matches(o, k, v) for k, v in query.items())]
            page = rows[offset:offset + limit]
            nxt = None
            if offset + limit < len(rows):
                more = urlencode({**query, "limit": limit,
                                  "offset": offset + limit}, doseq=True)
                nxt = f"{double.url}/api/{endpoint}?{more}"
            return self._reply(200, {"count": len(rows), "next": nxt, "results": page})

        def do_POST(self) -> None:
            self._write("POST")

        def do_PATCH(self) -> None:
            self._write("PATCH")

        def _write(self, method: str) -> None:
            double.requests.append((method, self.path))
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            if self.headers.get("Authorization") != f"Token {TOKEN}":
                return self._reply(403, {"detail": "Invalid token."})
            endpoint = urlsplit(self.path).path.removeprefix("/api/")
            if endpoint == double.fail_writes_to:
                return self._reply(500, {"detail": "the database is gone"})
            rows = double.objects.setdefault(endpoint, [])
            out = []
            for change in body if isinstance(body, list) else [body]:
                if method == "POST":
                    rows.append({**change, "id": f"new-{endpoint}-{len(rows)}"})
                    out.append(rows[-1])
                    if endpoint == "dcim/cables/":  # its ends are cabled now
                        _cable(double, rows[-1])
                else:
                    row = next(r for r in rows if r["id"] == change["id"])
                    row.update(change)
                    out.append(row)
            return self._reply(201 if method == "POST" else 200, out)

        def _reply(self, status: int, body: Any) -> None:
            raw = body if isinstance(body, bytes) else json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

    return Handler


@contextmanager
def serving(double: ApiDouble) -> Iterator[ApiDouble]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(double))
    double.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield double
    finally:
        server.shutdown()
        server.server_close()
