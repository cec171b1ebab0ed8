"""The `--ask-pass` prompt: one password per credential set, typed without echo."""

from __future__ import annotations

import getpass
import sys

from flatfab.cli import logs
from flatfab.errors import InputError


def ask_password(prompt: str) -> str:
    """What the operator types at `prompt`, masked in every log from then on."""
    typed = _read(prompt)
    logs.hide(typed)
    return typed


def _read(prompt: str) -> str:
    """At a terminal getpass reads it without echo; from a pipe (a script, a test) it is one
    line of standard input. An empty answer gives the set no password (its devices log in
    with keys or the agent)."""
    if sys.stdin is not None and sys.stdin.isatty():
        try:
            return getpass.getpass(prompt, stream=sys.stderr)
        except EOFError:  # Ctrl-D
            raise _unanswered(prompt) from None
    sys.stderr.write(prompt)
    sys.stderr.flush()
    line = sys.stdin.readline() if sys.stdin is not None else ""
    sys.stderr.write("\n")
    if not line:
        raise _unanswered(prompt)
    return line.rstrip("\r\n")


def _unanswered(prompt: str) -> InputError:
    return InputError.single("--ask-pass", "", f"no answer to {prompt.strip()!r} (standard "
                             "input ended)")
