"""The built book in a real browser, offline.

Serves _build/html over http on 127.0.0.1 (an ephemeral port) and drives Debian's
Chromium through Playwright. Every request a page makes is recorded; any request to
another host is both blocked and a failure, so the checks hold on a machine with a
network too. For the intro and every chapter in _toc.yml:

- nothing is fetched from anywhere but the local server, and nothing is missing (404);
- no console error and no uncaught exception;
- MathJax (the vendored copy) typeset every formula on the page, without TeX errors;
- every image has loaded (naturalWidth > 0) and has a real alt text, never its file path
  (images inside widgets are left out here; a stepper's frames carry the alt text
  viz.animation.frame_stepper writes, checked by test_book_site and the stepping test);
- every embedded Jupyter widget has been rendered by the (vendored) widget manager.

Further tests follow the sidebar's link to the general index on a phone, and build a
one-page scratch book with an ipywidgets slider, a labelled widget and math in a temporary
directory, so the offline widget path stays tested whether or not a chapter uses widgets yet.

`make test` builds the book and installs Chromium first (`make book`, `make browser`).
Never `playwright install`: the browser is Debian's.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import posixpath
import re
import threading
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from book_toc import build_scratch_book, course_chapters, toc_files

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
SITE = ROOT / "_build" / "html"
CHROMIUM = Path("/usr/bin/chromium")
LAUNCH_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
PAGE_TIMEOUT_MS = 60_000  # a hang guard, not a timed assert: a loaded machine loads a page slowly


def toc_pages() -> list[str]:
    """intro.html and one page per file in _toc.yml."""
    return [f + ".html" for f in toc_files()]


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    """Serves one directory under ``prefix`` (``/``, or ``/<name>/`` as a static host serves a
    project page); remembers the paths it answered 404 for, those outside the prefix too."""

    missing: list[str]
    prefix: str = "/"

    def translate_path(self, path):
        if not path.startswith(self.prefix):
            return ""  # outside the site: 404
        return super().translate_path("/" + path[len(self.prefix) :])

    def log_message(self, format, *args):
        pass

    def send_error(self, code, message=None, explain=None):
        if code == 404:
            self.missing.append(self.path)
        super().send_error(code, message, explain)


@contextlib.contextmanager
def serve(directory: Path, prefix: str = "/"):
    """http://127.0.0.1:<free port><prefix> serving `directory`; yields (base_url, missing)."""
    missing: list[str] = []
    handler = type("Handler", (_QuietHandler,), {"missing": missing, "prefix": prefix})
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(handler, directory=str(directory))
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}{prefix}", missing
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@pytest.fixture(scope="module")
def site() -> Path:
    if not (SITE / "intro.html").is_file():
        pytest.fail(
            f"the book is not built ({SITE / 'intro.html'} is missing): run `make book` "
            "first (`make test` does it for you)",
            pytrace=False,
        )
    return SITE


@pytest.fixture(scope="module")
def browser():
    if not CHROMIUM.exists():
        pytest.fail(
            f"{CHROMIUM} is missing: run `make browser` (installs Debian's chromium)", pytrace=False
        )
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=LAUNCH_ARGS
        )
        try:
            yield chromium
        finally:
            chromium.close()


#: where the book is served: at the root, and (``make test-extended``: it doubles this file's
#: time) under a sub-path, as a static host serves a project page, where a link that starts
#: with ``/`` leaves the site
PREFIXES = ["/", pytest.param("/collectives-course/", marks=pytest.mark.extended, id="sub_path")]


@pytest.fixture(scope="module", params=PREFIXES, ids=lambda p: "root" if p == "/" else p)
def server(request, site):
    with serve(site, request.param) as (base, missing):
        yield base, missing


# What a page looks like once loaded; computed in the page.
_INSPECT = """async () => {
  const result = {math: 0, typeset: 0, untypeset: [], merrors: 0, images: [],
                  widgetViews: 0, widgetsRendered: 0};
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
    await MathJax.startup.promise;
  }
  // Sphinx wraps every formula in .math (inline span, display div).
  const maths = Array.from(document.querySelectorAll("span.math, div.math"));
  result.math = maths.length;
  for (const el of maths) {
    if (el.querySelector("mjx-container")) result.typeset += 1;
    else if (result.untypeset.length < 5) result.untypeset.push(el.textContent.slice(0, 80));
  }
  result.merrors = document.querySelectorAll("mjx-merror").length;
  await Promise.all(Array.from(document.images).map(img => img.complete ? null :
      new Promise(resolve => { img.onload = img.onerror = resolve; })));
  result.images = Array.from(document.images).map(img => ({
      src: img.currentSrc || img.src, width: img.naturalWidth,
      attrSrc: img.getAttribute("src"), alt: img.getAttribute("alt"),
      inWidget: img.closest(".jupyter-widgets, .widget-subarea") !== null}));
  result.widgetViews = document.querySelectorAll(
      'script[type="application/vnd.jupyter.widget-view+json"]').length;
  result.widgetsRendered = document.querySelectorAll(".widget-subarea > *").length;
  return result;
}"""


_IMAGE_PATH = re.compile(
    r"[\w.~%+/\\:-]*\.(?:png|jpe?g|gif|svg|webp|bmp|tiff?|pdf)(?:[?#]\S*)?", re.IGNORECASE
)


def alt_is_a_path(alt: str | None, src: str | None) -> bool:
    """True when an alt text describes nothing: missing, blank, the image's own address or
    an image file's name (docutils' default when no alt was given)."""
    if alt is None or not alt.strip():
        return True
    alt = alt.strip()
    return alt == (src or "").strip() or bool(_IMAGE_PATH.fullmatch(alt))


