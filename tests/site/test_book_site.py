"""Checks of the built book in _build/html (static: no browser).

`make test` builds the book first (`make book`); run that before these tests when
calling pytest directly. A missing build is a failure, never a skip.

What is checked:
- every file in _toc.yml produced a page, and nothing outside the book did;
- the site loads nothing from another host: no <script src>, <link href>, <img src>...,
  no CSS @import/url(), and no inline script naming a CDN, point off 127.0.0.1/localhost;
- MathJax and require.js/the widget manager come from _static/vendor/ (scripts/vendor_assets.py);
- every local href/src in the pages, and every url() in the CSS, resolves to a file
  in the site, and links into another page's #fragment name an id that exists there;
- the reader's way in: "Start here" comes right after the front page, every page's sidebar
  links to the general index, and the index lists every glossary term (and the notation);
- every figure has a real alt text, never its file path (scripts/reader_aids.py), and the
  rules that choose it hold on a scratch book;
- every chapter links the first use in its prose of each glossary term it uses to the
  glossary, and only that use (tests/glossary_uses.py says how a term is spelt).
"""

from __future__ import annotations

import functools
import importlib.util
import posixpath
import re
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
import yaml
from bs4 import BeautifulSoup

from book_toc import build_scratch_book, course_chapters, toc_files
from glossary_uses import OTHER_SENSE_CHAPTERS, Entry, other_senses_removed, use_pattern

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
SITE = ROOT / "_build" / "html"
LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1"}
# Hosts the default Jupyter Book / myst-nb / Sphinx configuration loads from.
CDN_HOSTS = (
    "cdn.jsdelivr.net",
    "unpkg.com",
    "cdnjs.cloudflare.com",
    "fonts.googleapis.com",
    "fonts.gstatic.com",
    "mybinder.org",
    "cdn.mathjax.org",
)
# Attributes that make a browser fetch something.
FETCH_ATTRS = {
    "script": ["src"],
    "link": ["href"],
    "img": ["src"],
    "iframe": ["src"],
    "source": ["src"],
    "video": ["src", "poster"],
    "audio": ["src"],
    "embed": ["src"],
    "object": ["data"],
    "track": ["src"],
    "input": ["src"],
}
CSS_URL = re.compile(r"""url\(\s*(?:"([^"]*)"|'([^']*)'|([^)'"\s]*))\s*\)""")
CSS_IMPORT = re.compile(r"""@import\s+["']([^"']+)["']""")  # the url(...) form is CSS_URL's
# Folders of the repository that must never become pages.
NOT_BOOK = ["README.html", "exercises", "tests", "collectives", "bench", "scripts", ".venv"]


@pytest.fixture(scope="module")
def site() -> Path:
    if not (SITE / "index.html").is_file() or not (SITE / "intro.html").is_file():
        pytest.fail(
            f"the book is not built ({SITE} has no index.html/intro.html): "
            "run `make book` first (`make test` does it for you)",
            pytrace=False,
        )
    return SITE


def content_pages(site: Path) -> list[Path]:
    """The HTML pages of the book (not the theme's templates under _static/)."""
    return sorted(
        p
        for p in site.rglob("*.html")
        if p.relative_to(site).parts[0] not in ("_static", "_sources")
    )


@functools.lru_cache(maxsize=None)
def soup_of(path: Path) -> BeautifulSoup:
    return BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")


def is_remote(url: str) -> bool:
    """True when fetching `url` would leave this machine."""
    parts = urlsplit(url.strip())
    if parts.scheme in ("data", "blob", "about", "javascript", "mailto"):
        return False
    if parts.scheme or parts.netloc:  # http(s)://host/..., //host/..., ws://...
        return (parts.hostname or "") not in LOCAL_HOSTS
    return False


def css_urls(text: str) -> list[str]:
    urls = [next(g for g in m.groups() if g is not None) for m in CSS_URL.finditer(text)]
    urls += CSS_IMPORT.findall(text)
    return [u for u in urls if u]


def fetched_urls(soup: BeautifulSoup) -> list[tuple[str, str]]:
    """(where, url) for everything the page makes the browser fetch."""
    found = []
    for tag, attrs in FETCH_ATTRS.items():
        for el in soup.find_all(tag):
            for attr in attrs:
                if el.get(attr):
                    found.append((f"<{tag} {attr}>", el[attr]))
    for el in soup.find_all(srcset=True):
        for item in el["srcset"].split(","):
            if item.strip():
                found.append((f"<{el.name} srcset>", item.split()[0]))
    for el in soup.find_all(style=True):
        found += [(f"<{el.name} style>", u) for u in css_urls(el["style"])]
    for el in soup.find_all("style"):
        found += [("<style>", u) for u in css_urls(el.get_text())]
    return found


def executable_inline_scripts(soup: BeautifulSoup) -> list[str]:
    return [
        el.get_text()
        for el in soup.find_all("script")
        if not el.get("src")
        and el.get("type", "text/javascript")
        in ("text/javascript", "module", "application/javascript")
    ]


# --- the pages ---------------------------------------------------------------------------


