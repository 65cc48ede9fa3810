"""The checks of the graded notebook on real processes (``exercises/source/real_processes``):
a collective a learner writes with torch.distributed, run on real local processes.

The notebook "From the model to real processes" asks for ``ring_all_reduce(tensor)``: sum a
tensor over every rank of the default process group, in place, with point-to-point
operations only. :func:`run_on_ranks` re-runs that function from its source code
(:func:`collectives.grading.isolation.bundle`) in ``world_size`` processes forked from one
fresh ``python -I`` process started on this file (run by its path: the worker half below
imports only the standard library, numpy and torch, once, and makes ``collectives``
unimportable with the finder of :mod:`~collectives.grading.isolation.learner_process` before
the learner's code runs). The processes meet through a ``FileStore`` in a temporary directory
and talk over gloo on the loopback interface.

In each worker, before the learner's function is built, every collective of
``torch.distributed`` (``all_reduce``, ``reduce_scatter*``, ``all_gather*``, ``broadcast``,
``all_to_all*``, ``reduce``, ``gather``, ``scatter``, the ``*_object`` ones and the process
group's own methods) is replaced by a function that records the call and raises, and
``isend`` (which ``send`` and ``batch_isend_irecv`` go through) counts the bytes each rank
sends. Then the function runs on each case's inputs (small integers from :func:`pattern`,
exact in every dtype), the originals are put back, and ``torch.distributed.all_reduce`` runs
on the same inputs as the library's answer. :func:`run_on_ranks` returns a plain report
(outputs, torch's outputs, bytes sent, forbidden calls, the first error); the check
:func:`check_ring_all_reduce` runs on that report in the isolated re-check
(:func:`collectives.grading.recheck`, as a ``check_reference`` whose reference is
``"grading.processes.check_ring_all_reduce"``, the notebook's name: the compatibility module
``collectives.grading.processes``): the result against the sum over ranks and against
torch's, no collective called, and ``2(n-1)/n S`` bytes sent by every rank. The notebook's
other answers are checked with the primitives, against :func:`ring_all_reduce_bytes_per_rank`
and :func:`collectives.busbw`.

This file is both a module (the kernel's side: :func:`run_on_ranks`, the check) and the
ranks' program (run by its path; the worker's side below imports nothing of the package, and
the kernel's side imports the package's modules inside its functions only, so that running
the file as a program needs none of them).

What this needs from a sandbox around the kernel: starting processes, a writable temporary
directory, and TCP on the loopback interface (gloo's only transport on Linux); no other
network. What it does not stop: learner code that works around the counting inside its own
worker (restoring the real functions, writing to the report file): see
:mod:`collectives.grading`.
"""

import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

__all__ = [
    "run_on_ranks",
    "check_ring_all_reduce",
    "ring_all_reduce_bytes_per_rank",
    "pattern",
    "FORBIDDEN",
    "WORKER",
    "LEARNER_PROCESS",
]

#: this file: the program that forks every rank (``python -I WORKER <dir>``)
WORKER = os.path.abspath(__file__)
#: torch.distributed functions a point-to-point task may not call
FORBIDDEN = (
    "all_reduce",
    "all_reduce_coalesced",
    "reduce",
    "broadcast",
    "all_gather",
    "all_gather_into_tensor",
    "all_gather_single",
    "all_gather_coalesced",
    "_all_gather_base",
    "reduce_scatter",
    "reduce_scatter_tensor",
    "reduce_scatter_single",
    "_reduce_scatter_base",
    "all_to_all",
    "all_to_all_single",
    "gather",
    "scatter",
    "all_gather_object",
    "gather_object",
    "broadcast_object_list",
    "scatter_object_list",
)
#: the same, as methods of a torch ProcessGroup
_GROUP_METHODS = (
    "allreduce",
    "allreduce_coalesced",
    "reduce",
    "broadcast",
    "allgather",
    "allgather_into_tensor_coalesced",
    "_allgather_base",
    "reduce_scatter",
    "_reduce_scatter_base",
    "reduce_scatter_tensor_coalesced",
    "alltoall",
    "alltoall_base",
    "gather",
    "scatter",
)
#: the learner's process program, whose finder and namespace builder the ranks use
LEARNER_PROCESS = os.path.join(
    os.path.dirname(os.path.dirname(WORKER)), "isolation", "learner_process.py"
)