class Loaded:
    """A page loaded in a context of its own, with what the checks found while it loaded
    (``problems``) and the console errors and uncaught exceptions since (``errors``)."""

    def __init__(self, context, page, info: dict, problems: list[str], errors: list[str]):
        self.context, self.page, self.info = context, page, info
        self.problems, self.errors = problems, errors


def load(browser, base: str, missing: list[str], path: str, viewport: dict | None = None) -> Loaded:
    """Load one page in a fresh context (fresh storage: a first visit), every request to
    another host blocked; return it, open, with what _INSPECT found and the list of
    problems. The caller closes ``loaded.context``."""
    problems: list[str] = []
    errors: list[str] = []
    requests: list[str] = []
    context = browser.new_context(**({"viewport": viewport} if viewport else {}))
    host = urlsplit(base).netloc

    def guard(route):
        if urlsplit(route.request.url).netloc == host:
            route.continue_()
        else:  # never let a test reach out: record and block
            route.abort()

    try:
        context.route("**/*", guard)
        page = context.new_page()
        page.set_default_timeout(PAGE_TIMEOUT_MS)
        page.on("request", lambda request: requests.append(request.url))
        page.on(
            "console",
            lambda msg: (
                msg.type == "error"
                and errors.append(f"console error: {msg.text} (at {msg.location.get('url', '?')})")
            ),
        )
        page.on("pageerror", lambda exc: errors.append(f"uncaught exception: {exc}"))
        page.on(
            "response",
            lambda resp: (
                resp.status >= 400 and problems.append(f"HTTP {resp.status} for {resp.url}")
            ),
        )
        seen_missing = len(missing)
        page.goto(base + path, wait_until="load")
        info = page.evaluate(_INSPECT)
        if info["widgetViews"]:
            # The widget manager renders on `load`, asynchronously.
            try:
                page.wait_for_function(
                    "n => document.querySelectorAll('.widget-subarea > *').length >= n",
                    arg=info["widgetViews"],
                    timeout=10_000,
                )
            except Exception:  # reported below with the counts
                pass
            info = page.evaluate(_INSPECT)
        page.wait_for_timeout(300)  # late console errors (e.g. a font that failed)
    except BaseException:
        context.close()
        raise
    problems += errors
    problems += [
        f"request to another host: {url}"
        for url in requests
        if urlsplit(url).netloc != host and urlsplit(url).scheme in ("http", "https", "ws", "wss")
    ]
    problems += [f"404 from the server for {p}" for p in missing[seen_missing:]]
    if info["math"] and info["typeset"] < info["math"]:
        problems.append(
            f"MathJax typeset {info['typeset']} of {info['math']} formulas; "
            f"not typeset: {info['untypeset']}"
        )
    if info["merrors"]:
        problems.append(f"{info['merrors']} MathJax errors (mjx-merror) on the page")
    problems += [
        f"image did not load: {img['src'][:120]}" for img in info["images"] if img["width"] <= 0
    ]
    problems += [
        f"image has no real alt text (alt={img['alt']!r}): {img['src'][:120]}"
        for img in info["images"]
        if not img["inWidget"] and alt_is_a_path(img["alt"], img["attrSrc"])
    ]
    if info["widgetsRendered"] < info["widgetViews"]:
        problems.append(
            f"{info['widgetViews']} widgets embedded, {info['widgetsRendered']} rendered"
        )
    return Loaded(context, page, info, problems, errors)


def visit(browser, base: str, missing: list[str], path: str) -> tuple[dict, list[str]]:
    """Load one page; return what _INSPECT found and the list of problems."""
    loaded = load(browser, base, missing, path)
    loaded.context.close()
    return loaded.info, loaded.problems


# Every page of the book is loaded once at a wide screen's size and once at a phone's, and
# the checks of each size run on that one load (pytest runs a page's tests together, then
# closes it): the loads are most of this file's time.
WIDE = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}


def _loaded_page(request, browser, server, viewport):
    base, missing = server
    loaded = load(browser, base, missing, request.param, viewport)
    loaded.path = request.param
    yield loaded
    loaded.context.close()


@pytest.fixture(scope="module", params=toc_pages())
def wide_page(request, browser, server):
    """A page of the book as loaded at 1280 x 900 px."""
    yield from _loaded_page(request, browser, server, WIDE)


@pytest.fixture(scope="module", params=toc_pages())
def phone_page(request, browser, server):
    """A page of the book as loaded at 390 x 844 px."""
    yield from _loaded_page(request, browser, server, PHONE)


def test_page_works_offline(wide_page):
    path = wide_page.path
    assert (SITE / path).is_file(), f"{path} was not built (listed in _toc.yml)"
    assert not wide_page.problems, f"{path}:\n  " + "\n  ".join(wide_page.problems)


def test_intro_math_is_typeset(browser, server):
    """The front page has a formula: MathJax must be there and must have run."""
    base, missing = server
    info, problems = visit(browser, base, missing, "intro.html")
    assert not problems, problems
    assert info["math"] >= 1 and info["typeset"] == info["math"], info


