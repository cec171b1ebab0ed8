"""Each connection library's way of failing becomes flatfab's one line: the libraries' own
exception classes, raised the way they raise them (a generic wrapper around the cause, or
several lines of advice), are named as the timeout, refusal, failed login or host key they
are."""

from __future__ import annotations

import socket
from collections.abc import Callable
from dataclasses import dataclass
from types import SimpleNamespace

import httpx
import paramiko
import pytest
from jnpr.junos import exception as junos
from napalm.base.exceptions import ConnectionException
from netmiko import exceptions as netmiko
from pyeapi import eapilib
from scrapli import exceptions as scrapli

from flatfab.transport import reasons
from flatfab.transport.ssh import TransportError


@dataclass(frozen=True)
class Where:
    host: str = "192.0.2.1"
    port: int = 22
    username: str | None = "ff-admin"
    known_hosts: str | None = "/etc/flatfab/known_hosts"


def _raised(make: Callable[[], None]) -> BaseException:
    try:
        make()
    except BaseException as exc:  # noqa: BLE001 - what the library raised, chain and all
        return exc
    raise AssertionError("nothing raised")


def _netmiko_tcp() -> None:
    try:
        raise TimeoutError("timed out")
    except OSError:
        raise netmiko.NetmikoTimeoutException(
            "TCP connection to device failed.\n\nCommon causes of this problem are:\n"
            "1. Incorrect hostname or IP address.") from None


def _netmiko_login() -> None:
    try:
        raise paramiko.AuthenticationException("Authentication failed.")
    except paramiko.AuthenticationException as auth:
        # as netmiko raises it: the cause only as the exception being handled
        raise netmiko.NetmikoAuthenticationException(  # noqa: B904
            f"Authentication to device failed.\n\nCommon causes...\n{auth}")


def _netmiko_unknown_key() -> None:
    try:
        raise paramiko.SSHException("Server '[192.0.2.1]:22' not found in known_hosts")
    except paramiko.SSHException as exc:
        raise netmiko.NetmikoTimeoutException(  # noqa: B904 - as netmiko raises it
            f"\nA paramiko SSHException occurred during connection creation:\n\n{exc}\n")


def _napalm_wrapping(inner: BaseException) -> Callable[[], None]:
    def make() -> None:
        try:
            raise inner
        except Exception as exc:
            raise ConnectionException(str(exc)) from exc
    return make


def _pyeapi_refused() -> None:
    try:
        raise eapilib.ConnectionError("https", "Socket error during eAPI connection: "
                                      "[Errno 111] Connection refused")
    except eapilib.ConnectionError as exc:
        raise ConnectionException(str(exc))  # noqa: B904 - NAPALM eos's own words


def _pyeapi_unauthorised() -> None:
    raise eapilib.ConnectionError("https", "Unauthorized. Unable to authenticate user: "
                                  "Bad username/password combination")


