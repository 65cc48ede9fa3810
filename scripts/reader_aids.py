"""A small Sphinx extension with two aids for readers of the book.

``_config.yml`` lists it under ``sphinx.local_extensions`` (next to ``vendor_assets``).

**Alt text for figures.** A figure drawn by a code cell reaches the page as an ``<img>``
whose alt text, by myst-nb's default, is the image's file path (``../_images/4507...png``):
a screen reader reads out a hash. After myst-nb has turned each cell's outputs into nodes
(``doctree-resolved``), every image without a real alt text gets one, in this order:

1. the cell's own ``mystnb: image: alt:`` metadata (myst-nb applies it already; it is read
   again here so that the rule holds whatever myst-nb does);
2. the caption of the figure the image sits in (``mystnb: figure: caption:``, or a
   ``{figure}`` directive);
3. otherwise the heading of the section the image sits under, plus its number among that
   section's figures: ``"Tori and the wraparound rule, figure 2"``.

matplotlib's JavaScript animations (``Animation.to_jshtml()``) come as raw HTML whose frame
``<img>`` has no alt at all; it gets rule 3 with "animation" for "figure". Images that the
widget manager draws in the browser (ipywidgets steppers) are not in the page's HTML and are
left alone: a stepper's frames carry the descriptions that
``collectives.viz.animation.frame_stepper`` writes from the Schedule. A chapter gives a
better description than rule 3 by adding the metadata of rule 1 to its figure cell.

**Figures at high dpi, with a type scale for phones.** While the book is built, ``MATPLOTLIBRC``
points at ``_static/matplotlibrc`` (200 dpi, 12-point text), so every chapter's kernel draws
with it; the site tests check the dpi of every figure.

**A link to the general index.** Jupyter Book's theme only names the index in a
``<link rel="index">`` that no reader sees; the glossary and the notation page fill the index,
so the extension adds a last group to the left sidebar, under the chapter list, styled like a
part of the book: "Reference", with one link, "Index" (a sidebar component,
``reader-aids-index.html``, held in this file; pydata-sphinx-theme's own ``indices.html``
would title it in a heading far larger than the parts'). It stays out of the way when
``_config.yml`` fills ``primary_sidebar_end`` itself.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

__all__ = ["setup", "looks_like_path", "ALT_FALLBACK", "INDEX_COMPONENT"]

#: Rule 3's alt text: the section heading and the figure's number in that section.
ALT_FALLBACK = "{heading}, {kind} {number}"

_IMAGE_SUFFIX = r"\.(?:png|jpe?g|gif|svg|webp|bmp|tiff?|pdf)"
_PATH_LIKE = re.compile(r"[\w.~%+/\\:-]*" + _IMAGE_SUFFIX + r"(?:[?#]\S*)?", re.IGNORECASE)
# matplotlib's to_jshtml(): the frame <img> of the player, with a generated id and no alt.
_ANIM_IMG = re.compile(r"<img\b(?![^>]*\balt\s*=)([^>]*\bid=[\"']_anim_img[^>]*)>", re.IGNORECASE)


def looks_like_path(alt: str | None, uri: str | None = None) -> bool:
    """True when ``alt`` is not a description: missing, blank, the image's own address, or a
    file name or path of an image (what docutils writes when no alt text was given)."""
    if alt is None or not alt.strip():
        return True
    alt = alt.strip()
    if uri and alt == uri.strip():
        return True
    return bool(_PATH_LIKE.fullmatch(alt))


def _cell_alt(node) -> str | None:
    """``mystnb: image: alt:`` of the code cell that produced ``node``, if any."""
    parent = node.parent
    while parent is not None:
        if parent.get("nb_element") == "cell_code":
            meta = parent.get("cell_metadata") or {}
            for key in ("mystnb", "render"):  # "render": myst-nb's older name
                options = meta.get(key)
                image = options.get("image") if isinstance(options, dict) else None
                if isinstance(image, dict) and str(image.get("alt", "")).strip():
                    return " ".join(str(image["alt"]).split())
            return None
        parent = parent.parent
    return None


def _figure_caption(node) -> str | None:
    from docutils import nodes

    parent = node.parent
    while parent is not None and not isinstance(parent, nodes.section):
        if isinstance(parent, nodes.figure):
            for child in parent.children:
                if isinstance(child, nodes.caption):
                    text = " ".join(child.astext().split())
                    return text or None
            return None
        parent = parent.parent
    return None


def _section_of(node):
    from docutils import nodes

    parent = node.parent
    while parent is not None and not isinstance(parent, nodes.section):
        parent = parent.parent
    return parent


def _heading(section, doctree) -> str:
    from docutils import nodes

    if section is not None:
        for child in section.children:
            if isinstance(child, nodes.title):
                return " ".join(child.astext().split())
    title = doctree.next_node(nodes.title)
    return " ".join(title.astext().split()) if title is not None else "Figure"


def _alt_texts(app, doctree, docname) -> None:
    """Give every figure of the page a real alt text (rules 1-3 of the module docstring)."""
    from docutils import nodes

    counters: dict[int, int] = {}

    def fallback(node, kind: str) -> str:
        """Rule 3; numbers every figure of a section, whichever rule names it."""
        section = _section_of(node)
        key = id(section)
        counters[key] = counters.get(key, 0) + 1
        return ALT_FALLBACK.format(
            heading=_heading(section, doctree), kind=kind, number=counters[key]
        )

    def is_figure(node) -> bool:
        if isinstance(node, nodes.image):
            return True
        return (
            isinstance(node, nodes.raw)
            and "html" in node.get("format", "").split()
            and _ANIM_IMG.search(node.astext()) is not None
        )

    for node in list(doctree.findall(is_figure)):
        if isinstance(node, nodes.image):
            numbered = fallback(node, "figure")
            if not looks_like_path(node.get("alt"), node.get("uri")):
                continue
            node["alt"] = _cell_alt(node) or _figure_caption(node) or numbered
        else:
            numbered = fallback(node, "animation")
            alt = _cell_alt(node) or numbered
            escaped = (
                alt.replace("&", "&amp;")
                .replace('"', "&quot;")
                .replace("<", "&lt;")
                .replace(">", "&gt;")
            )
            text = _ANIM_IMG.sub(
                lambda m, escaped=escaped: f'<img alt="{escaped}"{m.group(1)}>', node.astext()
            )
            new = nodes.raw("", text, format=node["format"])
            new.source, new.line = node.source, node.line
            node.replace_self(new)


INDEX_COMPONENT = "reader-aids-index.html"
# The markup of a part in the theme's chapter list (caption + list), so it looks like one.
_INDEX_TEMPLATE = """\
<nav class="bd-links reader-aids-index" aria-label="{{ _('Index') }}">
  <div class="bd-toc-item navbar-nav">
    <p aria-level="2" class="caption" role="heading"><span class="caption-text">Reference</span></p>
    <ul class="nav bd-sidenav">
      <li class="toctree-l1"><a class="reference internal" href="{{ pathto('genindex') }}"
         accesskey="I">{{ _('Index') }}</a></li>
    </ul>
  </div>
