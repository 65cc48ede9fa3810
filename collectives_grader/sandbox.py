"""The sandboxed grading kernel: every autograded notebook runs under bubblewrap (``bwrap``).

Instructor tooling (it needs jupyter_client; the book and graded code never import it):
``python -m collectives_grader.sandbox install`` writes the kernel spec, ``... check`` says
whether the sandbox works here.

Modelled: a jupyter_client *kernel provisioner* (:class:`SandboxProvisioner`, registered under
the entry point ``collectives-sandbox``) that the kernel spec :data:`KERNEL_NAME` names, and
that exercises/nbgrader_config.py makes ``nbgrader autograde`` (and the formgrader, which calls
it) use for every notebook. It starts the ordinary ipykernel inside a sandbox where

- the system (``/usr``, ``/etc``), Python and the virtual environment are read-only;
- the ``collectives`` package is a private copy, bound read-only, compiled, whose files are
  hash-checked against the copy as made before every kernel starts (:class:`PackageSnapshot`,
  the one package snapshot of :mod:`collectives.grading.isolation.snapshot`); it holds only
  ``collectives/``: this package, the instructor's tools, is not in it;
- the only writable places are two size-limited tmpfs (:attr:`Limits.disk_bytes` each): the
  notebook's working directory (the student's ``autograded/<student>/<assignment>/``), where
  the files nbgrader put there appear read-only and new files go to the tmpfs (so they are
  gone when the kernel stops), and ``/tmp``; the rest of the course directory (gradebook,
  ``source/``, ``release/``, other students) does not exist in it;
- there is no network: a new network namespace whose loopback bwrap brings up (so local
  ``torch.distributed`` gloo processes and servers on 127.0.0.1 still work), and the kernel
  talks to nbgrader over ZMQ ``ipc`` Unix sockets in a private directory bound into it;
- the kernel runs as an unprivileged user (a uid of its own when grading as root), with no
  capabilities, in its own user, PID, IPC and UTS namespaces, with limits on CPU time and
  memory (address space) per process, on processes (counted per sandbox: a uid or a user
  namespace of its own) and file size, and killed with nbgrader;
- all processes of a kernel together get at most :attr:`Limits.total_memory_bytes` (files in
  its tmpfs included) in a memory cgroup of their own (:class:`MemoryGroup`), where this
  process may make one: as root on a host with the cgroup v1 memory controller, or in a
  delegated cgroup v2 folder named by ``COLLECTIVES_SANDBOX_CGROUP``; elsewhere only the
  per-process limits apply (``python -m collectives_grader.sandbox check`` says which);
- once the kernel is ready, a root grader takes back the private directory of its ZMQ sockets
  (the kernel's only place on the grader's disk), so nothing more can be written there;
- nbgrader keeps at most :attr:`Limits.output_bytes` of a notebook's output
  (:class:`LimitedKernelClient`): the rest is dropped, with a note in the notebook.

Where bwrap cannot run, starting a kernel raises :class:`SandboxError` with the reason, unless
the instructor opts out with the environment variable ``COLLECTIVES_GRADING_SANDBOX=off`` (the
kernel then runs unsandboxed, as plain nbgrader does). Left out: a limit on wall time
(nbgrader's per-cell timeout does that); files the notebook writes are not kept in
``autograded/`` (plain nbgrader keeps them); when grading as an ordinary user, the socket
directory stays writable to the kernel (bounded per file by the file-size limit only) and
the total-memory limit needs a delegated cgroup.
"""

import atexit
import dataclasses
import fcntl
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from jupyter_client.asynchronous.client import AsyncKernelClient
from jupyter_client.channels import AsyncZMQSocketChannel
from jupyter_client.provisioning import LocalProvisioner

from collectives.errors import SandboxError
from collectives.grading.isolation import snapshot as package_snapshot

__all__ = [
    "KERNEL_NAME",
    "OPT_OUT",
    "COURSE_SEED_ENV",
    "GRADING_ENV",
    "Limits",
    "LIMITS",
    "SandboxError",
    "SandboxProvisioner",
    "LimitedKernelClient",
    "PackageSnapshot",
    "MemoryGroup",
    "check_available",
    "enabled",
    "refuse_message",
    "bwrap_command",
    "install_kernel_spec",
    "snapshot",
    "main",
    "PACKAGE_MOUNT",
]

