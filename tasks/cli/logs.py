"""Where tracebacks and the libraries' logs go: nowhere by default (a network failure is one
line of flatfab's, never a traceback), to stderr with --debug, into a file with --log-file.

Nornir logs each failed task with its traceback, and paramiko, netmiko, scrapli, ncclient
and httpx log as they go; with no handler configured, Python's last-resort handler would
print their warnings and errors on the console. A handler here takes them instead. What it
writes never holds a password: every FLATFAB_PASSWORD* value in the environment, anything
registered with `hide`, and the value of any password-like key (password=..., 'secret':
...) is masked in the formatted text, tracebacks included.
"""

from __future__ import annotations

import logging
import os
import re
import sys
from pathlib import Path

from flatfab.errors import FlatfabError

MASK = "********"
FORMAT = "%(asctime)s %(levelname)s %(name)s [%(threadName)s] %(message)s"
_PASSWORD_ENV = "FLATFAB_PASSWORD"
# key=value and 'key': 'value' forms of password-like keys, as dict reprs and URLs show them
_KEYED = re.compile(r"""(?ix)
    (?P<key>["']?\b\w*(?:password|passwd|passphrase|secret|enablepwd|api_key|token)\w*
            ["']?\s*[:=]\s*)
    (?:(?P<quote>["'])(?P<quoted>.*?)(?P=quote)|(?P<bare>[^\s,;}&)]+))""")
_URL_USERINFO = re.compile(r"(?P<scheme>\b[a-z][a-z0-9+.-]*://[^/\s:@]+:)[^/\s@]+@", re.I)

_hidden: set[str] = set()
_installed: list[logging.Handler] = []
_debug = False


def hide(secret: str | None) -> None:
    """Never write `secret` (a password read from a prompt) into any log."""
    if secret:
        _hidden.add(secret)


def secrets() -> list[str]:
    """What is masked: registered secrets and FLATFAB_PASSWORD* values, longest first (a
    password that contains another is masked whole)."""
    found = set(_hidden)
    found.update(v for k, v in os.environ.items() if k.startswith(_PASSWORD_ENV) and v)
    return sorted(found, key=len, reverse=True)


def masked(text: str) -> str:
    """`text` with every secret and every password-like value replaced by MASK."""
    for secret in secrets():
        text = text.replace(secret, MASK)
    text = _KEYED.sub(lambda m: f"{m['key']}{m['quote'] or ''}{MASK}{m['quote'] or ''}", text)
    return _URL_USERINFO.sub(lambda m: f"{m['scheme']}{MASK}@", text)


class MaskingFormatter(logging.Formatter):
    """A formatter whose whole output (message, arguments, traceback) is masked."""

    def format(self, record: logging.LogRecord) -> str:
        return masked(super().format(record))


def configure(*, debug: bool, log_file: Path | None) -> None:
    """Route every logger's records for this run (again on every call: the CLI may run
    several times in one process, as the tests do)."""
    global _debug  # noqa: PLW0603 - one logging setup per process run
    root = logging.getLogger()
    for handler in _installed:
        root.removeHandler(handler)
        handler.close()
    _installed.clear()
    _debug = debug
    formatter = MaskingFormatter(FORMAT)
    handlers: list[logging.Handler] = []
    if debug:
        handlers.append(logging.StreamHandler(sys.stderr))
    if log_file is not None:
        try:
            handlers.append(logging.FileHandler(log_file, encoding="utf-8"))
        except OSError as exc:
            raise FlatfabError(f"--log-file {log_file}: {exc.strerror or exc}") from None
    if not handlers:
        handlers.append(logging.NullHandler())  # takes what the last resort would print
    for handler in handlers:
        handler.setFormatter(formatter)
        root.addHandler(handler)
        _installed.append(handler)
    root.setLevel(logging.DEBUG if debug or log_file is not None else logging.WARNING)
    # Nornir's INFO line for each run holds the task's arguments whole (the plan, every
    # device's config): its warnings and failed tasks' tracebacks are what a log needs
    logging.getLogger("nornir.core").setLevel(logging.WARNING)
    logging.captureWarnings(True)  # libraries' deprecation warnings: logged, not printed


def debugging() -> bool:
    """--debug was given: internal errors show their traceback too."""
    return _debug


def log_exception(message: str) -> None:
    """The exception being handled, with its traceback, to the run's log handlers."""
    logging.getLogger("flatfab").error(message, exc_info=True)
