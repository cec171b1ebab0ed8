"""Where things are: the project root, the test fixtures, and the shared research material
(one setting: FLATFAB_SHARED).

Shared material defaults to the directory `shared` next to the repository root. Tests that
need something from it skip with a one-line reason when it is absent.
"""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
SHARED = Path(os.environ.get("FLATFAB_SHARED") or ROOT.parent / "shared")
SONIC_YANG = SHARED / "schemas" / "sonic-yang"


def sonic_yang_missing() -> str | None:
    """Why the SONiC YANG oracle cannot run here (None when it can)."""
    if not (SONIC_YANG / "validate.py").is_file():
        return f"SONiC YANG models not found under {SONIC_YANG} (set FLATFAB_SHARED)"
    try:
        import libyang  # noqa: F401, PLC0415 - optional test dependency
    except ImportError:
        return "libyang not installed (apt libyang2-dev; pip libyang==2.7.1)"
    return None