#: the kernel spec exercises/nbgrader_config.py grades with
KERNEL_NAME = "collectives-sandbox"
#: the environment variable by which an instructor runs kernels without the sandbox
OPT_OUT = "COLLECTIVES_GRADING_SANDBOX"
#: where the package copy appears inside the sandbox
PACKAGE_MOUNT = "/opt/collectives-grading"
#: the course seed's variable (collectives.grading.cohort.ENV): never passed to a kernel, on
#: either path (a learner's cell could read it and draw the hidden cases); each hidden test gets
#: its own key derived from the seed instead (collectives_grader.pipeline.Execute)
COURSE_SEED_ENV = "COLLECTIVES_COURSE_SEED"
#: set to "1" in every grading kernel, sandboxed or not: a notebook may skip what grading does
#: not need (real_processes' timing sweep); it says nothing secret
GRADING_ENV = "COLLECTIVES_GRADING"


@dataclasses.dataclass(frozen=True)
class Limits:
    """Per-kernel limits. ``cpu_seconds`` and ``memory_bytes`` (address space) apply to each
    process of the sandbox; ``processes`` and ``total_memory_bytes`` to all of them together;
    ``disk_bytes`` to each of its two writable tmpfs (working directory, ``/tmp``)."""

    cpu_seconds: int = 900
    memory_bytes: int = 4 * 2**30
    processes: int = 128
    file_bytes: int = 256 * 2**20
    output_bytes: int = 2 * 2**20
    disk_bytes: int = 512 * 2**20
    total_memory_bytes: int = 4 * 2**30


LIMITS = Limits()


def enabled():
    """False when the instructor opted out (``COLLECTIVES_GRADING_SANDBOX=off``)."""
    return os.environ.get(OPT_OUT, "on").strip().lower() not in ("off", "0", "no", "false")


#: kernels of a root grader run as uids UID_BASE, UID_BASE + 1, ... (one per running kernel)
UID_BASE = int(os.environ.get("COLLECTIVES_SANDBOX_UID_BASE", "3000000"))
_UID_LOCKS = Path(tempfile.gettempdir()) / "collectives-sandbox-uids"


class _KernelUser:
    """The unprivileged user one kernel runs as, and how bwrap gets there.

    A grader that is not root runs bwrap as itself: bwrap makes a user namespace (so the
    kernel's process count is its own) and the kernel keeps the grader's uid, with no
    capabilities. Root runs bwrap without a user namespace (so that it can read an interpreter
    under /root) and the kernel drops to a uid of its own, UID_BASE + i, held with a lock file
    while it runs: its process count and files are then its own too.
    """

    def __init__(self):
        self.lock = None
        if os.geteuid() != 0:
            self.uid, self.gid = os.getuid(), os.getgid()
            return
        _UID_LOCKS.mkdir(mode=0o700, exist_ok=True)
        for i in range(4096):
            fd = os.open(_UID_LOCKS / f"{UID_BASE + i}.lock", os.O_CREAT | os.O_RDWR, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)
                continue
            self.lock, self.uid, self.gid = fd, UID_BASE + i, UID_BASE + i
            return
        raise SandboxError("no free sandbox uid: 4096 kernels running?")

    @property
    def as_root(self):
        return self.lock is not None

    def namespace_args(self):
        if self.as_root:
            return [
                "--unshare-ipc",
                "--unshare-pid",
                "--unshare-net",
                "--unshare-uts",
                "--unshare-cgroup-try",
            ]
        return ["--unshare-all", "--unshare-user", "--disable-userns", "--cap-drop", "ALL"]

    def command_prefix(self):
        if not self.as_root:
            return []
        return [
            "setpriv",
            f"--reuid={self.uid}",
            f"--regid={self.gid}",
            "--clear-groups",
            "--inh-caps=-all",
            "--bounding-set=-all",
            "--no-new-privs",
            "--",
        ]

    def release(self):
        if self.lock is not None:
            os.close(self.lock)
            self.lock = None


def _bwrap():
    """The bwrap executable (``COLLECTIVES_BWRAP``, default ``bwrap`` on PATH)."""
    return os.environ.get("COLLECTIVES_BWRAP", "bwrap")


_AVAILABLE: dict[str, object] = {}


