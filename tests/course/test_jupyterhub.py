"""The course on a real JupyterHub, end to end: release, fetch, complete, submit, collect, grade,
hand grade, feedback, each step by the user who does it (issue 25).

What runs (exercises/README.md, "Many graders, large classes: JupyterHub and PostgreSQL",
describes the same set-up for a real course):

- **Users.** Four Unix accounts made with ``useradd`` (the test runs as root; elsewhere it
  fails, saying so): three learners and an instructor, each with a home of mode 0700 in one
  temporary directory ``/tmp/collectives-hub-*`` (0755; pytest's own temporary directory is
  0700, as is ``/root``, so nothing the users need may live there).
- **The single-user environment** (the hub's "image"): a new virtual environment in that
  directory, readable by everyone, with the project's wheel (built with ``pip wheel --no-deps``
  from a copy of the package sources: ``collectives`` and the grading tools
  ``collectives_grader``, never the notebooks' sources), nbgrader and JupyterHub at the
  versions of the project's venv, the ``python3`` and ``collectives-sandbox`` kernel specs, and
  the course-wide nbgrader configuration in its ``etc/jupyter/nbgrader_config.py`` (course id
  and the exchange root), which every server in it reads. Nobody's server imports anything
  from the repository or its venv (which may sit under ``/root``).
- **The hub**: JupyterHub (the project's ``course`` extra) as root on 127.0.0.1 only, its proxy
  configurable-http-proxy from ``make hub`` (npm), the local process spawner starting every
  server from that environment as its user; the test drives it through the hub's REST API
  with a service token (creating a token for each user, starting their servers) and then
  talks to each user's server, through the proxy, with that user's own token.
- **The exchange**: a temporary root of mode 1777 (writable by all, as nbgrader requires, and
  sticky: without the sticky bit a learner can move the course's folder aside and put one of
  her own in its place, whose ``inbound/`` then receives everyone's submissions) holding the
  course's folder ``collectives/``, made for the instructor (0755) before anyone else can take
  the name; nbgrader gives the folders inside it their own modes (``inbound/`` 2733: nobody
  can list it, and each submission's folder name carries a random part; ``feedback/`` 0711:
  each page is named by a secret of its submission).
- **The course directory**: the instructor's ``~/course`` (mode 0700): a copy of
  ``exercises/nbgrader_config.py`` and ``exercises/source/cost_models/``; the instructor's
  ``~/.jupyter/nbgrader_config.py`` names it and loads its configuration, so that the
  formgrader grades and makes feedback as ``make grade`` does.

The steps: the instructor generates and releases cost_models (the formgrader's API, what its
buttons call); each learner fetches it (nbgrader's Assignments API in their own server),
completes it by saving the notebook through the contents API as JupyterLab does (the
*correct* submission of tests/assignments/cost_models.py for one learner, *wrong* for the
other; the third saves her correct answers under another name, the original deleted) and
submits; the instructor collects, grades the class with the project's grader
(``python -m collectives_grader.classroom grade``, what ``make grade`` runs, in a shell of the
instructor's in the hub's environment: ``runuser``), gives the written answer its hand grade in
the formgrader, generates and releases the feedback; each learner fetches their feedback.

Asserted: every cell's score in the gradebook and both feedback pages exactly as the spec
expects; the renamed notebook not graded (0), its page saying why and how to recover reaching
her under the name she handed in; each learner gets their own page only; a learner cannot use
another's server, read another's home, list the exchange's inbound or feedback folders, move
the course's folder in the exchange, or read anything of the instructor's course directory
(solutions, gradebook, submissions, feedback).
"""

import html
import json
import os
import pwd
import re
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from importlib import metadata
from pathlib import Path

import nbformat
import pytest

import assignments as specs
import nbgrader_helpers as h

pytestmark = pytest.mark.slow

