"""Runs of the ``collectives`` package's own source inside a learner's code: what the tamper
report lists as *copies* (:func:`collectives_grader.precheck.package_copies` reads the
notebooks and calls :func:`copied_runs`).

Modelled: a line is compared by its tokens, not its text (:func:`code_lines`): comments,
spaces, indentation and line continuations do not count, and every string literal is
compared by its value (``'x'``, ``"x"`` and ``r"x"`` are one string). Lines that hold at
most one name, number or string besides brackets and commas (an item of a list written one
per line, a closing bracket, an ``else:``) are left out on both sides: the course's own code
and honest code are full of them, so they would make runs out of nothing. A run is at least
:data:`COPY_LINES` such lines in a row that follow each other in some module of the package
(found by windows of :data:`WINDOW` lines), and that the released notebook does not already
hold.

Left out: a copy rewritten statement by statement (renamed variables, reordered lines, a
loop unrolled) is not found; nor code compiled at run time from the package's source (e.g.
``run_cell(inspect.getsource(...))``): the notebook's text holds no copy then. A cell that
does not tokenize (an IPython magic, a syntax error) is compared line by line, each line
tokenized alone, or as its text without spaces when that fails too.
"""

from __future__ import annotations

import ast
import io
import keyword
import tokenize
from pathlib import Path
from typing import Iterable, Optional

__all__ = ["COPY_LINES", "WINDOW", "code_lines", "windows", "package_index", "copied_runs"]

#: the shortest run of consecutive code lines (see the module's docstring for what counts as
#: a code line) of the package's source that is reported as a copy
COPY_LINES = 8
#: lines per window of the index: a run of COPY_LINES lines is COPY_LINES - WINDOW + 1
#: windows in a row
WINDOW = 4

_SKIPPED = {
    tokenize.COMMENT,
    tokenize.NL,
    tokenize.NEWLINE,
    tokenize.INDENT,
    tokenize.DEDENT,
    tokenize.ENDMARKER,
    tokenize.ENCODING,
}
_PUNCTUATION = {",", "(", ")", "[", "]", "{", "}", ":"}


def _string_value(text: str) -> str:
    """A string literal by its value (quotes and quoting style not counted); an f-string or
    a literal that does not evaluate, by its text with every quote character made one."""
    try:
        return repr(ast.literal_eval(text))
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return text.replace("'", '"')


def _token_text(token: tokenize.TokenInfo) -> str:
    return _string_value(token.string) if token.type == tokenize.STRING else token.string


_LONE_KEYWORDS = {"else", "try", "finally", "pass"}  # keywords that make a line trivial


def _is_trivial(tokens: list[tokenize.TokenInfo]) -> bool:
    """A line of at most one name, number or string besides brackets, commas and colons,
    and no keyword but ``else``/``try``/``finally``/``pass`` alone."""
    words = [t for t in tokens if not (t.type == tokenize.OP and t.string in _PUNCTUATION)]
    if len(words) != 1:
        return not words
    word = words[0]
    is_keyword = word.type == tokenize.NAME and keyword.iskeyword(word.string)
    return not is_keyword or word.string in _LONE_KEYWORDS


def _normalised(tokens: list[tokenize.TokenInfo]) -> str:
    """A line's tokens joined by single spaces, strings by their value."""
    return " ".join(_token_text(t) for t in tokens)


def _tokens_by_line(text: str) -> Optional[dict[int, list[tokenize.TokenInfo]]]:
    """The tokens of ``text`` grouped by the line where each starts, or None when ``text``
    does not tokenize."""
    lines: dict[int, list[tokenize.TokenInfo]] = {}
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type not in _SKIPPED:
                lines.setdefault(token.start[0], []).append(token)
    except (tokenize.TokenError, SyntaxError):
        return None
    return lines