def check_available():
    """Raise :class:`SandboxError` saying why bwrap cannot run a sandboxed command here."""
    if "result" not in _AVAILABLE:
        _AVAILABLE["result"] = _probe()
    if _AVAILABLE["result"]:
        raise SandboxError(_AVAILABLE["result"])


def _probe():
    """'' when a sandbox as the kernel's would start, else the reason."""
    bwrap = shutil.which(_bwrap())
    if bwrap is None:
        return (
            f"bubblewrap ({_bwrap()}) is not installed: run `make sandbox` (Debian "
            f"package bubblewrap)"
        )
    user = _KernelUser()
    try:
        with tempfile.TemporaryDirectory(prefix="collectives-probe-") as tmp:
            command = bwrap_command(["/bin/true"], tmp, tmp, tmp, user)
            try:
                proc = subprocess.run(
                    command, capture_output=True, text=True, timeout=30, preexec_fn=_preexec(LIMITS)
                )
            except (OSError, subprocess.SubprocessError) as exc:
                return f"bwrap could not be started: {exc}"
    finally:
        user.release()
    if proc.returncode != 0:
        return (
            f"bwrap cannot create a sandbox here (exit status {proc.returncode}: "
            f"{proc.stderr.strip()}); user namespaces may be disabled"
        )
    return ""


def refuse_message(reason):
    """Why grading refuses to start without the sandbox, and how to opt out."""
    return (
        f"the grading sandbox cannot run: {reason}. Student code would run with the "
        f"grader's rights (it could read the solutions and rewrite the gradebook), so "
        f"grading refuses to start. Fix the sandbox, or opt out explicitly with "
        f"{OPT_OUT}=off (only for trusted notebooks)."
    )


# ---- the package, copied and hash-checked ----------------------------------------------------


class PackageSnapshot(package_snapshot.PackageSnapshot):
    """The read-only copy of the installed ``collectives`` package that every kernel of a
    grading run imports; :meth:`verify` raises :class:`SandboxError` when it changed."""

    error = SandboxError


_SNAPSHOT: dict[str, PackageSnapshot] = {}


def snapshot():
    """This process's package copy (made on first use)."""
    if "value" not in _SNAPSHOT:
        _SNAPSHOT["value"] = PackageSnapshot()
        atexit.register(_SNAPSHOT["value"].remove)
    return _SNAPSHOT["value"]


# ---- the bwrap command --------------------------------------------------------------------------


def _system_binds():
    """bwrap arguments for the read-only system: /usr, /etc, the merged-/usr links."""
    args = ["--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc"]
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        path = Path("/") / name
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            args += ["--ro-bind", str(path), str(path)]
    return args


def _python_dirs():
    """The interpreter's installation and the virtual environment, resolved."""
    dirs = {
        Path(sys.base_prefix).resolve(),
        Path(sys.prefix).resolve(),
        Path(sys.executable).resolve().parent.parent,
    }
    # the venv's python may be a symlink into the base installation (pyenv)
    return sorted(d for d in dirs if not str(d).startswith("/usr"))


#: at most this many files and folders at the top of a working directory (each is one mount)
MAX_WORKDIR_ENTRIES = 1000


def _workdir_entries(workdir):
    """bwrap arguments showing the files and folders of ``workdir`` read-only in its tmpfs.
    Symbolic links are made again inside (never followed on the grader's side, where one
    could point at the gradebook)."""
    entries = sorted(Path(workdir).iterdir())
    if len(entries) > MAX_WORKDIR_ENTRIES:
        raise SandboxError(
            f"the working directory holds {len(entries)} files and folders "
            f"(at most {MAX_WORKDIR_ENTRIES} can be shown in the sandbox)"
        )
    args = []
    for entry in entries:
        if entry.is_symlink():
            args += ["--symlink", os.readlink(entry), str(entry)]
        else:
            args += ["--ro-bind", str(entry), str(entry)]
    return args


