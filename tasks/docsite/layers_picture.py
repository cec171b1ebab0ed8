"""The picture of the package's layers on the developers' pages: one band per layer, the
top layer at the top, the workflows' groups drawn inside their band. Made from the same
declaration the layering tests enforce, so the picture cannot drift from the code."""

from __future__ import annotations

from collections.abc import Sequence
from xml.sax.saxutils import escape

Layer = tuple[Sequence[str], str]  # (its parts: folders or top-level modules, what it is)
Group = tuple[str, str]  # (a folder inside one part, what it is)

WIDTH = 820
ROW = 30
GROUP_ROW = 24
MARGIN = 16
ARROW = 56  # the left column: the "imports go down" arrow
LABEL = 190  # the parts' column
TEXT = "#1f2937"
BAND = ("#e0e7ff", "#eef2ff")  # alternating, so neighbouring layers read apart
EDGE = "#6366f1"


def _label(parts: Sequence[str]) -> str:
    return parts[0] if len(parts) == 1 else "top-level modules"


def _text(x: float, y: float, text: str, *, mono: bool = False, bold: bool = False) -> str:
    family = "monospace" if mono else "sans-serif"
    weight = ' font-weight="bold"' if bold else ""
    return (f'<text x="{x:g}" y="{y:g}" font-family="{family}" font-size="13"{weight} '
            f'fill="{TEXT}" dominant-baseline="middle">{escape(text)}</text>')


def svg(layers: Sequence[Layer], groups: Sequence[Group], grouped: str = "workflows") -> str:
    """The stack as SVG text, deterministic for the same input."""
    heights = [ROW + (len(groups) * GROUP_ROW + 8 if _label(p) == grouped else 0)
               for p, _ in layers]
    height = sum(heights) + 2 * MARGIN
    body: list[str] = []
    y = MARGIN
    # the top layer first: the list runs bottom to top
    for index in reversed(range(len(layers))):
        parts, what = layers[index]
        band_height = heights[index]
        x0 = MARGIN + ARROW
        body.append(f'<rect x="{x0}" y="{y}" width="{WIDTH - x0 - MARGIN}" '
                    f'height="{band_height - 2}" rx="4" fill="{BAND[index % 2]}" '
                    f'stroke="{EDGE}" stroke-width="1"/>')
        body.append(_text(x0 + 10, y + ROW / 2, _label(parts), mono=True, bold=True))
        body.append(_text(x0 + LABEL, y + ROW / 2, what))
        if _label(parts) == grouped:
            gy = y + ROW
            for name, about in reversed(groups):
                body.append(f'<rect x="{x0 + 24}" y="{gy}" width="{WIDTH - x0 - MARGIN - 48}" '
                            f'height="{GROUP_ROW - 4}" rx="3" fill="#ffffff" stroke="{EDGE}" '
                            f'stroke-width="0.8"/>')
                body.append(_text(x0 + 34, gy + (GROUP_ROW - 4) / 2, f"{name}/", mono=True))
                body.append(_text(x0 + LABEL, gy + (GROUP_ROW - 4) / 2, about))
                gy += GROUP_ROW
        y += band_height
    top, bottom = MARGIN + 8, height - MARGIN - 8
    mid = MARGIN + ARROW / 2 - 6
    arrow = (f'<line x1="{mid}" y1="{top}" x2="{mid}" y2="{bottom - 10}" stroke="{EDGE}" '
             f'stroke-width="2"/><path d="M {mid - 6} {bottom - 12} L {mid + 6} {bottom - 12} '
             f'L {mid} {bottom} Z" fill="{EDGE}"/>'
             f'<text x="{mid - 10}" y="{(top + bottom) / 2:g}" font-family="sans-serif" '
             f'font-size="13" fill="{TEXT}" text-anchor="middle" '
             f'transform="rotate(-90 {mid - 10} {(top + bottom) / 2:g})">'
             "a layer imports only its own and the layers below</text>")
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
            f'viewBox="0 0 {WIDTH} {height}" role="img" aria-label="flatfab\'s layers">'
            f'<rect width="{WIDTH}" height="{height}" fill="#ffffff"/>'
            f"{arrow}{''.join(body)}</svg>\n")
