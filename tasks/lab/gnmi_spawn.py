"""A lab's gNMI targets started from one interpreter: imported once, forked per switch.

Started one by one (nsenter, then a new interpreter), every target imported gRPC, flatfab
and its switch's counter source again: about 0.6 s of CPU a switch, at every `lab up`. Here
one interpreter imports them, then forks a child per switch; the child enters its switch's
network, mount and UTS namespaces (setns(2): a mount namespace only admits a process that is
single-threaded, as a child is until its server starts), moves to the target's folder and
runs the target as `python -m flatfab.telemetry.gnmi_target` would.

    python -m flatfab.lab.gnmi_spawn < specs.json

The specs are a JSON list, one object per switch: `config`, `log`, `net`, `mnt`, `uts`,
`wd` (paths), and `source` (the counter source's module, imported before the forks). It
prints the children's pids as a JSON list in the specs' order, then exits; the children
run on in sessions of their own, as nsenter's did.
"""

from __future__ import annotations

import ctypes
import importlib
import json
import os
import sys
from typing import Any

from flatfab.telemetry import gnmi_target

CLONE_NEWNS = 0x00020000  # <sched.h>
CLONE_NEWUTS = 0x04000000
CLONE_NEWNET = 0x40000000
_LIBC = ctypes.CDLL(None, use_errno=True)


def _enter(fd: int, kind: int, path: str) -> None:
    if _LIBC.setns(fd, kind) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"setns {path}: {os.strerror(err)}")


def _child(spec: dict[str, str]) -> int:
    """In the forked child: the switch's namespaces, its log, then the target (never
    returns to the spawner's code)."""
    os.setsid()
    log = os.open(spec["log"], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.close(null)
    os.close(log)
    # every namespace file opened first: inside the switch's mount namespace they are not
    # all there to open (its /run/netns is its VRFs')
    kinds = (("net", CLONE_NEWNET), ("mnt", CLONE_NEWNS), ("uts", CLONE_NEWUTS))
    fds = [(os.open(spec[key], os.O_RDONLY), kind, spec[key]) for key, kind in kinds]
    for fd, kind, path in fds:
        _enter(fd, kind, path)
        os.close(fd)
    os.chdir(spec["wd"])
    return gnmi_target.main(["--config", spec["config"]])


def spawn(spec: dict[str, str]) -> int:
    """Fork the switch's target; its pid."""
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid:
        return pid
    code = 2
    try:
        code = _child(spec)
    except BaseException as exc:  # noqa: BLE001 - the child's one line, in its own log
        print(f"gnmi_spawn: {spec.get('config')}: {exc}", file=sys.stderr)
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def main() -> int:
    specs: list[dict[str, Any]] = json.load(sys.stdin)
    for module in sorted({str(s["source"]).split(":", 1)[0] for s in specs if s.get("source")}):
        importlib.import_module(module)  # each child would import it: import it once here
    pids = [spawn(spec) for spec in specs]
    print(json.dumps(pids), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
