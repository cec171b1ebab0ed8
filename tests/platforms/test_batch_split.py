"""A batch's output is split by slicing (a switch's RIB is megabytes): the same sections as
reading it line by line, for any output, blank lines and missing newlines included."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from flatfab.platforms.shell_driver import MARK, split_batch


def _by_lines(out: str, keys: list[str]) -> dict[str, str]:
    """The line-by-line reading: a marker line opens its key's section; the blank line the
    batch echoes before the next marker is not content."""
    result: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in out.splitlines():
        if line.startswith(MARK + " "):
            if current and current[-1] == "":
                current.pop()
            current = result.setdefault(line[len(MARK) + 1:], [])
        elif current is not None:
            current.append(line)
    if current and current[-1] == "":
        current.pop()
    return {key: "\n".join(result.get(key, [])) for key in keys}


LINES = st.lists(st.sampled_from(["", "a", "b c", '{"x": 1}', "  indented", "\r"]),
                 max_size=4)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["k1", "k2", "routes default"]),
                          st.integers(0, 2), LINES), max_size=4),
       st.text(alphabet="ab \n", max_size=6), st.booleans())
def test_slicing_reads_what_lines_read(sections: list[tuple[str, int, list[str]]],
                                       preamble: str, trailing: bool) -> None:
    out = preamble + "".join("\n" * blanks + f"{MARK} {key}\n" + "".join(f"{line}\n"
                                                                       for line in lines)
                             for key, blanks, lines in sections)
    out = out if trailing else out.rstrip("\n")
    keys = sorted({key for key, _, _ in sections})
    found = split_batch(out)
    assert {key: found.get(key, "") for key in keys} == _by_lines(out, keys)