ASSIGNMENT, NOTEBOOK, WRITTEN = "cost_models", "ring_all_gather", "written_regimes"
COURSE_ID = "collectives"  # exercises/nbgrader_config.py
#: Unix user -> the spec's submission they hand in (None: the instructor)
LEARNERS = {"clhub-alice": "correct", "clhub-bob": "wrong"}
#: a learner whose notebook has another name (JupyterLab's Duplicate, the original deleted):
#: not graded (0), and the page saying why must reach her through the exchange all the same
RENAMED, RENAMED_AS = "clhub-carol", "ring_all_gather-Copy1"
INSTRUCTOR = "clhub-teacher"
USERS = (*LEARNERS, RENAMED, INSTRUCTOR)
TMP_PREFIX = "collectives-hub-"
PROXY = h.REPO / ".venv" / "bin" / "configurable-http-proxy"  # make hub
SERVICE = "course-test"


# ---- processes, users, HTTP ---------------------------------------------------------------------


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _run(args, timeout=900, **kwargs):
    proc = subprocess.run(args, capture_output=True, text=True, timeout=timeout, **kwargs)
    assert proc.returncode == 0, (
        f"`{' '.join(map(str, args))}` exited {proc.returncode}:\n"
        f"{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    )
    return proc


def _as_user(user, home, env_dir, args, cwd=None, timeout=900):
    """``args`` run as ``user`` with the environment the hub gives its servers (the single-user
    environment first on PATH, the user's own home), nothing of root's."""
    clean = [
        f"HOME={home}",
        f"USER={user}",
        f"LOGNAME={user}",
        f"PATH={env_dir / 'bin'}:/usr/local/bin:/usr/bin:/bin",
        "LANG=C.UTF-8",
    ]
    return _run(
        ["runuser", "-u", user, "--", "env", "-i", *clean, *map(str, args)],
        cwd=cwd or home,
        timeout=timeout,
    )


def _remove_user(name):
    """Delete the test's account ``name`` (its processes first: the hub stops their servers,
    this ends whatever outlived it)."""
    try:
        uid = pwd.getpwnam(name).pw_uid
    except KeyError:
        return
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if entry.stat().st_uid == uid:
                    os.kill(int(entry.name), 9)
            except (OSError, ProcessLookupError):
                pass
    subprocess.run(["userdel", "--force", name], capture_output=True)


def _missing():
    """What this machine lacks to run the test ('' when nothing)."""
    if os.geteuid() != 0 or shutil.which("useradd") is None or shutil.which("runuser") is None:
        return (
            "the JupyterHub test makes Unix users (three learners and an instructor) with "
            "useradd, runs commands as them with runuser and starts the hub as root: run it as "
            f"root on a machine with both (euid {os.geteuid()}, useradd "
            f"{shutil.which('useradd')}, runuser {shutil.which('runuser')})"
        )
    if not PROXY.exists():
        return f"{PROXY} is missing: run `make hub` (configurable-http-proxy from npm)"
    return ""


def _create_users(base):
    """The three accounts, homes 0700 under ``base``; fails (never skips) where it cannot."""
    homes = {}
    for name in USERS:
        try:
            stale = pwd.getpwnam(name)
        except KeyError:
            stale = None
        if stale is not None:  # left by an interrupted run of this test: its home says so
            if not stale.pw_dir.startswith(f"/tmp/{TMP_PREFIX}"):
                pytest.fail(f"user {name} exists and is not this test's (home {stale.pw_dir})")
            _remove_user(name)
        home = base / "home" / name
        proc = subprocess.run(
            [
                "useradd",
                "--create-home",
                "--home-dir",
                str(home),
                "--shell",
                "/bin/bash",
                "--user-group",
                name,
            ],
            capture_output=True,
            text=True,
        )
        if proc.returncode != 0:
            pytest.fail(
                f"this machine cannot create the test's users: useradd {name}: "
                f"{proc.stderr.strip()}"
            )
        home.chmod(0o700)
        homes[name] = home
    return homes


def _chown_tree(path, user):
    entry = pwd.getpwnam(user)
    for folder, dirs, files in os.walk(path):
        for name in [folder, *(os.path.join(folder, f) for f in dirs + files)]:
            os.chown(name, entry.pw_uid, entry.pw_gid)


def _http(method, url, token, json_body=None, form=None, timeout=900):
    """(status, text) of one request with ``Authorization: token``."""
    headers = {"Authorization": f"token {token}"}
    data = None
    if json_body is not None:
        data, headers["Content-Type"] = json.dumps(json_body).encode(), "application/json"
    elif form is not None:
        data = urllib.parse.urlencode(form).encode()
        headers["Content-Type"] = "application/x-www-form-urlencoded"
    elif method in ("POST", "PUT"):
        data = b""
    request = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()
    except urllib.error.URLError as exc:  # not listening (yet)
        return None, str(exc.reason)


def _ok(method, url, token, **kwargs):
    status, text = _http(method, url, token, **kwargs)
    assert status is not None and 200 <= status < 300, f"{method} {url}: {status}\n{text[-3000:]}"
    return json.loads(text) if text.strip() else None


# ---- the single-user environment -----------------------------------------------------------------


def _shared_python(user, home):
    """A Python the users can run, to base their environment on: this one's base interpreter
    where they can reach it, else the system's (a base under /root, 0700, they cannot)."""
    candidates = [Path(sys.base_prefix) / "bin" / "python3", Path("/usr/bin/python3")]
    for python in candidates:
        probe = subprocess.run(
            [
                "runuser",
                "-u",
                user,
                "--",
                "env",
                "-i",
                f"HOME={home}",
                str(python),
                "-c",
                "import ensurepip, venv, sys; print(sys.version_info[:2])",
            ],
            capture_output=True,
            text=True,
            cwd=home,
        )
        if probe.returncode == 0 and probe.stdout.strip() == str(sys.version_info[:2]):
            return python
    pytest.fail(
        f"no Python {sys.version_info[0]}.{sys.version_info[1]} with venv that the "
        f"test's users can run: tried {', '.join(map(str, candidates))}"
    )


def _build_environment(base, python):
    """The venv every server starts from (see the module docstring), on the interpreter
    ``python``; returns its path."""
    src, wheels, env_dir = base / "src", base / "wheels", base / "env"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(h.REPO / name, src / name)
    for package in ("collectives", "collectives_grader"):
        shutil.copytree(
            h.REPO / package, src / package, ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
        )
    _run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--quiet",
            "--wheel-dir",
            str(wheels),
            str(src),
        ]
    )
    (wheel,) = wheels.glob("collectives-*.whl")
    _run([python, "-m", "venv", str(env_dir)])
    pins = [
        f"{name}=={metadata.version(name)}"
        for name in ("jupyterhub", "nbgrader", "ipykernel", "tqdm")
    ]
    _run(
        [env_dir / "bin" / "python", "-m", "pip", "install", "--quiet", str(wheel), *pins],
        timeout=1800,
    )
    _run(
        [
            env_dir / "bin" / "python",
            "-m",
            "ipykernel",
            "install",
            "--sys-prefix",
            "--name",
            "python3",
        ]
    )
    _run([env_dir / "bin" / "python", "-m", "collectives_grader.sandbox", "install"])
    return env_dir