DEVICE = SimpleNamespace(hostname="192.0.2.1", user="ff-admin", port=830)
CASES: dict[str, tuple[Callable[[], None], str]] = {
    "socket timeout": (lambda: (_ for _ in ()).throw(TimeoutError("timed out")),
                       "timed out after 10 s connecting to 192.0.2.1:22"),
    "refused": (lambda: (_ for _ in ()).throw(ConnectionRefusedError(111, "refused")),
                "connection refused by 192.0.2.1:22"),
    "netmiko tcp": (_netmiko_tcp, "timed out after 10 s connecting to 192.0.2.1:22"),
    "netmiko login": (_netmiko_login, "authentication failed for ff-admin on 192.0.2.1:22"),
    "netmiko host key": (_netmiko_unknown_key,
                         "host key of 192.0.2.1 not in /etc/flatfab/known_hosts"),
    "paramiko bad key": (lambda: (_ for _ in ()).throw(paramiko.BadHostKeyException(
        "192.0.2.1", paramiko.RSAKey.generate(1024), paramiko.RSAKey.generate(1024))),
        "host key of 192.0.2.1 does not match /etc/flatfab/known_hosts"),
    "scrapli timeout": (lambda: (_ for _ in ()).throw(scrapli.ScrapliTimeout(
        "timed out opening connection to device")),
        "timed out after 10 s connecting to 192.0.2.1:22"),
    "scrapli login": (lambda: (_ for _ in ()).throw(scrapli.ScrapliAuthenticationFailed(
        "Permission denied, please try again.")),
        "authentication failed for ff-admin on 192.0.2.1:22"),
    "scrapli host key": (lambda: (_ for _ in ()).throw(scrapli.ScrapliAuthenticationFailed(
        "Host key verification failed for host 192.0.2.1")),
        "host key of 192.0.2.1 not in /etc/flatfab/known_hosts"),
    "junos refused": (_napalm_wrapping(junos.ConnectRefusedError(DEVICE)),
                      "connection refused by 192.0.2.1:22"),
    "junos login": (lambda: (_ for _ in ()).throw(junos.ConnectAuthError(DEVICE)),
                    "authentication failed for ff-admin on 192.0.2.1:22"),
    "junos probe": (_napalm_wrapping(junos.ProbeError(DEVICE)),
                    "timed out after 10 s connecting to 192.0.2.1:22"),
    "httpx connect timeout": (_napalm_wrapping(httpx.ConnectTimeout("timed out")),
                              "timed out after 10 s connecting to 192.0.2.1:22"),
    "httpx refused": (_napalm_wrapping(httpx.ConnectError("[Errno 111] Connection refused")),
                      "connection refused by 192.0.2.1:22"),
    "pyeapi refused": (_pyeapi_refused, "connection refused by 192.0.2.1:22"),
    "pyeapi login": (_pyeapi_unauthorised, "authentication failed for ff-admin on 192.0.2.1:22"),
    "dns": (lambda: (_ for _ in ()).throw(socket.gaierror(-2, "Name or service not known")),
            "cannot resolve 192.0.2.1"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_library_s_failure_is_one_line(case: str) -> None:
    make, said = CASES[case]
    assert reasons.connecting(_raised(make), Where(), 10.0) == said


def test_flatfab_s_own_transport_says_it_already() -> None:
    exc = _raised(_napalm_wrapping(TransportError(
        "timed out after 3 s waiting for SSH from 192.0.2.1:22")))
    assert reasons.connecting(exc, Where(), 10.0) == (
        "timed out after 3 s waiting for SSH from 192.0.2.1:22")


def test_an_unknown_failure_keeps_the_library_s_first_line() -> None:
    exc = _raised(lambda: (_ for _ in ()).throw(RuntimeError("weird\nsecond line")))
    assert reasons.connecting(exc, Where(), 10.0) == "weird"
    assert reasons.connecting(_raised(lambda: (_ for _ in ()).throw(RuntimeError())),
                              Where(), 10.0) == "RuntimeError"


def test_an_ipv6_address_is_bracketed() -> None:
    exc = _raised(lambda: (_ for _ in ()).throw(ConnectionRefusedError(111, "refused")))
    assert reasons.connecting(exc, Where(host="2001:db8::1"), 10.0) == (
        "connection refused by [2001:db8::1]:22")


def test_a_command_s_timeout_is_named_as_one() -> None:
    exc = _raised(lambda: (_ for _ in ()).throw(netmiko.ReadTimeout(
        "Pattern not detected: 'leaf1\\$' in output.\n\nThings you might try...")))
    assert reasons.commanding(exc, 60.0) == (
        "no answer within 60 s to a command (Pattern not detected: 'leaf1\\$' in output.)")
    assert reasons.commanding(_raised(lambda: (_ for _ in ()).throw(
        ValueError("bad JSON"))), 60.0) == "bad JSON"
