"""One Jinja2 environment per platform package: its `templates/` folder, strict, with
deterministic whitespace. A platform names its own package, wherever it is installed
(flatfab's own, or a platform package of its own)."""

from __future__ import annotations

from functools import cache
from importlib import resources

import jinja2


@cache
def environment(package: str) -> jinja2.Environment:
    """The environment of the templates in the `templates/` folder of the package named
    `package` ("flatfab.platforms.frr", "acme_platform")."""
    folder = resources.files(package) / "templates"
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(folder)),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,  # device configs, not HTML
    )