def _course_config(env_dir, exchange):
    """The configuration every server reads (a system's /etc/jupyter/nbgrader_config.py)."""
    folder = env_dir / "etc" / "jupyter"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "nbgrader_config.py").write_text(
        "c = get_config()  # noqa: F821\n"
        f"c.CourseDirectory.course_id = {COURSE_ID!r}\n"
        f"c.Exchange.root = {str(exchange)!r}\n"
    )


def _instructor_course(home, user):
    """~/course (0700): the course's configuration and cost_models' source; the instructor's
    ~/.jupyter/nbgrader_config.py names it and loads its configuration."""
    course = home / "course"
    (course / "source").mkdir(parents=True)
    shutil.copy(h.EXERCISES / "nbgrader_config.py", course)
    shutil.copytree(
        h.EXERCISES / "source" / ASSIGNMENT,
        course / "source" / ASSIGNMENT,
        ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"),
    )
    config = home / ".jupyter"
    config.mkdir()
    (config / "nbgrader_config.py").write_text(
        "c = get_config()  # noqa: F821\n"
        f"load_subconfig({str(course / 'nbgrader_config.py')!r})  # noqa: F821\n"
        f"c.CourseDirectory.root = {str(course)!r}\n"
    )
    _chown_tree(course, user)
    _chown_tree(config, user)
    course.chmod(0o700)
    return course


