"""Start one local worker process per rank, run tasks in them, and always clean up.

:func:`run_tasks` writes each rank's share of the tasks to a temporary directory and starts
``n`` processes (:func:`worker_main`) that meet at a TCP store on the loopback interface and
form one ``torch.distributed`` process group (gloo on CPU, or NCCL with one GPU per rank).
Each worker runs the tasks in order (a Schedule's per-rank program with an
:class:`~collectives.dist.torch_ops.Exchange`, or torch's own collective) and writes back its
results. :func:`run_tasks` waits for them within a timeout; a worker that fails writes its
exception to a file, and the root cause among the failures is raised as :class:`DistError`
naming the rank. Workers are always killed and reaped and the directory removed. torch is
imported only inside functions, so importing this module does not import it.
"""

import os
import pickle
import shutil
import subprocess
import sys
import tempfile
import time as _time
import traceback
from pathlib import Path

from ..errors import CollectivesError, ScheduleError
from .errors import DistError
from .programs import run_rank
from .torch_ops import P2P_OP, Exchange, run_collective

__all__ = ["BACKENDS", "MAX_LOCAL_RANKS", "DEFAULT_TIMEOUT", "check_backend", "check_launch",
           "timeout_seconds", "run_tasks", "worker_main"]

#: backends :func:`~collectives.dist.run` accepts
BACKENDS = ("gloo", "nccl")

#: the most worker processes :func:`~collectives.dist.run` starts on one machine (use
#: ``simulate`` beyond)
MAX_LOCAL_RANKS = 64

#: seconds allowed for one launch (process start, process-group setup, every task)
DEFAULT_TIMEOUT = 60.0

_LOOPBACK = "127.0.0.1"
_PACKAGE_PARENT = str(Path(__file__).resolve().parents[2])
_GRACE = 1.0          # seconds to let other ranks report after the first failure


def check_backend(backend):
    """A clear error unless ``backend`` is one of :data:`BACKENDS`."""
    if not isinstance(backend, str) or backend not in BACKENDS:
        raise CollectivesError(
            f"unknown backend {backend!r}; expected 'gloo' (CPU, any machine) or 'nccl' "
            "(one NVIDIA GPU per rank)")


def check_launch(backend, n_ranks):
    """Everything that can be said before starting processes: torch, backend, rank count."""
    if n_ranks > MAX_LOCAL_RANKS:
        raise CollectivesError(
            f"run starts one process per rank; {n_ranks} ranks is more than "
            f"MAX_LOCAL_RANKS={MAX_LOCAL_RANKS} on one machine; use collectives.simulate "
            "(vectorised) or run_local for large n")
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
            f"this torch build ({torch.__version__}) has no torch.distributed support")
    if backend == "gloo" and not tdist.is_gloo_available():
        raise CollectivesError(
            f"this torch build ({torch.__version__}) has no gloo backend; try backend='nccl' "
            "on a GPU machine")
    if backend == "nccl":
        gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if not tdist.is_nccl_available() or gpus == 0:
            nccl = "built in" if tdist.is_nccl_available() else "not built in"
            raise CollectivesError(
                f"backend 'nccl' needs NVIDIA GPUs and a torch build with NCCL; this machine "
                f"has {gpus} CUDA device(s) and torch {torch.__version__} (NCCL {nccl}); use "
                "backend='gloo' to run on CPU")
        if gpus < n_ranks:
            raise CollectivesError(
                f"backend 'nccl' needs one GPU per rank: {n_ranks} ranks but {gpus} GPU(s); "
                "use fewer ranks or backend='gloo'")


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


def _dump(path, obj):
    tmp = f"{path}.tmp"
    with open(tmp, "wb") as f:
        pickle.dump(obj, f, protocol=pickle.HIGHEST_PROTOCOL)
    os.replace(tmp, path)


def run_tasks(n, tasks, backend, timeout, labels=None):
    """Start ``n`` workers, run ``tasks`` in order in one process group, return per task
    ``(rows, op)`` where ``rows[r]`` is rank r's result. Always kills and reaps the workers.

    A task is a dict with ``"what"`` (named in errors) and either ``kind="schedule"``,
    ``"schedule"`` and per-rank ``"buffer"`` and ``"filled"``, or ``kind="torch"``,
    ``"collective"``, ``"root"`` and per-rank ``"rows"``. ``labels`` name the tasks in a
    :class:`DistError` (default: their positions)."""
    from datetime import timedelta

    import torch.distributed as tdist

    labels = list(range(len(tasks))) if labels is None else list(labels)
    workdir = Path(tempfile.mkdtemp(prefix="collectives-dist-"))
    procs, logs, store = [], [], None
    try:
        # the rendezvous store listens here on a port the OS picks (port 0): no race
        store = tdist.TCPStore(_LOOPBACK, 0, None, True, timedelta(seconds=timeout),
                               wait_for_workers=False)
        for r in range(n):
            mine = []
            for t in tasks:
                if t["kind"] == "schedule":
                    mine.append({"kind": "schedule", "schedule": t["schedule"],
                                 "buffer": t["buffer"][r], "filled": t["filled"][r]})
                else:
                    mine.append({"kind": "torch", "collective": t["collective"],
                                 "root": t["root"], "row": t["rows"][r],
                                 "op": t.get("op", "sum"), "groups": t.get("groups")})
            _dump(workdir / f"job{r}.pkl", {"tasks": mine, "backend": backend, "n": n,
                                            "port": store.port, "timeout": timeout})
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            [_PACKAGE_PARENT] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
        env.update(MASTER_ADDR=_LOOPBACK, MASTER_PORT=str(store.port), WORLD_SIZE=str(n),
                   OMP_NUM_THREADS="1")
        lo = _loopback_interface()
        if lo and "GLOO_SOCKET_IFNAME" not in os.environ:
            env["GLOO_SOCKET_IFNAME"] = lo
        code = ("import sys; from collectives.dist.launch import worker_main; "
                "worker_main(sys.argv[1], int(sys.argv[2]))")
        # cwd=workdir: a `collectives` folder in the caller's directory cannot shadow ours
        for r in range(n):
            log = open(workdir / f"stderr{r}.txt", "wb")
            logs.append(log)
            procs.append(subprocess.Popen(
                [sys.executable, "-c", code, str(workdir), str(r)],
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                env=dict(env, RANK=str(r)), cwd=workdir))
        _wait(procs, workdir, _time.monotonic() + timeout, timeout, backend, tasks, labels)
        per_rank = []
        for r in range(n):
            with open(workdir / f"out{r}.pkl", "rb") as f:
                per_rank.append(pickle.load(f))
        return [([per_rank[r][i][0] for r in range(n)], per_rank[0][i][1])
                for i in range(len(tasks))]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
        for p in procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:   # pragma: no cover (SIGKILL not delivered)
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


