"""The HTML report in a real browser: headless Chromium runs its script and draws it.

Four Chromium runs go in parallel: the DOM after scripts ran, the DOM with a device filter
from the URL (`#device=leaf1`, what a click on the node does), a screenshot whose pixels
are decoded here (zlib + struct, no imaging library) to see the status colours on screen, and
a page of fabric pictures (the rail lab, lab4x16, the dirty report's, a crowded 80-leaf
fabric) whose every label the browser measures as it draws it. Set
FLATFAB_REPORT_PNG=/some/file.png to keep the screenshot for a look.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import struct
import subprocess
import zlib
from collections import Counter
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

import pytest

from flatfab.intent.loader import load_intent
from flatfab.plan.planner import plan
from flatfab.reports import html
from flatfab.reports.fabric_text import text_width
from flatfab.workflows.commands.audit import planned_report
from tests.support.paths import ROOT
from tests.support.reports import DIRTY_STATUSES, classic_report, dirty_report

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--force-device-scale-factor=1", "--hide-scrollbars"]
TIMEOUT_S = 120


def chromium() -> str:
    """The browser binary; missing is a failure, since the page must be seen to be trusted."""
    found = shutil.which("chromium") or ("/usr/bin/chromium"
                                         if Path("/usr/bin/chromium").exists() else None)
    if found is None:
        pytest.fail("chromium is not installed: run `make test-deps` (installs Debian's "
                    "`chromium` package) to run the HTML report browser test")
    return found


@dataclass
class Seen:
    dom: str
    filtered_dom: str
    png: bytes
    measured: str  # the DOM of the pictures page, its measurements in <pre id="measured">


# Every label of every picture on the page, as drawn: its text, font size, boldness, drawn
# length and the room its box gives it (width, or height for upright text), as JSON.
MEASURE = """
var found = [];
function num(e, k) { return parseFloat(e.getAttribute(k)); }
document.querySelectorAll("g.device, g.fold").forEach(function (g) {
  var r = g.querySelector("rect");
  g.querySelectorAll("text").forEach(function (t) {
    var room = t.hasAttribute("transform") ? num(r, "height") : num(r, "width");
    found.push([t.textContent, num(t, "font-size"), false, t.getComputedTextLength(), room]);
  });
});
document.querySelectorAll("text.group-label").forEach(function (t) {
  var svg = t.ownerSVGElement, room = -1;
  svg.querySelectorAll("rect.group").forEach(function (r) {
    if (num(r, "x") === num(t, "x") - 6 && num(r, "y") === num(t, "y") - 14) {
      room = num(r, "width") - 6;
    }
  });
  found.push([t.textContent, num(t, "font-size"), true, t.getComputedTextLength(), room]);
});
document.getElementById("measured").textContent = JSON.stringify(found);
"""


def _pictures_page() -> str:
    rail = planned_report(plan(load_intent(ROOT / "intents" / "rail")))
    wide = planned_report(plan(load_intent(ROOT / "intents" / "lab4x16")))
    pictures = [html.diagram(r) for r in (rail, wide, dirty_report(),
                                          classic_report(leaves=80, spines=4, hosts=6))]
    return ("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><style>svg{display:block;"
            "font-family:system-ui,sans-serif}</style></head><body>" + "".join(pictures)
            + f'<pre id="measured"></pre><script>{MEASURE}</script></body></html>')


def _launch(binary: str, profile: Path, *args: str) -> subprocess.Popen[bytes]:
    profile.mkdir(parents=True)
    return subprocess.Popen([binary, *FLAGS, f"--user-data-dir={profile}", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)


def _finish(proc: subprocess.Popen[bytes]) -> bytes:
    try:
        out, _ = proc.communicate(timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        pytest.fail(f"chromium did not finish within {TIMEOUT_S} s")
    assert proc.returncode == 0, f"chromium exited with {proc.returncode}"
    return out


@pytest.fixture(scope="module")
def seen(tmp_path_factory: pytest.TempPathFactory) -> Seen:
    binary = chromium()
    tmp = tmp_path_factory.mktemp("browser")
    page = tmp / "report.html"
    page.write_text(html.render(dirty_report()), encoding="utf-8")
    png = tmp / "report.png"
    pictures = tmp / "pictures.html"
    pictures.write_text(_pictures_page(), encoding="utf-8")
    url = page.as_uri()
    procs = [_launch(binary, tmp / "p1", "--dump-dom", url),
             _launch(binary, tmp / "p2", "--dump-dom", url + "#device=leaf1"),
             _launch(binary, tmp / "p3", f"--screenshot={png}", "--window-size=1400,1000",
                     url),
             _launch(binary, tmp / "p4", "--dump-dom", pictures.as_uri())]
    dom, filtered, _, measured = (_finish(p).decode("utf-8") for p in procs)
    assert png.exists(), "chromium wrote no screenshot"
    if os.environ.get("FLATFAB_REPORT_PNG"):
        shutil.copyfile(png, os.environ["FLATFAB_REPORT_PNG"])
    return Seen(dom, filtered, png.read_bytes(), measured)


# ---------------------------------------------------------------- DOM


class _Dom(HTMLParser):
    """Collects device nodes, findings rows and the filter box of a dumped DOM."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.nodes: dict[str, tuple[str, str]] = {}  # device -> (status, class)
        self.rows: list[tuple[str, bool]] = []  # (device, hidden)
        self.filter_hidden: bool | None = None
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        classes = (a.get("class") or "").split()
        if tag == "g" and "device" in classes:
            self.nodes[a["data-device"] or ""] = (a["data-status"] or "", " ".join(classes))
        elif tag == "tr" and "data-severity" in a:
            self.rows.append((a.get("data-device") or "", "hidden" in a))
        elif a.get("id") == "filter-box":
            self.filter_hidden = "hidden" in a