# ---- the hub -------------------------------------------------------------------------------------


def _hub_config(state, env_dir, ports, service_token):
    path = state / "jupyterhub_config.py"
    path.write_text(f"""c = get_config()  # noqa: F821
c.JupyterHub.ip = "127.0.0.1"
c.JupyterHub.port = {ports["public"]}
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = {ports["hub"]}
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{ports["proxy_api"]}"
c.ConfigurableHTTPProxy.command = [{str(PROXY)!r}]
c.ConfigurableHTTPProxy.pid_file = {str(state / "proxy.pid")!r}
c.JupyterHub.db_url = "sqlite:///{state / "jupyterhub.sqlite"}"
c.JupyterHub.cookie_secret_file = {str(state / "jupyterhub_cookie_secret")!r}
c.Authenticator.allowed_users = {set(USERS)!r}
c.JupyterHub.services = [{{"name": {SERVICE!r}, "api_token": {service_token!r}}}]
c.JupyterHub.load_roles = [{{
    "name": {SERVICE!r},
    "scopes": ["admin:users", "admin:servers", "tokens"],
    "services": [{SERVICE!r}],
}}]
# every server: the single-user environment, as its user, in its home
c.Spawner.cmd = [{str(env_dir / "bin" / "jupyterhub-singleuser")!r}]
c.Spawner.env_keep = ["LANG", "LC_ALL"]
c.Spawner.environment = {{"PATH": "{env_dir / "bin"}:/usr/local/bin:/usr/bin:/bin"}}
c.Spawner.start_timeout = 600
c.Spawner.http_timeout = 600
# the test's teardown stops every server: each is asked with SIGINT, then SIGTERM, then SIGKILL,
# waiting up to 10 + 5 + 5 s by default (about 48 s of the test's time went there)
c.LocalProcessSpawner.interrupt_timeout = 3
c.LocalProcessSpawner.term_timeout = 2
c.LocalProcessSpawner.kill_timeout = 2
""")
    return path


@pytest.fixture(scope="module")
def hub():
    """Users, environment, exchange, course and a running hub with every user's server up;
    yields a dict of what the test needs. Everything is removed afterwards."""
    missing = _missing()
    if missing:  # the test fails with it (a failure, not an error at set-up nor a skip)
        yield {"missing": missing}
        return
    base = Path(tempfile.mkdtemp(prefix=TMP_PREFIX, dir="/tmp"))
    base.chmod(0o755)
    proc = log = None
    try:
        homes = _create_users(base)
        started = time.monotonic()
        learner = next(iter(LEARNERS))
        env_dir = _build_environment(base, _shared_python(learner, homes[learner]))
        print(f"single-user environment built in {time.monotonic() - started:.0f} s")
        exchange = base / "exchange"
        exchange.mkdir()
        exchange.chmod(0o1777)
        # the course's folder made for the instructor up front: nobody else can take the name
        (exchange / COURSE_ID).mkdir(mode=0o755)
        _chown_tree(exchange / COURSE_ID, INSTRUCTOR)
        _course_config(env_dir, exchange)
        course = _instructor_course(homes[INSTRUCTOR], INSTRUCTOR)
        _run(["chmod", "-R", "a+rX", str(env_dir)])

        state = base / "hub"
        state.mkdir(mode=0o700)
        ports = {k: _free_port() for k in ("public", "hub", "proxy_api")}
        service_token = secrets.token_hex(32)
        config = _hub_config(state, env_dir, ports, service_token)
        log = open(state / "hub.log", "w")
        proc = subprocess.Popen(
            [sys.executable, "-m", "jupyterhub", "-f", str(config)],
            cwd=state,
            stdout=log,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PATH": f"{PROXY.parent}:{os.environ.get('PATH', '')}"},
        )
        base_url = f"http://127.0.0.1:{ports['public']}"
        api = f"{base_url}/hub/api"

        def hub_log():
            return (state / "hub.log").read_text()[-6000:]

        deadline = time.monotonic() + 300
        while _http("GET", f"{api}/", service_token)[0] != 200:
            assert proc.poll() is None and time.monotonic() < deadline, hub_log()
            time.sleep(1)
        tokens = {}
        for user in USERS:
            tokens[user] = _ok(
                "POST",
                f"{api}/users/{user}/tokens",
                service_token,
                json_body={"note": "course test", "expires_in": 7200},
            )["token"]
            _ok("POST", f"{api}/users/{user}/server", service_token)
        deadline = time.monotonic() + 900
        for user in USERS:
            while (
                not _ok("GET", f"{api}/users/{user}", service_token)["servers"]
                .get("", {})
                .get("ready")
            ):
                assert proc.poll() is None and time.monotonic() < deadline, hub_log()
                time.sleep(1)
        yield {
            "base": base,
            "homes": homes,
            "env": env_dir,
            "exchange": exchange,
            "course": course,
            "tokens": tokens,
            "url": base_url,
            "log": hub_log,
        }
    finally:
        if proc is not None:
            proc.terminate()  # the hub stops every server and the proxy
            try:
                proc.wait(timeout=120)
            except subprocess.TimeoutExpired:
                proc.kill()
        if log is not None:
            log.close()
        for user in USERS:
            _remove_user(user)
        shutil.rmtree(base, ignore_errors=True)


