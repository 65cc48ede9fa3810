"""An nccl-tests-style sweep: time a Schedule, and torch's own collective, over many sizes.

:func:`sweep` does what nccl-tests' ``all_reduce_perf -b 1K -e 64M -f 2`` does, for any
Schedule run by :mod:`collectives.dist` and for ``torch.distributed``'s own collective on the
same process group. For every size ``S`` (bytes of the buffer one rank holds when the
collective is complete, nccl-tests' size) it runs, in nccl-tests' order (src/common.cu,
``BenchTime``: the timed loop first, "test validation in single itertion" after it),
``warmup`` untimed iterations, ``iters`` timed ones, and then one checked iteration on
freshly made inputs. It reports, as nccl-tests does (its doc/PERFORMANCE.md):

* ``time_us``: the time of one iteration, averaged over the timed iterations on each rank
  and then over the ranks (nccl-tests' default ``-a 1``); with ``repeats`` > 1, the median
  of that over the repeats, with their fastest and slowest (``time_min_us``,
  ``time_max_us``);
* ``algbw = S / time`` and ``busbw = algbw x`` the collective's bus factor
  (``2(n-1)/n`` for all-reduce, ``(n-1)/n`` for all-gather, reduce-scatter and
  all-to-all, 1 for broadcast and reduce), in GB/s (1e9 bytes/s), ``n`` the group size;
* ``wrong``: the elements of the checked iteration that differ from what the collective
  must compute on those inputs, from first principles (a sum, a concatenation, the root's
  row) inside each group, nccl-tests' ``#wrong``; each rank counts its own (its output row
  is not sent back), and the counts are summed (the largest over repeats).

**Repeats.** ``repeats`` passes over all the sizes, one after the other (nccl-tests'
``-N``/``--run_cycles`` prints each cycle; here they are summarised): a machine that is
busy with something else for a while slows one pass, not one size, and the median over the
passes is what the sweep reports. Timings taken on a shared or loaded machine (the one that
builds this book has two cores shared by several jobs) differ from run to run; the spread
says by how much, and no single run is general.

Inputs are small integers (exact in every dtype), made by :func:`pattern` from the rank
and the element index, in the workers themselves: nothing of size ``S`` is sent to them.
Where it differs from nccl-tests: nccl-tests warms every size up once before timing any
(``TimeTest``: "Warm-up for all sizes"), the sweep warms each size up just before timing it;
nccl-tests times an out-of-place and an in-place variant of every size, the sweep one (the
Schedule works in place). Both read a host clock around the timed loop (nccl-tests' own
``timer``; CUDA events only with its ``-I``; here ``perf_counter``). Torch's row is labelled
with the newest name of its function (``all_gather_single``, not the deprecated
``all_gather_into_tensor``; :data:`~collectives.dist.TORCH_OPS`). Left out: any realism of
the timing itself: gloo over loopback measures memory copies and the kernel's TCP stack, not
a link (the chapter "From the model to real processes" says what changes on NVLink).
"""

from dataclasses import asdict, dataclass, field
from typing import Optional

import numpy as np

from ..errors import CollectivesError
from ..schedule import schedule_arg
from ..semantics import collective_spec
from .launch import check_launch, resolve_backend, run_tasks, timeout_seconds
from .programs import check_segments, rank_program, run_rank
from .torch_ops import TORCH_OPS, torch_op

__all__ = [
    "sweep",
    "sizes",
    "pattern",
    "plan",
    "summarise",
    "format_table",
    "SweepRow",
    "SweepResult",
    "TIMED_TORCH",
    "timed_task",
    "KIB",
    "MIB",
]

#: torch collectives :func:`sweep` can time beside a Schedule
TIMED_TORCH = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast", "reduce")

KIB, MIB = 1024, 1024 * 1024


