"""Start one local worker process per rank, run tasks in them, and always clean up.

:func:`run_tasks` writes each rank's share of the tasks to a temporary directory and starts
``n`` processes (:func:`collectives.dist.worker.worker_main`) that meet at a TCP store on the
loopback interface and form one ``torch.distributed`` process group (gloo on CPU, or NCCL with
one GPU per rank). Each worker runs the tasks in order (:mod:`collectives.dist.worker`) and
writes back its results. :func:`run_tasks` waits for them within a timeout; a worker that fails
writes its exception to a file, and the root cause among the failures is raised as
:class:`DistError` naming the rank, and the job and step it had reached (each worker writes
them on a shared :class:`~collectives.dist.board.Board`); a rank that hangs ends the run at the
timeout, with the step of every rank still running. Workers are always killed and reaped and
the directory removed. A task may carry a ``"fault"`` (``{"rank", "step", "kind"}``, kind ``"die"``,
``"hang"`` or ``"mismatch"``: a message one row too long) so that tests, and a chapter, can
show what each failure looks like. torch is imported only inside functions, so importing
this module does not import it.
"""

import os
import pickle
import shutil
import subprocess
import sys
import tempfile
import time as _time
from pathlib import Path

from ..errors import CollectivesError, DistError
from .board import STARTING, Board

__all__ = [
    "BACKENDS",
    "MAX_LOCAL_RANKS",
    "DEFAULT_TIMEOUT",
    "FAULTS",
    "LOOPBACK",
    "check_backend",
    "check_launch",
    "resolve_backend",
    "timeout_seconds",
    "run_tasks",
    "write_pickle",
    "job_text",
    "hang_message",
    "failure_message",
    "exit_reason",
]

#: backends :func:`~collectives.dist.run` accepts ("auto": nccl when CUDA is available)
BACKENDS = ("gloo", "nccl", "auto")

#: the failures a task's ``"fault"`` can inject into one rank at one step
FAULTS = ("die", "hang", "mismatch")

#: the most worker processes :func:`~collectives.dist.run` starts on one machine (use
#: ``simulate`` beyond)
MAX_LOCAL_RANKS = 64

#: seconds allowed for one launch (process start, process-group setup, every task)
DEFAULT_TIMEOUT = 60.0

#: the address the workers and their rendezvous store listen on
LOOPBACK = "127.0.0.1"
_PACKAGE_PARENT = str(Path(__file__).resolve().parents[2])
_GRACE = 1.0  # seconds to let other ranks report after the first failure


def check_backend(backend):
    """A clear error unless ``backend`` is one of :data:`BACKENDS`."""
    if not isinstance(backend, str) or backend not in BACKENDS:
        raise CollectivesError(
            f"unknown backend {backend!r}; expected 'gloo' (CPU, any machine) or 'nccl' "
            "(one NVIDIA GPU per rank), or 'auto' (nccl when CUDA is available, else gloo)"
        )


def resolve_backend(backend, n_ranks=1):
    """``backend``, with ``"auto"`` made ``"nccl"`` when torch sees at least ``n_ranks`` CUDA
    devices and has NCCL, else ``"gloo"``."""
    check_backend(backend)
    if backend != "auto":
        return backend
    try:
        import torch
        import torch.distributed as tdist
    except ImportError:
        return "gloo"  # check_launch then says that torch is missing
    cuda = torch.cuda.is_available() and torch.cuda.device_count() >= n_ranks
    return "nccl" if cuda and tdist.is_available() and tdist.is_nccl_available() else "gloo"