def bwrap_command(kernel_cmd, workdir, private_dir, package_root, user, limits=None):
    """The bwrap command line that runs ``kernel_cmd`` as ``user`` (a :class:`_KernelUser`) in
    the sandbox described above, with the disk limit of ``limits`` (default :data:`LIMITS`).
    Without a working directory of its own (``workdir`` == ``private_dir``) the kernel starts
    in ``/tmp``."""
    size = str((limits or LIMITS).disk_bytes)
    args = [
        _bwrap(),
        *user.namespace_args(),
        "--die-with-parent",
        "--new-session",
        *_system_binds(),
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--perms",
        "1777",
        "--size",
        size,
        "--tmpfs",
        "/tmp",
    ]
    made = {"/", "/usr", "/etc", "/dev", "/proc", "/tmp"}

    def mount(target, *how):
        # bwrap makes missing parents 0700 (root's, when root runs it): make them 0755 first
        for parent in reversed(Path(target).parents):
            if str(parent) not in made:
                args.extend(["--perms", "0755", "--dir", str(parent)])
                made.add(str(parent))
        args.extend([*how, str(target)])
        made.add(str(target))

    for d in _python_dirs():
        mount(d, "--ro-bind", str(d))
    mount(PACKAGE_MOUNT, "--ro-bind", str(package_root))
    mount(private_dir, "--bind", str(private_dir))
    if Path(workdir) != Path(private_dir):
        mount(workdir, "--perms", "0777", "--size", size, "--tmpfs")
        args.extend(_workdir_entries(workdir))
    else:
        workdir = "/tmp"
    args += ["--chdir", str(workdir), "--clearenv"]
    env = {
        "PATH": f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin",
        "HOME": "/tmp",
        "LANG": "C.UTF-8",
        "PYTHONPATH": PACKAGE_MOUNT,
        "IPYTHONDIR": "/tmp/.ipython",
        "MPLCONFIGDIR": "/tmp/.matplotlib",
        "JUPYTER_RUNTIME_DIR": "/tmp/.jupyter",
        "JUPYTER_CONFIG_DIR": "/tmp/.jupyter",
        "JUPYTER_DATA_DIR": "/tmp/.jupyter",
        "PYTHONDONTWRITEBYTECODE": "1",
        "OMP_NUM_THREADS": "1",
        "MPLBACKEND": "agg",
        GRADING_ENV: "1",
    }
    for key, value in env.items():
        args += ["--setenv", key, value]
    return args + ["--", *user.command_prefix(), *kernel_cmd]


# ---- the memory cgroup of a kernel ------------------------------------------------------------

#: a cgroup folder (v1 memory controller, or v2 with memory in its subtree_control) under which
#: each kernel's memory cgroup is made, for graders who are not root
CGROUP_ENV = "COLLECTIVES_SANDBOX_CGROUP"


def _own_memory_cgroup():
    """This process's cgroup v1 memory folder, or None."""
    try:
        mounts = Path("/proc/self/mounts").read_text().splitlines()
        groups = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    points = [
        line.split()[1]
        for line in mounts
        if line.split()[2] == "cgroup" and "memory" in line.split()[3].split(",")
    ]
    paths = [
        line.split(":", 2)[2] for line in groups if "memory" in line.split(":", 2)[1].split(",")
    ]
    if not points or not paths:
        return None
    folder = Path(points[0]) / paths[0].lstrip("/")
    return folder if folder.is_dir() else None


class MemoryGroup:
    """A memory cgroup holding every process of one kernel, limited to ``limit_bytes`` (files
    written to its tmpfs count too); :attr:`path` is None where none can be made, and
    :attr:`reason` says why."""

    def __init__(self, limit_bytes):
        self.path, self.reason = None, ""
        named = os.environ.get(CGROUP_ENV)
        parent = Path(named) if named else _own_memory_cgroup()
        if parent is None:
            self.reason = (
                f"no cgroup v1 memory controller (name a delegated cgroup in {CGROUP_ENV})"
            )
            return
        self.v2 = (parent / "cgroup.controllers").exists()
        path = parent / f"collectives-kernel-{os.getpid()}-{os.urandom(4).hex()}"
        try:
            path.mkdir()
        except OSError as exc:
            self.reason = f"cannot make a cgroup in {parent}: {exc.strerror}"
            return
        self.path = path
        try:
            if self.v2:
                self._write("memory.max", limit_bytes)
                self._write("memory.swap.max", 0, optional=True)
            else:
                self._write("memory.limit_in_bytes", limit_bytes)
                self._write("memory.memsw.limit_in_bytes", limit_bytes, optional=True)
        except OSError as exc:
            self.reason = f"cannot set the memory limit in {path}: {exc.strerror}"
            self.remove()

    def _write(self, name, value, optional=False):
        if optional and not (self.path / name).exists():
            return
        (self.path / name).write_text(str(value))

    def join(self):
        """Move this process into the group (run in the kernel's child before exec)."""
        if self.path is not None:
            (self.path / "cgroup.procs").write_text(str(os.getpid()))

    def remove(self):
        """Kill what is left in the group and remove it."""
        path, self.path = self.path, None
        if path is None:
            return
        for _ in range(50):
            try:
                path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                try:
                    pids = (path / "cgroup.procs").read_text().split()
                except OSError:
                    pids = []
                for pid in pids:
                    try:
                        os.kill(int(pid), 9)
                    except (ProcessLookupError, PermissionError):
                        pass
                time.sleep(0.02)


