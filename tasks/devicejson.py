"""JSON that devices print, parsed by orjson (C): a fleet's verify reads on the order of a
gigabyte of RIBs and queue state, which the standard library parses at half the speed. Its
errors are ValueErrors (json.JSONDecodeError), as the standard library's are."""

from __future__ import annotations

from typing import Any

import orjson


def loads(text: str | bytes) -> Any:
    return orjson.loads(text)
