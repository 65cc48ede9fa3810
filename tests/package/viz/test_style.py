"""collectives.viz.style: one palette, one colour per link level and algorithm, and the one
font API every chapter and every viz function uses."""

import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import pytest

import collectives as cl
from collectives.viz import style

VIZ = Path(cl.__file__).parent / "viz"
CHAPTERS = Path(cl.__file__).parent.parent / "chapters"


def test_one_colour_blind_safe_palette_for_the_whole_book():
    """Every algorithm, link level and FP8 colour of every viz module comes from the palette
    defined once in viz.style (Okabe-Ito and Paul Tol's muted scheme)."""
    from collectives.viz import cluster, fp8, gpu, style, tpu

    palette = {c.lower() for c in style.PALETTE.values()} | {"#ddcc77"}  # Tol's sand
    used = {
        **style.ALGORITHM_COLOURS,
        **style.LEVEL_COLOURS,
        **{
            f"fp8 {k}": v
            for k, v in {
                **fp8.FORMAT_COLOURS,
                **fp8.FIELD_COLOURS,
                **fp8.SCALING_COLOURS,
                **fp8.PART_COLOURS,
            }.items()
        },
        "tpu wrap": tpu.COLOURS["wrap"],
    }
    outside = {k: v for k, v in used.items() if v.lower() not in palette}
    assert not outside, outside
    # the chapters' modules share the book's table, they do not copy it
    assert gpu.ALGORITHM_COLOURS is style.ALGORITHM_COLOURS
    assert cluster.ALGORITHM_COLOURS is style.ALGORITHM_COLOURS
    # a name the chapters use in two spellings keeps one colour
    assert style.algorithm_colour("NCCL ring") == style.algorithm_colour("ring")
    assert style.algorithm_colour("double binary tree") == style.algorithm_colour("tree")


def test_use_fonts_sets_the_book_size_and_fonts_restores_only_it():
    saved = dict(matplotlib.rcParams)
    try:
        style.use_fonts()
        assert matplotlib.rcParams["font.size"] == style.FONT_SIZE == 13
        assert matplotlib.rcParams["xtick.labelsize"] == 12  # ticks one point less
        with style.fonts(16):
            assert matplotlib.rcParams["axes.titlesize"] == 16
            matplotlib.rcParams["lines.linewidth"] = 7.0  # not a font setting
        assert matplotlib.rcParams["axes.titlesize"] == 13
        assert matplotlib.rcParams["lines.linewidth"] == 7.0  # left as it was set
    finally:
        matplotlib.rcParams.update(saved)


def test_font_roles_follow_the_one_setting():
    with style.fonts(13):
        # the type scale at the book's 13 points: 13, 13, 12, 11, 10, 9, 8 (module text)
        assert [style.font_size(r) for r in style.TYPE_SCALE] == [13, 13, 12, 11, 10, 9, 8]
    with style.fonts(6):
        assert style.font_size("tiny") == 5  # never below 5 points
    with pytest.raises(cl.CollectivesError, match="no font role"):
        style.font_size("huge")


def test_level_colours_cover_every_level_name():
    assert style.level_colour("nvlink") == style.LEVEL_COLOURS["nvlink"]
    assert style.level_colour("tier 4") == style.LEVEL_COLOURS["core"]
    # other names (a product's "dim0", "dim1") take distinct palette colours by position
    assert style.level_colour("dim0", 0) != style.level_colour("dim1", 1)
    assert style.level_colour("dim1", 1).lower() in {c.lower() for c in style.PALETTE.values()}


def test_no_viz_function_writes_a_font_size_in_points():
    """Sizes come from the rcParams use_fonts sets or from font_size(role): no fontsize=8,
    no FONT - 1 (the compatibility modules keep their old constants but draw nothing)."""
    literal = re.compile(r"fontsize\s*=\s*(\d|FONT|[\"']\w)")
    found = [
        f"{path.relative_to(VIZ)}:{i}"
        for path in sorted(VIZ.rglob("*.py"))
        for i, line in enumerate(path.read_text().splitlines(), 1)
        if literal.search(line)
    ]
    assert not found, found


def test_every_chapter_sets_its_fonts_one_way():
    """Each chapter that draws calls cl.viz.use_fonts() once and no other font setter: no
    literal sizes (a smaller text names its role: fontsize=cl.viz.style.font_size("note")),
    no per-module font constants, no use_fonts(13), phone_style(), setup() or style()."""
    others = re.compile(
        r"fontsize\s*=\s*(?!cl\.viz\.style\.font_size\()|labelsize\s*=|"
        r"phone_style|\.setup\(|vg\.style\(|\.FONT\b|use_fonts\(\s*\d|"
        r"rcParams"
    )
    drawn = 0
    for chapter in sorted(CHAPTERS.glob("*.md")):
        text = chapter.read_text()
        if "matplotlib" in text or "cl.viz." in text or "collectives.viz" in text:
            assert text.count("cl.viz.use_fonts()") == 1, chapter.name  # draws figures
            drawn += 1
        bad = [line for line in text.splitlines() if others.search(line)]
        assert not bad, (chapter.name, bad)
    assert drawn >= 13  # every chapter with figures was looked at