def pattern(rank, length, dtype):
    """Rank ``rank``'s input: small integers (-3..8), exact in any dtype and sum."""
    i = np.arange(length, dtype=np.int64)
    return ((i * 5 + rank * 3) % 7 + (rank % 3) - 3).astype(dtype)


def ring_all_reduce_bytes_per_rank(nbytes, world_size):
    """Bytes every rank sends in a ring all-reduce of an ``nbytes`` buffer: 2(n-1)/n S
    (n - 1 reduce-scatter and n - 1 all-gather steps, one S/n chunk each)."""
    return 2 * (world_size - 1) * nbytes / world_size


# ---- the kernel's side ---------------------------------------------------------------------


def run_on_ranks(function, cases=((8, "float32"),), world_size=4, timeout=90.0):
    """Run the learner's ``function(tensor)`` on ``world_size`` local processes, once per case
    ``(length, dtype)``; returns the plain report described in the module docstring.

    ``function`` is the learner's function or ``collectives.grading.call(function,
    isolated=True)`` (whose bundle is used). Never raises for what the learner's code does:
    a failure, a hang (``timeout`` seconds) or a missing function is the report's
    ``"error"``."""
    from ...errors import GradingError
    from ..isolation.calls import IsolatedCall
    from ..isolation.reading import bundle

    try:
        data = (
            function.bundle
            if isinstance(function, IsolatedCall)
            else bundle(function, name="ring_all_reduce")
        )
    except GradingError as exc:
        return {"world_size": world_size, "cases": [], "error": str(exc)}
    cases = [[int(length), str(dtype)] for length, dtype in cases]
    with tempfile.TemporaryDirectory(prefix="collectives-ranks-") as workdir:
        with open(os.path.join(workdir, "request.json"), "w") as f:
            json.dump(
                {
                    "bundle": data,
                    "cases": cases,
                    "world_size": world_size,
                    "learner_process": LEARNER_PROCESS,
                    "timeout": timeout,
                },
                f,
            )
        env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
        env.update(OMP_NUM_THREADS="1", GLOO_SOCKET_IFNAME=_loopback() or "lo")
        log = open(os.path.join(workdir, "log.txt"), "wb")
        # one process imports torch once and forks the ranks (four imports of torch would
        # cost seconds of CPU each); its own session, so that cleaning up kills them all
        spawner = subprocess.Popen(
            [sys.executable, "-I", WORKER, workdir],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=workdir,
            env=env,
            start_new_session=True,
        )
        log.close()
        try:
            error = _wait(spawner, workdir, world_size, timeout)
        finally:
            try:
                os.killpg(spawner.pid, 9)
            except ProcessLookupError:
                pass
            spawner.wait()
        report = {"world_size": world_size, "cases": [], "error": error}
        if error is None:
            per_rank = []
            for r in range(world_size):
                with open(os.path.join(workdir, f"out{r}.json")) as f:
                    per_rank.append(json.load(f))
            for i, (length, dtype) in enumerate(cases):
                report["cases"].append(
                    {
                        "length": length,
                        "dtype": dtype,
                        "outputs": [per_rank[r]["cases"][i]["output"] for r in range(world_size)],
                        "torch": [per_rank[r]["cases"][i]["torch"] for r in range(world_size)],
                        "sent": [per_rank[r]["cases"][i]["sent"] for r in range(world_size)],
                        "forbidden": sorted(
                            {
                                name
                                for r in range(world_size)
                                for name in per_rank[r]["cases"][i]["forbidden"]
                            }
                        ),
                    }
                )
        return report


def _loopback():
    import socket

    try:
        return next((n for _, n in socket.if_nameindex() if n.startswith("lo")), None)
    except OSError:
        return None