def test_schedule_stepper_steps_without_a_kernel(browser, server):
    """The all-gather chapter's viz.stepper: clicking a step's tab shows that step's frame
    (the widget manager switches tabs in the page; no kernel is involved)."""
    base, _ = server
    context = browser.new_context()
    page = context.new_page()
    page.set_default_timeout(PAGE_TIMEOUT_MS)
    try:
        page.goto(base + "chapters/all_gather.html", wait_until="load")
        tabs = page.locator(".widget-tab .lm-TabBar-tab")
        tabs.first.wait_for()
        titles = [t.strip() for t in tabs.all_inner_texts()]
        assert titles == ["start"] + [f"step {k}" for k in range(5)]  # 6 ranks: 5 steps
        shown = """() => Array.from(document.querySelectorAll('.widget-tab img'))
                          .map(img => img.offsetParent !== null && img.naturalWidth > 0)"""
        assert page.evaluate(shown) == [True] + [False] * 5
        tabs.nth(3).click()
        page.wait_for_function(
            "() => document.querySelectorAll('.widget-tab img')[3].offsetParent !== null"
        )
        assert page.evaluate(shown) == [False, False, False, True, False, False]
        # each frame says what it shows (viz.animation.frame_stepper's alt text): step 2
        # of the 6-rank ring all-gather
        alts = page.evaluate(
            "() => Array.from(document.querySelectorAll('.widget-tab img')).map(i => i.alt)"
        )
        assert alts[3].startswith("step 2 of steps 0 to 4: "), alts[3]
    finally:
        context.close()


# The frame a step-through animation shows, as a fingerprint of its pixels: the visible image
# of stepper ``s`` (a viz.stepper Tab: one widget image per tab, only the selected one shown),
# or the image of jshtml player ``s`` (matplotlib's to_jshtml), redrawn on a canvas.
_FRAME = """([kind, s]) => {
  const box = document.querySelectorAll(kind === 'tab' ? '.widget-tab' : 'div.animation')[s];
  const shown = Array.from(box.querySelectorAll('img')).filter(
      img => img.offsetParent !== null && img.complete && img.naturalWidth > 0);
  if (shown.length !== 1) return null;
  const img = shown[0], canvas = document.createElement('canvas');
  canvas.width = img.naturalWidth; canvas.height = img.naturalHeight;
  canvas.getContext('2d').drawImage(img, 0, 0);
  const data = canvas.toDataURL('image/png');
  let hash = 0;
  for (let i = 0; i < data.length; i++) hash = (hash * 31 + data.charCodeAt(i)) | 0;
  return `${img.naturalWidth}x${img.naturalHeight}:${data.length}:${hash}`;
}"""


def _frame_after(page, kind, s, before):
    """The fingerprint of stepper or player ``s`` once it differs from ``before``."""
    handle = page.wait_for_function(
        f"([kind, s, before]) => {{ const f = ({_FRAME})([kind, s]); "
        "return f !== null && f !== before ? f : null; }",
        arg=[kind, s, before],
    )
    return handle.json_value()


def test_every_animation_steps_and_each_step_changes_the_frame(wide_page):
    """Every step-through animation of the page, stepped in the browser without a kernel:
    each tab of every stepper (viz.stepper, viz.loads.load_stepper) shows a frame of its own,
    and "Next frame" of every player (to_jshtml) changes the frame, through all its frames;
    "First frame" goes back to the first."""
    page = wide_page.page
    steppers = page.locator(".widget-tab")
    for s in range(steppers.count()):
        tabs = steppers.nth(s).locator(".lm-TabBar-tab")
        assert tabs.count() >= 2, f"{wide_page.path}: stepper {s} has {tabs.count()} tab"
        frames = [page.evaluate(_FRAME, ["tab", s])]
        assert frames[0], f"{wide_page.path}: stepper {s} shows no frame"
        for k in range(1, tabs.count()):
            tabs.nth(k).click()
            frames.append(_frame_after(page, "tab", s, frames[-1]))
        assert len(set(frames)) == len(frames), f"{wide_page.path}: stepper {s} repeats a frame"
    players = page.locator("div.animation")
    for s in range(players.count()):
        frames = int(players.nth(s).locator("input[type=range]").get_attribute("max")) + 1
        assert frames >= 2, f"{wide_page.path}: animation {s} has one frame"
        shown = [page.evaluate(_FRAME, ["player", s])]
        next_frame = players.nth(s).locator("button[title='Next frame']")
        for _ in range(frames - 1):
            next_frame.click()
            shown.append(_frame_after(page, "player", s, shown[-1]))
        players.nth(s).locator("button[title='First frame']").click()
        assert _frame_after(page, "player", s, shown[-1]) == shown[0]


def test_guard_catches_a_remote_request(browser, tmp_path):
    """The checks must be able to fail: a page that loads a CDN script and a missing
    image is reported (and the CDN request is blocked, not sent)."""
    (tmp_path / "bad.html").write_text(
        "<!doctype html><html><head>"
        '<script src="https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-mml-chtml.js"></script>'
        '</head><body><img src="missing.png"><span class="math">\\(x\\)</span></body></html>',
        encoding="utf-8",
    )
    (tmp_path / "favicon.ico").write_bytes(b"")
    with serve(tmp_path) as (base, missing):
        _, problems = visit(browser, base, missing, "bad.html")
    text = "\n".join(problems)
    assert "request to another host: https://cdn.jsdelivr.net/" in text, text
    assert "image did not load" in text and "404 from the server for /missing.png" in text, text
    assert "image has no real alt text (alt=None)" in text, text
    assert alt_is_a_path("../_images/4507627d.png", "../_images/4507627d.png")
    assert alt_is_a_path("x.png", "../_images/x.png") and alt_is_a_path(" ", None)
    assert not alt_is_a_path("Tori and the wraparound rule, figure 2", "../_images/x.png")
    assert "MathJax typeset 0 of 1" in text, text


SCRATCH_PAGE = """\
---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---

# Scratch: widgets and math

Inline $T = \\alpha + \\frac{S}{B}$, an autoloaded extension $\\cancel{x}$, and

$$
T_{\\text{ring}} = (n-1)\\left(\\alpha + \\frac{S}{nB}\\right)
$$ (eq-scratch)

```{code-cell} ipython3
import ipywidgets as widgets
widgets.IntSlider(value=3, min=1, max=8, description="ranks")
```

```{code-cell} ipython3
widgets.Button(description="run", icon="play")
```
"""