def check_launch(backend, n_ranks):
    """Everything that can be said before starting processes: torch, backend, rank count."""
    if n_ranks > MAX_LOCAL_RANKS:
        raise CollectivesError(
            f"run starts one process per rank; {n_ranks} ranks is more than "
            f"MAX_LOCAL_RANKS={MAX_LOCAL_RANKS} on one machine; use collectives.simulate "
            "(vectorised) or run_local for large n"
        )
    try:
        import torch
        import torch.distributed as tdist
    except ImportError:
        raise CollectivesError(
            "collectives.dist runs schedules over torch.distributed, but PyTorch is not "
            "installed; install it (the course's `make` does) or use collectives.simulate"
        ) from None
    if not tdist.is_available():
        raise CollectivesError(
            f"this torch build ({torch.__version__}) has no torch.distributed support"
        )
    if backend == "gloo" and not tdist.is_gloo_available():
        raise CollectivesError(
            f"this torch build ({torch.__version__}) has no gloo backend; try backend='nccl' "
            "on a GPU machine"
        )
    if backend == "nccl":
        gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if not tdist.is_nccl_available() or gpus == 0:
            nccl = "built in" if tdist.is_nccl_available() else "not built in"
            raise CollectivesError(
                f"backend 'nccl' needs NVIDIA GPUs and a torch build with NCCL; this machine "
                f"has {gpus} CUDA device(s) and torch {torch.__version__} (NCCL {nccl}); use "
                "backend='gloo' to run on CPU"
            )
        if gpus < n_ranks:
            raise CollectivesError(
                f"backend 'nccl' needs one GPU per rank: {n_ranks} ranks but {gpus} GPU(s); "
                "use fewer ranks or backend='gloo'"
            )


def timeout_seconds(timeout):
    """``timeout`` as a positive float of seconds, or a clear error."""
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
        raise CollectivesError(f"timeout must be a positive number of seconds, got {timeout!r}")
    return float(timeout)


def _loopback_interface():
    import socket

    try:
        names = [name for _, name in socket.if_nameindex()]
    except (OSError, AttributeError):
        return None
    return next((name for name in names if name.startswith("lo")), None)


def write_pickle(path, obj):
    """Pickle ``obj`` to ``path`` atomically (a reader never sees half a file): how the
    launcher hands each worker its tasks and a worker hands back its results or its error."""
    tmp = f"{path}.tmp"
    with open(tmp, "wb") as f:
        pickle.dump(obj, f, protocol=pickle.HIGHEST_PROTOCOL)
    os.replace(tmp, path)


def run_tasks(n, tasks, backend, timeout, labels=None, on_poll=None, stall=None):
    """Start ``n`` workers, run ``tasks`` in order in one process group, return per task
    ``(rows, op)`` where ``rows[r]`` is rank r's result. Always kills and reaps the workers.

    A task is a dict with ``"what"`` (named in errors) and either ``kind="schedule"``,
    ``"schedule"`` and per-rank ``"buffer"`` and ``"filled"`` (and optionally ``"n_segments"``,
    pieces per message, and a ``"fault"``), or ``kind="torch"``,
    ``"collective"``, ``"root"`` and per-rank ``"rows"``, or ``kind="timed"`` (a timing
    loop of :mod:`collectives.dist.sweep`) or ``kind="mesh"`` (torch's device mesh:
    ``"shape"``, ``"names"``), the same dict for every rank. ``labels`` name
    the tasks in a :class:`DistError` (default: their positions). ``on_poll(board)`` is
    called about every 20 ms while the workers run (a progress bar reads the
    :class:`~collectives.dist.board.Board`). ``stall`` (seconds, optional): once every rank
    has started, end the run when no rank has moved to another job or step for that long
    (a hang found without waiting for ``timeout``; only for runs whose steps are short)."""
    from datetime import timedelta

    import torch.distributed as tdist

    labels = list(range(len(tasks))) if labels is None else list(labels)
    workdir = Path(tempfile.mkdtemp(prefix="collectives-dist-"))
    procs, logs, store = [], [], None
    try:
        # the rendezvous store listens here on a port the OS picks (port 0): no race
        store = tdist.TCPStore(
            LOOPBACK, 0, None, True, timedelta(seconds=timeout), wait_for_workers=False
        )
        board = Board(workdir / "board.bin", n, create=True)
        for r in range(n):
            mine = []
            for t in tasks:
                if t["kind"] == "schedule":
                    mine.append(
                        {
                            "kind": "schedule",
                            "schedule": t["schedule"],
                            "buffer": t["buffer"][r],
                            "filled": t["filled"][r],
                            "fault": t.get("fault"),
                            "n_segments": t.get("n_segments", 1),
                        }
                    )
                elif t["kind"] in ("timed", "mesh"):
                    mine.append(t)
                else:
                    mine.append(
                        {
                            "kind": "torch",
                            "collective": t["collective"],
                            "root": t["root"],
                            "row": t["rows"][r],
                            "op": t.get("op", "sum"),
                            "groups": t.get("groups"),
                        }
                    )
            write_pickle(
                workdir / f"job{r}.pkl",
                {"tasks": mine, "backend": backend, "n": n, "port": store.port, "timeout": timeout},
            )
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            [_PACKAGE_PARENT] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])
        )
        env.update(
            MASTER_ADDR=LOOPBACK,
            MASTER_PORT=str(store.port),
            WORLD_SIZE=str(n),
            OMP_NUM_THREADS="1",
        )
        lo = _loopback_interface()
        if lo and "GLOO_SOCKET_IFNAME" not in os.environ:
            env["GLOO_SOCKET_IFNAME"] = lo
        code = (
            "import sys; from collectives.dist.worker import worker_main; "
            "worker_main(sys.argv[1], int(sys.argv[2]))"
        )
        # cwd=workdir: a `collectives` folder in the caller's directory cannot shadow ours
        for r in range(n):
            log = open(workdir / f"stderr{r}.txt", "wb")
            logs.append(log)
            procs.append(
                subprocess.Popen(
                    [sys.executable, "-c", code, str(workdir), str(r)],
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    env=dict(env, RANK=str(r)),
                    cwd=workdir,
                )
            )
        _wait(
            procs,
            workdir,
            _time.monotonic() + timeout,
            timeout,
            backend,
            tasks,
            labels,
            board,
            on_poll,
            stall,
        )
        per_rank = []
        for r in range(n):
            with open(workdir / f"out{r}.pkl", "rb") as f:
                per_rank.append(pickle.load(f))
        return [
            ([per_rank[r][i][0] for r in range(n)], per_rank[0][i][1]) for i in range(len(tasks))
        ]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
        for p in procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:  # pragma: no cover (SIGKILL not delivered)
                pass
        for log in logs:
            log.close()
        del store
        shutil.rmtree(workdir, ignore_errors=True)