def code_lines(text: str) -> list[tuple[int, str]]:
    """The code lines of ``text`` as ``(1-based line number, normalised line)``: each line's
    tokens (comments left out, strings by value) joined by single spaces, trivial lines
    (see the module's docstring) left out."""
    grouped = _tokens_by_line(text)
    if grouped is None:  # a magic or a syntax error somewhere: each line on its own
        found = []
        for number, line in enumerate(text.splitlines(), start=1):
            one = _tokens_by_line(line.strip() + "\n")
            if one is None:
                squeezed = "".join(line.split())
                if squeezed and not squeezed.startswith("#"):
                    found.append((number, squeezed))
            elif one.get(1) and not _is_trivial(one[1]):
                found.append((number, _normalised(one[1])))
        return found
    return [
        (number, _normalised(tokens))
        for number, tokens in sorted(grouped.items())
        if not _is_trivial(tokens)
    ]


def windows(lines: list[tuple[int, str]]) -> list[tuple[str, ...]]:
    """Every WINDOW consecutive code lines (their normalised text)."""
    return [
        tuple(text for _, text in lines[i : i + WINDOW]) for i in range(len(lines) - WINDOW + 1)
    ]


# per package root: {window: [(module path, window's position in the module, first line)]}
_INDEX: dict[Path, dict[tuple[str, ...], list[tuple[str, int, int]]]] = {}


def package_index(package_root) -> dict[tuple[str, ...], list[tuple[str, int, int]]]:
    """{window of code lines: [(module path, the window's position among the module's
    windows, its first line), ...]} over every module under ``package_root`` (computed once
    per root)."""
    root = Path(package_root).resolve()
    if root not in _INDEX:
        index: dict[tuple[str, ...], list[tuple[str, int, int]]] = {}
        for path in sorted(root.rglob("*.py")):
            lines = code_lines(path.read_text(encoding="utf-8"))
            name = f"{root.name}/{path.relative_to(root).as_posix()}"
            for i, window in enumerate(windows(lines)):
                index.setdefault(window, []).append((name, i, lines[i][0]))
        _INDEX[root] = index
    return _INDEX[root]


def _runs_in(found, index, known):
    """``(start, windows, module, line)`` of the longest runs of ``found``'s windows that
    follow each other in one module of the package (windows that ``known`` holds left out),
    no two of them overlapping."""
    by_place: dict[tuple[str, int], list[tuple[int, int]]] = {}
    for i, window in enumerate(found):
        if window in known:
            continue
        for module, position, line in index.get(window, []):
            by_place.setdefault((module, position - i), []).append((i, line))
    runs = []
    for (module, _), hits in by_place.items():
        start, line = hits[0]
        previous = start
        for i, at in hits[1:]:
            if i != previous + 1:
                runs.append((start, previous - start + 1, module, line))
                start, line = i, at
            previous = i
        runs.append((start, previous - start + 1, module, line))
    chosen: list[tuple[int, int, str, int]] = []
    for run in sorted(runs, key=lambda r: (-r[1], r[0], r[2])):
        if all(run[0] + run[1] <= s or s + n <= run[0] for s, n, _, _ in chosen):
            chosen.append(run)
    return sorted(chosen)


def copied_runs(sources: Iterable[str], given: Iterable[str], package_root) -> list[dict]:
    """The copies in ``sources`` (one code cell's text each): ``[{"index", "module", "line",
    "lines"}]``, ``index`` the position of the source in ``sources``, ``module`` and ``line``
    where the copied run starts in the package, ``lines`` its length in code lines. Windows
    that the ``given`` texts (the released notebook's cells) hold do not count."""
    index = package_index(package_root)
    known: set[tuple[str, ...]] = set()
    for text in given:
        known.update(windows(code_lines(text)))
    runs = []
    for position, text in enumerate(sources):
        for _, count, module, line in _runs_in(windows(code_lines(text)), index, known):
            length = count + WINDOW - 1
            if length >= COPY_LINES:
                runs.append({"index": position, "module": module, "line": line, "lines": length})
    return runs