def test_scratch_widget_page_offline(browser, tmp_path):
    """Build a tiny book with the real configuration and widgets; it must render offline."""
    html = build_scratch_book(tmp_path / "book", SCRATCH_PAGE, timeout=120)
    with serve(html) as (base, missing):
        info, problems = visit(browser, base, missing, "chapters/scratch.html")
    assert not problems, "scratch page:\n  " + "\n  ".join(problems)
    assert info["widgetViews"] == 2 and info["widgetsRendered"] >= 2, info
    assert info["math"] >= 3 and info["typeset"] == info["math"], info


@contextlib.contextmanager
def _page_at(browser, url, width, height):
    """A fresh page of ``width`` x ``height`` px with ``url`` loaded; closed afterwards."""
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    page.set_default_timeout(PAGE_TIMEOUT_MS)
    try:
        page.goto(url, wait_until="load")
        yield page
    finally:
        context.close()


def test_sidebar_drawer_opens_and_its_links_work_on_a_phone(browser, server):
    """At 390 px the visible 'Toggle primary sidebar' button opens the chapter list as a
    drawer, and a chapter link in it navigates (the theme binds its handler to a hidden
    button; _static/sidebar-toggles.js forwards the visible one's clicks to it)."""
    base, _ = server
    with _page_at(browser, base + "chapters/all_reduce.html", 390, 844) as page:
        drawer = page.locator("#pst-primary-sidebar-modal")
        assert not drawer.evaluate("d => d.open")
        page.locator(".primary-toggle:visible").first.click()
        page.wait_for_function("() => document.querySelector('#pst-primary-sidebar-modal').open")
        drawer.get_by_role("link", name="Reduce-scatter").first.click()
        page.wait_for_url("**/chapters/reduce_scatter.html")
        # the page contents drawer too
        page.locator(".secondary-toggle:visible").first.click()
        page.wait_for_function("() => document.querySelector('#pst-secondary-sidebar-modal').open")


def test_sidebar_toggle_collapses_the_chapter_list_on_a_wide_screen(browser, server):
    base, _ = server
    with _page_at(browser, base + "chapters/all_reduce.html", 1280, 900) as page:
        sidebar = page.locator("#pst-primary-sidebar")
        assert sidebar.is_visible()
        toggle = page.locator(".primary-toggle:visible").first
        toggle.click()
        sidebar.wait_for(state="hidden")  # slides out (a CSS transition)
        toggle.click()
        page.wait_for_function(  # back in place once the transition is over
            "() => document.querySelector('#pst-primary-sidebar')"
            ".getBoundingClientRect().left === 0"
        )
        assert sidebar.is_visible()


def test_page_does_not_scroll_sideways_on_a_phone(phone_page):
    """At 390 px nothing widens the page (long names in the text and the references wrap,
    _static/reading.css); code cells and display equations scroll inside their own boxes."""
    widths = phone_page.page.evaluate(
        "() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]"
    )
    path = phone_page.path
    assert widths[0] <= widths[1], f"{path} is {widths[0]} px wide at {widths[1]} px"


def test_index_link_in_the_phone_drawer_reaches_the_glossary_terms(browser, server):
    """At 390 px the chapter drawer ends with a link to the general index
    (scripts/reader_aids.py); following it shows the glossary's terms, linked to it."""
    base, _ = server
    with _page_at(browser, base + "chapters/all_gather.html", 390, 844) as page:
        page.locator(".primary-toggle:visible").first.click()
        page.wait_for_function("() => document.querySelector('#pst-primary-sidebar-modal').open")
        link = page.locator("#pst-primary-sidebar-modal").get_by_role(
            "link", name="Index", exact=True
        )
        link.scroll_into_view_if_needed()
        link.click()
        page.wait_for_url("**/genindex.html")
        for term in ("ICI", "busbw", "E4M3", "scalable unit"):
            entry = page.locator("article a", has_text=term).first
            assert entry.is_visible(), f"{term!r} is not in the index"
        page.locator("article a", has_text="NVSwitch").first.click()
        page.wait_for_url("**/glossary.html#term-NVSwitch")
        widths = page.evaluate(
            "() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]"
        )
        assert widths[0] <= widths[1], f"the glossary is {widths[0]} px wide at {widths[1]} px"


# --- calculators (collectives.viz.interactive, drawn by _static/calculators.js) ----------

CALCULATOR_PAGE = """---
jupytext:
  text_representation: {extension: .md, format_name: myst}
kernelspec: {display_name: Python 3, language: python, name: python3}
---
# Calculators

A widget, so that the page loads require.js (plotly.js must then load through it):

```{code-cell} ipython3
import ipywidgets as widgets
import collectives as cl
from collectives.viz.interactive import calculator

widgets.IntSlider(value=3, min=0, max=10, description="x")
```

Two calculators on one page, $x^2$ in the text:

```{code-cell} ipython3
ring = {"ring": lambda n, B: (cl.algorithms.ring_all_gather(n), cl.topology.ring(n, B, 1e-6)),
        "direct": lambda n, B: (cl.algorithms.direct_all_gather(n),
                                cl.topology.switch(n, B, 1e-6))}
calculator("all_gather", ring, ranks=[4, 8, 16], link_bandwidths=[10e9, 40e9])
```

```{code-cell} ipython3
calculator("all_gather", ring, ranks=[2, 4], link_bandwidths=[25e9], metric="busbw")
```

A plan calculator (collectives.viz.plan, drawn by _static/calculators.js too):

```{code-cell} ipython3
from collectives.plan import Layout, Transformer
from collectives.viz.plan import ClusterChoice, plan_calculator

tiny = Transformer(layers=4, hidden=512, ffn=1536, heads=8, vocab=1000, name="tiny")
tiny_moe = Transformer(layers=4, hidden=512, ffn=1536, heads=8, vocab=1000, experts=8,
                       top_k=2, name="tiny-moe")
two = ClusterChoice("two DGX", lambda: cl.hardware.preset("dgx-h100", nodes=2), {
    "tiny": {"DP 16": Layout(dp=16), "TP 8 x DP 2": Layout(dp=2, tp=8)},
    "tiny-moe": {"EP 8 x DP 2": Layout(dp=2, ep=8)}}, {"16": 16, "32": 32})
plan_calculator([tiny, tiny_moe], [two], ["bf16", "fp8"], seq_len=256)
```
"""

