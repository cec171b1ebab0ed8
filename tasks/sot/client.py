"""flatfab's one client of Nautobot's REST API: a keep-alive connection, bulk writes.

Reads follow pagination; lists are written in one request each (Nautobot accepts a JSON list
on POST and PATCH), so reading or seeding a fabric costs a few dozen requests whatever its
size. Every failure is one `ApiError` naming the API root, the endpoint and the reason;
the token never appears in one.
"""

from __future__ import annotations

import http.client
import json
from typing import Any
from urllib.parse import urlencode, urlsplit

from flatfab.sot.errors import SotError

JSON = dict[str, Any]
PAGE = 1000  # Nautobot's default MAX_PAGE_SIZE
CHUNK = 100  # values per filtered read: a query string stays short on large fabrics


class ApiError(SotError):
    """A call to the source of truth failed: `<api root>: <endpoint>: <why>`."""

    def __init__(self, api_url: str, endpoint: str, why: str) -> None:
        self.api_url, self.endpoint, self.why = api_url, endpoint, why
        super().__init__(f"{api_url}: {endpoint}: {why}")


class Nautobot:
    """`url` is the site root; `.../api/` is accepted too."""

    def __init__(self, url: str, token: str, timeout: float = 120) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise SotError(f"Nautobot URL {url!r}: expected http(s)://host[:port]")
        self.url = url.rstrip("/").removesuffix("/api")
        self.api_url = f"{self.url}/api/"
        self._base = urlsplit(self.url).path  # a site served under a path prefix
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

    def _send(self, method: str, target: str, body: bytes | None,
              endpoint: str) -> tuple[int, bytes]:
        headers = {"Authorization": f"Token {self._token}", "Accept": "application/json"}
        if body is not None:
            headers["Content-Type"] = "application/json"
        # a kept-alive connection the server closed meanwhile fails once: reads retry on a
        # new one (a write might have landed, so it is not sent twice)
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
                if attempt == 2 or method != "GET":
                    raise ApiError(self.api_url, endpoint, f"{method}: connection lost "
                                   f"({type(exc).__name__})") from None
            except (OSError, http.client.HTTPException) as exc:  # refused, timeout, TLS
                self.close()
                reason = getattr(exc, "strerror", None) or type(exc).__name__
                raise ApiError(self.api_url, endpoint, f"no answer ({reason})") from None
        raise AssertionError("unreachable")

    def request(self, method: str, path: str, body: Any = None,
                params: dict[str, Any] | None = None) -> Any:
        """One API call (`path` relative to /api/, or absolute as `next` links give it)."""
        endpoint = urlsplit(path).path.removeprefix(f"{self._base}/api/")
        target = path if path.startswith("/") else f"{self._base}/api/{path}"
        if params:
            target += ("&" if "?" in target else "?") + urlencode(params, doseq=True)
        data = json.dumps(body).encode() if body is not None else None
        self.requests += 1
        status, raw = self._send(method, target, data, endpoint)
        if status in (401, 403):
            raise ApiError(self.api_url, endpoint, f"the token is refused (HTTP {status})")
        if status >= 400:
            verb = "" if method == "GET" else f"{method} "
            raise ApiError(self.api_url, endpoint, f"{verb}HTTP {status}: {_reason(raw)}")
        try:
            return json.loads(raw) if raw else None
        except ValueError:
            raise ApiError(self.api_url, endpoint, "unexpected reply (not JSON)") from None

    def fetch(self, path: str, **filters: Any) -> list[JSON]:
        """Every object matching the filters, following pagination."""
        found: list[JSON] = []
        page = self.request("GET", path, params={"limit": PAGE, **filters})
        while True:
            if not isinstance(page, dict) or not isinstance(page.get("results"), list):
                raise ApiError(self.api_url, path, "unexpected reply (no list of results)")
            found.extend(page["results"])
            if not page.get("next"):
                return found
            nxt = urlsplit(page["next"])
            page = self.request("GET", f"{nxt.path}?{nxt.query}")

    def fetch_in(self, path: str, name: str, values: list[str], **filters: Any) -> list[JSON]:
        """Objects whose filter `name` is one of `values`, CHUNK values per read."""
        found: list[JSON] = []
        for start in range(0, len(values), CHUNK):
            found += self.fetch(path, **{name: values[start:start + CHUNK]}, **filters)
        return found

    def create(self, path: str, objects: list[JSON]) -> list[JSON]:
        if not objects:
            return []
        return list(self.request("POST", path, objects))

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