</nav>
"""


def _index_link(app, config) -> None:
    """Put the index link at the end of the left sidebar, unless the configuration chose
    what goes there itself."""
    options = config.html_theme_options
    if options is None:
        options = config.html_theme_options = {}
    if "primary_sidebar_end" not in options:
        options["primary_sidebar_end"] = [INDEX_COMPONENT]


def _index_template(app) -> None:
    """Serve the sidebar component from this file (no template folder to keep in step)."""
    from jinja2 import DictLoader

    templates = getattr(app.builder, "templates", None)
    loaders = getattr(templates, "loaders", None)
    if isinstance(loaders, list):
        loaders.append(DictLoader({INDEX_COMPONENT: _INDEX_TEMPLATE}))


#: matplotlib settings of the book's figures (high dpi, a type scale for phones)
MATPLOTLIBRC = Path(__file__).resolve().parent.parent / "_static" / "matplotlibrc"


def _figure_settings(app, config) -> None:
    """Point the kernels that execute the chapters at ``_static/matplotlibrc`` (they inherit
    the build's environment); a reader's own MATPLOTLIBRC wins."""
    if MATPLOTLIBRC.is_file():
        os.environ.setdefault("MATPLOTLIBRC", str(MATPLOTLIBRC))


def setup(app):
    app.connect("config-inited", _figure_settings)
    app.connect("config-inited", _index_link)
    app.connect("builder-inited", _index_template)
    # After myst-nb's post-transforms have chosen each output's image (and after
    # vendor_assets' own pass over raw HTML, which only drops a stylesheet link).
    app.connect("doctree-resolved", _alt_texts, priority=600)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