def sizes(min_bytes=KIB, max_bytes=64 * MIB, factor=2):
    """``min_bytes, min_bytes * factor, ...`` up to ``max_bytes``: nccl-tests' ``-b -e -f``."""
    for name, value in (("min_bytes", min_bytes), ("max_bytes", max_bytes), ("factor", factor)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise CollectivesError(f"{name} must be a positive integer, got {value!r}")
    if factor < 2 or max_bytes < min_bytes:
        raise CollectivesError(
            f"need factor >= 2 and max_bytes >= min_bytes, got "
            f"min_bytes={min_bytes}, max_bytes={max_bytes}, factor={factor}"
        )
    out, s = [], int(min_bytes)
    while s <= max_bytes:
        out.append(s)
        s *= int(factor)
    return out


def pattern(rank, length, dtype):
    """Rank ``rank``'s input row: small integers (-3..8) from the rank and element index,
    exact in any numeric dtype and in any sum over up to 64 ranks of a small dtype."""
    i = np.arange(length, dtype=np.int64)
    return ((i * 5 + rank * 3) % 7 + (rank % 3) - 3).astype(dtype)


@dataclass(frozen=True)
class SweepRow:
    """One line of the sweep, as nccl-tests prints it (one implementation, one size)."""

    size: int  # bytes S of the buffer one rank holds when complete
    count: int  # elements in it
    type: str  # numpy dtype name
    redop: str  # the reduction ("sum", "max"), or "none"
    impl: str  # the Schedule's name, or torch.distributed's function
    time_us: float  # one iteration, averaged over iterations then ranks
    algbw: float  # GB/s: S / time
    busbw: float  # GB/s: algbw x the collective's bus factor
    wrong: int  # elements that differ from the collective's definition
    time_min_us: Optional[float] = None  # the fastest repeat's time (None: not measured)
    time_max_us: Optional[float] = None  # the slowest repeat's time


@dataclass(frozen=True)
class SweepResult:
    """A sweep's rows, with what was run; :meth:`to_frame` shows them as a table."""

    collective: str
    group_size: int
    n_ranks: int
    backend: str
    iters: int
    warmup: int
    rows: tuple = field(repr=False)
    repeats: int = 1

    def to_frame(self):
        """The rows as a pandas DataFrame, one line per (size, implementation)."""
        import pandas as pd

        return pd.DataFrame([asdict(r) for r in self.rows])

    def busbw(self, impl, size):
        """The busbw (GB/s) of ``impl`` at ``size`` bytes."""
        for r in self.rows:
            if r.impl == impl and r.size == size:
                return r.busbw
        raise CollectivesError(
            f"no row for impl {impl!r} at size {size}; impls: {sorted({r.impl for r in self.rows})}"
        )

    def ratio(self, size):
        """busbw of the Schedule over busbw of torch's own collective, at ``size``."""
        impls = list(dict.fromkeys(r.impl for r in self.rows))
        if len(impls) != 2:
            raise CollectivesError(
                "ratio needs a sweep of a Schedule and torch's collective (torch=True)"
            )
        return self.busbw(impls[0], size) / self.busbw(impls[1], size)


def _my_output(spec, schedule, rank, buffer):
    """Rank ``rank``'s output row from its working buffer (NCCL's layout)."""
    groups = schedule.groups
    if spec.output == "part":
        m = groups.shape[1]
        k = schedule.n_chunks // m
        position = int(np.argwhere(groups == rank)[0, 1])
        return buffer[position * k : (position + 1) * k].reshape(-1)
    return buffer[: schedule.n_chunks].reshape(-1)


def _rank_buffer(spec, schedule, rank, row):
    """Rank ``rank``'s working buffer and filled mask, its input ``row`` placed as
    :func:`collectives.simulate` places it (the other ranks' rows never exist here)."""
    data = np.broadcast_to(row, (schedule.n_ranks, row.size))
    buffer, filled = spec.place_inputs(
        data, schedule.groups, schedule.n_chunks, schedule.n_slots, schedule.root, schedule.n_ranks
    )
    return buffer[rank].copy(), filled[rank].copy()


def _torch_call(task, rank, torch, tdist, device, row, groups):
    """``(run, input, output)``: a call of torch's own collective on this rank's ``row``,
    its input tensor and the tensor it leaves its result in."""
    collective, root = task["collective"], task["root"]
    x = torch.from_numpy(row.copy()).to(device)
    fn = torch_op(tdist, collective)[1]
    group, members = groups
    m = task["group_size"]
    on = {} if group is None else {"group": group}
    reduce_op = tdist.ReduceOp.MAX if task["op"] == "max" else tdist.ReduceOp.SUM
    root_rank = None if root is None else (root if members is None else members[root])
    if collective == "all_reduce":
        return (lambda: fn(x, op=reduce_op, **on)), x, x
    if collective == "broadcast":
        return (lambda: fn(x, src=root_rank, **on)), x, x
    if collective == "reduce":
        return (lambda: fn(x, dst=root_rank, op=reduce_op, **on)), x, x
    if collective == "all_gather":
        out = torch.empty(m * x.numel(), dtype=x.dtype, device=device)
        return (lambda: fn(out, x, **on)), x, out
    if collective == "reduce_scatter":
        out = torch.empty(x.numel() // m, dtype=x.dtype, device=device)
        return (lambda: fn(out, x, op=reduce_op, **on)), x, out
    out = torch.empty_like(x)  # all_to_all
    return (lambda: fn(out, x, **on)), x, out


def _groups(task, rank, tdist):
    """This rank's torch process group and members (every rank creates every group)."""
    if task["groups"] is None:
        return None, None
    mine = (None, None)
    for members in task["groups"]:
        handle = tdist.new_group(list(members))
        if rank in members:
            mine = (handle, list(members))
    return mine


def timed_task(task, rank, n, torch, tdist, device, backend, exchange, board, index):
    """In a worker: one size of a sweep for one implementation, in nccl-tests' order
    (``BenchTime`` in its src/common.cu): ``warmup`` untimed iterations, a barrier, ``iters``
    timed ones, then one checked iteration on inputs made afresh. On a GPU (``backend``
    "nccl") the timed iterations are enqueued and the device synchronised once after them,
    as nccl-tests does by default (``-z 0``: ``completeColl`` once after the loop). Returns
    ``((elements of this rank's checked iteration that differ from the collective's
    definition, seconds per timed iteration on this rank), "timed")``, the ``(result, op)``
    pair every task of a worker returns (the check is made here: a rank's row never travels
    back)."""
    import time

    dtype = np.dtype(task["dtype"])
    row = pattern(rank, task["length"], dtype)
    sync = (lambda: torch.cuda.synchronize()) if backend == "nccl" else (lambda: None)
    if task["impl"] == "schedule":
        schedule = task["schedule"]
        spec = collective_spec(schedule.collective)
        fresh_buffer, fresh_filled = _rank_buffer(spec, schedule, rank, row)
        buffer, filled = fresh_buffer.copy(), fresh_filled.copy()
        program = rank_program(schedule, rank)
        exchange.n_segments = task.get("n_segments", 1)

        def run():
            run_rank(schedule, rank, buffer, filled, exchange, program=program)

        def reset():
            buffer[...] = fresh_buffer
            filled[...] = fresh_filled

        def output():
            return _my_output(spec, schedule, rank, buffer).copy()
    else:
        call, x, out = _torch_call(
            task, rank, torch, tdist, device, row, _groups(task, rank, tdist)
        )

        def run():
            call()

        def reset():
            x.copy_(torch.from_numpy(row.copy()).to(device))

        def output():
            return out.cpu().numpy().copy()

    for _ in range(task["warmup"]):
        run()
    sync()
    tdist.barrier()
    start = time.perf_counter()
    for _ in range(task["iters"]):  # on a GPU: enqueued, then one synchronisation,
        run()  # as nccl-tests' default -z 0 does
    sync()
    seconds = (time.perf_counter() - start) / task["iters"]
    reset()  # the check runs on fresh inputs, once
    run()
    sync()
    checked = output()
    wrong = _wrong_on_rank(task["schedule"], rank, checked, task["length"], dtype)
    return (wrong, seconds), "timed"


def _check_args(iters, warmup, dtype, repeats=1):
    for name, value, low in (("iters", iters, 1), ("warmup", warmup, 0), ("repeats", repeats, 1)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
            raise CollectivesError(f"{name} must be an integer >= {low}, got {value!r}")
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise CollectivesError(
            f"dtype must be a numpy numeric dtype such as 'float32', got {dtype!r}"
        ) from None
    if dt.kind not in "iuf":
        raise CollectivesError(f"dtype must be an integer or float dtype, got {dt.name}")
    return dt


def plan(
    schedule,
    sizes_bytes=None,
    *,
    dtype="float32",
    iters=20,
    warmup=1,
    torch=True,
    n_segments=1,
    segments=None,
    repeats=1,
):
    """The timed jobs of a sweep, checked before any process starts: ``(tasks, meta)``, one
    task per (repeat, size, implementation), the repeats one whole pass over the sizes after
    the other, and its ``(size, count, impl)``. Used by :func:`sweep` and by the torchrun
    entry point (:mod:`collectives.dist.torchrun_main`); ``n_segments`` (old name
    ``segments``) and ``repeats`` as in :func:`sweep`."""
    schedule = schedule_arg(schedule)
    spec = collective_spec(schedule.collective)
    dt = _check_args(iters, warmup, dtype, repeats)
    n_segments = check_segments(n_segments, segments)
    todo = sizes() if sizes_bytes is None else list(sizes_bytes)
    if not todo:
        raise CollectivesError("sizes_bytes is empty: give at least one size in bytes")
    m = schedule.group_size
    unit = dt.itemsize * schedule.n_chunks  # the full buffer holds n_chunks chunks
    for s in todo:
        if isinstance(s, bool) or not isinstance(s, (int, np.integer)) or s < 1:
            raise CollectivesError(f"sizes must be positive integers of bytes, got {s!r}")
        if s % unit:
            raise CollectivesError(
                f"{s} bytes of {dt.name} do not split into the {schedule.n_chunks} equal "
                f"chunks of {schedule.name}; use sizes that are multiples of {unit} bytes"
            )
    if schedule.n_switches:
        raise CollectivesError(f"{schedule.name} reduces inside switches: no process runs it")
    if spec.name not in TIMED_TORCH + ("gather", "scatter"):
        raise CollectivesError(
            f"sweep checks and times {', '.join(TIMED_TORCH)}, gather and scatter; not {spec.name}"
        )
    if torch and spec.name not in TIMED_TORCH:
        raise CollectivesError(
            f"sweep times torch's own {', '.join(TIMED_TORCH)}; for {spec.name} pass torch=False"
        )
    groups = None if schedule.n_groups == 1 else [list(map(int, g)) for g in schedule.groups]
    torch_name = TORCH_OPS[spec.name][0] if spec.name in TORCH_OPS else spec.name
    tasks, meta = [], []
    for r in range(int(repeats)):
        again = f" (repeat {r + 1} of {repeats})" if repeats > 1 else ""
        for s in todo:
            count = int(s) // dt.itemsize
            length = count // m if spec.input == "part" else count  # the input row
            common = {
                "kind": "timed",
                "dtype": dt.str,
                "length": length,
                "iters": int(iters),
                "warmup": int(warmup),
                "repeat": r,
            }
            tasks.append(
                dict(
                    common,
                    impl="schedule",
                    schedule=schedule,
                    n_segments=n_segments,
                    what=f"schedule {schedule.name!r} at {s} bytes{again}",
                )
            )
            meta.append((int(s), count, schedule.name))
            if torch:
                tasks.append(
                    dict(
                        common,
                        impl="torch",
                        collective=spec.name,
                        root=schedule.root,
                        op=schedule.op,
                        groups=groups,
                        group_size=m,
                        schedule=schedule,
                        what=f"torch.distributed.{torch_name} at {s} bytes{again}",
                    )
                )
                meta.append((int(s), count, f"torch.distributed.{torch_name}"))
    return tasks, meta


def summarise(schedule, tasks, meta, results, backend):
    """A :class:`SweepResult` from each task's per-rank ``(wrong elements, seconds)``
    (``results[task][rank]``): each repeat's time averaged over ranks, the median of those
    over the repeats (with the fastest and the slowest), algbw and busbw from the median,
    and the wrong elements summed over ranks (the largest count of any repeat). One row per
    (size, implementation), in the order of the first pass."""
    spec = collective_spec(schedule.collective)
    m = schedule.group_size
    dt = np.dtype(tasks[0]["dtype"])
    factor = spec.bus_factor(m)
    redop = schedule.op if spec.reducing else "none"
    seen = {}
    for (s, count, impl), outs in zip(meta, results):
        wrong = int(sum(outs[r][0] for r in range(schedule.n_ranks)))
        seconds = float(np.mean([outs[r][1] for r in range(schedule.n_ranks)]))
        seen.setdefault((s, count, impl), []).append((wrong, seconds))
    rows = []
    for (s, count, impl), runs in seen.items():
        times = np.array([t for _, t in runs])
        seconds = float(np.median(times))
        algbw = s / seconds / 1e9
        rows.append(
            SweepRow(
                s,
                count,
                dt.name,
                redop,
                impl,
                seconds * 1e6,
                algbw,
                algbw * factor,
                max(w for w, _ in runs),
                float(times.min() * 1e6),
                float(times.max() * 1e6),
            )
        )
    repeats = max(len(runs) for runs in seen.values())
    return SweepResult(
        spec.name,
        m,
        schedule.n_ranks,
        backend,
        tasks[0]["iters"],
        tasks[0]["warmup"],
        tuple(rows),
        repeats,
    )


def sweep(
    schedule,
    sizes_bytes=None,
    *,
    dtype="float32",
    iters=20,
    warmup=1,
    torch=True,
    backend="gloo",
    timeout=600.0,
    progress=None,
    n_segments=1,
    segments=None,
    repeats=1,
):
    """Time ``schedule`` (and, with ``torch=True``, torch.distributed's own collective on the
    same process group) at every size of ``sizes_bytes`` (default :func:`sizes`: 1 KiB to
    64 MiB by powers of two) with one local process per rank, as nccl-tests does.

    ``iters`` timed and ``warmup`` untimed iterations per size (nccl-tests' defaults: 20
    and 1), then one checked iteration; ``repeats`` whole passes over the sizes, each row
    reporting the median time of the passes and their range (module docstring: timings on
    a loaded machine vary, so repeat and take the median); ``backend`` "gloo", "nccl" or
    "auto" (nccl when CUDA is available);
    ``timeout`` (s) bounds the whole launch; ``progress`` shows a tqdm bar (default: when
    the sweep has more than 8 sizes); ``n_segments`` (old name ``segments``, still accepted)
    cuts every message of the Schedule into that many pieces, each reduced as soon as it
    lands (the result is the same bit for bit; 1, the default, was fastest on a 2-core
    machine: bench/README.md). A grouped Schedule (a mesh axis:
    ``mesh.collective(schedule, "tp")``) runs in every group at once, and torch's collective
    runs on one torch sub-group per group; busbw uses the group size. Returns a
    :class:`SweepResult`; a failing or hanging rank raises
    :class:`~collectives.dist.DistError` naming the rank, the size and the step.
    """
    schedule = schedule_arg(schedule)
    tasks, meta = plan(
        schedule,
        sizes_bytes,
        dtype=dtype,
        iters=iters,
        warmup=warmup,
        torch=torch,
        n_segments=n_segments,
        segments=segments,
        repeats=repeats,
    )
    timeout = timeout_seconds(timeout)
    backend = resolve_backend(backend, schedule.n_ranks)
    check_launch(backend, schedule.n_ranks)
    show = len(tasks) > 16 if progress is None else bool(progress)
    bar, on_poll = _progress_bar(len(tasks), schedule.n_ranks) if show else (None, None)
    try:
        results = run_tasks(schedule.n_ranks, tasks, backend, timeout, on_poll=on_poll)
    finally:
        if bar is not None:
            bar.close()
    return summarise(schedule, tasks, meta, [rows for rows, _ in results], backend)


def format_table(result):
    """The sweep as nccl-tests prints it: one line per size and implementation; with
    repeats, the time is their median and two columns give the fastest and slowest."""
    spread = result.repeats > 1
    head = (
        f"# {result.collective} over {result.group_size} ranks ({result.n_ranks} "
        f"processes, {result.backend}), {result.iters} iterations, {result.warmup} "
        "warm-up" + (f", median of {result.repeats} repeats" if spread else "") + "\n"
        f"#{'size':>11} {'count':>10} {'type':>8} {'redop':>6} {'time':>10} "
        f"{'algbw':>8} {'busbw':>8} {'#wrong':>6}"
        + (f" {'min':>10} {'max':>10}" if spread else "")
        + "  impl\n"
        f"#{'(B)':>11} {'(elements)':>10} {'':>8} {'':>6} {'(us)':>10} "
        f"{'(GB/s)':>8} {'(GB/s)':>8} {'':>6}" + (f" {'(us)':>10} {'(us)':>10}" if spread else "")
    )
    lines = [
        f"{r.size:>12} {r.count:>10} {r.type:>8} {r.redop:>6} {r.time_us:>10.1f} "
        f"{r.algbw:>8.3f} {r.busbw:>8.3f} {r.wrong:>6}"
        + (f" {r.time_min_us:>10.1f} {r.time_max_us:>10.1f}" if spread else "")
        + f"  {r.impl}"
        for r in result.rows
    ]
    return "\n".join([head] + lines)


def _checked_ranks(schedule, spec):
    if spec.name in ("reduce", "gather"):  # only the roots' rows are defined
        return [int(r) for r in schedule.groups[:, schedule.root]]
    return list(range(schedule.n_ranks))


def _wrong_on_rank(schedule, rank, got, length, dt):
    """Elements of ``rank``'s output ``got`` that differ from what the collective must leave
    there (0 on a rank whose output is undefined, as a non-root's after a reduce)."""
    spec = collective_spec(schedule.collective)
    if rank not in _checked_ranks(schedule, spec):
        return 0
    key = (
        schedule.collective,
        schedule.op,
        schedule.root,
        schedule.groups.tobytes(),
        rank,
        length,
        dt.str,
    )
    if key not in _EXPECTED:
        if len(_EXPECTED) >= 4:  # a few sizes, reused round after round
            del _EXPECTED[next(iter(_EXPECTED))]
        _EXPECTED[key] = _expected_row(schedule, rank, length, dt)
    return int(np.count_nonzero(got != _EXPECTED[key]))


#: a worker's last few expected rows, reused by the tasks of the same size (a sweep's rounds)
_EXPECTED: dict = {}


def _expected_row(schedule, rank, length, dt):
    """What the collective must leave on ``rank``, from first principles (sum or max,
    concatenation, the root's row) inside its group: never from the schedule itself, so
    that a wrong schedule is counted wrong."""
    spec = collective_spec(schedule.collective)
    root = schedule.root
    members = next(list(g) for g in schedule.groups if rank in g)
    p = members.index(rank)
    m = len(members)
    combine = np.maximum if schedule.op == "max" else np.add
    g = np.stack([pattern(r, length, dt) for r in members])  # the group's rows, in order
    if spec.name in ("all_reduce", "reduce", "reduce_scatter"):
        total = combine.reduce(g, axis=0).astype(dt)
    if spec.name == "all_reduce":
        return total
    if spec.name == "reduce":
        return total if p == root else g[p]
    if spec.name == "broadcast":
        return g[root]
    if spec.name == "all_gather":
        return g.reshape(-1)
    if spec.name == "gather":
        return g.reshape(-1) if p == root else np.tile(g[p], m)
    if spec.name == "reduce_scatter":
        return total.reshape(m, -1)[p]
    if spec.name == "scatter":
        return g[root].reshape(m, -1)[p]
    if spec.name == "all_to_all":
        return g.reshape(m, m, -1)[:, p].reshape(-1)
    raise CollectivesError(f"sweep cannot check {spec.name}")


def _progress_bar(total, n):
    """A tqdm bar over the sweep's timed jobs, moved by the slowest rank's progress."""
    from tqdm.auto import tqdm

    bar = tqdm(total=total, desc=f"sweep on {n} processes", unit="job")

    def on_poll(board):
        done = [board.jobs_done(r) for r in range(n)]
        now = total if all(d is None for d in done) else min(d for d in done if d is not None)
        if now > bar.n:
            bar.update(now - bar.n)

    return bar, on_poll
