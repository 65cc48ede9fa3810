"""Run a Schedule for real: one local process per rank, messages over ``torch.distributed``.

:func:`run` starts ``n_ranks`` worker processes on this machine, joins them into a
``torch.distributed`` process group (gloo on CPU, over loopback), and has each one execute
*its own part* of the schedule, step by step, the way a real collective library does:

* each worker holds only its rank's working buffer, laid out as in
  :mod:`collectives.semantics` (``n_chunks`` data slots, then ``n_scratch`` scratch slots);
* in every step it first reads all the chunks it sends (a snapshot: read-before-write), then
  posts one non-blocking send per peer (the chunks for that peer packed into one message)
  and one non-blocking receive per peer, all together (``torch.distributed.batch_isend_irecv``),
  and waits for them;
* then it writes what arrived: a copy overwrites its slot, a reduce adds into it, applied in
  the schedule's transfer order, so the arithmetic (and its rounding) is exactly that of
  :func:`collectives.simulate`. A transfer with ``src == dst`` is a local copy, no message.

Messages are raw bytes, so any numeric numpy dtype travels, including those gloo's own
collectives reject (int16, uint16, ...). The result is returned exactly as
:func:`collectives.simulate` returns it: one row per rank in NCCL's output layout, same
shape and dtype. :func:`run_torch` runs ``torch.distributed``'s *own* implementation of a
collective on the same inputs, and :func:`compare_with_torch` puts the two side by side.
:func:`run_local` executes the same per-rank program inside this process (no torch), to
show and test what each rank does.

What is modelled: the per-rank view of a schedule (who sends what to whom in each step),
real message passing between separate processes, and the exact data each rank ends with.
There is no global barrier between steps: a rank waits only for its own messages of a step
(each tagged with the step), so ranks drift apart as on real hardware, and still compute
what the synchronous step model says. What is left out: any
timing realism. Gloo over loopback on a laptop's CPU says nothing about link bandwidth,
NVLink or ICI latency, or contention; use :func:`collectives.time` on a
:class:`~collectives.Topology` for that. Starting the processes (each imports torch) takes
seconds, so batch several schedules into one :func:`run_many` call. Chapters use it to
show that a Schedule of the book runs for real and agrees with the library's collectives.

Backends: ``"gloo"`` (CPU, any machine with torch) and ``"nccl"`` (one NVIDIA GPU per rank;
a clear :class:`~collectives.CollectivesError` where there is none).
"""

import os
import pickle
import shutil
import subprocess
import sys
import tempfile
import time as _time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np

from .errors import CollectivesError, ScheduleError
from .validation import input_rows, schedule_arg
from .semantics import REDUCTION_OPS, collective_spec

__all__ = [
    "run", "run_many", "run_torch", "compare_with_torch", "run_local",
    "Comparison", "DistError", "BACKENDS", "TORCH_OPS", "MAX_LOCAL_RANKS",
    "DEFAULT_TIMEOUT",
]

#: backends :func:`run` accepts
BACKENDS = ("gloo", "nccl")

#: the most worker processes :func:`run` starts on one machine (use ``simulate`` beyond)
MAX_LOCAL_RANKS = 64

#: seconds allowed for one launch (process start, process-group setup, every task)
DEFAULT_TIMEOUT = 60.0

#: collective -> the ``torch.distributed`` function :func:`run_torch` calls (first one that
#: exists in the installed torch; ``all_gather_single`` replaced ``all_gather_into_tensor``)
TORCH_OPS = {
    "all_gather": ("all_gather_single", "all_gather_into_tensor"),
    "reduce_scatter": ("reduce_scatter_single", "reduce_scatter_tensor"),
    "all_reduce": ("all_reduce",),
    "all_to_all": ("all_to_all_single",),
    "broadcast": ("broadcast",),
    "reduce": ("reduce",),
}

_LOOPBACK = "127.0.0.1"
_PACKAGE_PARENT = str(Path(__file__).resolve().parent.parent)
_GRACE = 1.0          # seconds to let other ranks report after the first failure