# The numbers a calculator shows, and those its data say it should show at its settings: the
# latency setting's alpha added once per step that moves data (Calculator.values), and the tick
# labels of both axes.
_CALC_STATE = """block => {
  const data = JSON.parse(block.querySelector('script.cl-calc-data').textContent);
  const v = name => block.querySelector(`[data-control="${name}"]`).value;
  const s = {rank: +v('rank'), size: +v('size'), bandwidth: +v('bandwidth'),
             algorithm: +v('algorithm'), metric: v('metric'), latency: +v('latency')};
  const alpha = data.latencies[s.latency];
  const at = (a, i) => {
    const t = data.seconds[a][s.rank][s.bandwidth][i];
    if (t === null) return [null, null];
    const total = t + alpha * data.steps[a][s.rank];
    return [total, data.busbw[a][s.rank][s.bandwidth][i] * (t / total)];
  };
  const rows = Array.from(block.querySelectorAll('.cl-calc-readout tbody tr')).map(tr =>
      [tr.querySelector('th').textContent, ...Array.from(tr.querySelectorAll('td'),
                                                           td => td.textContent)]);
  const expected = data.algorithms.map((name, a) => [name, ...at(a, s.size)]).filter(
      (r, a) => r[1] !== null && (s.algorithm < 0 || s.algorithm === a));
  const plot = block.querySelector('.cl-calc-plot');
  const traceY = plot.data ? plot.data.map(t => Array.from(t.y)) : null;
  const wantY = data.algorithms.map((_, a) => data.sizes.map((_, i) => at(a, i)).map(p =>
      p[0] === null ? null : (s.metric === 'seconds' ? p[0] : p[1] / 1e9)));
  const labels = axis => Array.from(plot.querySelectorAll(`.${axis}tick text`),
                                    t => t.textContent);
  return {rows, expected, traceY, wantY, drawn: !!block.querySelector('.main-svg'),
          shown: block.querySelector('[data-show="rank"]').textContent,
          rankLabel: data.ranks[s.rank], setting: s, yticks: labels('y'), xticks: labels('x'),
          axisTitle: plot.layout ? plot.layout.yaxis.title.text : null};
}"""

#: tick labels a readable axis has: at least two, and few enough not to overlap (the log time
#: axis's dtick of 1 left on the linear busbw axis drew one per GB/s: hundreds)
TICKS = range(2, 16)


def _seconds_text(t: float) -> str:
    from collectives.viz.interactive import format_seconds

    return format_seconds(t)


def _rate_text(b: float) -> str:
    from collectives.viz.calculators import format_rate

    return format_rate(b)


def _check_calculator(block, after: str = "loading") -> dict:
    """The readout, the plot and both axes' tick labels against the block's data at its
    current setting; ``after`` names the last move, for the messages."""
    state = block.evaluate(_CALC_STATE)
    where = f"after {after} (setting {state['setting']})"
    assert state["drawn"], "the Plotly figure was not drawn"
    assert [r[0] for r in state["rows"]] == [e[0] for e in state["expected"]], where
    assert [r[1] for r in state["rows"]] == [_seconds_text(e[1]) for e in state["expected"]], where
    assert [r[2] for r in state["rows"]] == [_rate_text(e[2]) for e in state["expected"]], where
    assert state["traceY"] == state["wantY"], f"the plot does not show the setting {where}"
    assert state["shown"] == state["rankLabel"]
    want_title = "time" if state["setting"]["metric"] == "seconds" else "busbw (GB/s)"
    assert state["axisTitle"] == want_title, where
    for axis in ("y", "x"):
        ticks = state[f"{axis}ticks"]
        assert len(ticks) in TICKS, f"the {axis} axis has {len(ticks)} tick labels {where}"
        assert len(set(ticks)) == len(ticks), f"repeated {axis} tick labels {ticks} {where}"
    return state


def _choose(block, control: str, value: str) -> None:
    """Pick ``value`` in a calculator's <select> as a reader's choice does (the change event).
    Playwright's select_option sometimes waits forever for a visible, enabled select here
    (seen after a Plotly relayout), so the choice is made in the page."""
    block.locator(f'[data-control="{control}"]').evaluate(
        "(el, v) => { el.value = v; el.dispatchEvent(new Event('change', {bubbles: true})); }",
        value,
    )


def _slide(block, control: str, value: str) -> None:
    block.locator(f'[data-control="{control}"]').fill(value)


# Orders in which a reader moves a calculator's controls, each checked after every move (the
# readout, the plot, the axis title and both axes' tick labels). The first switches to bus
# bandwidth at once, as one click did in chapter 1 when the busbw axis drew hundreds of
# labels; the others switch in the middle of moves, back and forth, with one algorithm shown
# and with a latency added. "rank:top", "size:max", "bandwidth:last", "latency:last" are the
# last settings of a control, "rank:other" one away from where it is.
CLICK_ORDERS = (
    ("metric:busbw", "rank:other", "size:0", "latency:last", "metric:seconds"),
    (
        "rank:top",
        "size:0",
        "size:max",
        "bandwidth:last",
        "algorithm:0",
        "metric:busbw",
        "algorithm:-1",
        "metric:seconds",
    ),
    (
        "algorithm:0",
        "metric:busbw",
        "latency:1",
        "bandwidth:0",
        "metric:seconds",
        "metric:busbw",
        "size:max",
        "latency:0",
        "algorithm:-1",
        "metric:seconds",
    ),
)


