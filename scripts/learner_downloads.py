"""Downloads for learners: the package as a wheel and the student notebooks.

Learners never need the instructor's repository (it holds every solution and hidden test).
This Sphinx extension (``_config.yml`` lists it under ``sphinx.local_extensions``) puts, into
the built site's ``downloads/`` folder:

- ``collectives-<version>-py3-none-any.whl``: the reference package, built with
  ``pip wheel --no-deps`` from a temporary copy of ``pyproject.toml``, ``README.md`` and
  ``collectives/`` (so that nothing is written into the repository), and only again when one
  of them is newer than the wheel;
- ``notebooks/<assignment>/<notebook>.ipynb`` and ``course-notebooks.zip``: every student
  notebook that ``make student`` wrote to ``exercises/release/`` (nbgrader's release, with the
  solutions and hidden tests taken out). Assignments are discovered, never listed here.

The ``learner-downloads`` directive (used on ``start_here.md``) lists them in course order,
each with the chapters that link to it (:func:`course_order`: the numbered chapters of
``_toc.yml`` in order, and the notebooks each one's "Graded notebook" section downloads), with
the exact commands to install the wheel (and its ``dist`` extra, PyTorch for the
real_processes notebook), open the notebooks, check one outside JupyterLab and score it with
the self-check. In a book without the package (the
tests' one-page scratch books) the extension does nothing; if the package is there but the
student notebooks are not, it warns (an error under ``-W``): run ``make student``.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

__all__ = [
    "setup",
    "build_downloads",
    "course_order",
    "install_commands",
    "DOWNLOADS",
    "NOTEBOOKS_ZIP",
    "TORCH_INDEX",
]

#: folder of the site (and of ``html_extra_path``'s copy) that holds the downloads
DOWNLOADS = "downloads"
NOTEBOOKS_ZIP = "course-notebooks.zip"
#: where pip finds PyTorch's CPU build (the dist extra pins torch==2.13.0)
TORCH_INDEX = "https://download.pytorch.org/whl/cpu"
_RELEASE_LINK = re.compile(r"exercises/release/([\w-]+)/([\w-]+\.ipynb)")


def _numbered_chapters(root: Path) -> list[str]:
    """The chapters of ``_toc.yml``'s numbered parts, in order (the book's chapter numbers)."""
    import yaml

    toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))
    numbered = toc.get("defaults", {}).get("numbered", False)
    return [
        c["file"]
        for part in toc.get("parts", [])
        if part.get("numbered", numbered)
        for c in part.get("chapters", [])
    ]


def course_order(root: Path, found: dict[str, list[str]]) -> list[tuple[str, str, list[str]]]:
    """``[(assignment, notebook, ["Chapter 1, Cost models ...", ...]), ...]``: every notebook
    of ``found`` ({assignment: [names]}), in the order of the first chapter whose page links to
    it, with every such chapter (number and title); notebooks no chapter links come last."""
    linked: dict[tuple[str, str], list[str]] = {}
    first: dict[tuple[str, str], int] = {}
    for number, chapter in enumerate(_numbered_chapters(root), start=1):
        path = root / f"{chapter}.md"
        if not path.is_file():
            continue
        text = path.read_text(encoding="utf-8")
        title = next(
            (line[2:].strip() for line in text.splitlines() if line.startswith("# ")), chapter
        )
        for assignment, name in dict.fromkeys(_RELEASE_LINK.findall(text)):
            key = (assignment, name)
            linked.setdefault(key, []).append(f"Chapter {number}, {title}")
            first.setdefault(key, number)
    entries = [(a, n) for a, names in found.items() for n in names]
    entries.sort(key=lambda key: (first.get(key, 10**6), key))
    return [(a, n, linked.get((a, n), [])) for a, n in entries]


def install_commands(wheel: str) -> tuple[str, str, str]:
    """The learner's commands: install and open; the dist extra (PyTorch's CPU build, for
    the real_processes notebook); checking a notebook outside JupyterLab and scoring it."""
    setup = (
        "python3 -m venv course-env\n"
        "source course-env/bin/activate        # Windows: course-env\\Scripts\\activate\n"
        f"pip install ./{wheel} jupyterlab\n"
        f"python -m zipfile -e {NOTEBOOKS_ZIP} course-notebooks\n"
        "jupyter lab course-notebooks\n"
    )
    torch = f'pip install "./{wheel}[dist]" --extra-index-url {TORCH_INDEX}\n'
    check = (
        "cd course-notebooks/cost_models\n"
        "jupyter nbconvert --to notebook --execute ring_all_gather.ipynb "
        "--output checked.ipynb\n"
        "python -m collectives.grading.selfcheck ring_all_gather.ipynb\n"
        "python -m collectives.grading.selfcheck ring_all_gather.ipynb --model-answers\n"
    )
    return setup, torch, check


def _root(app) -> Path:
    return Path(app.srcdir)


def _has_package(root: Path) -> bool:
    return (root / "pyproject.toml").is_file() and (root / "collectives").is_dir()


def _sources(root: Path) -> list[Path]:
    files = [root / "pyproject.toml", root / "README.md"]
    files += [
        p for p in (root / "collectives").rglob("*") if p.is_file() and "__pycache__" not in p.parts
    ]
    return [p for p in files if p.is_file()]


def _build_wheel(root: Path, out: Path) -> Path:
    """The package's wheel in ``out`` (rebuilt only when a source is newer)."""
    wheels = sorted(out.glob("collectives-*.whl"))
    newest = max(p.stat().st_mtime for p in _sources(root))
    if len(wheels) == 1 and wheels[0].stat().st_mtime >= newest:
        return wheels[0]
    for old in wheels:
        old.unlink()
    with tempfile.TemporaryDirectory(prefix="collectives-wheel-") as tmp:
        src = Path(tmp) / "src"
        src.mkdir()
        for name in ("pyproject.toml", "README.md"):
            shutil.copy2(root / name, src / name)
        shutil.copytree(
            root / "collectives",
            src / "collectives",
            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
        )
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "wheel",
                "--no-deps",
                "--no-build-isolation",
                "--quiet",
                "--wheel-dir",
                str(out),
                str(src),
            ],
            capture_output=True,
            text=True,
            timeout=600,
        )
    if result.returncode != 0:
        raise RuntimeError(f"building the collectives wheel failed:\n{result.stderr[-2000:]}")
    (wheel,) = out.glob("collectives-*.whl")
    return wheel