def _preexec(limits, group=None):
    """A function run in the child before exec: the memory cgroup ``group`` (a
    :class:`MemoryGroup`, optional) and the limits (the processes limit binds once the kernel
    has its unprivileged uid)."""

    def apply():
        if group is not None:
            group.join()
        for limit, value in (
            (resource.RLIMIT_CPU, limits.cpu_seconds),
            (resource.RLIMIT_AS, limits.memory_bytes),
            (resource.RLIMIT_NPROC, limits.processes),
            (resource.RLIMIT_FSIZE, limits.file_bytes),
            (resource.RLIMIT_CORE, 0),
        ):
            resource.setrlimit(limit, (value, value))

    return apply


def _chown_tree(path, uid, gid):
    for root, dirs, files in os.walk(path):
        for name in [root, *(os.path.join(root, f) for f in dirs + files)]:
            try:
                os.lchown(name, uid, gid)
            except FileNotFoundError:
                pass


# ---- the provisioner and the client -----------------------------------------------------------


class SandboxProvisioner(LocalProvisioner):
    """Starts the kernel of :data:`KERNEL_NAME` inside bwrap (see the module docstring)."""

    private_dir = None
    workdir = None
    owner = None

    def _finalize_env(self, env):
        """The kernel's environment where the sandbox is off (the grader's own, as plain
        nbgrader gives it) without the course seed, and marked as grading."""
        super()._finalize_env(env)
        env.pop(COURSE_SEED_ENV, None)
        env[GRADING_ENV] = "1"

    async def pre_launch(self, **kwargs):
        km = self.parent
        if not enabled():
            return await super().pre_launch(**kwargs)
        try:
            check_available()
            snap = snapshot()
            snap.verify()
        except SandboxError as exc:
            raise SandboxError(refuse_message(exc)) from None
        if getattr(self, "memory", None) is not None:  # a restart: the old kernel's group
            self.memory.remove()
        self.user = _KernelUser()
        self.private_dir = Path(tempfile.mkdtemp(prefix="collectives-kernel-"))
        km.transport = "ipc"
        km.cache_ports = False
        km.ip = str(self.private_dir / "ipc")
        km.connection_file = str(self.private_dir / "connection.json")
        km.client_class = "collectives_grader.sandbox.LimitedKernelClient"
        kwargs = await super().pre_launch(**kwargs)
        workdir = Path(kwargs.get("cwd") or self.private_dir).resolve()
        self.workdir, self.owner = workdir, (os.stat(workdir).st_uid, os.stat(workdir).st_gid)
        if self.user.as_root:
            _chown_tree(self.private_dir, self.user.uid, self.user.gid)
            _chown_tree(workdir, self.user.uid, self.user.gid)
        kwargs["cmd"] = bwrap_command(
            kwargs["cmd"], workdir, self.private_dir, snap.root, self.user
        )
        kwargs["env"] = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
        self.memory = MemoryGroup(LIMITS.total_memory_bytes)
        self._preexec = _preexec(LIMITS, self.memory)
        return kwargs

    async def launch_kernel(self, cmd, **kwargs):
        if self.private_dir is not None:
            kwargs["preexec_fn"] = self._preexec
        return await super().launch_kernel(cmd, **kwargs)

    async def cleanup(self, restart=False):
        await super().cleanup(restart=restart)
        if self.private_dir is not None and not restart:
            if self.user.as_root and self.workdir is not None and self.workdir.exists():
                _chown_tree(self.workdir, *self.owner)
            shutil.rmtree(self.private_dir, ignore_errors=True)
            self.private_dir = None
            self.user.release()
        if getattr(self, "memory", None) is not None and not restart:
            self.memory.remove()

    def seal(self):
        """Once the kernel listens on its sockets: a root grader takes the private directory
        back, so that the kernel cannot write files there (on the grader's disk)."""
        if self.private_dir is not None and self.user.as_root:
            os.chown(self.private_dir, os.getuid(), os.getgid())
            os.chmod(self.private_dir, 0o755)