class DistError(CollectivesError):
    """A worker process failed, or the run timed out.

    Attributes: ``rank`` (the failing rank, ``None`` on a timeout), ``exception`` (the
    worker's exception type name), ``worker_message``, ``worker_traceback``, ``task`` (the
    index of the job in :func:`run_many`), ``failures`` (``{rank: "Type: message"}`` for
    every rank that failed) and ``unfinished`` (ranks still running at a timeout).
    """

    def __init__(self, message, *, rank=None, exception=None, worker_message=None,
                 worker_traceback=None, task=None, failures=None, unfinished=()):
        super().__init__(message)
        self.rank = rank
        self.exception = exception
        self.worker_message = worker_message
        self.worker_traceback = worker_traceback
        self.task = task
        self.failures = dict(failures or {})
        self.unfinished = tuple(unfinished)


@dataclass(frozen=True, eq=False)
class Comparison:
    """A schedule's outputs next to ``torch.distributed``'s own collective on the same inputs.

    ``ranks``: the rows compared (all ranks; only the root for ``reduce``, whose other rows
    NCCL and gloo leave unspecified). ``equal``: exact equality on those rows (use integer
    or integer-valued inputs: float sums in a different order round differently).
    """

    collective: str
    op: str
    schedule_outputs: np.ndarray
    torch_outputs: np.ndarray
    ranks: tuple
    equal: bool
    max_abs_diff: float

    def __repr__(self):
        return (f"Comparison({self.collective}: schedule vs {self.op} on ranks "
                f"{list(self.ranks)}: equal={self.equal}, max_abs_diff={self.max_abs_diff:g})")


# ---- input checks ---------------------------------------------------------------------------

def _check_backend(backend):
    if not isinstance(backend, str) or backend not in BACKENDS:
        raise CollectivesError(
            f"unknown backend {backend!r}; expected 'gloo' (CPU, any machine) or 'nccl' "
            "(one NVIDIA GPU per rank)")


def _check_launch(backend, n_ranks):
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


def _timeout_seconds(timeout):
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
        raise CollectivesError(f"timeout must be a positive number of seconds, got {timeout!r}")
    return float(timeout)


# ---- the per-rank program -------------------------------------------------------------------

class _RankStep(NamedTuple):
    """What one rank does in one step. Positions index the step's writes into this rank."""

    read_index: np.ndarray     # global transfer indices this rank reads for (src == rank)
    read_slots: np.ndarray     # their source slots
    sends: tuple               # ((peer, source slots), ...), peers ascending
    recvs: tuple               # ((peer, positions), ...), peers ascending
    local_pos: np.ndarray      # positions filled by local copies (src == dst == rank)
    local_slots: np.ndarray    # their source slots
    write_slots: np.ndarray    # destination slot of every write, in transfer order
    write_reduce: np.ndarray   # combine (True) or overwrite (False)
    combine: np.ufunc          # the schedule's reduction (np.add or np.maximum)


def _rank_program(schedule, rank):
    """The steps of ``schedule`` as seen by ``rank``: its sends, receives, local copies."""
    src, dst, sc, dc, red = (schedule.src, schedule.dst, schedule.src_chunk,
                             schedule.dst_chunk, schedule.reduce)
    starts = schedule.step_starts
    steps = []
    for k in range(schedule.n_steps):
        a, b = int(starts[k]), int(starts[k + 1])
        s, d = src[a:b], dst[a:b]
        reads = np.flatnonzero(s == rank)
        writes = np.flatnonzero(d == rank)
        out = reads[d[reads] != rank]
        sends = tuple((int(p), sc[a + out[d[out] == p]]) for p in np.unique(d[out]))
        from_ = s[writes]
        recvs = tuple((int(p), np.flatnonzero(from_ == p))
                      for p in np.unique(from_[from_ != rank]))
        local_pos = np.flatnonzero(from_ == rank)
        steps.append(_RankStep(
            read_index=a + reads, read_slots=sc[a + reads], sends=sends, recvs=recvs,
            local_pos=local_pos, local_slots=sc[a + writes[local_pos]],
            write_slots=dc[a + writes], write_reduce=red[a + writes],
            combine=REDUCTION_OPS[schedule.op]))
    return steps


