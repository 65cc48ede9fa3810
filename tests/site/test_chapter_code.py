"""Visible code in the chapters: what a reader sees without opening a cell.

The chapters keep their visible code to what teaches (a call of the package the prose explains,
the table it shows); self-checks (`assert`) and helpers sit in cells tagged ``hide-cell`` or
``hide-input`` (a reader can open them), or ``remove-cell``/``remove-input`` (plumbing). Every
check still runs when the book builds. This test reads the MyST sources; it needs no build.

What is checked, for every chapter in chapters/ (the course chapters and the appendix):
- fewer than MAX_VISIBLE_LINES visible code lines: non-blank lines of code cells that carry
  none of the HIDING_TAGS;
- no visible line that is an ``assert`` statement;
- no empty code cell (what is left when a split moves every line out);
- the counter itself, on scratch sources whose counts are worked out by hand.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = sorted((ROOT / "chapters").glob("*.md"))
MAX_VISIBLE_LINES = 80
# Tags under which Jupyter Book hides a cell's code (collapsed) or leaves it out of the page.
HIDING_TAGS = frozenset({"hide-input", "hide-cell", "remove-input", "remove-cell"})

FENCE_OPEN = re.compile(r"^(?P<fence>`{3,}|~{3,})\{code-cell\}")
TAGS_OPTION = re.compile(r"^:tags:\s*(?P<value>.*)$")
ASSERT_LINE = re.compile(r"^\s*assert\b")


@dataclass(frozen=True)
class CodeCell:
    """One ``{code-cell}`` of a MyST source: its tags and the lines of its code."""

    tags: frozenset[str]
    lines: tuple[str, ...]

    @property
    def visible(self) -> bool:
        return not (self.tags & HIDING_TAGS)


def _parse_tags(value: str) -> frozenset[str]:
    parsed = yaml.safe_load(value)
    if isinstance(parsed, str):
        parsed = [parsed]
    return frozenset(str(t) for t in (parsed or []))


def code_cells(source: str) -> list[CodeCell]:
    """The code cells of a MyST-markdown source, with their options removed.

    Options come either as ``:key: value`` lines right after the fence, or as a YAML block
    between two ``---`` lines right after it (both forms MyST-NB reads)."""
    cells: list[CodeCell] = []
    lines = source.splitlines()
    i = 0
    while i < len(lines):
        opened = FENCE_OPEN.match(lines[i])
        if not opened:
            i += 1
            continue
        fence = opened.group("fence")
        body: list[str] = []
        i += 1
        while i < len(lines) and lines[i].rstrip() != fence:
            body.append(lines[i])
            i += 1
        i += 1  # past the closing fence
        tags: frozenset[str] = frozenset()
        if body and body[0].strip() == "---":
            end = next((k for k in range(1, len(body)) if body[k].strip() == "---"), None)
            if end is not None:
                options = yaml.safe_load("\n".join(body[1:end])) or {}
                tags = _parse_tags(yaml.safe_dump(options.get("tags", [])))
                body = body[end + 1 :]
        else:
            k = 0
            while k < len(body) and body[k].startswith(":"):
                found = TAGS_OPTION.match(body[k])
                if found:
                    tags = _parse_tags(found.group("value"))
                k += 1
            body = body[k:]
        cells.append(CodeCell(tags, tuple(body)))
    return cells


def visible_lines(source: str) -> list[str]:
    """The non-blank code lines a reader sees without opening a cell."""
    return [
        line for cell in code_cells(source) if cell.visible for line in cell.lines if line.strip()
    ]


def visible_counts(source: str) -> tuple[int, int]:
    """(visible code lines, visible ``assert`` lines) of a MyST source."""
    shown = visible_lines(source)
    return len(shown), sum(1 for line in shown if ASSERT_LINE.match(line))


SCRATCH = """\
# A scratch chapter

```{code-cell} ipython3
import collectives as cl
s = cl.algorithms.ring_all_gather(4)

assert s.n == 4
```

```{code-cell} ipython3
:tags: [hide-cell]
assert False, "hidden: not counted"
```

```{code-cell} ipython3
---
tags: [remove-input]
mystnb:
  image:
    alt: a figure
---
x = 1
```

```{code-cell} ipython3
---
mystnb:
  image:
    alt: shown
---
y = 2
    assert y == 2   # an indented assert is still an assert
```

```{code-cell} ipython3
:tags: [margin]
z = 3  # a tag that hides nothing
```

Prose with `assert` in it, and a plain code block:

```python
assert "not a code cell"
```
"""


def test_counter_on_a_scratch_source():
    # By hand: cell 1 shows 3 non-blank lines (one assert); cell 2 hidden; cell 3 removed;
    # cell 4 shows 2 lines (one assert) after its YAML options; cell 5's tag hides nothing
    # (1 line); the ```python block is not a code cell.
    cells = code_cells(SCRATCH)
    assert [sorted(c.tags) for c in cells] == [[], ["hide-cell"], ["remove-input"], [], ["margin"]]
    assert visible_counts(SCRATCH) == (6, 2)


def test_counter_fails_a_source_over_the_limit():
    crowded = "```{code-cell} ipython3\n" + "x = 1\n" * MAX_VISIBLE_LINES + "```\n"
    lines, asserts = visible_counts(crowded)
    assert lines == MAX_VISIBLE_LINES and not lines < MAX_VISIBLE_LINES
    hidden = crowded.replace("ipython3\n", "ipython3\n:tags: [hide-input]\n", 1)
    assert visible_counts(hidden) == (0, 0)


def test_every_chapter_is_found():
    assert len(CHAPTERS) >= 14, [p.name for p in CHAPTERS]


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.stem)
def test_visible_code_teaches(chapter: Path):
    source = chapter.read_text(encoding="utf-8")
    lines, asserts = visible_counts(source)
    shown_asserts = [line.strip() for line in visible_lines(source) if ASSERT_LINE.match(line)]
    assert asserts == 0, (
        f"{chapter.name}: {asserts} visible assert lines; put self-checks in a "
        f"cell tagged hide-cell right after: {shown_asserts[:5]}"
    )
    empty = [
        k for k, cell in enumerate(code_cells(source)) if not any(x.strip() for x in cell.lines)
    ]
    assert not empty, f"{chapter.name}: empty code cells (numbered from 0): {empty}"
    assert lines < MAX_VISIBLE_LINES, (
        f"{chapter.name}: {lines} visible code lines (limit {MAX_VISIBLE_LINES - 1}); hide "
        "checks and helpers, move reusable helpers into the package"
    )


if __name__ == "__main__":  # a table for the maintainer
    for path in CHAPTERS:
        print(path.stem, *visible_counts(path.read_text(encoding="utf-8")))
