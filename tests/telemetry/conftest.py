"""Fixtures the gNMI tests share: a PKI with client certificates, a fake counter source and a
target serving it on 127.0.0.1, and the credentials flatfab's subscriber reads from its
environment. A module with other needs (the lab's own PKI, a faster target) overrides one."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from flatfab.telemetry.gnmi_target import GnmiTarget
from tests.telemetry.gnmi_support import PASS_ENV, USER_ENV, Pki, Source, start_target


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return Pki(tmp_path_factory.mktemp("pki"))


@pytest.fixture
def source() -> Source:
    return Source()


@pytest.fixture
def target(pki: Pki, source: Source) -> Iterator[GnmiTarget]:
    started = start_target(pki, source)
    yield started
    started.stop()


@pytest.fixture
def subscriber_login(monkeypatch: pytest.MonkeyPatch) -> None:
    """The user and password the lab's targets take, where the subscriber reads them."""
    monkeypatch.setenv(USER_ENV, "flatfab")
    monkeypatch.setenv(PASS_ENV, "s3cret")