def _first_empty_read(rs, filled):
    """Global index of the first transfer this rank would read from an empty slot, or None."""
    if rs.read_slots.size:
        empty = ~filled[rs.read_slots]
        if empty.any():
            return int(rs.read_index[np.argmax(empty)])
    return None


def _empty_read_error(schedule, i):

    step, text = schedule.describe_transfer(i)
    s, c = int(schedule.src[i]), int(schedule.src_chunk[i])
    error = ScheduleError(f"step {step}, {text}: rank {s} chunk {c} holds nothing yet",
                          step=step, rank=s, chunk=c, holds="nothing")
    error.transfer_index = i          # lets the launcher name the first one across ranks
    return error


def _read(rs, buffer):
    """Snapshot what this rank sends and copies locally, before anything is written."""
    return [(p, buffer[slots]) for p, slots in rs.sends], buffer[rs.local_slots]


def _write(rs, buffer, filled, incoming, local):
    """Apply the step's writes into this rank's buffer, in transfer order."""
    if not len(rs.write_slots):
        return
    values = np.empty((len(rs.write_slots),) + buffer.shape[1:], dtype=buffer.dtype)
    values[rs.local_pos] = local
    for p, pos in rs.recvs:
        values[pos] = incoming[p]
    copy = ~rs.write_reduce
    if copy.any():
        buffer[rs.write_slots[copy]] = values[copy]
        filled[rs.write_slots[copy]] = True
    if rs.write_reduce.any():
        # sequential, in transfer order: the same additions, in the same order, as simulate
        rs.combine.at(buffer, rs.write_slots[rs.write_reduce], values[rs.write_reduce])


def _prepare(schedule, inputs, precheck=True):
    """Validate like simulate, lay the rows out in working buffers, and (``precheck``) find
    a read of an empty slot before any process starts, with simulate's own error."""
    from .replay import simulate

    spec = collective_spec(schedule_arg(schedule).collective)
    if schedule.n_switches:
        raise DistError(
            f"{schedule.name} reduces inside {schedule.n_switches} switch(es); dist runs one "
            "process per rank and has no process for a switch (in-network reduction is "
            "modelled by simulate and time only)")
    data = input_rows(inputs, schedule.n_ranks)
    buffer, filled = spec.place_inputs(data, schedule.groups, schedule.n_chunks,
                                       schedule.n_slots, schedule.root, schedule.n_ranks)
    if precheck:             # a replay with one int8 per chunk: cheap next to the real run
        k_in = spec.input_chunks(schedule.group_size, schedule.n_chunks)
        simulate(schedule, np.zeros((schedule.n_ranks, k_in), dtype=np.int8))
    return spec, buffer, filled


def run_local(schedule, inputs):
    """Run each rank's program of :func:`run` inside this process; no torch, no processes.

    Every step, each rank snapshots the chunks it sends (read-before-write), the messages
    go through an in-memory mailbox, and each rank applies what it received in transfer
    order. Returns exactly what :func:`collectives.simulate` returns. It loops over ranks
    in Python, so it is for understanding and testing the per-rank view, not for speed.
    A read of an empty slot is found by the ranks themselves (the first one in the step,
    over all ranks) and raises simulate's :class:`~collectives.ScheduleError`.
    """
    spec, buffer, filled = _prepare(schedule, inputs, precheck=False)
    n = schedule.n_ranks
    programs = [_rank_program(schedule, r) for r in range(n)]
    for k in range(schedule.n_steps):
        steps = [programs[r][k] for r in range(n)]
        bad = [i for r in range(n) if (i := _first_empty_read(steps[r], filled[r])) is not None]
        if bad:
            raise _empty_read_error(schedule, min(bad))
        reads = [_read(steps[r], buffer[r]) for r in range(n)]       # every rank reads first
        mailbox = {(r, p): payload for r in range(n) for p, payload in reads[r][0]}
        for r in range(n):
            incoming = {p: mailbox[(p, r)] for p, _ in steps[r].recvs}
            _write(steps[r], buffer[r], filled[r], incoming, reads[r][1])
    return spec.take_outputs(buffer, schedule.groups, schedule.n_chunks)