def _move(block, move: str) -> None:
    control, _, value = move.partition(":")
    if control in ("rank", "size"):
        slider = block.locator(f'[data-control="{control}"]')
        top = int(slider.get_attribute("max"))
        if value == "other":
            value = str(int(slider.input_value()) - 1 if int(slider.input_value()) else top)
        _slide(block, control, {"top": str(top), "max": str(top)}.get(value, value))
        return
    options = block.locator(f'[data-control="{control}"] option').count()
    if value == "last":
        value = str(options - 1)
    if control in ("bandwidth", "latency") and int(value) >= options:
        value = str(options - 1)
    _choose(block, control, value)


def exercise_calculators(page) -> int:
    """Move every calculator's controls on ``page`` in each of CLICK_ORDERS; after every move
    the readout and the plot must show the precomputed numbers of the new setting and both
    axes a readable set of tick labels; the size slider, the ranks slider (where there are
    several), the link speed and the latency each change the numbers."""
    blocks = page.locator(".cl-calculator")
    count = blocks.count()
    for k in range(count):
        block = blocks.nth(k)
        block.scroll_into_view_if_needed()
        page.wait_for_function(
            "b => b.getAttribute('data-ready') === 'true'", arg=block.element_handle()
        )
        state = _check_calculator(block)
        changed = set()
        for order in CLICK_ORDERS:
            for move in order:
                _move(block, move)
                before, state = state, _check_calculator(block, move)
                if state["rows"] != before["rows"]:
                    changed.add(move.partition(":")[0])
        wanted = {"size", "latency"}
        if int(block.locator('[data-control="rank"]').get_attribute("max")) > 0:
            wanted.add("rank")
        assert wanted <= changed, f"moving {sorted(wanted - changed)} changed nothing"
        if block.locator('[data-control="bandwidth"] option').count() > 1:
            _slide(block, "rank", block.locator('[data-control="rank"]').get_attribute("max"))
            _choose(block, "bandwidth", "0")
            slow = _check_calculator(block, "bandwidth:0")
            _move(block, "bandwidth:last")
            fast = _check_calculator(block, "bandwidth:last")
            assert fast["rows"] != slow["rows"], "the link speed changed nothing"
    return count


# A plan calculator's readout and table against the plan its data hold at its setting.
_PLAN_STATE = """block => {
  const data = JSON.parse(block.querySelector('script.cl-plan-data').textContent);
  const v = name => +block.querySelector(`[data-plan-control="${name}"]`).value;
  const key = [v('model'), v('cluster'), v('layout'), v('recipe'), v('batch')].join(',');
  const rows = Array.from(block.querySelectorAll('.cl-plan-readout tbody tr')).map(tr =>
      [tr.querySelector('th').textContent, tr.querySelector('td').textContent]);
  const purposes = Array.from(block.querySelectorAll('.cl-plan-collectives tbody tr'),
      tr => tr.querySelector('td').textContent);
  const plot = block.querySelector('.cl-plan-time');
  const gantt = block.querySelector('.cl-plan-timeline');
  return {key, shown: block.getAttribute('data-plan'), rows, purposes, plan: data.plans[key],
          traces: plot.data ? plot.data.map(t => [t.name, t.x[0]]) : null,
          timeline: gantt && gantt.data ? gantt.data.map(t => [t.name, Array.from(t.y),
              Array.from(t.base), Array.from(t.x)]) : null,
          layouts: Array.from(block.querySelectorAll('[data-plan-control="layout"] option'),
                              o => o.textContent),
          wantLayouts: data.layouts[v('model')][v('cluster')],
          drawn: !!block.querySelector('.cl-plan-memory .main-svg')};
}"""


def _check_plan_calculator(block) -> dict:
    from collectives.viz.plan import _readout_rows

    state = block.evaluate(_PLAN_STATE)
    assert state["drawn"] and state["shown"] == state["key"], "the plan was not drawn"
    p = state["plan"]
    assert [tuple(r) for r in state["rows"]] == _readout_rows(p)
    assert state["purposes"] == [f"{c[0]} ({c[1]})" for c in p["collectives"]]
    want = [
        ["compute", p["compute"]],
        ["pipeline bubble", p["bubble"]],
        ["exposed communication", p["exposed"]],
    ]
    want += [[n, x] for n, x, _ in p["classes"]] + [[n, x] for n, x, _ in p["levels"]]
    assert state["traces"] == want, "the bars do not show the chosen plan"
    # the step's timeline: every span of the plan's timeline, lane by lane, to the step's end
    from collectives.viz.calculators.plan import timeline_traces

    gantt = [[t["name"], t["y"], t["base"], t["x"]] for t in timeline_traces(p["timeline"])]
    assert state["timeline"] == gantt, "the timeline does not show the chosen plan"
    assert state["layouts"] == state["wantLayouts"]
    return state


def _choose_plan(block, page, control: str, value: str) -> dict:
    block.locator(f'[data-plan-control="{control}"]').evaluate(
        "(el, v) => { el.value = v; el.dispatchEvent(new Event('change', {bubbles: true})); }",
        value,
    )
    want = block.evaluate(
        "b => ['model','cluster','layout','recipe','batch'].map(n => "
        "+b.querySelector(`[data-plan-control=\"${n}\"]`).value).join(',')"
    )
    page.wait_for_function(
        "([b, k]) => b.getAttribute('data-plan') === k", arg=[block.element_handle(), want]
    )
    return _check_plan_calculator(block)