def test_helpers_detect_remote_urls():
    """The detectors below must be able to fail: feed them known-bad input."""
    assert is_remote("https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-mml-chtml.js")
    assert is_remote("//unpkg.com/thebe@0.8.2/lib/index.js")
    assert not is_remote("http://127.0.0.1:8000/_static/x.js")
    assert not is_remote("../_static/vendor/mathjax/tex-mml-chtml.js")
    assert not is_remote("data:image/png;base64,AAAA")
    bad = BeautifulSoup(
        '<link rel="stylesheet" href="https://fonts.googleapis.com/css?family=Roboto">'
        '<style>@import url("https://example.org/a.css"); b{background:url(//x.org/i.png)}</style>'
        "<div style=\"background: url('https://x.org/j.png')\"></div>",
        "html.parser",
    )
    assert sorted(u for _, u in fetched_urls(bad) if is_remote(u)) == sorted(
        [
            "https://fonts.googleapis.com/css?family=Roboto",
            "https://x.org/j.png",
            "//x.org/i.png",
            "https://example.org/a.css",
        ]
    )
    assert css_urls('@import "../basic.css";') == ["../basic.css"]
    assert css_urls("a{b:url(\"data:image/svg+xml,%3Csvg fill='rgba(1, 2, 3)'%3E\")}") == [
        "data:image/svg+xml,%3Csvg fill='rgba(1, 2, 3)'%3E"
    ]


def test_every_toc_file_has_a_page(site):
    missing, untitled = [], []
    for doc in toc_files():
        page = site / f"{doc}.html"
        if not page.is_file():
            missing.append(doc)
        elif soup_of(page).find("h1") is None:
            untitled.append(doc)
    assert not missing, f"_toc.yml lists documents that produced no page: {missing}"
    assert not untitled, f"pages without a title (<h1>): {untitled}"
    # index.html sends readers to the root document
    assert f"{toc_files()[0]}.html" in (site / "index.html").read_text(encoding="utf-8")


def test_nothing_outside_the_book_became_a_page(site):
    stray = [name for name in NOT_BOOK if (site / name).exists()]
    assert not stray, (
        f"files outside the book were built as pages: {stray} "
        "(check exclude_patterns / only_build_toc_files in _config.yml)"
    )


def test_pages_fetch_nothing_from_other_hosts(site):
    offenders = []
    for page in content_pages(site):
        soup = soup_of(page)
        rel = page.relative_to(site).as_posix()
        offenders += [
            f"{rel}: {where} {url}" for where, url in fetched_urls(soup) if is_remote(url)
        ]
        for el in soup.find_all(attrs={"data-jupyter-widgets-cdn": True}):
            if is_remote(el["data-jupyter-widgets-cdn"]):
                offenders.append(
                    f"{rel}: data-jupyter-widgets-cdn={el['data-jupyter-widgets-cdn']}"
                )
        for body in executable_inline_scripts(soup):
            offenders += [
                f"{rel}: inline <script> names {host}" for host in CDN_HOSTS if host in body
            ]
    assert content_pages(site), "no pages found"
    assert not offenders, "the site would load from other hosts:\n" + "\n".join(offenders)


def test_stylesheets_fetch_nothing_from_other_hosts(site):
    sheets = sorted(site.rglob("*.css"))
    assert sheets, "no stylesheets in the site"
    offenders = [
        f"{css.relative_to(site)}: {url}"
        for css in sheets
        for url in css_urls(css.read_text(encoding="utf-8", errors="replace"))
        if is_remote(url)
    ]
    assert not offenders, "stylesheets load from other hosts:\n" + "\n".join(offenders)


def _script_srcs(soup: BeautifulSoup) -> list[str]:
    return [urlsplit(el["src"]).path for el in soup.find_all("script", src=True)]


#: the site served at the host's root, and under a sub-path (``/<name>/``, as a static host
#: serves a project page: ``make test-extended``), where a link that starts with ``/`` leaves
#: the site
SERVED = [
    pytest.param(False, id="root"),
    pytest.param(True, id="sub_path", marks=pytest.mark.extended),
]


def _resolve(page: Path, url: str, sub_path: bool = False) -> Path:
    path = unquote(urlsplit(url).path)
    if path.startswith("/"):
        # under a sub-path the host's root is the folder above the site
        return (SITE.parent / "<host root>" if sub_path else SITE) / path.lstrip("/")
    return Path(posixpath.normpath((page.parent / path).as_posix()))


def test_mathjax_is_the_vendored_copy(site):
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    mathjax_path = config["sphinx"]["config"]["mathjax_path"]
    assert not is_remote(mathjax_path), f"mathjax_path points off-site: {mathjax_path}"
    assert mathjax_path.startswith("vendor/mathjax/"), mathjax_path
    vendored = site / "_static" / mathjax_path
    assert vendored.is_file(), f"{vendored} was not copied into the site"
    # MathJax 3 loads its fonts and TeX extensions from folders next to the script.
    assert (vendored.parent / "output/chtml/fonts/woff-v2/MathJax_Main-Regular.woff").is_file()
    assert (vendored.parent / "input/tex/extensions/ams.js").is_file()

    with_math = 0
    for page in content_pages(site):
        srcs = [
            s
            for s in _script_srcs(soup_of(page))
            if "mathjax" in s.lower()
            or s.endswith(("tex-mml-chtml.js", "tex-chtml.js", "tex-svg.js"))
        ]
        if not srcs:
            continue
        with_math += 1
        for src in srcs:
            assert _resolve(page, src) == vendored, (
                f"{page.relative_to(site)} loads MathJax from {src}, not {mathjax_path}"
            )
    assert with_math, "no page loads MathJax (the intro has math)"