def test_dom_after_scripts_has_every_device_and_finding(seen: Seen) -> None:
    dom = _Dom(seen.dom)
    assert {d: s for d, (s, _) in dom.nodes.items()} == DIRTY_STATUSES
    assert len(dom.rows) == 5 and not any(hidden for _, hidden in dom.rows)
    assert dom.filter_hidden is False, "the script did not run (filter box still hidden)"
    assert "5 of 5 findings shown" in seen.dom


def test_device_filter_shows_only_that_devices_rows(seen: Seen) -> None:
    dom = _Dom(seen.filtered_dom)
    assert [d for d, hidden in dom.rows if not hidden] == ["leaf1"]
    assert sum(hidden for _, hidden in dom.rows) == 4
    assert "selected" in dom.nodes["leaf1"][1]
    assert not any("selected" in cls for d, (_, cls) in dom.nodes.items() if d != "leaf1")
    assert "1 of 5 findings shown" in seen.filtered_dom


def test_every_label_fits_its_box_as_the_browser_draws_it(seen: Seen) -> None:
    found = re.search(r'<pre id="measured">(.*?)</pre>', seen.measured, re.S)
    assert found is not None and found.group(1), "the measuring script did not run"
    labels = json.loads(found.group(1).replace("&amp;", "&"))
    texts = {text for text, *_ in labels}
    assert {"store1", "p1-pod1-spine1", "plane 1 · rails 1, 2", "leaf16-h2", "leaf79",
            "leaf1-h1"} <= texts
    for text, size, bold, drawn, room in labels:
        assert drawn <= room - 2, f"{text!r} is {drawn:.1f} px in a box of {room} px"
        # the layout sized the box by an estimate no smaller than what is drawn
        assert text_width(text, size, bold) >= drawn, f"{text!r}: estimate below its width"


# ---------------------------------------------------------------- pixels


def _paeth(a: int, b: int, c: int) -> int:
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def _unfilter(kind: int, line: bytearray, prior: bytearray, bpp: int) -> None:
    """Undo one scanline's PNG filter in place (prior: the previous decoded line)."""
    if kind == 1:
        for i in range(bpp, len(line)):
            line[i] = (line[i] + line[i - bpp]) & 0xFF
    elif kind == 2:
        for i in range(len(line)):
            line[i] = (line[i] + prior[i]) & 0xFF
    elif kind == 3:
        for i in range(len(line)):
            left = line[i - bpp] if i >= bpp else 0
            line[i] = (line[i] + ((left + prior[i]) >> 1)) & 0xFF
    elif kind == 4:
        for i in range(len(line)):
            left = line[i - bpp] if i >= bpp else 0
            up_left = prior[i - bpp] if i >= bpp else 0
            line[i] = (line[i] + _paeth(left, prior[i], up_left)) & 0xFF


def png_colours(data: bytes) -> Counter[tuple[int, int, int]]:
    """How many pixels of each RGB colour an 8-bit RGB/RGBA, non-interlaced PNG holds."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, header = 8, bytearray(), b""
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", header)
    assert depth == 8 and colour in (2, 6) and interlace == 0, (depth, colour, interlace)
    bpp = 3 if colour == 2 else 4
    raw, stride = zlib.decompress(bytes(idat)), width * bpp
    counts: Counter[tuple[int, int, int]] = Counter()
    prior = bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        line = bytearray(raw[start + 1:start + 1 + stride])
        _unfilter(raw[start], line, prior, bpp)
        counts.update(zip(line[0::bpp], line[1::bpp], line[2::bpp], strict=True))
        prior = line
    return counts


def _rgb(hex_colour: str) -> tuple[int, int, int]:
    value = int(hex_colour.lstrip("#"), 16)
    return value >> 16, (value >> 8) & 0xFF, value & 0xFF


def test_screenshot_shows_the_status_colours(seen: Seen) -> None:
    counts = png_colours(seen.png)
    for name, colour in (("red", html.RED), ("green", html.GREEN), ("amber", html.AMBER),
                         ("purple", html.PURPLE), ("grey", html.GREY), ("blue", html.BLUE)):
        assert counts[_rgb(colour)] >= 100, f"{name} {colour} is not on screen"
    # node fills, not just legend swatches: red covers two nodes, green two hosts
    assert counts[_rgb(html.RED)] > 1500 and counts[_rgb(html.GREEN)] > 500