def _reap(procs, pending, failed):
    """Move every finished rank out of ``pending``; those that failed into ``failed``."""
    for r in sorted(pending):
        rc = procs[r].poll()
        if rc is not None:
            pending.discard(r)
            if rc != 0:
                failed.append(r)


def job_text(label, what, step=-1, n_steps=None):
    """Where a rank was, in words: ``"in job 0 (schedule 'ring_all_reduce') at step 3 of
    6"`` (the step only for a Schedule's job, ``n_steps`` its steps, and ``step >= 0``)."""
    text = f"in job {label} ({what})"
    if step >= 0 and n_steps is not None:
        text += f" at step {step} of {n_steps}"
    return text


def _describer(tasks, labels):
    """``describe(job, step)``: a job and step in words, for errors."""

    def describe(job, step):
        task = tasks[job]
        schedule = task.get("schedule")
        return job_text(
            labels[job], task["what"], step, None if schedule is None else schedule.n_steps
        )

    return describe


def hang_message(n, backend, where, *, timeout=None, stall=None):
    """What a run that stopped moving says: ``where`` maps each rank that had not finished to
    where it was (:meth:`~collectives.dist.board.Board.where`); ``stall`` (seconds without
    progress) or else ``timeout`` (seconds of the whole launch) says what ended it."""
    pending = sorted(where)
    ranks = ", ".join(map(str, pending))
    at = "; ".join(f"rank {r} {where[r]}" for r in pending)
    cause = (
        "a rank that never returns from a step is waiting for a message no peer sends, or "
        "sending one no peer receives"
    )
    if stall is not None:
        return (
            f"no progress for {stall:g} s running {n} ranks over {backend}: rank(s) {ranks} "
            f"had not finished ({at}; {cause})"
        )
    return (
        f"timed out after {timeout:g} s running {n} ranks over {backend}: rank(s) {ranks} had "
        f"not finished ({at}; {cause}; starting the processes takes seconds: pass a larger "
        "timeout= for big runs)"
    )


def failure_message(rank, n, backend, where, exception, message, others=()):
    """What a run in which ``rank`` failed says: ``where`` (" in job ... at step ...", or
    ""), the worker's ``exception`` type and ``message``, and the ``others`` that failed
    too, in the order they were seen."""
    also = f" (rank(s) {', '.join(map(str, others))} failed too)" if others else ""
    return f"rank {rank} of {n} failed over {backend}{where}: {exception}: {message}{also}"