def _server(hub, user, path):
    return f"{hub['url']}/user/{user}/{path}"


def _assignments(hub, user, action):
    """nbgrader's Assignments API of ``user``'s server (what the Assignments tab calls)."""
    return _ok(
        "POST",
        _server(hub, user, f"assignments/{action}"),
        hub["tokens"][user],
        form={"course_id": COURSE_ID, "assignment_id": ASSIGNMENT},
    )


def _formgrader(hub, method, path, **kwargs):
    """The formgrader's API in the instructor's server (what its buttons call)."""
    return _ok(
        method,
        _server(hub, INSTRUCTOR, f"formgrader/api/{path}"),
        hub["tokens"][INSTRUCTOR],
        **kwargs,
    )


def _action(hub, path):
    result = _formgrader(hub, "POST", path)
    assert result["success"], f"{path}:\n{result.get('error')}\n{result.get('log')}"
    return result


PROBE = r"""
import json, os, sys
verdicts = {}
for op, path in json.loads(sys.argv[1]):
    try:
        if op == "read":
            open(path, "rb").read(1)
        elif op == "list":
            os.listdir(path)
        elif op == "rename":
            os.rename(path, path + ".moved")
            os.rename(path + ".moved", path)
        verdicts[op + " " + path] = "allowed"
    except OSError as exc:
        verdicts[op + " " + path] = type(exc).__name__
print(json.dumps(verdicts))
"""


def _probe(hub, user, checks):
    """What ``user`` may do: {"<op> <path>": "allowed" or the error's name}."""
    home = hub["homes"][user]
    out = _as_user(
        user, home, hub["env"], [hub["env"] / "bin" / "python", "-c", PROBE, json.dumps(checks)]
    )
    return json.loads(out.stdout)


# ---- the round trip ------------------------------------------------------------------------------


