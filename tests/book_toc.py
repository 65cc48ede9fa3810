"""The documents the book's _toc.yml names, and a one-page scratch book built with the real
configuration (shared by the site and browser tests)."""

import os
import posixpath
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent


def toc_files(toc_path: Path = ROOT / "_toc.yml") -> list[str]:
    """Every document named in _toc.yml (root first), without suffix."""
    toc = yaml.safe_load(toc_path.read_text(encoding="utf-8"))
    files = [toc["root"]]

    def walk(node):
        if isinstance(node, dict):
            if "file" in node:
                files.append(node["file"])
            for key in ("parts", "chapters", "sections"):
                for child in node.get(key, []) or []:
                    walk(child)
        elif isinstance(node, list):
            for child in node:
                walk(child)

    walk(toc)
    return [posixpath.splitext(f)[0] if f.endswith((".md", ".ipynb")) else f for f in files]


def course_chapters(toc_path: Path = ROOT / "_toc.yml") -> list[str]:
    """The chapters of the numbered parts (the course itself), in order: not the unnumbered
    getting-started pages or appendices."""
    toc = yaml.safe_load(toc_path.read_text(encoding="utf-8"))
    found = []
    for part in toc.get("parts", []):
        if part.get("numbered", toc.get("defaults", {}).get("numbered", False)):
            found += [posixpath.splitext(c["file"])[0] for c in part.get("chapters", [])]
    return found


def build_scratch_book(book: Path, page: str, timeout: float = 300) -> Path:
    """Build, in ``book``, a book of one chapter (``page``, MyST markdown) with the real
    _config.yml, references and Sphinx extensions (scripts/) and the vendored _static/, strictly
    (-W -n, as `make book`); fails the test with the build's output if it fails. Returns the
    built HTML directory."""
    if not (ROOT / "_static" / "vendor" / "manifest.json").is_file():
        pytest.fail("_static/vendor is missing: run `make vendor` (or `make book`)", pytrace=False)
    (book / "chapters").mkdir(parents=True)
    (book / "scripts").mkdir()
    for name in ("_config.yml", "references.bib"):
        shutil.copy2(ROOT / name, book / name)
    for script in (ROOT / "scripts").glob("*.py"):  # the Sphinx extensions _config.yml names
        shutil.copy2(script, book / "scripts" / script.name)
    (book / "_static").symlink_to(ROOT / "_static", target_is_directory=True)
    (book / "intro.md").write_text("# Scratch book\n", encoding="utf-8")
    (book / "chapters" / "scratch.md").write_text(page, encoding="utf-8")
    (book / "_toc.yml").write_text(
        "format: jb-book\nroot: intro\nchapters:\n  - file: chapters/scratch\n", encoding="utf-8"
    )
    bindir = Path(sys.executable).parent
    env = dict(os.environ, PATH=f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}")
    result = subprocess.run(
        [
            str(bindir / "jupyter-book"),
            "build",
            ".",
            "--builder",
            "html",
            "-W",
            "-n",
            "--keep-going",
        ],
        cwd=book,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert result.returncode == 0, (
        f"scratch build failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    )
    return book / "_build" / "html"