def _wait(
    procs, workdir, deadline, timeout, backend, tasks, labels, board, on_poll=None, stall=None
):
    n = len(procs)
    pending, failed = set(range(n)), []
    describe = _describer(tasks, labels)
    seen, moved = None, _time.monotonic()
    while pending and not failed:
        _reap(procs, pending, failed)
        if pending and not failed and stall is not None:
            now = board.rows.copy()
            if seen is None or not (now == seen).all():
                seen, moved = now, _time.monotonic()
            elif (now[:, 2] != STARTING).all() and _time.monotonic() - moved > stall:
                where = {r: board.where(r, describe) for r in pending}
                raise DistError(
                    hang_message(n, backend, where, stall=stall), unfinished=sorted(pending)
                )
        if pending and not failed:
            if _time.monotonic() > deadline:
                where = {r: board.where(r, describe) for r in pending}
                raise DistError(
                    hang_message(n, backend, where, timeout=timeout), unfinished=sorted(pending)
                )
            if on_poll is not None:
                on_poll(board)
            _time.sleep(0.02)
    if not failed:
        return
    grace = _time.monotonic() + _GRACE  # let the others report what they saw
    while pending and _time.monotonic() < grace:
        _reap(procs, pending, failed)
        _time.sleep(0.02)
    raise _failure(procs, workdir, failed, backend, tasks, labels, board)


def exit_reason(code):
    """How a worker that left no Python exception ended (its exit ``code``: negative for a
    signal), in words."""
    if code is not None and code < 0:
        import signal

        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"was killed by {name} (a crash inside torch or gloo, or a kill)"
    return f"exited with code {code} without a Python exception (os._exit, or a crash)"


#: what a rank's error says when it only lost a peer (gloo's TCP pair, the OS's errno text)
_PEER_LOST = ("Connection closed by peer", "Connection reset by peer", "Broken pipe")


def _lost_peer(message) -> bool:
    """Whether a worker's error only says that a peer went away."""
    return any(phrase in str(message) for phrase in _PEER_LOST)


def _failure(procs, workdir, failed, backend, tasks, labels, board):
    records = {}
    for r in failed:
        try:
            with open(workdir / f"error{r}.pkl", "rb") as f:
                records[r] = pickle.load(f)
        except (OSError, EOFError, pickle.UnpicklingError):
            try:
                tail = (workdir / f"stderr{r}.txt").read_bytes()[-2000:].decode(errors="replace")
            except OSError:
                tail = ""
            job = int(board.rows[r, 0])
            records[r] = {
                "type": "ProcessDied",
                "primary": False,
                "key": None,
                "task": job if 0 <= job < len(tasks) else None,
                "message": exit_reason(procs[r].returncode)
                + (f"; its last output:\n{tail.strip()}" if tail.strip() else ""),
                "traceback": tail,
            }
    # the root cause: a schedule/input error a worker found, else a rank whose failure is
    # not just a lost peer (gloo reports the peer's closed socket, however fast a dying
    # rank's exit is noticed), else the first rank to fail
    order = {r: i for i, r in enumerate(failed)}
    rank = min(
        failed,
        key=lambda r: (
            not records[r]["primary"],
            _lost_peer(records[r]["message"]),
            records[r]["key"] is None,
            records[r]["key"] or (0, 0),
            order[r],
        ),
    )
    rec = records[rank]
    where = ""
    if rec["task"] is not None:
        step = int(board.rows[rank, 1]) if int(board.rows[rank, 0]) == rec["task"] else -1
        where = " " + _describer(tasks, labels)(rec["task"], step)
    others = [r for r in failed if r != rank]
    return DistError(
        failure_message(rank, len(procs), backend, where, rec["type"], rec["message"], others),
        rank=rank,
        exception=rec["type"],
        worker_message=rec["message"],
        worker_traceback=rec["traceback"],
        task=None if rec["task"] is None else labels[rec["task"]],
        failures={r: f"{records[r]['type']}: {records[r]['message']}" for r in failed},
    )
