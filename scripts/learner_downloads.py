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

The ``learner-downloads`` directive (used on ``start_here.md``) lists them, with the exact
commands to install the wheel and open the notebooks. In a book without the package (the
tests' one-page scratch books) the extension does nothing; if the package is there but the
student notebooks are not, it warns (an error under ``-W``): run ``make student``.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

__all__ = ["setup", "build_downloads", "DOWNLOADS", "NOTEBOOKS_ZIP"]

#: folder of the site (and of ``html_extra_path``'s copy) that holds the downloads
DOWNLOADS = "downloads"
NOTEBOOKS_ZIP = "course-notebooks.zip"


def _root(app) -> Path:
    return Path(app.srcdir)


def _has_package(root: Path) -> bool:
    return (root / "pyproject.toml").is_file() and (root / "collectives").is_dir()


def _sources(root: Path) -> list[Path]:
    files = [root / "pyproject.toml", root / "README.md"]
    files += [p for p in (root / "collectives").rglob("*") if p.is_file()
              and "__pycache__" not in p.parts]
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
        shutil.copytree(root / "collectives", src / "collectives",
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        result = subprocess.run(
            [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
             "--quiet", "--wheel-dir", str(out), str(src)],
            capture_output=True, text=True, timeout=600)
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
                logger.warning("learner-downloads: this book has no package to offer",
                               location=self.get_location())
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
                logger.warning("learner-downloads: exercises/release/ holds no student "
                               "notebooks; run `make student`", location=self.get_location())
            else:
                entry = nodes.list_item()
                entry += link(NOTEBOOKS_ZIP, f"Every graded notebook: {NOTEBOOKS_ZIP}")
                inner = nodes.bullet_list()
                for assignment, names in found["notebooks"].items():
                    for name in names:
                        item = nodes.list_item()
                        item += link(f"notebooks/{assignment}/{name}", f"{assignment}/{name}")
                        inner += item
                entry += inner
                items += entry
            commands = (
                "python3 -m venv course-env\n"
                "source course-env/bin/activate        # Windows: course-env\\Scripts\\activate\n"
                f"pip install ./{wheel} jupyterlab\n"
                f"python -m zipfile -e {NOTEBOOKS_ZIP} course-notebooks\n"
                "jupyter lab course-notebooks\n")
            block = nodes.literal_block(commands, commands, language="bash")
            return [items, block]

    return LearnerDownloads


def setup(app):
    app.connect("config-inited", _on_config_inited)
    app.add_directive("learner-downloads", _directive())
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