def test_widget_scripts_are_the_vendored_copies(site):
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    widget_js = list(config["sphinx"]["config"]["nb_ipywidgets_js"])
    assert widget_js[0] == "vendor/requirejs/require.js", widget_js
    assert widget_js[-1] == "vendor/html-manager/embed-amd.js", widget_js
    for path in widget_js:
        assert not is_remote(path), path
        assert (site / "_static" / path).is_file(), f"_static/{path} is not in the site"
    expected = [site / "_static" / p for p in widget_js]

    for page in content_pages(site):
        soup = soup_of(page)
        resolved = [_resolve(page, s) for s in _script_srcs(soup)]
        has_state = soup.find("script", type="application/vnd.jupyter.widget-state+json")
        if has_state is None:
            # Pages without widgets load none of the widget machinery.
            assert not set(expected) & set(resolved), (
                f"{page.relative_to(site)} loads widget scripts without widgets"
            )
            continue
        # require.js, then the setup script, then the manager, all local and in order.
        positions = [resolved.index(p) if p in resolved else -1 for p in expected]
        assert -1 not in positions and positions == sorted(positions), (
            f"{page.relative_to(site)}: widget scripts missing or out of order: {resolved}"
        )


def test_vendored_files_are_not_loaded_on_every_page(site):
    """Jupyter Book adds every .js under _static/ to every page; vendor_assets.py must keep
    the vendored files (MathJax's components load each other on demand) off that list."""
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))["sphinx"]["config"]
    allowed = {site / "_static" / p for p in [config["mathjax_path"], *config["nb_ipywidgets_js"]]}
    ours = site / "_static" / "vendor"
    mine = [p.name for p in (ROOT / "_static" / "vendor").iterdir()]  # mathjax, requirejs, ...
    for page in content_pages(site):
        loaded = [_resolve(page, s) for s in _script_srcs(soup_of(page))]
        extra = [
            p
            for p in loaded
            if ours in p.parents and p not in allowed and p.relative_to(ours).parts[0] in mine
        ]
        assert not extra, f"{page.relative_to(site)} loads vendored files directly: {extra}"