def exercise_plan_calculators(page) -> int:
    """Move every plan calculator's selects on ``page``; after each move the readout, the
    table and the bars must show the precomputed plan of the new setting."""
    blocks = page.locator(".cl-calculator-plan")
    count = blocks.count()
    for k in range(count):
        block = blocks.nth(k)
        block.scroll_into_view_if_needed()
        page.wait_for_function(
            "b => b.getAttribute('data-ready') === 'true'", arg=block.element_handle()
        )
        first = _check_plan_calculator(block)
        seen = {first["key"]}
        for control in ("recipe", "batch", "layout", "model", "cluster"):
            options = block.locator(f'[data-plan-control="{control}"] option').count()
            if options > 1:
                now = int(block.locator(f'[data-plan-control="{control}"]').input_value())
                moved = _choose_plan(block, page, control, str(options - 1 if now == 0 else 0))
                seen.add(moved["key"])
                assert moved["rows"] != first["rows"] or control == "cluster", (
                    f"choosing another {control} changed nothing"
                )
        assert len(seen) >= 3
    return count


def test_calculators_on_a_scratch_page_with_require_js(browser, tmp_path):
    """Two calculators next to a widget (so require.js is on the page): both draw, plotly.js
    is fetched once from the book's own _static/vendor/, and moving the controls shows the
    precomputed numbers of each setting; nothing else is fetched and nothing fails."""
    html = build_scratch_book(tmp_path / "book", CALCULATOR_PAGE, timeout=180)
    with serve(html) as (base, missing):
        info, problems = visit(browser, base, missing, "chapters/scratch.html")
        assert not problems, "calculator page:\n  " + "\n  ".join(problems)
        context = browser.new_context(viewport={"width": 390, "height": 844})
        page = context.new_page()
        page.set_default_timeout(PAGE_TIMEOUT_MS)
        requests, errors = [], []
        page.on("request", lambda r: requests.append(r.url))
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.on("console", lambda m: m.type == "error" and errors.append(m.text))
        try:
            page.goto(base + "chapters/scratch.html", wait_until="load")
            assert page.evaluate("() => typeof window.requirejs") == "function"
            assert exercise_calculators(page) == 2
            assert exercise_plan_calculators(page) == 1
            widths = page.evaluate(
                "() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]"
            )
        finally:
            context.close()
    plotly = [u for u in requests if u.split("?")[0].endswith("plotly.min.js")]
    assert plotly == [base + "_static/vendor/plotly/plotly.min.js"], plotly
    assert not errors, errors
    assert widths[0] <= widths[1], f"the calculator page is {widths[0]} px wide at {widths[1]} px"


def test_calculator_checks_can_fail(browser, tmp_path):
    """A block whose readout disagrees with its data is caught."""
    import collectives as cl
    from collectives.viz.interactive import calculator

    calc = calculator(
        "all_gather",
        {"ring": lambda n, B: (cl.algorithms.ring_all_gather(n), cl.topology.ring(n, B))},
        [4],
        [1e9],
        sizes=[1024],
    )
    wrong = calc._repr_html_().replace("<td>", "<td>9", 1)
    (tmp_path / "p.html").write_text(f"<!doctype html><html><body>{wrong}</body></html>")
    with serve(tmp_path) as (base, _):
        context = browser.new_context()
        page = context.new_page()
        try:
            page.goto(base + "p.html")
            block = page.locator(".cl-calculator").first
            with pytest.raises(AssertionError):
                _check_calculator(block)
        finally:
            context.close()


# --- nothing wider than its column (issue 12) --------------------------------------------

# Measured in the page: elements that stick out of the article's column (unless a scrolling
# ancestor inside the column clips them), and elements that scroll sideways inside their box.
_OVERFLOW = """() => {
  const article = document.querySelector("article.bd-article");
  if (!article) return null;
  const col = article.getBoundingClientRect();
  const scrolls = el => ["auto", "scroll", "hidden", "clip"].includes(
      getComputedStyle(el).overflowX);
  const clipped = el => {
    for (let a = el.parentElement; a && a !== article; a = a.parentElement) {
      if (scrolls(a)) return true;
    }
    return false;
  };
  const where = el => {
    const sec = el.closest("section"), h = sec && sec.querySelector("h1, h2, h3");
    const box = el.getBoundingClientRect();
    const kind = el.closest("div.cell_input, div.highlight") ? "code"
      : el.closest("div.math, mjx-container") || Array.from(el.querySelectorAll("mjx-container"))
          .some(m => m.getBoundingClientRect().right > box.right + 1) ? "math"
      : el.closest("div.cell_output") && el.querySelector("table") ? "table"
      : el.closest("div.cell_output") ? "output"
      : el.closest("table")
          || (el.children.length === 1 && el.firstElementChild.tagName === "TABLE")
          ? "table" : el.tagName.toLowerCase();  // a markdown table's scrolling wrapper is a table
    return {kind, section: h ? h.textContent.replace(/#$/, "").trim().slice(0, 60) : "",
            text: (el.textContent || "").trim().slice(0, 70)};
  };
  const wide = [], scrolled = [];
  for (const el of article.querySelectorAll("*")) {
    if (el.closest(".js-plotly-plot, mjx-assistive-mml")) continue;   // drawn inside fixed boxes
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.height === 0) continue;
    if ((r.right > col.right + 1 || r.left < col.left - 1) && !clipped(el)) {
      wide.push({...where(el), by: Math.round(Math.max(r.right - col.right, col.left - r.left))});
    }
    if (scrolls(el) && el.scrollWidth > el.clientWidth + 1) {
      scrolled.push({...where(el), by: el.scrollWidth - el.clientWidth});
    }
  }
  return {column: Math.round(col.width), wide, scrolled};
}"""