def _copy_notebooks(root: Path, out: Path) -> dict[str, list[str]]:
    """Copy exercises/release/<assignment>/*.ipynb into ``out/notebooks`` and zip them;
    return ``{assignment: [notebook file names]}``."""
    release = root / "exercises" / "release"
    target = out / "notebooks"
    if target.exists():
        shutil.rmtree(target)
    found: dict[str, list[str]] = {}
    for folder in sorted(p for p in release.iterdir() if p.is_dir()) if release.is_dir() else []:
        notebooks = sorted(folder.glob("*.ipynb"))
        if notebooks:
            (target / folder.name).mkdir(parents=True)
            for nb in notebooks:
                shutil.copy2(nb, target / folder.name / nb.name)
            found[folder.name] = [nb.name for nb in notebooks]
    zip_path = out / NOTEBOOKS_ZIP
    zip_path.unlink(missing_ok=True)
    if found:
        with zipfile.ZipFile(zip_path, "w", zipfile.ZIP_DEFLATED) as zf:
            for assignment, names in found.items():
                for name in names:
                    zf.write(target / assignment / name, f"{assignment}/{name}")
    return found


def build_downloads(root: Path, out: Path) -> dict:
    """Write the wheel and the notebooks under ``out`` (the site's ``downloads/``)."""
    out.mkdir(parents=True, exist_ok=True)
    wheel = _build_wheel(root, out)
    return {"wheel": wheel.name, "notebooks": _copy_notebooks(root, out)}


def _on_config_inited(app, config) -> None:
    root = _root(app)
    app.learner_downloads = None
    if not _has_package(root):
        return
    staging = Path(app.outdir).parent / "learner_downloads"
    app.learner_downloads = build_downloads(root, staging / DOWNLOADS)
    config.html_extra_path = list(config.html_extra_path) + [str(staging)]


def _directive():
    from docutils import nodes
    from sphinx.util import logging
    from sphinx.util.docutils import SphinxDirective
    from sphinx.util.osutil import relative_uri

    logger = logging.getLogger(__name__)

    class LearnerDownloads(SphinxDirective):
        """The wheel, the notebooks and the install commands, as links and a code block."""

        has_content = False

        def run(self):
            found = getattr(self.env.app, "learner_downloads", None)
            if not found:
                logger.warning(
                    "learner-downloads: this book has no package to offer",
                    location=self.get_location(),
                )
                return []
            root = _root(self.env.app)
            self.env.note_dependency(str(root / "exercises" / "release"))
            here = self.env.app.builder.get_target_uri(self.env.docname)

            def link(target: str, text: str):
                uri = relative_uri(here, f"{DOWNLOADS}/{target}")
                para = nodes.paragraph()
                para += nodes.reference("", text, refuri=uri, internal=False)
                return para

            wheel = found["wheel"]
            items = nodes.bullet_list()
            entry = nodes.list_item()
            entry += link(wheel, f"The package: {wheel}")
            items += entry
            if not found["notebooks"]:
                logger.warning(
                    "learner-downloads: exercises/release/ holds no student "
                    "notebooks; run `make student`",
                    location=self.get_location(),
                )
            else:
                entry = nodes.list_item()
                entry += link(
                    NOTEBOOKS_ZIP,
                    f"Every graded notebook: {NOTEBOOKS_ZIP}, or one by one, in course order:",
                )
                inner = nodes.bullet_list()
                for assignment, name, chapters in course_order(root, found["notebooks"]):
                    item = nodes.list_item()
                    para = link(f"notebooks/{assignment}/{name}", f"{assignment}/{name}")
                    if chapters:
                        para += nodes.Text(" (" + "; ".join(chapters) + ")")
                    item += para
                    inner += item
                entry += inner
                items += entry
            for chapter in _numbered_chapters(root):
                self.env.note_dependency(str(root / f"{chapter}.md"))
            setup_commands, torch, check = install_commands(wheel)
            blocks = [
                nodes.literal_block(text, text, language="bash")
                for text in (setup_commands, torch, check)
            ]
            return [
                items,
                blocks[0],
                nodes.paragraph(
                    text="For the notebook of the chapter From the model to "
                    "real processes, install the package's dist extra "
                    "too: PyTorch 2.13.0, its CPU build (a 190 MB "
                    "download), in the same environment:"
                ),
                blocks[1],
                nodes.paragraph(
                    text="To check a notebook outside JupyterLab, run it from "
                    "top to bottom (the command stops at the first "
                    "failing cell and names it), and to score it on fresh "
                    "cases of the self-check, in the notebook's folder:"
                ),
                blocks[2],
            ]

    return LearnerDownloads


def setup(app):
    app.connect("config-inited", _on_config_inited)
    app.add_directive("learner-downloads", _directive())
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
