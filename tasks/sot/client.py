"""A small typed client of Nautobot's REST API: one keep-alive connection, bulk writes.

Lists are written in one request each (Nautobot accepts a JSON list on POST and PATCH), and
reads follow pagination, so seeding a fabric costs a few dozen requests whatever its size.
"""

from __future__ import annotations

import http.client
import json
from typing import Any
from urllib.parse import urlencode, urlsplit

from tasks.sot.settings import SotError

JSON = dict[str, Any]
PAGE = 1000  # Nautobot's default MAX_PAGE_SIZE


class Nautobot:
    def __init__(self, url: str, token: str, timeout: float = 120) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise SotError(f"Nautobot URL {url!r}: expected http(s)://host[:port]")
        self.url = url.rstrip("/")
        self._host = parts.hostname
        self._tls = parts.scheme == "https"  # certificates verified by the default context
        self._port = parts.port or (443 if self._tls else 80)
        self._token = token
        self._timeout = timeout
        self._conn: http.client.HTTPConnection | None = None
        self.requests = 0  # how many were sent (seeding reports it)

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def __enter__(self) -> Nautobot:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def _send(self, method: str, target: str, body: bytes | None) -> tuple[int, bytes]:
        headers = {"Authorization": f"Token {self._token}", "Accept": "application/json"}
        if body is not None:
            headers["Content-Type"] = "application/json"
        # a kept-alive connection the server closed meanwhile fails once: retry on a new one
        for attempt in (1, 2):
            if self._conn is None:
                kind = http.client.HTTPSConnection if self._tls else http.client.HTTPConnection
                self._conn = kind(self._host, self._port, timeout=self._timeout)
            try:
                self._conn.request(method, target, body=body, headers=headers)
                response = self._conn.getresponse()
                return response.status, response.read()
            except (http.client.RemoteDisconnected, BrokenPipeError,
                    ConnectionResetError) as exc:
                self.close()
                if attempt == 2 or method not in ("GET", "HEAD"):
                    raise SotError(f"{method} {self.url}{target}: connection lost ({exc})"
                                   ) from None
            except OSError as exc:  # refused, timed out, unreachable
                self.close()
                reason = exc.strerror or type(exc).__name__
                raise SotError(f"Nautobot at {self.url} does not answer ({reason}); "
                               "start it with `make nautobot-up`") from None
        raise AssertionError("unreachable")

    def request(self, method: str, path: str, body: Any = None,
                params: dict[str, Any] | None = None) -> Any:
        """One API call; an error status becomes one line naming the call and the reason."""
        target = path if path.startswith("/") else f"/api/{path}"
        if params:
            target += ("&" if "?" in target else "?") + urlencode(params, doseq=True)
        data = json.dumps(body).encode() if body is not None else None
        self.requests += 1
        status, raw = self._send(method, target, data)
        if status >= 400:
            raise SotError(f"{method} {target}: HTTP {status}: {_reason(raw)}")
        return json.loads(raw) if raw else None

    def fetch(self, path: str, **filters: Any) -> list[JSON]:
        """Every object matching the filters, following pagination."""
        found: list[JSON] = []
        page = self.request("GET", path, params={"limit": PAGE, **filters})
        while True:
            found.extend(page["results"])
            if not page.get("next"):
                return found
            nxt = urlsplit(page["next"])
            page = self.request("GET", f"{nxt.path}?{nxt.query}")

    def create(self, path: str, objects: list[JSON]) -> list[JSON]:
        if not objects:
            return []
        created = self.request("POST", path, objects)
        return list(created)

    def update(self, path: str, changes: list[JSON]) -> list[JSON]:
        """Bulk PATCH: each change carries the object's id."""
        if not changes:
            return []
        return list(self.request("PATCH", path, changes))


def _reason(raw: bytes) -> str:
    """The first error message of a Nautobot error body, on one line."""
    try:
        doc: Any = json.loads(raw)
    except ValueError:
        text = raw.decode(errors="replace").strip()
        return (text.splitlines()[0] if text else "no body")[:300]
    while isinstance(doc, list) and doc:
        doc = next((d for d in doc if d), doc[0])
    if isinstance(doc, dict):
        for key, value in doc.items():
            first = value
            while isinstance(first, list) and first:
                first = first[0]
            return f"{key}: {first}"[:300]
    return str(doc)[:300]