# What may scroll sideways inside its own box, by width. On a phone a code cell scrolls (wrapping
# every line of Python at 360 px would make it unreadable; the theme scrolls code blocks), so
# does a table wider than the screen (a table cannot wrap; reading.css). A formula may not:
# MathJax 3 cannot break lines, so reading.css sets display math at 85 % on a phone and the
# chapters break every long display equation by hand (`\begin{aligned}` lines at a relation or
# a +) and split long inline formulas in Answer dropdowns at a relation, so that each fits the
# 358-px column at 390 px with its equation number (issue 26). At 1280 px nothing may scroll.
MAY_SCROLL = {1280: set(), 390: {"code", "table"}}


def overflow_problems(report: dict, width: int) -> list[str]:
    problems = [
        f"{w['kind']} sticks out of the {report['column']}-px column by {w['by']} px "
        f"in '{w['section']}': {w['text']!r}"
        for w in report["wide"]
    ]
    problems += [
        f"{s['kind']} scrolls sideways by {s['by']} px in '{s['section']}': {s['text']!r}"
        for s in report["scrolled"]
        if s["kind"] not in MAY_SCROLL[width]
    ]
    return problems


def test_overflow_check_can_fail(browser, tmp_path):
    (tmp_path / "p.html").write_text(
        '<!doctype html><html><body><article class="bd-article" style="width:300px">'
        '<div class="cell_input"><pre style="overflow-x:auto">' + "x" * 200 + "</pre></div>"
        '<div style="width:500px">too wide</div></article></body></html>'
    )
    with serve(tmp_path) as (base, _):
        with _page_at(browser, base + "p.html", 1280, 800) as page:
            report = page.evaluate(_OVERFLOW)
    problems = overflow_problems(report, 1280)
    assert any("sticks out" in p for p in problems) and any("scrolls" in p for p in problems)
    assert overflow_problems(report, 390) == [p for p in problems if "sticks out" in p]


def _nothing_is_wider_than_its_column(loaded, width):
    page, path = loaded.page, loaded.path
    page.evaluate(
        "async () => { if (window.MathJax && MathJax.startup) await MathJax.startup.promise; }"
    )
    report = page.evaluate(_OVERFLOW)
    assert report is not None, f"{path} has no article"
    problems = overflow_problems(report, width)
    assert not problems, f"{path} at {width} px:\n  " + "\n  ".join(problems[:15])


def test_nothing_is_wider_than_its_column(wide_page):
    """No element sticks out of the article's column, and at 1280 px no code cell, output,
    table or display equation scrolls sideways: everything the text relies on is visible."""
    _nothing_is_wider_than_its_column(wide_page, WIDE["width"])


def test_nothing_is_wider_than_its_column_on_a_phone(phone_page):
    """At 390 px nothing sticks out of the column either; code and tables wider than the
    screen scroll inside their own boxes (MAY_SCROLL), but no formula does."""
    _nothing_is_wider_than_its_column(phone_page, PHONE["width"])


# --- last on each page: it leaves the controls moved ---------------------------------------


def test_calculators_in_the_book_respond_to_their_controls(wide_page, server):
    """Every calculator on the page (each chapter of the course has at least one; the appendix
    need not): the controls change the numbers, offline, with no console error, uncaught
    exception or missing file meanwhile."""
    _, missing = server
    errors, seen_missing = len(wide_page.errors), len(missing)
    count = exercise_calculators(wide_page.page) + exercise_plan_calculators(wide_page.page)
    if posixpath.splitext(wide_page.path)[0] in course_chapters():
        assert count >= 1, f"{wide_page.path} has no calculator"
    assert wide_page.errors[errors:] == [], wide_page.path
    assert missing[seen_missing:] == [], wide_page.path


#: what a reader types into the FP8 explorer: (x, amax; "" for no scale)
FP8_TYPED = [("3.14159", ""), ("-500", ""), ("1e-7", ""), ("0.1", "0.5"), ("2e-5", "0.002")]


def test_fp8_explorers_round_as_the_package(wide_page):
    """Every FP8 explorer (collectives.viz.calculators.fp8) of the page, typed into offline:
    each row's bits are the package's code for that number in that format (explain: the
    package's scaled cast, or its BF16 rounding), with no console error meanwhile; the FP8
    chapter has one."""
    from collectives.viz.calculators.fp8 import explain

    page = wide_page.page
    blocks = page.locator(".cl-fp8-explorer")
    if wide_page.path == "chapters/fp8.html":
        assert blocks.count() >= 1, "the FP8 chapter has no explorer"
    errors = len(wide_page.errors)
    for k in range(blocks.count()):
        block = blocks.nth(k)
        block.scroll_into_view_if_needed()
        page.wait_for_function(
            "b => b.getAttribute('data-ready') === 'true'", arg=block.element_handle()
        )
        for x, amax in FP8_TYPED:
            block.locator('input[data-control="value"]').fill(x)
            block.locator('input[data-control="amax"]').fill(amax)
            for fmt, width in (("e4m3", 8), ("e5m2", 8), ("bf16", 16)):
                bits = block.locator(f'td.cl-fp8-bits[data-format="{fmt}"]').inner_text()
                want = explain(float(x), fmt, float(amax) if amax else None)["code"]
                assert bits.strip() == format(want, f"0{width}b"), (wide_page.path, x, amax, fmt)
    assert wide_page.errors[errors:] == [], wide_page.path
