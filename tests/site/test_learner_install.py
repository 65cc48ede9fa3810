"""A learner's setup from the site alone: the wheel and the notebooks zip, in a fresh venv.

The downloads are built exactly as the book offers them (``scripts/learner_downloads.py``'s
``build_downloads``, which the book build calls too, from ``exercises/release/``). The wheel is
installed with the ``dist`` extra (torch, for the real_processes notebook) into a virtual
environment of its own: no editable install, no copy of the repository on ``sys.path``, nothing
from the book's environment. Then every released notebook, with a correct submission filled
in (each spec's ``SUBMISSIONS["correct"]`` of ``tests/assignments/``), runs from top to bottom
on a kernel of that environment, in the folder the zip unpacked it to, as JupyterLab would run
it: every cell must run without an error, so every visible test passes (real_processes'
four torch processes and the graded functions' isolated re-runs included), and the package the
notebook imported is the wheel's.

One environment for every notebook. The learner installs JupyterLab beside the wheel; the test
installs only ipykernel (the part of JupyterLab that runs the code) and runs the notebooks
with nbclient from the test's own environment, so that the install stays lean. ``pip
--no-compile`` leaves byte-compiling to the first import. The whole file is one unit of work
(tests/work_units.py): about 20 s of CPU for the install and 40 s for the notebooks on one
core of the 2-core CI machine.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest

from assignments import load as load_spec
from nbgrader_helpers import copy_of, read, source_path

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
RELEASE = ROOT / "exercises" / "release"
KERNEL = "learner-venv"
CELL_TIMEOUT = 600


def _released() -> list[tuple[str, str]]:
    """(assignment, notebook) of every released notebook, as the downloads list them."""
    if not RELEASE.is_dir():
        return []
    return [
        (folder.name, nb.stem)
        for folder in sorted(RELEASE.iterdir())
        if folder.is_dir()
        for nb in sorted(folder.glob("*.ipynb"))
    ]


def _downloads_module():
    spec = importlib.util.spec_from_file_location(
        "learner_downloads", ROOT / "scripts" / "learner_downloads.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def learner(tmp_path_factory):
    """The downloads, a fresh venv with the wheel installed, the unpacked notebooks and a
    kernelspec for that venv: a namespace of paths."""
    if not _released():
        pytest.fail(
            "exercises/release/ holds no student notebooks: run `make student` (`make "
            "test` does it for you)",
            pytrace=False,
        )
    home = tmp_path_factory.mktemp("learner")
    downloads = home / "downloads"
    found = _downloads_module().build_downloads(ROOT, downloads)
    wheel = downloads / found["wheel"]
    venv = home / "course-env"
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120
    )
    python = venv / "bin" / "python"
    # the outer pip installs into the new venv (--python): no pip of its own to set up there
    install = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "--quiet",
            "--no-compile",
            f"{wheel}[dist]",
            "ipykernel",
        ],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert install.returncode == 0, install.stderr[-3000:]
    notebooks = home / "course-notebooks"
    subprocess.run(
        [
            str(python),
            "-m",
            "zipfile",
            "-e",
            str(downloads / "course-notebooks.zip"),
            str(notebooks),
        ],
        check=True,
        timeout=120,
        cwd=home,
    )
    kernels = home / "jupyter" / "kernels" / KERNEL
    kernels.mkdir(parents=True)
    (kernels / "kernel.json").write_text(
        json.dumps(
            {
                "argv": [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                "display_name": "the learner's venv",
                "language": "python",
            }
        )
    )
    return type(
        "Learner",
        (),
        {
            "home": home,
            "wheel": wheel,
            "venv": venv,
            "python": python,
            "notebooks": notebooks,
            "jupyter": home / "jupyter",
        },
    )


def test_the_wheel_holds_the_package_alone_and_its_venv_imports_it(learner):
    """The wheel holds ``collectives`` and its metadata only (never the instructors' tooling),
    and the venv imports the package from its own site-packages, with the dependencies pip
    installed (numpy, torch), not from the repository."""
    with zipfile.ZipFile(learner.wheel) as zf:
        tops = {n.split("/", 1)[0] for n in zf.namelist()}
    name, version = learner.wheel.name.split("-")[:2]
    assert tops == {"collectives", f"{name}-{version}.dist-info"}, tops
    with zipfile.ZipFile(learner.wheel) as zf:
        meta = zf.read(f"{name}-{version}.dist-info/METADATA").decode()
    assert "Provides-Extra: dist" in meta and 'torch==2.13.0; extra == "dist"' in meta, meta
    probe = (
        "import sys, collectives, numpy, torch; "
        "print(collectives.__file__); print(numpy.__file__); print(torch.__file__); "
        "print(sys.prefix)"
    )
    result = subprocess.run(
        [str(learner.python), "-c", probe],
        cwd=learner.home,
        capture_output=True,
        text=True,
        timeout=300,
        env={"PATH": f"{learner.venv / 'bin'}:/usr/bin:/bin", "HOME": str(learner.home)},
    )
    assert result.returncode == 0, result.stderr[-2000:]
    *modules, prefix = result.stdout.split()
    assert Path(prefix) == learner.venv
    for path in modules:
        assert Path(path).is_relative_to(learner.venv / "lib"), path


#: appended to every notebook: where its collectives came from
_WHERE = "import collectives, sys\nprint('collectives from', collectives.__file__)"


@pytest.mark.parametrize(
    ("assignment", "notebook"), _released(), ids=[f"{a}/{n}" for a, n in _released()]
)
def test_a_correct_submission_passes_every_visible_test(learner, assignment, notebook, monkeypatch):
    """The downloaded notebook with every answer filled in runs top to bottom on the
    learner's kernel without an error."""
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    spec = load_spec(assignment)
    folder = learner.notebooks / assignment
    path = folder / f"{notebook}.ipynb"
    release = read(path)
    build = spec.submissions["correct"][notebook]
    nb = build(copy_of(read(source_path(assignment, notebook))), copy_of(release))
    nb.cells.append(nbformat.v4.new_code_cell(_WHERE))
    nbformat.write(nb, path)
    monkeypatch.setenv("JUPYTER_PATH", str(learner.jupyter))
    client = NotebookClient(
        nb,
        kernel_name=KERNEL,
        timeout=CELL_TIMEOUT,
        startup_timeout=300,
        resources={"metadata": {"path": str(folder)}},
    )
    env = {
        "PATH": f"{learner.venv / 'bin'}:/usr/bin:/bin",
        "HOME": str(learner.home),
        "MPLBACKEND": "Agg",
    }
    try:
        client.execute(env=env)
    except CellExecutionError as exc:
        pytest.fail(
            f"{assignment}/{notebook}, solved, fails in the learner's venv:\n{exc}", pytrace=False
        )
    printed = "".join(o.get("text", "") for o in nb.cells[-1].outputs)
    where = Path(printed.split("collectives from", 1)[1].strip())
    assert where.is_relative_to(learner.venv / "lib"), printed


def test_the_self_check_scores_a_solved_notebook_from_the_wheel(learner):
    """``python -m collectives.grading.selfcheck`` in the learner's venv, on the first
    notebook of the course solved (the notebook test above wrote it): every autograded point,
    and the written answer named as graded by hand."""
    folder = learner.notebooks / "cost_models"
    spec = load_spec("cost_models")
    path = folder / "ring_all_gather.ipynb"
    solved = spec.submissions["correct"]["ring_all_gather"](
        copy_of(read(source_path("cost_models", "ring_all_gather"))), copy_of(read(path))
    )
    nbformat.write(solved, folder / "solved.ipynb")
    (folder / "solved.ipynb").rename(folder / "ring_all_gather.ipynb")
    result = subprocess.run(
        [
            str(learner.python),
            "-m",
            "collectives.grading.selfcheck",
            "ring_all_gather.ipynb",
            "--seed",
            "26",
        ],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=600,
        env={
            "PATH": f"{learner.venv / 'bin'}:/usr/bin:/bin",
            "HOME": str(learner.home),
            "MPLBACKEND": "Agg",
        },
    )
    assert result.returncode == 0, result.stdout + result.stderr[-2000:]
    # 4 + 2 + 1 + 1 + 1 points autograded, 1 written (tests/assignments/cost_models.py)
    assert "Score: 9 of 9 autograded points (written answers: 1 more" in result.stdout
