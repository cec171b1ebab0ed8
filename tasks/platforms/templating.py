"""One Jinja2 environment per platform template folder: strict, deterministic whitespace."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import jinja2


@cache
def environment(folder: str) -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(Path(__file__).parent / folder / "templates")),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,  # device configs, not HTML
    )