# ---- jobs -----------------------------------------------------------------------------------

def _torch_job(collective, inputs, root):
    spec = collective_spec(collective)
    data = input_rows(inputs)
    n, length = data.shape
    if spec.rooted:
        root = 0 if root is None else root
        if isinstance(root, (bool, np.bool_)) or not isinstance(root, (int, np.integer)) \
                or not 0 <= root < n:
            raise CollectivesError(f"root must be a rank (0..{n - 1}), got {root!r}")
        root = int(root)
    elif root is not None:
        raise CollectivesError(f"{spec.name} has no root; got root={root!r}")
    if spec.name in ("reduce_scatter", "all_to_all") and length % n:
        raise CollectivesError(
            f"{spec.name} over {n} ranks needs rows whose length divides into {n} equal "
            f"parts; got length {length}")
    native = data.dtype.newbyteorder("=")
    rows = np.ascontiguousarray(data, dtype=native)
    return {"kind": "torch", "collective": spec.name, "root": root, "n": n,
            "what": f"torch.distributed {spec.name}", "rows": rows}


def _schedule_job(schedule, inputs):
    spec, buffer, filled = _prepare(schedule, inputs)
    return {"kind": "schedule", "schedule": schedule, "n": schedule.n_ranks, "spec": spec,
            "what": f"schedule {schedule.name!r}", "buffer": buffer, "filled": filled}


def _job(item, index):
    try:
        first, inputs, *rest = item
    except (TypeError, ValueError):
        raise CollectivesError(
            f"job {index}: expected (schedule, inputs) or (collective, inputs[, root]), got "
            f"{item!r:.80}") from None
    if isinstance(first, str):
        if len(rest) > 1:
            raise CollectivesError(f"job {index}: expected (collective, inputs[, root])")
        return _torch_job(first, inputs, rest[0] if rest else None)
    if rest:
        raise CollectivesError(f"job {index}: expected (schedule, inputs); a schedule has its "
                               "own root")
    return _schedule_job(first, inputs)


def _run_jobs(items, backend, timeout):
    """Validate every job, then launch one process group per rank count; keep job order."""
    _check_backend(backend)
    timeout = _timeout_seconds(timeout)
    jobs = [_job(item, i) for i, item in enumerate(items)]
    if not jobs:
        return []
    for n in sorted({j["n"] for j in jobs}):
        _check_launch(backend, n)
    results = [None] * len(jobs)
    for n in sorted({j["n"] for j in jobs}):
        indices = [i for i, j in enumerate(jobs) if j["n"] == n]
        tasks = [jobs[i] for i in indices]
        for i, (rows, op) in zip(indices, _launch(n, tasks, backend, timeout, indices)):
            job = jobs[i]
            if job["kind"] == "schedule":
                sched = job["schedule"]
                outputs = job["spec"].take_outputs(np.stack(rows), sched.groups, sched.n_chunks)
            else:
                outputs = np.stack(rows)
            results[i] = (outputs, op)
    return results


def run_many(jobs, backend="gloo", *, timeout=DEFAULT_TIMEOUT):
    """Run several jobs, starting the worker processes once per rank count.

    Each job is ``(schedule, inputs)`` (the schedule's transfers as point-to-point
    messages, as in :func:`run`) or ``(collective, inputs[, root])`` with a collective name
    (``torch.distributed``'s own implementation, as in :func:`run_torch`). All jobs are
    checked before any process starts. Jobs with the same number of ranks run one after
    the other in one process group. Returns the outputs in job order. ``timeout`` (seconds)
    bounds each launch: process start, process-group setup and all of its jobs.
    """
    return [outputs for outputs, _ in _run_jobs(jobs, backend, timeout)]