def test_vendored_assets_match_the_pins():
    spec = importlib.util.spec_from_file_location(
        "vendor_assets", ROOT / "scripts" / "vendor_assets.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.check() == [], "run `make vendor`"


# --- links -------------------------------------------------------------------------------


def _ids(page: Path) -> set[str]:
    soup = soup_of(page)
    return {el["id"] for el in soup.find_all(id=True)} | {
        el["name"] for el in soup.find_all("a", attrs={"name": True})
    }


@pytest.mark.parametrize("sub_path", SERVED)
def test_local_links_and_assets_exist(site, sub_path):
    broken = []
    for page in content_pages(site):
        soup = soup_of(page)
        rel = page.relative_to(site).as_posix()
        refs = [("<a href>", a["href"]) for a in soup.find_all("a", href=True)]
        refs += fetched_urls(soup)
        for where, url in refs:
            parts = urlsplit(url)
            if parts.scheme or parts.netloc or url.startswith("#") or not parts.path:
                continue
            target = _resolve(page, url, sub_path)
            if target.is_dir():
                target = target / "index.html"
            if not target.is_file():
                shown = target.relative_to(site) if site in target.parents else target
                broken.append(f"{rel}: {where} {url} -> {shown} is missing")
                continue
            if parts.fragment and target.suffix == ".html" and parts.fragment not in _ids(target):
                broken.append(
                    f"{rel}: {where} {url} -> no id {parts.fragment!r} in "
                    f"{target.relative_to(site)}"
                )
        # links within the page
        ids = _ids(page)
        for a in soup.find_all("a", href=True):
            href = a["href"]
            if href.startswith("#") and len(href) > 1 and unquote(href[1:]) not in ids:
                broken.append(f"{rel}: <a href> {href} -> no such id on the page")
    assert not broken, "broken links in the site:\n" + "\n".join(broken)


@pytest.mark.parametrize("sub_path", SERVED)
def test_stylesheet_urls_exist(site, sub_path):
    broken = []
    for css in sorted(site.rglob("*.css")):
        for url in css_urls(css.read_text(encoding="utf-8", errors="replace")):
            parts = urlsplit(url)
            if parts.scheme or parts.netloc or not parts.path:
                continue
            target = _resolve(css, url, sub_path)
            if not target.is_file():
                broken.append(f"{css.relative_to(site)}: url({url}) is missing")
    assert not broken, "stylesheets refer to missing files:\n" + "\n".join(broken)


# --- the way in: start here, glossary, notation, index ------------------------------------


def _load_script(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_start_here_follows_the_front_page(site):
    docs = toc_files()
    assert docs[:2] == ["intro", "start_here"], docs[:3]
    assert {"glossary", "notation"} <= set(docs)
    intro = soup_of(site / "intro.html")
    assert intro.find("article").find("a", href="start_here.html"), (
        "the front page does not link to Start here"
    )


def test_every_page_links_to_the_general_index(site):
    """The theme only names the index in <link rel="index">; reader_aids puts a visible
    link at the end of the sidebar's chapter list on every page."""
    missing = []
    for doc in toc_files():
        page = site / f"{doc}.html"
        sidebar = soup_of(page).find(id="pst-primary-sidebar")
        links = [
            a
            for a in (sidebar.find_all("a", href=True) if sidebar else [])
            if _resolve(page, a["href"]) == site / "genindex.html"
        ]
        if not links:
            missing.append(doc)
    assert not missing, f"pages whose sidebar has no link to genindex.html: {missing}"


def _glossary_terms(site: Path) -> dict[str, str]:
    """term -> its anchor id, read from the built glossary page."""
    terms = {}
    for dt in soup_of(site / "glossary.html").find_all("dt", id=True):
        text = dt.get_text(" ", strip=True).rstrip("#").strip()
        terms[text] = dt["id"]
    return terms


def _index_entries(site: Path) -> dict[str, list[str]]:
    """Entry text -> the hrefs it points to, read from genindex.html (sub-entries are
    listed under their own text too)."""
    article = soup_of(site / "genindex.html").find("article")
    entries: dict[str, list[str]] = {}
    for a in article.find_all("a", href=True):
        if a["href"].startswith("#"):  # the letter bar
            continue
        entries.setdefault(a.get_text(" ", strip=True), []).append(a["href"])
    return entries


def test_general_index_lists_every_glossary_term(site):
    terms = _glossary_terms(site)
    assert len(terms) >= 40, f"the glossary has only {len(terms)} terms: {sorted(terms)}"
    for expected in (
        "ICI",
        "DCN",
        "NVLink",
        "SU",
        "rail",
        "SHARP",
        "busbw",
        "E4M3",
        "all-gather",
        "double binary tree",
        "FSDP",
    ):
        assert expected in terms, f"{expected!r} is not a glossary term"
    entries = _index_entries(site)
    missing = [
        term
        for term, anchor in terms.items()
        if f"glossary.html#{anchor}" not in entries.get(term, [])
    ]
    assert not missing, f"glossary terms missing from genindex.html: {missing}"


def test_general_index_lists_the_notation_and_the_way_in(site):
    hrefs = [href for targets in _index_entries(site).values() for href in targets]
    assert any(h.startswith("notation.html#") for h in hrefs), "no index entry on notation"
    assert any(h.startswith("start_here.html#") for h in hrefs), "no index entry on start_here"
    entries = _index_entries(site)
    for symbol in ("nbytes", "S (buffer size)", "n (number of ranks)", "alpha (latency)"):
        assert any(h.startswith("notation.html#") for h in entries.get(symbol, [])), symbol


# --- alt text -----------------------------------------------------------------------------


def test_alt_text_detector_can_fail():
    looks_like_path = _load_script("reader_aids").looks_like_path
    for bad in (
        None,
        "",
        "  ",
        "../_images/4507627d15fbf.png",
        "_images/a.PNG",
        "figure.svg",
        "C:\\images\\x.jpeg",
        "../_images/x.png?v=2",
    ):
        assert looks_like_path(bad), bad
    assert looks_like_path("a description", uri="a description")
    for good in (
        "Tori and the wraparound rule, figure 2",
        "ring all-gather on 4 ranks",
        "bandwidth (bytes/s) against size",
    ):
        assert not looks_like_path(good, uri="../_images/x.png"), good


def test_every_figure_has_a_real_alt_text(site):
    looks_like_path = _load_script("reader_aids").looks_like_path
    bad, checked = [], 0
    for page in content_pages(site):
        for img in soup_of(page).find_all("img"):
            checked += 1
            alt, src = img.get("alt"), img.get("src")
            if looks_like_path(alt, src) or (src and alt and posixpath.basename(src) in alt):
                bad.append(f"{page.relative_to(site)}: <img src={src!r} alt={alt!r}>")
    assert checked >= 20, f"only {checked} images in the site"
    assert not bad, "images whose alt text is a path or missing:\n" + "\n".join(bad)


def stepper_frame_models(soup: BeautifulSoup):
    """Every frame of every stepper (an ipywidgets Tab) in a page's embedded widget state:
    yields (the stepper's model id and tab, the frame's widget model, {} when missing)."""
    import json

    for script in soup.find_all("script", type="application/vnd.jupyter.widget-state+json"):
        models = json.loads(script.string or "{}").get("state", {})
        for model_id, model in models.items():
            if model.get("model_name") != "TabModel":
                continue
            for tab, child in enumerate(model["state"].get("children", [])):
                yield f"{model_id} tab {tab}", models.get(str(child).removeprefix("IPY_MODEL_"), {})


def stepper_frames(soup: BeautifulSoup) -> list[tuple[str, object]]:
    """(the stepper's model id and tab, the frame's description or None) of every stepper
    frame (:func:`stepper_frame_models`). A frame is an HTML widget holding
    ``<img alt=...>`` (viz.animation.frame_stepper); anything else (an Image widget, which
    has no alt text) has no description."""
    frames: list[tuple[str, object]] = []
    for where, child_model in stepper_frame_models(soup):
        img = None
        if child_model.get("model_name") == "HTMLModel":
            img = BeautifulSoup(child_model["state"].get("value", ""), "html.parser").img
        frames.append((where, img.get("alt") if img else None))
    return frames


def test_stepper_frame_reader_can_fail():
    """An Image frame (no alt) and an HTML frame whose alt is a path are both caught."""
    state = {
        "state": {
            "t": {"model_name": "TabModel", "state": {"children": ["IPY_MODEL_a", "IPY_MODEL_b"]}},
            "a": {"model_name": "ImageModel", "state": {}},
            "b": {"model_name": "HTMLModel", "state": {"value": '<img alt="x.png" src="x.png">'}},
        }
    }
    import json

    page = BeautifulSoup(
        '<script type="application/vnd.jupyter.widget-state+json">'
        + json.dumps(state)
        + "</script>",
        "html.parser",
    )
    looks_like_path = _load_script("reader_aids").looks_like_path
    frames = stepper_frames(page)
    assert frames == [("t tab 0", None), ("t tab 1", "x.png")]
    assert all(alt is None or looks_like_path(alt, "x.png") for _, alt in frames)


def test_every_stepper_frame_has_a_description(site):
    """Every frame of every stepper in the built book (viz.stepper, the load and process
    steppers) carries an alt text in the embedded widget state, since the book has no kernel:
    non-empty, not a file path, and at most a few hundred characters."""
    looks_like_path = _load_script("reader_aids").looks_like_path
    bad, checked = [], 0
    for page in content_pages(site):
        for where, alt in stepper_frames(soup_of(page)):
            checked += 1
            if alt is None or looks_like_path(alt, None) or len(alt) > 400:
                bad.append(f"{page.relative_to(site)}: stepper {where}: alt={alt!r}")
    assert checked >= 20, f"only {checked} stepper frames in the site"
    assert not bad, f"{len(bad)} stepper frames without a description:\n" + "\n".join(bad[:20])


def stepper_pngs(soup: BeautifulSoup) -> list[tuple[str, bytes]]:
    """The PNG of every frame of every stepper in a page's embedded widget state (frames
    that hold a data-URI image): (the stepper's model id and tab, the PNG's bytes)."""
    import base64

    pngs: list[tuple[str, bytes]] = []
    for where, child_model in stepper_frame_models(soup):
        value = child_model.get("state", {}).get("value", "")
        found = re.search(r'src="data:image/png;base64,([^"]*)"', value)
        if found:
            pngs.append((where, base64.b64decode(found.group(1))))
    return pngs


#: CSS px of a stepper's tab panel in a 390 x 844 viewport (the review's screenshots)
PHONE_PANEL = 322
#: the smallest text the package draws at the book's 13-point setting: the type scale's
#: "tiny" role, 13 - 5 points (collectives/viz/style.py documents the scale)
SMALLEST_POINTS = 8


def test_every_stepper_frame_is_drawn_narrow_enough_for_a_phone(site):
    """A frame of w inches saved at d dpi (matplotlib writes d into the PNG) is w * d
    pixels wide and shows at min(w * d, 322) CSS px on a 390-pixel phone, so its smallest
    text (8 points) shows at 8 * d / 72 * min(w * d, 322) / (w * d) CSS px: at least 9 when
    the frame is at least 322 pixels and at most 8 * 322 / (9 * 72) = 3.98 inches wide.
    Every stepper frame of the built book (tests/package/viz/test_legible.py measures the
    texts themselves)."""
    import io

    from PIL import Image

    widest = SMALLEST_POINTS * PHONE_PANEL / (9 * 72)
    bad, checked = [], 0
    for page in content_pages(site):
        for where, png in stepper_pngs(soup_of(page)):
            checked += 1
            image = Image.open(io.BytesIO(png))
            dpi = image.info["dpi"][0]
            inches = image.width / dpi
            if image.width < PHONE_PANEL or inches > widest:
                bad.append(f"{page.relative_to(site)}: {where}: {image.width} px at {dpi:.0f} dpi")
    assert checked >= 20, f"only {checked} stepper frames in the site"
    assert not bad, f"{len(bad)} frames too wide or too small:\n" + "\n".join(bad[:20])


ALT_SCRATCH_PAGE = """\
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

# Scratch: alt text

```{code-cell} ipython3
import matplotlib.pyplot as plt
from IPython.display import HTML, display
```

## Two rings

```{code-cell} ipython3
---
mystnb:
  image:
    alt: a ring of four ranks, one arrow per link
---
fig, ax = plt.subplots(figsize=(2, 2)); ax.plot([0, 1], [0, 1]); plt.show()
```

```{code-cell} ipython3
---
mystnb:
  figure:
    caption: Time against buffer size
    name: fig-scratch-time
---
fig, ax = plt.subplots(figsize=(2, 2)); ax.plot([0, 1], [1, 0]); plt.show()
```

```{code-cell} ipython3
fig, ax = plt.subplots(figsize=(2, 2)); ax.plot([0, 1], [1, 1]); plt.show()
```

## An animation

```{code-cell} ipython3
from matplotlib.animation import FuncAnimation
fig, ax = plt.subplots(figsize=(2, 2))
line, = ax.plot([0, 1], [0, 0])
anim = FuncAnimation(fig, lambda k: line.set_ydata([k, k]), frames=2)
display(HTML(anim.to_jshtml()))
plt.close(fig)
```

```{code-cell} ipython3
fig, ax = plt.subplots(figsize=(2, 2)); ax.plot([1, 0], [0, 1]); plt.show()
```
"""


def test_alt_text_rules_on_a_scratch_book(tmp_path):
    """The cell's metadata wins, then the figure's caption, then the section heading with
    the figure's number in its section; an animation's frame gets the last rule too."""
    html = build_scratch_book(tmp_path / "book", ALT_SCRATCH_PAGE)
    page = BeautifulSoup(
        (html / "chapters/scratch.html").read_text(encoding="utf-8"), "html.parser"
    )
    alts = [img.get("alt") for img in page.find_all("img")]
    assert alts == [
        "a ring of four ranks, one arrow per link",  # mystnb: image: alt:
        "Time against buffer size",  # mystnb: figure: caption:
        "Two rings, figure 3",  # heading + number in the section
        "An animation, animation 1",  # to_jshtml()'s frame <img>
        "An animation, figure 2",
    ], alts


# --- figures, calculators, bibliography and downloads (issue 12; issue 14's learner part) ---


def _png_dpi(data: bytes) -> float | None:
    """The dots per inch a PNG's pHYs chunk records (None without one)."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        return None
    pos = 8
    while pos + 8 <= len(data):
        length = int.from_bytes(data[pos : pos + 4], "big")
        kind = data[pos + 4 : pos + 8]
        if kind == b"pHYs":
            body = data[pos + 8 : pos + 8 + length]
            per_metre, unit = int.from_bytes(body[:4], "big"), body[8]
            return per_metre * 0.0254 if unit == 1 else None
        if kind == b"IDAT":
            return None
        pos += 12 + length
    return None


def test_png_dpi_reader_can_fail():
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = plt.figure(figsize=(1, 1))
    low, high = io.BytesIO(), io.BytesIO()
    fig.savefig(low, format="png", dpi=100)
    fig.savefig(high, format="png", dpi=200)
    plt.close(fig)
    assert round(_png_dpi(low.getvalue())) == 100 and round(_png_dpi(high.getvalue())) == 200
    assert _png_dpi(b"GIF89a") is None


def test_figures_are_drawn_at_high_dpi(site):
    """_static/matplotlibrc (200 dpi) reaches every chapter's figures, animations included."""
    pngs = {}
    for page in content_pages(site):
        for img in soup_of(page).find_all("img"):
            src = img.get("src", "")
            if src.startswith("data:image/png;base64,"):
                import base64

                pngs[f"{page.name}: embedded frame"] = base64.b64decode(src.split(",", 1)[1])
            elif src.endswith(".png") and not is_remote(src):
                path = _resolve(page, src)
                pngs[str(path.relative_to(site))] = path.read_bytes()
    assert len(pngs) >= 20, f"only {len(pngs)} figures found"
    low = {name: _png_dpi(data) for name, data in pngs.items() if (_png_dpi(data) or 0) < 190}
    assert not low, f"figures below 190 dpi: {sorted(low.items())[:10]}"


def test_every_chapter_has_a_calculator_and_plotly_is_local(site):
    chapters = course_chapters()  # the appendix has none
    assert len(chapters) == 13 and "chapters/model_vs_measurements" not in chapters
    missing = [
        f
        for f in chapters
        if "cl-calculator" not in (site / f"{f}.html").read_text(encoding="utf-8")
    ]
    assert not missing, f"chapters without a calculator: {missing}"
    assert (site / "_static" / "vendor" / "plotly" / "plotly.min.js").is_file()
    for f in chapters:
        scripts = _script_srcs(soup_of(site / f"{f}.html"))
        assert any("calculators.js" in s for s in scripts), f
        assert not any("plotly" in s for s in scripts), (
            f"{f} loads plotly.js itself; calculators.js loads it once, on demand"
        )


def _bibliography_text(site: Path) -> dict[str, str]:
    texts = {}
    for page in content_pages(site):
        entries = soup_of(page).select(
            "aside.footnote-list aside.footnote, div.citation, aside.footnote"
        )
        if entries:
            texts[page.name] = "\n".join(" ".join(e.get_text(" ").split()) for e in entries)
    return texts


def test_bibliography_has_no_latex_leftovers_and_keeps_names(site):
    texts = _bibliography_text(site)
    assert len(texts) >= 8, sorted(texts)
    everything = "\n".join(texts.values())
    leftovers = [
        line for line in everything.splitlines() if re.search(r"\\[,%&_#]|\\[a-zA-Z]+|[{}]", line)
    ]
    assert not leftovers, leftovers[:5]
    assert re.search(r"20\s%\s+protocol overhead", everything)
    # proper names keep their capitals in the (sentence-case) bibliography style
    for name in (
        "Switch Transformers",
        "Mixtral of Experts",
        "Cloud TPU documentation",
        "Megatron Core API",
        "nccl-tests: performance",
        "Parallel Thread Execution",
    ):
        assert name in everything, name
    for wrong in (
        "Nccl-tests",
        "Switch transformers",
        "Mixtral of experts",
        "Megatron core api",
        "Torch.nn",
    ):
        assert wrong not in everything, wrong


def test_bibliography_check_can_fail():
    assert re.search(r"\\[,%&_#]|\\[a-zA-Z]+|[{}]", "with about 20\\,% protocol overhead")


def _assignments_released() -> dict[str, list[str]]:
    release = ROOT / "exercises" / "release"
    return {
        d.name: sorted(p.name for p in d.glob("*.ipynb"))
        for d in sorted(release.iterdir())
        if d.is_dir() and any(d.glob("*.ipynb"))
    }


def test_start_here_offers_the_wheel_and_every_student_notebook(site):
    page = site / "start_here.html"
    soup = soup_of(page)
    links = [a.get("href", "") for a in soup.find_all("a")]
    wheels = [
        h for h in links if re.fullmatch(r"downloads/collectives-[\w.]+-py3-none-any\.whl", h)
    ]
    assert len(wheels) == 1, links
    assert (site / wheels[0]).is_file()
    assert "downloads/course-notebooks.zip" in links
    released = _assignments_released()
    sources = sorted(p.name for p in (ROOT / "exercises" / "source").iterdir() if p.is_dir())
    assert sorted(released) == sources, "make student released a different set of assignments"
    for assignment, names in released.items():
        for name in names:
            href = f"downloads/notebooks/{assignment}/{name}"
            assert href in links, f"{href} is not offered on Start here"
            assert (site / href).is_file()
    commands = " ".join(pre.get_text() for pre in soup.find_all("pre"))
    wheel_name = wheels[0].rsplit("/", 1)[1]
    assert f"pip install ./{wheel_name}" in commands
    assert "course-notebooks.zip" in commands
    # torch for the real_processes notebook: the wheel's dist extra, PyTorch's CPU index
    assert (
        f'pip install "./{wheel_name}[dist]" --extra-index-url '
        "https://download.pytorch.org/whl/cpu" in commands
    )
    # checking a notebook outside JupyterLab, and the self-check
    assert "jupyter nbconvert --to notebook --execute" in commands
    assert "python -m collectives.grading.selfcheck ring_all_gather.ipynb" in commands
    # the notebooks in course order, each with its chapters: the first chapter's first
    offered = [
        h.split("downloads/notebooks/", 1)[1] for h in links if h.startswith("downloads/notebooks/")
    ]
    assert offered[0] == "cost_models/ring_all_gather.ipynb", offered
    assert (
        offered.index("all_reduce/rabenseifner_all_reduce.ipynb")
        < offered.index("fp8/fp8.ipynb")
        < offered.index("planning/plan_a_training_run.ipynb")
    ), offered
    text = soup.get_text(" ")
    assert (
        "cost_models/ring_all_gather.ipynb (Chapter 1, Cost models and the ring "
        "all-gather)" in " ".join(text.split())
    )
    # current, and for learners: no part "in preparation", no link to the instructors' guide
    assert "in preparation" not in text
    assert not [h for h in links if "exercises/README" in h], links


def test_downloaded_notebooks_hold_no_solutions_or_hidden_tests(site):
    import json
    import zipfile

    folder = site / "downloads" / "notebooks"
    notebooks = sorted(folder.rglob("*.ipynb"))
    assert notebooks, "no notebooks in downloads/"
    with zipfile.ZipFile(site / "downloads" / "course-notebooks.zip") as zf:
        assert sorted(zf.namelist()) == sorted(p.relative_to(folder).as_posix() for p in notebooks)
    for path in notebooks:
        nb = json.loads(path.read_text(encoding="utf-8"))
        text = "\n".join("".join(c.get("source", "")) for c in nb["cells"])
        for marker in ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS"):
            assert marker not in text, f"{path.name} holds {marker!r}"
        source = ROOT / "exercises" / "source" / path.parent.name / path.name
        assert "BEGIN SOLUTION" in source.read_text(encoding="utf-8"), (
            f"{source} should be the instructor's version (the check above could not fail)"
        )


def test_each_chapters_graded_notebook_section_sends_learners_to_start_here(site):
    """Learners have the site, not the repository: a chapter's "Graded notebook" section
    links to Start here (how to install, check and score the notebook), and no chapter
    sends them to exercises/README.md."""
    for chapter in course_chapters():
        soup = soup_of(site / f"{chapter}.html")
        section = soup.find("section", id="graded-notebook")
        assert section is not None, f"{chapter} has no Graded notebook section"
        hrefs = [a.get("href", "") for a in section.find_all("a")]
        assert any(h.split("#")[0].endswith("start_here.html") for h in hrefs), (chapter, hrefs)
        assert "exercises/README" not in soup.get_text(), chapter


# --- glossary links -----------------------------------------------------------------------

# What is not prose: a term there is neither a use nor a place for a link.
NOT_PROSE = (
    "h1, h2, h3, h4, h5, h6, pre, code, kbd, script, style, .math, figcaption, "
    ".caption, p.admonition-title, div.cell_input, div.cell_output, div.output, "
    "aside, .footnote, .toctree-wrapper, nav"
)
TERM_HREF = re.compile(r"(?:^|/)glossary\.html#(term-[^/]+)$")


def _glossary_entries(site: Path) -> list[tuple[Entry, set[str]]]:
    """The built glossary's entries (the terms of one ``<dt>`` run before a ``<dd>``), each with
    its anchor ids."""
    found = []
    for dl in soup_of(site / "glossary.html").select("dl.glossary"):
        names, anchors = [], set()
        for child in dl.find_all(["dt", "dd"], recursive=False):
            if child.name == "dt":
                names.append(child.get_text(" ", strip=True).rstrip("#").strip())
                anchors.add(child["id"])
            else:
                found.append((Entry(tuple(names)), anchors))
                names, anchors = [], set()
    return found


def _prose_text(root) -> tuple[str, list]:
    """The text of ``root`` in document order, and for each character what it is: None for
    plain prose, a glossary anchor id inside a term link, "other" inside any other link or
    outside the prose (code, math, headings, captions: replaced by a break)."""
    text, kind = [], []
    skipped = set(id(el) for el in root.select(NOT_PROSE))

    def walk(node, state):
        for child in node.children:
            if isinstance(child, str):
                if child.__class__.__name__ in ("Comment", "Doctype", "ProcessingInstruction"):
                    continue
                text.append(str(child))
                kind.extend([state] * len(child))
                continue
            if id(child) in skipped:
                text.append(" \u00b7 ")
                kind.extend(["other"] * 3)
                continue
            inner = state
            if child.name == "a" and state is None:
                match = TERM_HREF.search(unquote(child.get("href", "")))
                inner = match.group(1) if match else "other"
            walk(child, inner)

    walk(root, None)
    return "".join(text), kind


def glossary_link_problems(root, entries, chapter: str = "") -> list[str]:
    """What is wrong with the glossary links of one page's content ``root``: an entry whose
    first use is not a link to it, or that is linked more than once."""
    text, kind = _prose_text(root)
    problems = []
    for entry, anchors in entries:
        if (chapter, entry.names[0]) in OTHER_SENSE_CHAPTERS:
            continue
        events, i = [], 0
        while i < len(kind):  # a link to the entry: one event per link
            if kind[i] in anchors:
                events.append((i, "link"))
                while i < len(kind) and kind[i] in anchors:
                    i += 1
            else:
                i += 1
        for m in use_pattern(entry).finditer(other_senses_removed(entry, text)):
            if kind[m.start()] is None:
                events.append((m.start(), "use"))
        events.sort()
        links = sum(1 for _, what in events if what == "link")
        if events and events[0][1] != "link":
            at = events[0][0]
            problems.append(
                f"{chapter}: the first use of {entry.names[0]!r} is not linked: "
                f"...{' '.join(text[max(0, at - 60) : at + 40].split())}..."
            )
        if links > 1:
            problems.append(f"{chapter}: {entry.names[0]!r} is linked {links} times, not once")
    return problems


def test_glossary_link_check_can_fail():
    entries = [
        (Entry(("ring",)), {"term-ring"}),
        (Entry(("ECMP",)), {"term-ECMP"}),
        (Entry(("slice",)), {"term-slice"}),
    ]
    link = '<a class="reference internal" href="../glossary.html#term-{0}"><span>{1}</span></a>'

    def problems(body: str) -> list[str]:
        return glossary_link_problems(
            BeautifulSoup(f"<article>{body}</article>", "html.parser"), entries, "scratch"
        )

    good = (
        f"<h2>The ring</h2><p>A {link.format('ring', 'rings')} of chips and another ring; "
        "<code>ECMP</code>, <span class='math'>ECMP</span> and a slice of the buffer.</p>"
    )
    assert problems(good) == []
    late = f"<p>The ring, then the {link.format('ring', 'ring')}.</p>"
    assert len(problems(late)) == 1 and "'ring' is not linked" in problems(late)[0]
    twice = f"<p>{link.format('ring', 'ring')} and {link.format('ring', 'Rings')}.</p>"
    assert problems(twice) == ["scratch: 'ring' is linked 2 times, not once"]
    assert problems("<p>Hashed by ECMP.</p>") != []
    assert problems("<p>Hashed by ECMP-like routing, rail-optimised.</p>") == []
    assert problems('<p>A <a href="other.html">ring</a> then a TPU slice.</p>') != []
    admonition = '<div class="admonition"><p class="admonition-title">The ring</p><p>x</p></div>'
    assert problems(admonition) == []


def test_chapters_link_the_first_use_of_each_glossary_term(site):
    entries = _glossary_entries(site)
    assert len(entries) >= 40, f"only {len(entries)} glossary entries read"
    chapters = [f for f in toc_files() if f.startswith("chapters/")]
    assert set(course_chapters()) <= set(chapters)
    problems, linked = [], {}
    for chapter in chapters:
        article = soup_of(site / f"{chapter}.html").find("article")
        assert article is not None, chapter
        name = chapter.split("/")[-1]
        problems += glossary_link_problems(article, entries, name)
        linked[name] = len(
            [a for a in article.find_all("a", href=True) if TERM_HREF.search(unquote(a["href"]))]
        )
    assert not problems, "\n".join(problems)
    assert all(count >= 5 for count in linked.values()), linked