_OUTPUT_TYPES = {"stream", "display_data", "execute_result", "error", "update_display_data"}


class LimitedIOPubChannel(AsyncZMQSocketChannel):
    """The IOPub channel, keeping at most ``LIMITS.output_bytes`` of output per kernel.

    Output past the limit is turned into an ``execute_input`` message, which nbclient ignores;
    the first one dropped becomes a note saying so. Errors are always kept (they say why a
    cell failed).
    """

    used = 0
    noted = False

    async def _recv(self, **kwargs):
        msg = await super()._recv(**kwargs)
        if msg["header"]["msg_type"] not in _OUTPUT_TYPES or msg["header"]["msg_type"] == "error":
            return msg
        self.used += len(json.dumps(msg["content"], default=str))
        if self.used <= LIMITS.output_bytes:
            return msg
        if not self.noted:
            self.noted = True
            msg["header"]["msg_type"] = msg["msg_type"] = "stream"
            msg["content"] = {
                "name": "stderr",
                "text": (
                    "\n[grading: this notebook printed more than "
                    f"{LIMITS.output_bytes // 2**20} MB; the rest of its output is dropped]\n"
                ),
            }
            return msg
        msg["header"]["msg_type"] = msg["msg_type"] = "execute_input"
        msg["content"] = {"code": "", "execution_count": None}
        return msg


class LimitedKernelClient(AsyncKernelClient):
    """nbgrader's kernel client with :class:`LimitedIOPubChannel`; once the kernel is ready,
    its provisioner seals the socket directory (:meth:`SandboxProvisioner.seal`)."""

    iopub_channel_class = LimitedIOPubChannel

    async def _async_wait_for_ready(self, timeout=None):
        await super()._async_wait_for_ready(timeout=timeout)
        provisioner = getattr(self.parent, "provisioner", None)
        if isinstance(provisioner, SandboxProvisioner):
            provisioner.seal()

    wait_for_ready = _async_wait_for_ready


# ---- the kernel spec and the command line -----------------------------------------------------


def install_kernel_spec(prefix=sys.prefix):
    """Write the kernel spec :data:`KERNEL_NAME` under ``prefix``/share/jupyter/kernels."""
    folder = Path(prefix) / "share" / "jupyter" / "kernels" / KERNEL_NAME
    folder.mkdir(parents=True, exist_ok=True)
    spec = {
        "argv": [
            sys.executable,
            "-Xfrozen_modules=off",
            "-m",
            "ipykernel_launcher",
            "-f",
            "{connection_file}",
        ],
        "display_name": "Python 3 (grading sandbox)",
        "language": "python",
        "interrupt_mode": "message",
        "metadata": {"kernel_provisioner": {"provisioner_name": KERNEL_NAME}},
    }
    (folder / "kernel.json").write_text(json.dumps(spec, indent=1) + "\n")
    return folder


def main(argv=None):
    """``python -m collectives_grader.sandbox install|check``."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["install"]:
        print(f"installed the kernel spec {KERNEL_NAME} in {install_kernel_spec()}")
        return 0
    if argv[:1] == ["check"]:
        try:
            check_available()
        except SandboxError as exc:
            print(refuse_message(exc), file=sys.stderr)
            return 1
        group = MemoryGroup(LIMITS.total_memory_bytes)
        print(
            "the grading sandbox works here; all processes of a kernel together: "
            + (
                f"at most {LIMITS.total_memory_bytes // 2**20} MiB (memory cgroup)"
                if group.path is not None
                else f"no total-memory limit ({group.reason})"
            )
        )
        group.remove()
        return 0
    print("usage: python -m collectives_grader.sandbox install|check", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