def run(schedule, inputs, backend="gloo", *, timeout=DEFAULT_TIMEOUT):
    """Run ``schedule`` over ``torch.distributed`` with one local process per rank.

    ``inputs`` and the result are as in :func:`collectives.simulate` (one row per rank,
    NCCL's layouts) and the result equals ``simulate``'s exactly, same shape and dtype.
    Bad input raises the same :class:`~collectives.CollectivesError` as ``simulate``, and a
    schedule that reads an empty slot the same :class:`~collectives.ScheduleError`, before
    any process starts. A worker that fails raises :class:`DistError` naming its rank and
    its exception; ``timeout`` seconds (process start included) bound the whole run.
    Processes and the rendezvous port are always released. Timing is not realistic (see
    the module docstring): use :func:`collectives.time` for how long a schedule takes.
    """
    return run_many([(schedule, inputs)], backend, timeout=timeout)[0]


def run_torch(collective, inputs, *, root=None, backend="gloo", timeout=DEFAULT_TIMEOUT):
    """Run ``torch.distributed``'s own ``collective`` on ``inputs`` (one row per rank).

    Calls the function in :data:`TORCH_OPS` (e.g. ``all_gather_single``,
    ``reduce_scatter_single``, ``all_to_all_single``) with rank r's row as its tensor, and
    returns one output row per rank in the layout of :func:`collectives.simulate`. For
    ``reduce`` only the root's row is defined. ``root`` (default 0) is for ``broadcast``
    and ``reduce``. Gloo's collectives support fewer dtypes than its point-to-point
    messages (not int16 or uint16, for instance): such a run raises :class:`DistError`
    saying so.
    """
    return run_many([(collective, inputs, root)], backend, timeout=timeout)[0]


def compare_with_torch(schedule, inputs, *, backend="gloo", timeout=DEFAULT_TIMEOUT):
    """Run ``schedule`` and ``torch.distributed``'s own collective on the same inputs.

    Both run in one process group (one launch). Returns a :class:`Comparison`; for a
    correct schedule and integer inputs ``comparison.equal`` is True: the package's
    Schedule computes what the library computes.
    """
    spec = collective_spec(schedule_arg(schedule).collective)
    (ours, _), (theirs, op) = _run_jobs(
        [(schedule, inputs), (spec.name, inputs, schedule.root)], backend, timeout)
    ranks = (schedule.root,) if spec.name == "reduce" else tuple(range(schedule.n_ranks))
    a, b = ours[list(ranks)], theirs[list(ranks)]
    wide = np.complex128 if np.iscomplexobj(a) else np.float64
    diff = float(np.max(np.abs(a.astype(wide) - b.astype(wide)))) if a.size else 0.0
    return Comparison(spec.name, op, ours, theirs, ranks,
                      bool(a.shape == b.shape and np.array_equal(a, b)), diff)


# ---- launching ------------------------------------------------------------------------------

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


def _launch(n, tasks, backend, timeout, labels=None):
    """Start ``n`` workers, run ``tasks`` in order in one process group, return per task
    ``(rows, op)`` where ``rows[r]`` is rank r's result. Always kills and reaps the workers."""
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
                                 "root": t["root"], "row": t["rows"][r]})
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
        code = ("import sys; from collectives.dist import _worker_main; "
                "_worker_main(sys.argv[1], int(sys.argv[2]))")
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


# ---- inside a worker process ----------------------------------------------------------------