def _wait(spawner, workdir, n, timeout):
    """None when every rank finished, else the first error in words."""
    deadline = time.monotonic() + timeout
    while True:
        code = spawner.poll()
        errors = sorted(f for f in os.listdir(workdir) if f.startswith("error"))
        if errors or code not in (None, 0):
            time.sleep(0.3)  # let the other ranks write what they saw
            errors = sorted(f for f in os.listdir(workdir) if f.startswith("error"))
            if errors:
                with open(os.path.join(workdir, errors[0])) as f:
                    return json.load(f)["message"]
            with open(os.path.join(workdir, "log.txt"), "rb") as f:
                tail = f.read()[-600:].decode(errors="replace").strip()
            return f"the processes stopped with exit status {code}: {tail}"
        if code == 0:
            return None
        if time.monotonic() > deadline:
            done = {f for f in os.listdir(workdir) if f.startswith("out")}
            waiting = [r for r in range(n) if f"out{r}.json" not in done]
            return (
                f"ring_all_reduce did not finish within {timeout:g} s on {n} "
                f"processes (rank(s) {', '.join(map(str, waiting))} still running): a "
                "deadlock? Two ranks that both wait in a blocking send or recv for each "
                "other never finish; post isend/irecv together (batch_isend_irecv)"
            )
        time.sleep(0.02)


# ---- the check (in the isolated re-check) ----------------------------------------------------


def check_ring_all_reduce(report):
    """Check a :func:`run_on_ranks` report against first principles; returns 1.0.

    Raises AssertionError naming the case, the rank and what is wrong: an error or hang,
    a forbidden collective, a wrong element (the sum over ranks of :func:`pattern`), or a
    number of bytes sent other than 2(n-1)/n S."""
    from ...errors import GradingError

    if not isinstance(report, dict):
        raise GradingError(f"the report of the run on processes is {type(report).__name__}")
    if report.get("error"):
        raise AssertionError(report["error"])
    n = report["world_size"]
    for case in report["cases"]:
        length, dtype = case["length"], np.dtype(case["dtype"])
        label = f"ring_all_reduce on {n} processes, a {dtype.name} tensor of {length} elements"
        if case["forbidden"]:
            raise AssertionError(
                f"{label}: your function called torch.distributed."
                f"{', torch.distributed.'.join(case['forbidden'])}; only point-to-point "
                "operations (send, recv, isend, irecv, batch_isend_irecv) are allowed"
            )
        want = np.sum([pattern(r, length, dtype) for r in range(n)], axis=0, dtype=dtype)
        for r in range(n):
            theirs = np.asarray(case["torch"][r], dtype=dtype)
            if not np.array_equal(theirs, want):
                raise GradingError(
                    f"torch.distributed.all_reduce disagrees with the sum on "
                    f"rank {r} (a bug in the grading, not in your answer)"
                )
        for r in range(n):
            got = case["outputs"][r]
            if got is None or len(got) != length:
                raise AssertionError(
                    f"{label}: rank {r} returned "
                    f"{'nothing' if got is None else f'{len(got)} elements'}"
                    f"; return the tensor, summed in place"
                )
            got = np.asarray(got, dtype=np.float64)
            bad = np.flatnonzero(got != want)
            if bad.size:
                i = int(bad[0])
                raise AssertionError(
                    f"{label}: rank {r} holds {got[i]:g} at element {i}, but the sum over the "
                    f"{n} ranks (torch.distributed.all_reduce gives it too) is {want[i]:g}; "
                    f"{bad.size} of {length} elements differ"
                )
        nbytes = length * dtype.itemsize
        ring = ring_all_reduce_bytes_per_rank(nbytes, n)
        for r in range(n):
            if case["sent"][r] != ring:
                ratio = case["sent"][r] / ring
                raise AssertionError(
                    f"{label}: rank {r} sent {case['sent'][r]} bytes; a ring all-reduce of "
                    f"S = {nbytes} bytes sends 2(n-1)/n S = {ring:g} bytes from every rank "
                    f"(yours is {ratio:.3g} times that)"
                )
    return 1.0


# ---- the worker's side (this file run as a script: no collectives imports) ------------------


