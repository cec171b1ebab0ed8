"""Rendered texts remembered by a value key.

Switches of one shape (every leaf, every spine of a fabric) render the same links and
lossless sections; a key made of the values a section is rendered from lets the second and
every later switch skip the work. Keys hold the values of validated models only (names,
numbers, enums, JSON), never object identities, so a device changed in place is never given
an old text.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable


class TextMemo:
    """The texts of the `size` most recently made keys (the oldest goes first: a fabric has a
    few shapes, met in runs)."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._texts: dict[Hashable, str] = {}
        self._lock = threading.Lock()  # Nornir renders in threads

    def get(self, key: Hashable, make: Callable[[], str]) -> str:
        # a key is hashed once per call: a spine's key is a tuple of thousands of tuples
        text = self._texts.get(key)
        if text is None:
            text = make()
            with self._lock:
                self._texts[key] = text
                while len(self._texts) > self._size:
                    del self._texts[next(iter(self._texts))]
        return text
