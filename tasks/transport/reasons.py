"""Why a device could not be read, in one short line an operator can act on.

The connection libraries flatfab drives (paramiko under its own SSH transport and under
netmiko, scrapli, PyEZ/ncclient, pyeapi, requests) each word the same few failures their own
way, often over several lines of advice, or wrap them in a generic error whose message drops
the cause (a chained exception keeps it). Here each failure is recognised by its exception
type, anywhere in the chain, or by the words the library uses for it, and said one way:
"timed out after 10 s connecting to 192.0.2.1:22", "connection refused by 192.0.2.1:22",
"authentication failed for admin", "host key of 192.0.2.1 not in /etc/known_hosts". A
failure none of these fits keeps the library's own first line.

Types from optional libraries are matched by class name, so this module imports none of them.
"""

from __future__ import annotations

import errno
import re
import socket
from collections.abc import Iterator
from typing import Protocol

import paramiko

from flatfab.transport.ssh import TransportError


class Where(Protocol):
    """Where a session was being opened (flatfab.platforms.base.Endpoint)."""

    @property
    def host(self) -> str: ...
    @property
    def port(self) -> int: ...
    @property
    def username(self) -> str | None: ...
    @property
    def known_hosts(self) -> str | None: ...


def address(where: Where) -> str:
    """host:port, an IPv6 host in brackets."""
    return f"[{where.host}]:{where.port}" if ":" in where.host else f"{where.host}:{where.port}"


# class names (anywhere in an exception's MRO) of the libraries' own failures
_TIMEOUT = frozenset({"NetmikoTimeoutException", "ScrapliTimeout", "ConnectTimeoutError",
                      "ConnectTimeout", "ReadTimeout", "ProbeError"})
_AUTH = frozenset({"NetmikoAuthenticationException", "ScrapliAuthenticationFailed",
                   "ConnectAuthError"})
_REFUSED = frozenset({"ConnectRefusedError"})
_UNKNOWN_HOST = frozenset({"ConnectUnknownHostError"})
# the words the libraries use where the type says nothing (a generic wrapper, a message
# scraped from an ssh client's output)
_WORDS = (
    (re.compile(r"not found in known_hosts|host key verification failed|no matching host "
                r"key|unknown host key", re.I), "unknown-key"),
    (re.compile(r"host key (does not match|mismatch)|remote host identification has "
                r"changed", re.I), "bad-key"),
    (re.compile(r"authentication failed|permission denied|unauthori[sz]ed|bad username|"
                r"\b401\b", re.I), "auth"),
    (re.compile(r"connection refused|errno 111\b", re.I), "refused"),
    (re.compile(r"no route to host|network is unreachable", re.I), "no-route"),
    (re.compile(r"name or service not known|nodename nor servname|temporary failure in "
                r"name resolution|dns failure", re.I), "dns"),
    (re.compile(r"timed? ?out|timeout", re.I), "timeout"),
)


def chain(exc: BaseException) -> Iterator[BaseException]:
    """The exception, then what caused it (explicitly or while it was being handled)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def first_line(exc: BaseException) -> str:
    """The exception's first line of text (its type's name when it has none)."""
    text = str(exc).strip()
    return text.splitlines()[0].strip() if text else type(exc).__name__


def _names(exc: BaseException) -> set[str]:
    return {cls.__name__ for cls in type(exc).__mro__}


def _kind_of_type(exc: BaseException) -> str | None:
    """The failure an exception's type says, if it says one."""
    names = _names(exc)
    if isinstance(exc, paramiko.BadHostKeyException):
        return "bad-key"
    if isinstance(exc, paramiko.AuthenticationException) or names & _AUTH:
        return "auth"
    if isinstance(exc, paramiko.ssh_exception.NoValidConnectionsError):
        codes = {getattr(e, "errno", None) for e in exc.errors.values()}
        return "refused" if errno.ECONNREFUSED in codes else "unreachable"
    if isinstance(exc, ConnectionRefusedError) or names & _REFUSED:
        return "refused"
    if isinstance(exc, socket.gaierror) or names & _UNKNOWN_HOST:
        return "dns"
    if isinstance(exc, TimeoutError) or names & _TIMEOUT:
        return "timeout"
    if isinstance(exc, OSError) and exc.errno in (errno.EHOSTUNREACH, errno.ENETUNREACH):
        return "no-route"
    return None


def _kind_of_words(exc: BaseException) -> str | None:
    text = str(exc)
    for pattern, kind in _WORDS:
        if pattern.search(text):
            return kind
    return None


_KEY_KINDS = frozenset({"unknown-key", "bad-key"})


def kind(exc: BaseException) -> str | None:
    """What failed, as flatfab names it: timeout, refused, auth, unknown-key, bad-key, dns,
    no-route, unreachable; None when neither the types nor the words of the chain say."""
    found = list(chain(exc))
    words = [_kind_of_words(item) for item in found]
    # an SSH client's own words for a host key beat the type it raised (scrapli reports a
    # host key it could not verify as a failed login)
    key = next((w for w in words if w in _KEY_KINDS), None)
    if key is not None:
        return key
    for item in found:  # else a type is surer than words, wherever it is in the chain
        by_type = _kind_of_type(item)
        if by_type is not None:
            return by_type
    return next((w for w in words if w is not None), None)


def connecting(exc: BaseException, where: Where, timeout: float) -> str:
    """Why a session to `where` could not be opened (`timeout`: what it was allowed)."""
    own = next((e for e in chain(exc) if isinstance(e, TransportError)), None)
    if own is not None:
        return first_line(own)  # flatfab's own transport says it this way already
    what = kind(exc)
    at = address(where)
    user = where.username or "the user name given"
    known = where.known_hosts or "the known_hosts file"
    texts = {
        "timeout": f"timed out after {timeout:g} s connecting to {at}",
        "refused": f"connection refused by {at}",
        "auth": f"authentication failed for {user} on {at}",
        "unknown-key": f"host key of {where.host} not in {known}",
        "bad-key": f"host key of {where.host} does not match {known}",
        "dns": f"cannot resolve {where.host}",
        "no-route": f"no route to {at}",
        "unreachable": f"cannot connect to {at}",
    }
    return texts[what] if what is not None else first_line(exc)


def commanding(exc: BaseException, timeout: float) -> str:
    """Why a device stopped answering once its session was open: a command's timeout named
    as such, anything else in the driver's own first line."""
    if kind(exc) == "timeout" and not any(isinstance(e, TransportError) for e in chain(exc)):
        return f"no answer within {timeout:g} s to a command ({first_line(exc)})"
    return first_line(exc)
