"""The result of planning: one record per kind of collective, totals, memory, a table.

Overlap rule (stated once, used by every plan, :meth:`Plan.exposed`). A step runs ``m``
micro-batches; each pass (forward: 1/3 of a training step's matmuls, backward: 2/3) is
``m`` equal slices, and a collective can hide only behind the compute of the slice it is
issued in:

* ``hidden_behind="forward"`` / ``"backward"``: issued in every micro-batch's pass (FSDP and
  ZeRO-3 weight gathers and gradient reduce-scatters, ZeRO-2's gradient reduce-scatter),
  hidden behind that micro-batch's slice;
* ``"last backward"``: issued once per step in the last micro-batch's backward (the
  gradient all-reduce of DDP and the ZeRO-1 reduce-scatter): Megatron-LM accumulates the
  other micro-batches under ``no_sync`` and reduces "when all grads in a bucket have been
  computed in all microbatches in a batch" (megatron/core/distributed/
  distributed_data_parallel.py, the backward post-hook; schedules.py runs all micro-batches
  but the last inside ``no_sync_func``), as PyTorch DDP's ``no_sync`` does ("gradients will
  be accumulated on module variables, which will later be synchronized in the first
  forward-backward pass exiting the context", torch/nn/parallel/distributed.py). Its
  window is ``backward / m``, not the whole backward pass;
* ``"first forward"``: the weight all-gather after a ZeRO-1 update, which Megatron's
  ``overlap_param_gather`` waits for in the forward pre-hook of the first micro-batch;
* None: on the critical path (tensor-, context-, expert- and pipeline-parallel collectives:
  the next matmul needs their result), exposed in full.

Per pass and per *stream* (``Record.stream``: "data" for the data-parallel collectives on
the NICs, "tp" for tensor-parallel ones overlapped with their GEMMs, which run on NVLink
beside them) the exposed time is ``(m - 1) max(0, c - w) + max(0, c + L - w)`` with ``w``
the slice's compute, ``c`` the per-micro-batch collectives of one slice and ``L`` the
once-per-step ones; with ``m = 1`` it is ``max(0, c + L - pass)``. The window is the
compute only, a pessimistic choice: the slice's exposed critical-path collectives (TP on
NVLink, while the data stream uses the NICs) are not counted as time the data stream can
run in, although Megatron-LM issues it asynchronously (DistributedDataParallelConfig:
"overlap_grad_reduce: If true, overlap grad all-reduce / reduce-scatter with backward
compute"). Left out: with pipeline
parallelism the later stages finish their last backward early and reduce in the drain
bubble (Megatron's schedules.py: "Other pipeline stages do grad reduction during pipeline
bubble"); the first stage, which ends the step, has only its last micro-batch. Inference
exposes everything.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Optional

__all__ = ["Record", "Memory", "Plan", "matches"]


@dataclass(frozen=True)
class Record:
    """One kind of collective a step issues, ``count`` times per device per step.

    ``purpose`` ("dp grad all-reduce", "tp activation all-reduce", ...), ``collective``,
    ``axis`` (mesh axes, comma-joined), ``group_size``, ``nbytes`` (the buffer one rank
    holds, the package's convention), ``count``, ``phase`` ("forward", "backward", "step"),
    ``hidden_behind`` (the pass whose compute can hide it, or None: exposed), ``level``
    (where its groups reach: "inside a node", "across nodes", "across pods"; "ici"/"dcn"),
    ``algorithm`` (the one chosen), ``seconds`` (each), ``bottleneck_level`` (the link
    level bounding it), ``level_seconds`` (transfer seconds per link level, each), and the
    grouped ``schedule`` costed (all groups of the axis at once); ``stream``: the overlap
    stream it competes in ("data", or "tp" for tensor-parallel collectives overlapped with
    their GEMMs; the module text).
    """

    purpose: str
    collective: str
    axis: str
    group_size: int
    nbytes: float
    count: int
    phase: str
    hidden_behind: Optional[str]
    level: str
    algorithm: str
    seconds: float
    bottleneck_level: Optional[str] = None
    level_seconds: dict = field(default_factory=dict)
    schedule: Any = field(default=None, repr=False, compare=False)
    stream: str = "data"

    @property
    def total_seconds(self) -> float:
        """``seconds x count``."""
        return self.seconds * self.count

    @property
    def total_bytes(self) -> float:
        """``nbytes x count`` (per rank)."""
        return self.nbytes * self.count

    def row(self) -> dict:
        return {
            "purpose": self.purpose,
            "phase": self.phase,
            "collective": self.collective,
            "axis": self.axis,
            "group": self.group_size,
            "bytes": self.nbytes,
            "count": self.count,
            "level": self.level,
            "algorithm": self.algorithm,
            "seconds": self.seconds,
            "total seconds": self.total_seconds,
            "bottleneck": self.bottleneck_level,
            "overlap": self.hidden_behind or "exposed",
        }


@dataclass(frozen=True)
class Memory:
    """Bytes per device: model states (``weights``, ``master``, ``grads``, ``optimizer``:
    Adam's two moments) from :func:`collectives.fp8.memory.bytes_per_parameter`,
    ``activations`` (an estimate, see the planner), ``kv_cache`` (inference), the device's
    ``hbm``, ``logits`` (the output layer's FP32 logits for the loss, on the last pipeline
    stage), and whether it all ``fits``."""

    weights: float
    master: float
    grads: float
    optimizer: float
    activations: float
    kv_cache: float
    hbm: Optional[float]
    logits: float = 0.0

    @property
    def total(self) -> float:
        return (
            self.weights
            + self.master
            + self.grads
            + self.optimizer
            + self.activations
            + self.logits
            + self.kv_cache
        )

    @property
    def fits(self) -> Optional[bool]:
        """Total within HBM (None if the device's HBM is not known)."""
        return None if self.hbm is None else self.total <= self.hbm

    def breakdown(self) -> dict[str, float]:
        return {
            "weights": self.weights,
            "master": self.master,
            "grads": self.grads,
            "optimizer": self.optimizer,
            "activations": self.activations,
            "logits": self.logits,
            "kv_cache": self.kv_cache,
            "total": self.total,
        }


def _words(text):
    return re.findall(r"[\w-]+", text.lower())


def matches(purpose: str, text: str) -> bool:
    """Whether ``purpose``'s words appear, in order and together, among ``text``'s words:
    "dp grad" matches "dp grad all-reduce (dense)" but not "fsdp grad reduce-scatter"."""
    if not isinstance(purpose, str):
        from ..errors import CollectivesError

        raise CollectivesError(
            f"a purpose must be a string such as 'dp grad' or 'tp', got {purpose!r}"
        )
    want, have = _words(purpose), _words(text)
    return any(have[i : i + len(want)] == want for i in range(len(have) - len(want) + 1))


def _gb(x):
    return f"{x / 1e9:,.2f} GB"


def _seconds(s):
    if s == 0:
        return "0"
    if s < 1e-3:
        return f"{s * 1e6:,.1f} us"
    if s < 1:
        return f"{s * 1e3:,.2f} ms"
    return f"{s:,.3f} s"


def _bytes(b):
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if b >= scale:
            return f"{b / scale:,.2f} {unit}"
    return f"{b:,.0f} B"


@dataclass(frozen=True, eq=False)
class Plan:
    """Every collective of one step (training) or phase (inference), costed.

    ``collectives``: the :class:`Record` s; ``compute_seconds`` (matmuls at the chip's
    peak, or for decode the larger of that and reading the weights and KV cache from HBM),
    split into ``forward_seconds`` and ``backward_seconds``; ``bubble_seconds`` (pipeline
    fill and drain); ``memory`` (:class:`Memory`); ``notes``: what this plan assumed;
    ``micro_batches``: the slices each pass's overlap window is cut into (module text).
    """

    name: str
    collectives: tuple[Record, ...]
    compute_seconds: float
    forward_seconds: float
    backward_seconds: float
    bubble_seconds: float
    memory: Memory
    tokens: int
    devices: int
    topology_name: str
    notes: tuple[str, ...] = ()
    topology: Any = field(default=None, repr=False)
    placement: Any = field(default=None, repr=False)
    micro_batches: int = 1

    # ---- totals --------------------------------------------------------------------------
    @property
    def communication_seconds(self) -> float:
        """Every collective one after the other, per device: sum of ``seconds x count``."""
        return float(sum(r.total_seconds for r in self.collectives))

    @property
    def exposed_seconds(self) -> float:
        """Communication not hidden behind compute (the module's overlap rule)."""
        return self.exposed()

    def exposed(self, purpose: str = "") -> float:
        """Exposed seconds of the records whose purpose contains the words of ``purpose``
        (all by default), each micro-batch's slice of a pass hiding only those records
        (the module's overlap rule)."""
        chosen = [r for r in self.collectives if matches(purpose, r.purpose)]
        m = max(int(self.micro_batches), 1)
        exposed = sum(r.total_seconds for r in chosen if r.hidden_behind is None)
        passes = (
            ("forward", "first forward", self.forward_seconds),
            ("backward", "last backward", self.backward_seconds),
        )
        for stream in sorted({r.stream for r in chosen}):
            mine = [r for r in chosen if r.stream == stream]
            for each, once, seconds in passes:
                slice_ = seconds / m
                per = sum(r.total_seconds for r in mine if r.hidden_behind == each) / m
                single = sum(r.total_seconds for r in mine if r.hidden_behind == once)
                exposed += (m - 1) * max(0.0, per - slice_) + max(0.0, per + single - slice_)
        return float(exposed)

    def window(self, record: Record) -> float:
        """The compute that can hide one issue of ``record`` (seconds): a micro-batch's
        slice of its pass (the whole pass with one micro-batch), 0 on the critical path."""
        m = max(int(self.micro_batches), 1)
        if record.hidden_behind is None:  # exposed: nothing hides it
            return 0.0
        seconds = {
            "forward": self.forward_seconds,
            "first forward": self.forward_seconds,
            "backward": self.backward_seconds,
            "last backward": self.backward_seconds,
        }.get(record.hidden_behind, 0.0)
        return seconds / m

    @property
    def step_seconds(self) -> float:
        """``compute + bubble + exposed``."""
        return self.compute_seconds + self.bubble_seconds + self.exposed_seconds

    @property
    def bubble_with_communication_seconds(self) -> float:
        """The pipeline bubble with each micro-batch's critical-path communication counted:
        Narayanan et al. (arXiv 2104.04473, section 2.2.1) write the bubble ``(p - 1)(t_f +
        t_b)`` with ``t_f, t_b`` the time to execute a micro-batch's forward and backward,
        which includes the collectives the next kernel waits for (TP, EP, CP, the pipeline
        sends). ``bubble_seconds``, which ``step_seconds`` adds, scales the compute only:
        this is the same fraction of compute + those records (a lower bound on neither:
        another reading of the same schedule)."""
        if self.compute_seconds <= 0:
            return 0.0
        on_path = sum(r.total_seconds for r in self.collectives if r.hidden_behind is None)
        return float(self.bubble_seconds / self.compute_seconds * (self.compute_seconds + on_path))

    @property
    def compute_to_communication(self) -> float:
        """``compute_seconds / communication_seconds`` (inf without communication)."""
        comm = self.communication_seconds
        return float("inf") if comm == 0 else self.compute_seconds / comm

    def level_seconds(self) -> dict[str, float]:
        """Transfer seconds per link level ("nvlink", "leaf", "spine", "ici", "dcn", ...)
        summed over every collective of the step."""
        out: dict[str, float] = {}
        for r in self.collectives:
            for level, s in r.level_seconds.items():
                out[level] = out.get(level, 0.0) + s * r.count
        return out

    def span_seconds(self) -> dict[str, float]:
        """Communication seconds by where the groups reach (inside a node, ...)."""
        out: dict[str, float] = {}
        for r in self.collectives:
            out[r.level] = out.get(r.level, 0.0) + r.total_seconds
        return out

    @property
    def bottleneck(self) -> Optional[str]:
        """The link level that bounds the most communication time (None without any)."""
        seconds = self.level_seconds()
        return max(seconds, key=lambda level: seconds[level]) if seconds else None

    @property
    def memory_per_device(self) -> float:
        """Bytes per device (``memory.total``; the breakdown is :attr:`memory`)."""
        return self.memory.total

    @property
    def fits(self) -> Optional[bool]:
        """Whether :attr:`memory` fits the device's HBM (a flag, never an error)."""
        return self.memory.fits

    def records(self, purpose: str) -> list[Record]:
        """The records whose purpose contains the words of ``purpose`` ("dp", "tp
        activation", "all-to-all"; "dp" does not match "fsdp")."""
        return [r for r in self.collectives if matches(purpose, r.purpose)]

    def concurrent(self, *purposes: str, phase: Optional[str] = "backward"):
        """Cost together, with :func:`collectives.time_concurrent`, one collective of each
        record of ``phase`` (None: any) whose purpose contains one of ``purposes`` (default:
        all of them), e.g. the backward pass's data-parallel gradient reduction with its
        tensor- and pipeline-parallel collectives: what running them at the same time on
        shared links costs. Returns a :class:`~collectives.cost.ConcurrentTiming`, whose
        ``slowdown`` is 1.0 when they share no link."""
        from ..cost import Job, time_concurrent
        from ..errors import CollectivesError

        chosen = [
            r
            for r in self.collectives
            if r.schedule is not None
            and (phase is None or r.phase == phase)
            and (not purposes or any(matches(p, r.purpose) for p in purposes))
        ]
        if not chosen:
            raise CollectivesError(
                f"no collective of this plan matches {purposes or ''} in phase {phase!r}"
            )
        jobs = [
            Job(r.schedule, r.nbytes, placement=self.placement, name=f"{r.purpose} ({r.phase})")
            for r in chosen
        ]
        return time_concurrent(jobs, self.topology)

    # ---- display -------------------------------------------------------------------------
    def summary(self) -> dict[str, object]:
        return {
            "compute": self.compute_seconds,
            "communication": self.communication_seconds,
            "exposed": self.exposed_seconds,
            "bubble": self.bubble_seconds,
            "step": self.step_seconds,
            "compute/communication": self.compute_to_communication,
            "bottleneck": self.bottleneck,
            "memory per device": self.memory_per_device,
            "fits": self.fits,
        }

    def table(self) -> str:
        """A markdown table of the collectives, then the totals."""
        head = (
            "| purpose | phase | collective | axis | group | level | bytes | count | "
            "algorithm | each | total | bottleneck | overlap |"
        )
        lines = [f"**{self.name}** on {self.topology_name}", "", head, "|" + "---|" * 13]
        for r in self.collectives:
            lines.append(
                f"| {r.purpose} | {r.phase} | {r.collective} | {r.axis} | {r.group_size} | "
                f"{r.level} | "
                f"{_bytes(r.nbytes)} | {r.count:,} | {r.algorithm} | {_seconds(r.seconds)} | "
                f"{_seconds(r.total_seconds)} | {r.bottleneck_level or '-'} | "
                f"{r.hidden_behind or 'exposed'} |"
            )
        mem = self.memory
        ratio = self.compute_to_communication
        lines += [
            "",
            f"compute {_seconds(self.compute_seconds)}, communication "
            f"{_seconds(self.communication_seconds)} (exposed "
            f"{_seconds(self.exposed_seconds)}), pipeline bubble "
            f"{_seconds(self.bubble_seconds)}, step {_seconds(self.step_seconds)}; "
            f"compute/communication {ratio:.3g}; bottleneck {self.bottleneck or '-'}",
            f"memory per device {_gb(mem.total)} (weights {_gb(mem.weights)}, master "
            f"{_gb(mem.master)}, grads {_gb(mem.grads)}, optimizer {_gb(mem.optimizer)}, "
            f"activations {_gb(mem.activations)}, logits {_gb(mem.logits)}, KV cache "
            f"{_gb(mem.kv_cache)})"
            + (
                ""
                if mem.hbm is None
                else f" of {_gb(mem.hbm)} HBM: {'fits' if mem.fits else 'DOES NOT FIT'}"
            ),
        ]
        lines += [f"- {note}" for note in self.notes]
        return "\n".join(lines)

    def _repr_markdown_(self):
        return self.table()

    def __str__(self):
        return self.table()

    def __repr__(self):
        return (
            f"Plan({self.name!r}: {len(self.collectives)} kinds of collective, compute "
            f"{_seconds(self.compute_seconds)}, communication "
            f"{_seconds(self.communication_seconds)}, exposed "
            f"{_seconds(self.exposed_seconds)}, bottleneck {self.bottleneck})"
        )