def _load_learner_process(path):
    import importlib.util

    spec = importlib.util.spec_from_file_location("_learner_process", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _instrument(dist, c10d, calls, sent):
    """Forbid every collective, count the bytes isend sends; returns the undo list."""
    undo = []

    def forbid(name):
        def refuse(*args, **kwargs):
            calls.append(name)
            raise RuntimeError(
                f"torch.distributed.{name} is a collective; this task allows "
                "point-to-point operations only (send, recv, isend, irecv, "
                "batch_isend_irecv)"
            )

        return refuse

    for module in (dist, c10d):
        for name in FORBIDDEN:
            if hasattr(module, name):
                undo.append((module, name, getattr(module, name)))
                setattr(module, name, forbid(name))
    group_class = getattr(c10d, "ProcessGroup", None)
    for name in _GROUP_METHODS:
        original = vars(group_class).get(name) if group_class is not None else None
        if original is not None:
            try:
                setattr(group_class, name, forbid(f"ProcessGroup.{name}"))
                undo.append((group_class, name, original))
            except (AttributeError, TypeError):
                pass
    real_isend = c10d.isend

    def isend(tensor, *args, **kwargs):
        sent[0] += tensor.numel() * tensor.element_size()
        return real_isend(tensor, *args, **kwargs)

    for module in (dist, c10d):
        undo.append((module, "isend", module.isend))
        module.isend = isend
    return undo


def _spawn(workdir):
    """The spawner: import torch once, make collectives unimportable, fork one process per
    rank, and exit with the first failing rank's status (0 when all succeed)."""
    with open(os.path.join(workdir, "request.json")) as f:
        request = json.load(f)
    lp = _load_learner_process(request["learner_process"])
    lp.make_unimportable()
    import torch
    import torch.distributed

    torch.set_num_threads(1)
    children = {}
    for rank in range(request["world_size"]):
        pid = os.fork()
        if pid == 0:
            try:
                _worker(workdir, rank, request, lp)
            except BaseException as exc:  # anything the rank did not report itself
                _error(workdir, rank, f"rank {rank}: {type(exc).__name__}: {exc}")
                os._exit(4)
        children[pid] = rank
    status = 0
    while children:
        pid, code = os.wait()
        children.pop(pid, None)
        if code and not status:
            status = 1
    os._exit(status)


def _error(workdir, rank, message):
    path = os.path.join(workdir, f"error{rank}.json")
    with open(path + ".tmp", "w") as f:
        json.dump({"message": message}, f)
    os.replace(path + ".tmp", path)


def _worker(workdir, rank, request, lp):
    n = request["world_size"]
    from datetime import timedelta

    import torch
    import torch.distributed as dist
    import torch.distributed.distributed_c10d as c10d

    timeout = timedelta(seconds=request["timeout"])
    store = dist.FileStore(os.path.join(workdir, "store"), n)
    dist.init_process_group("gloo", store=store, rank=rank, world_size=n, timeout=timeout)
    calls, sent = [], [0]
    undo = _instrument(dist, c10d, calls, sent)
    namespace = lp.namespace(request["bundle"])
    function = namespace.get(request["bundle"]["target"])
    results = []
    for length, dtype in request["cases"]:
        x = torch.from_numpy(pattern(rank, length, np.dtype(dtype)))
        calls.clear()
        sent[0] = 0
        label = f"ring_all_reduce(tensor) on rank {rank} of {n}"
        try:
            if not callable(function):
                raise NameError(f"{request['bundle']['target']} is not defined")
            out = function(x)
        except Exception as exc:
            if calls:
                out = None
            else:
                kind = type(exc).__name__
                message = f"{label} raised {kind}: {exc}"
                if kind == "NotImplementedError":
                    message += " (the exercise cell still holds the placeholder)"
                _error(workdir, rank, message)
                os._exit(3)
        if out is None:
            out = x
        results.append(
            {"output": _plain(out, torch), "sent": sent[0], "forbidden": list(dict.fromkeys(calls))}
        )
    for owner, name, original in reversed(undo):
        setattr(owner, name, original)
    for i, (length, dtype) in enumerate(request["cases"]):
        y = torch.from_numpy(pattern(rank, length, np.dtype(dtype)))
        dist.all_reduce(y)
        results[i]["torch"] = y.tolist()
    dist.barrier()
    with open(os.path.join(workdir, f"out{rank}.json.tmp"), "w") as f:
        json.dump({"cases": results}, f)
    os.replace(
        os.path.join(workdir, f"out{rank}.json.tmp"), os.path.join(workdir, f"out{rank}.json")
    )
    sys.stdout.flush()
    os._exit(0)


def _plain(value, torch):
    """A returned tensor (or array, or list) as a list of numbers; None if it is not one."""
    try:
        if isinstance(value, torch.Tensor):
            return value.detach().cpu().reshape(-1).tolist()
        return np.asarray(value, dtype=np.float64).reshape(-1).tolist()
    except Exception:
        return None


if __name__ == "__main__":
    _spawn(sys.argv[1])