def _wait(procs, workdir, deadline, timeout, backend, tasks, labels):
    n = len(procs)
    pending, failed = set(range(n)), []
    while pending and not failed:
        _reap(procs, pending, failed)
        if pending and not failed:
            if _time.monotonic() > deadline:
                raise DistError(
                    f"timed out after {timeout:g} s running {n} ranks over {backend}: "
                    f"rank(s) {', '.join(map(str, sorted(pending)))} had not finished "
                    "(starting the processes takes seconds; pass a larger timeout= for big "
                    "runs)", unfinished=sorted(pending))
            _time.sleep(0.02)
    if not failed:
        return
    grace = _time.monotonic() + _GRACE       # let the others report what they saw
    while pending and _time.monotonic() < grace:
        _reap(procs, pending, failed)
        _time.sleep(0.02)
    raise _failure(procs, workdir, failed, backend, tasks, labels)


def _failure(procs, workdir, failed, backend, tasks, labels):
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
            records[r] = {"type": "ProcessDied", "primary": False, "key": None, "task": None,
                          "message": f"exited with code {procs[r].returncode}"
                                     + (f"; its last output:\n{tail.strip()}" if tail.strip()
                                        else ""),
                          "traceback": tail}
    # the root cause: a schedule/input error a worker found, else the first rank to fail
    order = {r: i for i, r in enumerate(failed)}
    rank = min(failed, key=lambda r: (not records[r]["primary"],
                                      records[r]["key"] is None, records[r]["key"] or (0, 0),
                                      order[r]))
    rec = records[rank]
    where = ""
    if rec["task"] is not None:
        where = f" in job {labels[rec['task']]} ({tasks[rec['task']]['what']})"
    others = [r for r in failed if r != rank]
    also = f" (rank(s) {', '.join(map(str, others))} failed too)" if others else ""
    return DistError(
        f"rank {rank} of {len(procs)} failed over {backend}{where}: {rec['type']}: "
        f"{rec['message']}{also}",
        rank=rank, exception=rec["type"], worker_message=rec["message"],
        worker_traceback=rec["traceback"],
        task=None if rec["task"] is None else labels[rec["task"]],
        failures={r: f"{records[r]['type']}: {records[r]['message']}" for r in failed})


def worker_main(workdir, rank):
    """Entry point of a worker process (started by :func:`run_tasks`); never returns."""
    workdir = Path(workdir)
    task_index = None
    try:
        with open(workdir / f"job{rank}.pkl", "rb") as f:
            job = pickle.load(f)
        from datetime import timedelta

        import torch
        import torch.distributed as tdist

        torch.set_num_threads(1)
        backend, n = job["backend"], job["n"]
        timeout = timedelta(seconds=job["timeout"])
        device = torch.device("cpu")
        if backend == "nccl":
            torch.cuda.set_device(rank)
            device = torch.device("cuda", rank)
        store = tdist.TCPStore(_LOOPBACK, job["port"], n, False, timeout)
        tdist.init_process_group(backend, store=store, rank=rank, world_size=n,
                                 timeout=timeout)
        barrier = {"device_ids": [rank]} if backend == "nccl" else {}
        tdist.barrier(**barrier)
        exchange = Exchange(torch, tdist, device)
        results = []
        for task_index, task in enumerate(job["tasks"]):
            if task["kind"] == "schedule":
                results.append((run_rank(task["schedule"], rank, task["buffer"], task["filled"],
                                         exchange), P2P_OP))
            else:
                results.append(run_collective(task, n, torch, tdist, device, backend, rank))
        task_index = None
        tdist.barrier(**barrier)         # nobody leaves while a peer still needs it
        _dump(workdir / f"out{rank}.pkl", results)
        tdist.destroy_process_group()
        code = 0
    except BaseException as e:          # report everything, including KeyboardInterrupt
        key = None
        if isinstance(e, ScheduleError) and e.step is not None:
            key = (e.step, getattr(e, "transfer_index", 0))
        try:
            _dump(workdir / f"error{rank}.pkl", {
                "type": type(e).__name__, "message": str(e), "task": task_index,
                "primary": isinstance(e, CollectivesError), "key": key,
                "traceback": traceback.format_exc()})
        finally:
            code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)                       # skip interpreter teardown (and gloo's destructors)
