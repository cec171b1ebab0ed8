"""The files flatfab hands out: example fabrics, runbooks, the Grafana dashboard.

An installed flatfab carries them inside its package (setup.py maps the repository's folders
there). An editable install of a checkout maps only the code, so there they are read from the
checkout's own folders, the same files.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final, Literal

from flatfab.errors import FlatfabError

Kind = Literal["examples", "runbooks", "dashboards"]
# where each kind lives in a checkout (setup.py's FOLDERS)
CHECKOUT_FOLDERS: Final[dict[str, str]] = {"examples": "intents", "runbooks": "runbooks",
                                           "dashboards": "dashboards"}
PACKAGE: Final = Path(__file__).resolve().parent
DEFAULT_EXAMPLE: Final = "lab"  # what `flatfab init` starts from unless told


def folder(kind: Kind) -> Path:
    """The folder holding one kind of bundled file."""
    inside = PACKAGE / kind
    if inside.is_dir():
        return inside
    checkout = PACKAGE.parent / CHECKOUT_FOLDERS[kind]
    if (PACKAGE.parent / "setup.py").is_file() and checkout.is_dir():
        return checkout
    raise FlatfabError(f"flatfab's {kind} are missing from {inside}: reinstall flatfab")


def examples() -> list[str]:
    """The example fabrics, by name."""
    return sorted(p.name for p in folder("examples").iterdir()
                  if p.is_dir() and (p / "fabric.yaml").is_file())
