"""How the course's prose spells a glossary term, shared by the site test that checks each
chapter links the first use of every term it uses (tests/site/test_book_site.py).

An entry of glossary.md is one or more names defined together ("scalable unit" and "SU"); a
chapter *uses* the entry where its prose has one of the names or a spelling of it: a plural,
or one of the few other forms listed in EXTRA_SPELLINGS ("tori", "data-parallel"). A name with
a capital letter in it (an acronym such as ECMP) matches only as written; a lower-case name
also matches with a capital first letter, at the start of a sentence. A name matches as a whole
word, never as the first half of a hyphenated word ("rail" is not used in "rail-optimised").

Left out: words that have a plain sense as well as the glossary's. The phrases of
OTHER_SENSES ("a slice of the buffer", "NVLink SHARP", which is NVLS and not InfiniBand's
SHARP) are taken out of the text before it is matched; any other plain use of such a word would
be taken for the term.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "EXTRA_SPELLINGS",
    "OTHER_SENSES",
    "OTHER_SENSE_CHAPTERS",
    "Entry",
    "entries_from_source",
    "spellings",
    "use_pattern",
    "other_senses_removed",
    "glossary_entries",
]

# name -> the other ways the chapters write it (plurals in -s/-es are added by spellings()).
EXTRA_SPELLINGS: dict[str, tuple[str, ...]] = {
    "torus": ("tori",),
    "OCS": ("OCSes", "optical circuit switch", "optical circuit switches"),
    "ICI": ("inter-chip interconnect",),
    "DCN": ("data-center network",),
    "NIC": ("network interface card", "network interface cards"),
    "ECMP": ("equal-cost multi-path",),
    "amax": ("amaxes",),
    "rail-optimised": ("rail-optimized",),
    "backend (communication)": ("backend", "backends"),
    "data parallelism": ("data-parallel",),
    "tensor parallelism": ("tensor-parallel",),
    "expert parallelism": ("expert-parallel",),
    "oversubscription": ("oversubscribed",),
    "bf16": ("bfloat16", "BF16"),
    "spine switch": ("spine", "spines"),
    "max-min fairness": ("max-min fair",),
}

# name -> regular expressions of phrases in which the word has its plain sense (removed first).
OTHER_SENSES: dict[str, tuple[str, ...]] = {
    "SHARP": (r"NVLink SHARP",),
    "data parallelism": (r"\b[Ff]ully\s+sharded\s+data(?:-|\s+)parallel(?:ism)?",),
    "slice": (
        r"\bslices?\s+(?:\S+\s+)?of\s+(?:the|a|an|its|each|every|one|their)\s+(?:\w+\s+)?"
        r"\*?(?:buffer|array|tensor|gradient|data|result|output|input|message|matrix|vector|batch|"
        r"sequence|head|token|weight|activation|position)(?:s|es)?\b",
        r"\b(?:its|their|own)\s+(?:own\s+)?slices?\b",
    ),
    "chain": (r"\bchain of\b", r"\bchain rule\b", r"\bdependency chain\b"),
    "decode": (
        r"\bdecodes\b",
        r"\bencode\s+and\s+decode\b",
        r"\bdecode\s+(?=(?:E4M3|E5M2|a|the|an|its|each|every|bits?|values?)\b)",
    ),
}

# (chapter, name) -> why the chapter never uses the term although its word is there.
OTHER_SENSE_CHAPTERS: dict[tuple[str, str], str] = {
    ("collectives_in_node", "slice"): "its slices are the parts of a buffer NVLS reduces",
    ("fabric_design", "slice"): "Meta's 'slice' is the index of a rack switch's downlink",
}


@dataclass(frozen=True)
class Entry:
    """One glossary entry: the names it defines, first the one it is listed under."""

    names: tuple[str, ...]


def entries_from_source(text: str) -> list[Entry]:
    """The entries of glossary.md's ``{glossary}`` blocks: a run of unindented lines is the
    names of one entry, the indented lines after them its definition."""
    found, names, inside = [], [], False
    for line in text.splitlines():
        if line.startswith("```{glossary}"):
            inside = True
            continue
        if inside and line.startswith("```"):
            inside = False
        if not inside:
            continue
        if line.strip() and not line[0].isspace():
            names.append(line.strip())
        elif names:
            found.append(Entry(tuple(names)))
            names = []
    return found


def spellings(name: str) -> list[str]:
    """The ways the prose may write ``name``: itself, its plural, EXTRA_SPELLINGS."""
    base = re.sub(r"\s*\(.*\)$", "", name)
    plural = base + ("es" if base.endswith(("s", "x", "ch", "sh")) else "s")
    return [base, plural, *EXTRA_SPELLINGS.get(name, ())]


def _word(spelling: str) -> str:
    escaped = re.escape(spelling).replace(r"\ ", r"\s+")  # a name may break across lines
    if spelling == spelling.lower() and spelling[:1].isalpha():
        escaped = f"[{spelling[0]}{spelling[0].upper()}]" + escaped[1:]
    return escaped


def use_pattern(entry: Entry) -> re.Pattern[str]:
    """A pattern that finds the entry's uses: whole words, not the head of a hyphenated word."""
    words = sorted({s for name in entry.names for s in spellings(name)}, key=len, reverse=True)
    return re.compile(r"(?<![\w-])(?:" + "|".join(_word(w) for w in words) + r")(?![\w]|-[A-Za-z])")


def other_senses_removed(entry: Entry, text: str) -> str:
    """``text`` with the entry's OTHER_SENSES phrases blanked out (same length)."""
    for name in entry.names:
        for phrase in OTHER_SENSES.get(name, ()):
            text = re.sub(phrase, lambda m: " " * len(m.group()), text)
    return text


def glossary_entries(root: Path) -> list[Entry]:
    """The entries of ``root``/glossary.md."""
    return entries_from_source((root / "glossary.md").read_text(encoding="utf-8"))