def test_a_class_on_jupyterhub_release_to_feedback(hub):
    if "missing" in hub:
        pytest.fail(hub["missing"])
    spec = specs.load(ASSIGNMENT)
    course, exchange, homes = hub["course"], hub["exchange"], hub["homes"]
    alice, bob = LEARNERS
    nb_file = f"{ASSIGNMENT}/{NOTEBOOK}.ipynb"

    # every server runs the single-user environment's package, not the repository's
    for user in USERS:
        where = _as_user(
            user,
            homes[user],
            hub["env"],
            ["python", "-c", "import collectives, nbgrader, sys; print(collectives.__file__)"],
        )
        assert where.stdout.strip().startswith(str(hub["env"])), where.stdout
    # a learner's token opens their own server only
    assert _http("GET", _server(hub, bob, "api/contents"), hub["tokens"][alice])[0] == 403
    assert _http("GET", _server(hub, alice, "api/contents"), hub["tokens"][alice])[0] == 200

    # release (instructor): generate the student version, put it in the exchange
    _action(hub, f"assignment/{ASSIGNMENT}/assign")
    _action(hub, f"assignment/{ASSIGNMENT}/release")
    released = exchange / COURSE_ID / "outbound" / nb_file
    assert "BEGIN SOLUTION" not in released.read_text()
    assert "BEGIN HIDDEN TESTS" not in released.read_text()

    # fetch, complete (saved as JupyterLab saves), submit: each learner in their own server
    source = h.read(course / "source" / nb_file)
    for learner, kind in LEARNERS.items():
        _assignments(hub, learner, "fetch")
        url = _server(hub, learner, f"api/contents/{nb_file}")
        fetched = _ok("GET", url, hub["tokens"][learner])
        release = nbformat.from_dict(fetched["content"])
        done = spec.submissions[kind][NOTEBOOK](h.copy_of(source), h.copy_of(release))
        _ok(
            "PUT",
            url,
            hub["tokens"][learner],
            json_body={"type": "notebook", "format": "json", "content": done},
        )
        assert (homes[learner] / nb_file).stat().st_uid == pwd.getpwnam(learner).pw_uid
        result = _assignments(hub, learner, "submit")
        assert result["success"], result
    # the third learner's correct answers, saved under another name, the original deleted
    _assignments(hub, RENAMED, "fetch")
    url = _server(hub, RENAMED, f"api/contents/{nb_file}")
    release = nbformat.from_dict(_ok("GET", url, hub["tokens"][RENAMED])["content"])
    done = spec.submissions["correct"][NOTEBOOK](h.copy_of(source), h.copy_of(release))
    _ok(
        "PUT",
        _server(hub, RENAMED, f"api/contents/{ASSIGNMENT}/{RENAMED_AS}.ipynb"),
        hub["tokens"][RENAMED],
        json_body={"type": "notebook", "format": "json", "content": done},
    )
    _ok("DELETE", url, hub["tokens"][RENAMED])
    assert _assignments(hub, RENAMED, "submit")["success"]
    inbound = exchange / COURSE_ID / "inbound"
    assert sorted(p.name.split("+")[0] for p in inbound.iterdir()) == sorted([*LEARNERS, RENAMED])

    # collect (instructor), then the class graded by the project's grader (make grade's command)
    _action(hub, f"assignment/{ASSIGNMENT}/collect")
    for learner in LEARNERS:
        assert (course / "submitted" / learner / nb_file).is_file()
    started = time.monotonic()
    graded = _as_user(
        INSTRUCTOR,
        homes[INSTRUCTOR],
        hub["env"],
        [
            "python",
            "-m",
            "collectives_grader.classroom",
            "grade",
            ASSIGNMENT,
            "--course-dir",
            str(course),
            "--jobs",
            "2",
        ],
        cwd=course,
    )
    print(f"graded in {time.monotonic() - started:.0f} s:\n{graded.stdout}")
    report = json.loads((course / "reports" / f"{ASSIGNMENT}.json").read_text())
    assert {s: report[s]["status"] for s in [*LEARNERS, RENAMED]} == {
        **dict.fromkeys(LEARNERS, "graded"),
        RENAMED: "not graded: 0",
    }, report

    # the written answer graded by hand in the formgrader, with the spec's score
    submitted = {
        s["student"]: s["id"]
        for s in _formgrader(hub, "GET", f"submitted_notebooks/{ASSIGNMENT}/{NOTEBOOK}")
    }
    assert set(LEARNERS) <= set(submitted)
    for learner, kind in LEARNERS.items():
        query = urllib.parse.urlencode({"submission_id": submitted[learner]})
        grades = {g["name"]: g for g in _formgrader(hub, "GET", f"grades?{query}")}
        assert grades[WRITTEN]["needs_manual_grade"], grades[WRITTEN]
        _formgrader(
            hub,
            "PUT",
            f"grade/{grades[WRITTEN]['id']}",
            json_body={
                "manual_score": spec.expected[kind][NOTEBOOK][WRITTEN],
                "extra_credit": None,
            },
        )
        grades = {g["name"]: g for g in _formgrader(hub, "GET", f"grades?{query}")}
        # a grade's score: the hand score where one was given, else the automatic one
        scores = {
            name: g["auto_score"] if g["manual_score"] is None else g["manual_score"]
            for name, g in grades.items()
        }
        assert scores == spec.expected[kind][NOTEBOOK], (learner, kind)
        assert not any(g["needs_manual_grade"] for g in grades.values())

    # feedback: generated again from the gradebook (the hand grades in it), released
    _action(hub, f"assignment/{ASSIGNMENT}/generate_feedback")
    _action(hub, f"assignment/{ASSIGNMENT}/release_feedback")

    # each learner fetches their feedback: their own page, with their exact scores
    points = spec.points[NOTEBOOK]
    for learner, kind in LEARNERS.items():
        _assignments(hub, learner, "fetch_feedback")
        pages = sorted(homes[learner].glob(f"{ASSIGNMENT}/feedback/*/*.html"))
        assert [p.name for p in pages] == [f"{NOTEBOOK}.html"], pages
        page = pages[0].read_text()
        expected = spec.expected[kind][NOTEBOOK]
        total, maximum = float(sum(expected.values())), float(sum(points.values()))
        assert f"{NOTEBOOK} (Score: {total} / {maximum})" in page, (learner, kind)
        for cell, score in expected.items():
            label = "Written response" if cell == WRITTEN else "Test cell"
            assert (
                f'<a href="#{cell}">{label}</a> (Score: {float(score)} / {float(points[cell])})'
            ) in page, (learner, cell)
        assert "BEGIN HIDDEN TESTS" not in page
    alice_page = next(homes[alice].glob(f"{ASSIGNMENT}/feedback/*/*.html")).read_text()
    assert f"{NOTEBOOK} (Score: 10.0 / 10.0)" in alice_page  # by hand: 4 + 2 + 1 + 1 + 1 + 1
    bob_page = next(homes[bob].glob(f"{ASSIGNMENT}/feedback/*/*.html")).read_text()
    assert f"{NOTEBOOK} (Score: 0.0 / 10.0)" in bob_page  # every answer wrong
    # the renamed notebook: a page under the name she handed in, saying why and what to do
    # (before: release_feedback stopped at her folder, or released a page nobody could fetch)
    _assignments(hub, RENAMED, "fetch_feedback")
    pages = sorted(homes[RENAMED].glob(f"{ASSIGNMENT}/feedback/*/*.html"))
    assert [p.name for p in pages] == [f"{RENAMED_AS}.html"], pages
    page = html.unescape(pages[0].read_text())
    assert f"{NOTEBOOK}.ipynb" in page and "How to recover" in page

    # what a learner may not touch
    for learner in LEARNERS:
        other = bob if learner == alice else alice
        may_not = [
            ("read", str(course / "source" / nb_file)),  # the solutions and hidden tests
            ("read", str(course / "gradebook.db")),
            ("list", str(course / "submitted")),
            ("read", str(course / "submitted" / other / nb_file)),
            ("read", str(course / "feedback" / other / ASSIGNMENT / f"{NOTEBOOK}.html")),
            ("read", str(homes[other] / nb_file)),  # the other's own copy
            ("list", str(homes[other])),
            ("list", str(inbound)),  # everyone's submissions: not listable
            ("list", str(exchange / COURSE_ID / "feedback")),  # pages named by a secret
            ("rename", str(exchange / COURSE_ID)),  # the root is sticky
        ]
        may = [("read", str(released)), ("read", str(homes[learner] / nb_file))]
        verdicts = _probe(hub, learner, may_not + may)
        assert {k: v for k, v in verdicts.items() if v != "PermissionError"} == {
            f"{op} {path}": "allowed" for op, path in may
        }, (learner, verdicts)
    # the submissions' folders in the exchange carry a random part: not guessable
    for folder in inbound.iterdir():
        assert re.fullmatch(r"[^+]+\+cost_models\+[^+]+\+[A-Za-z0-9_-]{12}", folder.name)