class _Exchange:
    """One step's messages of one rank over torch.distributed (posted together, then waited)."""

    def __init__(self, torch, tdist, device):
        self.torch, self.tdist, self.device = torch, tdist, device
        self.tag = 0

    def __call__(self, sends, recvs, row_shape, dtype):
        torch, tdist = self.torch, self.tdist
        self.tag += 1
        ops, keep, inbox = [], [], {}
        row_bytes = int(np.prod(row_shape, dtype=np.int64)) * dtype.itemsize
        for p, payload in sends:
            if payload.size and dtype.itemsize:
                t = torch.from_numpy(np.ascontiguousarray(payload).reshape(-1).view(np.uint8))
                t = t.to(self.device)
                keep.append(t)
                ops.append(tdist.P2POp(tdist.isend, t, p, tag=self.tag))
        for p, count in recvs:
            nbytes = count * row_bytes
            t = torch.empty(nbytes, dtype=torch.uint8, device=self.device)
            inbox[p] = (t, count)
            if nbytes:
                ops.append(tdist.P2POp(tdist.irecv, t, p, tag=self.tag))
        if ops:
            for work in tdist.batch_isend_irecv(ops):
                work.wait()
        return {p: t.cpu().numpy().view(dtype).reshape((count,) + tuple(row_shape))
                for p, (t, count) in inbox.items()}


def _schedule_task(task, rank, exchange):
    schedule, buffer, filled = task["schedule"], task["buffer"], task["filled"]
    for rs in _rank_program(schedule, rank):
        bad = _first_empty_read(rs, filled)
        if bad is not None:
            raise _empty_read_error(schedule, bad)
        sends, local = _read(rs, buffer)                     # snapshot before any write
        incoming = exchange(sends, [(p, len(pos)) for p, pos in rs.recvs],
                            buffer.shape[1:], buffer.dtype)
        _write(rs, buffer, filled, incoming, local)
    return buffer, "point-to-point (batch_isend_irecv)"


def _torch_op(tdist, collective):
    for name in TORCH_OPS[collective]:
        fn = getattr(tdist, name, None)
        if fn is not None:
            return name, fn
    raise CollectivesError(  # pragma: no cover (every supported torch has one)
        f"this torch has none of torch.distributed.{', '.join(TORCH_OPS[collective])}")


def _torch_task(task, rank, n, torch, tdist, device, backend):
    collective, root = task["collective"], task["root"]
    x = torch.from_numpy(task["row"].copy()).to(device)
    name, fn = _torch_op(tdist, collective)
    try:
        if collective == "all_gather":
            out = torch.empty(n * x.numel(), dtype=x.dtype, device=device)
            fn(out, x)
        elif collective == "reduce_scatter":
            out = torch.empty(x.numel() // n, dtype=x.dtype, device=device)
            fn(out, x, op=tdist.ReduceOp.SUM)
        elif collective == "all_to_all":
            out = torch.empty_like(x)
            fn(out, x)
        elif collective == "all_reduce":
            out = x
            fn(out, op=tdist.ReduceOp.SUM)
        elif collective == "broadcast":
            out = x
            fn(out, src=root)
        else:  # reduce
            out = x
            fn(out, dst=root, op=tdist.ReduceOp.SUM)
    except RuntimeError as e:
        first = (str(e).strip().splitlines() or [""])[0]
        if "scalar type" in first.lower() or "unsupported" in first.lower():
            raise CollectivesError(
                f"torch.distributed.{name} over {backend} does not support dtype "
                f"{task['row'].dtype} (torch says: {first}); collectives.dist.run can still "
                "run a Schedule on it (its messages are raw bytes)") from e
        raise
    return out.cpu().numpy(), f"torch.distributed.{name}"


def _worker_main(workdir, rank):
    """Entry point of a worker process (started by :func:`_launch`); never returns."""
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
        exchange = _Exchange(torch, tdist, device)
        results = []
        for task_index, task in enumerate(job["tasks"]):
            if task["kind"] == "schedule":
                results.append(_schedule_task(task, rank, exchange))
            else:
                results.append(_torch_task(task, rank, n, torch, tdist, device, backend))
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
