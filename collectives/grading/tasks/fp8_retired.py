"""The checks of the graded notebook on FP8 as it was released before issue 22: Transformer
Engine's delayed scales over a run, FP8-LM's all-reduce with one shared scale over the ranks
in rank order, and the number of ranks at which pre-scaling flushes a value. The current
notebook asks for decisions instead (:mod:`.fp8`); these stay because released copies of the
earlier notebook, and the gradebooks that hold their hidden tests, call them by name in the
isolated re-check (``check_reference(1.0, what, "grading.check_fp8_all_reduce", (values,
what, grads, mu))``): each check raises with its own message, or returns 1.0.

Every expected value comes from the package: :func:`collectives.fp8.delayed_scales`
(Transformer Engine's delayed scaling) for the scales, :func:`collectives.fp8.fp8_all_reduce`
for the all-reduced means: FP8-LM's one shared scale and a given auto-scaling factor mu, run
as MS-AMP runs its FP8 all-reduce (with an FP8 datatype NCCL's ring and tree kernels narrow
every partial sum back to E4M3), over :func:`chain_all_reduce`, which adds the ranks in rank
order (``quantize="per_hop", accumulate="fp8"``). Until issue 21 that notebook's model cast
once and summed in float32; a learner's answer for two ranks is the same under both, for more
ranks it is not. Each check also holds the answer to first principles (TE's rules in words;
the all-reduced mean within the stated FP8 error bound of the exact mean, with the OFP8
tables of :mod:`.fp8_codec`); where the package and first principles disagree on a test's
case, the check raises :class:`~collectives.GradingError`.

The checks name the first element that is wrong, what it is and what it should be, and, when
they can tell, why ("that is the scale of this step's own amax").
"""

import math

import numpy as np

from ...errors import GradingError
from ..checks import show
from .fp8_codec import (
    E4M3_MAX,
    answer_array,
    disagreement,
    input_array,
    spec_decode_e4m3,
    spec_encode_e4m3,
)

__all__ = [
    "delayed_scales_reference",
    "check_delayed_scales",
    "chain_all_reduce",
    "fp8_all_reduce_reference",
    "fp8_error_bound",
    "check_fp8_all_reduce",
    "flushing_ranks",
    "check_flushing_ranks",
]

#: the relative tolerance for scales (Transformer Engine computes them in float32)
_SCALE_REL = 1e-6


# ---- delayed scaling (Task 2 before issue 22) ----------------------------------------------------


def delayed_scales_reference(amaxes, history_len, margin=0, fmt="e4m3"):
    """The scale Transformer Engine's delayed scaling uses at every step of a sequence of
    per-step amaxes: :func:`collectives.fp8.delayed_scales` (history window ``history_len``,
    ``margin``, max over the window), as a float64 array."""
    from ...fp8 import delayed_scales

    return np.asarray(
        delayed_scales(
            np.asarray(amaxes, dtype=np.float64),
            fmt=fmt,
            history_len=int(history_len),
            margin=margin,
        ),
        dtype=np.float64,
    )


def _scales_by_hand(amaxes, history_len, margin, fp8_max, window_end=0, start=1.0):
    """First principles (TE's recipe in words): step t uses the amaxes of steps
    t - history_len .. t - 1 (shifted by ``window_end``); scale = fp8_max / amax / 2**margin,
    kept from the step before when that amax is 0; ``start`` before any amax."""
    amaxes = np.asarray(amaxes, dtype=np.float64)
    scales, scale = [], start
    for t in range(amaxes.size):
        window = amaxes[max(0, t + window_end - history_len) : max(0, t + window_end)]
        amax = window.max() if window.size else 0.0
        if amax > 0 and np.isfinite(amax):
            scale = fp8_max / amax / 2.0**margin
        scales.append(scale)
    return np.array(scales)


def _scales_hint(got, want, t, amaxes, history_len, margin, fp8_max):
    if want != 0 and math.isclose(got / want, 2.0**margin, rel_tol=_SCALE_REL) and margin:
        return f"; yours is 2**{margin} times that: the margin divides the scale by 2**margin"
    own = _scales_by_hand(amaxes, history_len, margin, fp8_max, window_end=1)
    if math.isclose(got, own[t], rel_tol=_SCALE_REL):
        return (
            "; that is the scale of this step's own amax, which delayed scaling cannot "
            "know yet: step t uses the amaxes recorded before it"
        )
    others = [
        _scales_by_hand(amaxes, length, margin, fp8_max)[t]
        for length in (history_len - 1, history_len + 1, amaxes.size + 1)
        if length >= 1
    ]
    if any(math.isclose(got, other, rel_tol=_SCALE_REL) for other in others):
        return (
            f"; the history holds the amaxes of the last {history_len} steps before this "
            "one, no more and no fewer"
        )
    return ""


def check_delayed_scales(scales, what, amaxes, history_len, margin=0, fmt="e4m3"):
    """Check a learner's ``scales`` (one per step) against :func:`delayed_scales_reference`
    and :func:`_scales_by_hand`, to a relative 1e-6 (TE computes in float32). Returns 1.0."""
    from ...fp8 import max_value

    amaxes = input_array(amaxes, what)
    got = answer_array(scales, what, amaxes.shape, "fiu", "scales (floats), one per step")
    got = got.astype(np.float64)
    want = delayed_scales_reference(amaxes, history_len, margin, fmt)
    fp8_max = max_value(fmt)
    spec = _scales_by_hand(amaxes, int(history_len), margin, fp8_max)
    if not np.allclose(want, spec, rtol=_SCALE_REL, atol=0):
        raise disagreement("collectives.fp8.delayed_scales and Transformer Engine's rules")
    args = (
        f"{show(amaxes.tolist())}, fmt={fmt!r}, history_len={int(history_len)}, margin={margin!r}"
    )
    for t in range(amaxes.size):
        g, w = float(got[t]), float(want[t])
        if not (math.isfinite(g) and math.isclose(g, w, rel_tol=_SCALE_REL)):
            raise AssertionError(
                f"{what}: the scale at step {t} is {g!r}, expected {w!r} = "
                f"collectives.fp8.delayed_scales({args})[{t}]"
                f"{_scales_hint(g, w, t, amaxes, int(history_len), margin, fp8_max)}"
            )
    return 1.0


# ---- an FP8 all-reduce with one shared scale (Task 3 before issue 22) ----------------------------


def _grads(grads, what):
    g = input_array(grads, what)
    if g.ndim != 2 or g.shape[0] < 1 or g.shape[1] < 1 or not np.any(g):
        raise GradingError(
            f"the test's gradients for {what} are not one row per rank, not "
            "all zero (a bug in the test)"
        )
    return g


def chain_all_reduce(n):
    """The all-reduce that adds the ranks' values in rank order: rank 0 sends its buffer (one
    chunk) to rank 1, which adds its own and sends the sum to rank 2, and so on to rank
    ``n - 1``, which then sends the total to every other rank in one step. The order is the
    one a ring gives one of its chunks; with FP8 on the wire every partial sum is an FP8
    number. ``n`` steps; verified with :func:`collectives.verify`."""
    from ...replay import verify
    from ...schedule import Schedule

    n = int(n)
    if n < 1:
        raise GradingError(f"chain_all_reduce needs at least one rank, got {n} (a bug in the test)")
    chain = np.arange(n - 1)
    others = np.arange(n - 1)
    step = np.concatenate([chain, np.full(n - 1, n - 1)])
    src = np.concatenate([chain, np.full(n - 1, n - 1)])
    dst = np.concatenate([chain + 1, others])
    zeros = np.zeros(step.size, dtype=np.int64)
    reduce = np.concatenate([np.ones(n - 1, bool), np.zeros(n - 1, bool)])
    schedule = Schedule.from_arrays(
        "all_reduce",
        n,
        1,
        step,
        src,
        dst,
        zeros,
        zeros,
        reduce,
        n_steps=n if n > 1 else 0,
        name="chain_all_reduce",
    )
    verify(schedule)
    return schedule


def fp8_all_reduce_reference(grads, mu):
    """What every rank holds after :func:`collectives.fp8.fp8_all_reduce` of ``grads`` (one
    row per rank) in E4M3 with FP8-LM's shared scale and the auto-scaling factor ``mu``, as
    MS-AMP runs it (every partial sum narrowed to E4M3) over :func:`chain_all_reduce`: the
    mean gradient, as float64."""
    from ...fp8 import fp8_all_reduce

    g = np.asarray(grads, dtype=np.float32)
    result = fp8_all_reduce(
        g,
        chain_all_reduce(g.shape[0]),
        fmt="e4m3",
        scaling="auto",
        mu=float(mu),
        quantize="per_hop",
        accumulate="fp8",
    )
    output = np.asarray(result.output, dtype=np.float64)
    if not np.array_equal(output, np.broadcast_to(output[0], output.shape)):
        raise GradingError(
            "the ranks of collectives.fp8.fp8_all_reduce disagree (a bug in the package)"
        )
    return output[0]


def _shared_scale(g, pick=min):
    """First principles: every rank's own scale (448 / its amax; a rank of zeros has none),
    and the one ``pick`` chooses among them (FP8-LM: the smallest)."""
    amaxes = np.max(np.abs(g), axis=1)
    return pick(E4M3_MAX / a for a in amaxes if a > 0)


def _cast(x):
    return spec_decode_e4m3(spec_encode_e4m3(x, True))


def _by_hand(g, mu, scale, output_scale=None, per_hop=True, recast=True):
    """First principles: cast ``mu * scale * g`` (saturating) to E4M3 and add the ranks up in
    rank order; with ``per_hop`` every partial sum is cast to E4M3 before the next rank's
    value is added (each addition of two E4M3 values is exact in float64, and NCCL's
    half-precision add rounds it the same way), else the casts are summed exactly and the
    total is cast once (``recast``; without it left unrounded). Divided by ``output_scale``
    (default ``N * mu * scale``). Returns ``(output, the exact sums each cast rounded (one
    row per addition, for per_hop), the scaled inputs)``."""
    x = g * (mu * scale)
    casts = _cast(x)
    if per_hop:
        partial = casts[0]
        exact_sums = []
        for row in casts[1:]:
            exact_sums.append(partial + row)
            partial = _cast(exact_sums[-1])
        stored, sums = partial, np.array(exact_sums).reshape(-1, g.shape[1])
    else:
        total = np.sum(casts, axis=0)
        stored = _cast(total) if recast else total
        sums = total[None, :]
    if output_scale is None:
        output_scale = g.shape[0] * mu * scale
    return stored / output_scale, sums, x


def fp8_error_bound(grads, mu):
    """First principles: how far the FP8 all-reduce of ``grads`` may be from the exact mean,
    per element, where no partial sum saturates (NaN where one does). A cast to E4M3 errs by
    at most half a step: ``|x| / 16`` in a normal binade (3 mantissa bits), ``2**-10`` below
    ``2**-6`` (half the smallest subnormal); ``N`` input casts and the ``N - 1`` casts of the
    partial sums, each bounded by the exact value it rounds, in units of the scaled gradient
    ``mu * s * g`` (``s = 448 / the largest |g|``), then divided by ``N * mu * s``. (The
    errors add up: the result minus the exact sum is the sum of every cast's error.)"""
    g = np.asarray(grads, dtype=np.float64)
    s = _shared_scale(g)
    _, sums, x = _by_hand(g, mu, s)
    half_steps = np.sum(np.maximum(np.abs(x) / 16, 2.0**-10), axis=0) + np.sum(
        np.maximum(np.abs(sums) / 16, 2.0**-10), axis=0
    )
    bound = half_steps / (g.shape[0] * mu * s)
    return np.where(np.all(np.abs(sums) <= 464.0, axis=0), bound, np.nan)


def _variants(g, mu):
    """What the usual mistakes give, by first principles: (values, hint) pairs."""
    n = g.shape[0]
    s = _shared_scale(g)
    amaxes = np.max(np.abs(g), axis=1)
    own = np.where(amaxes > 0, E4M3_MAX / np.where(amaxes > 0, amaxes, 1.0), 1.0)
    found = []
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        found.append(
            (
                np.sum(g, axis=0) / n,
                "; that is the exact mean: the gradients must travel as FP8 codes",
            )
        )
        found.append(
            (
                _by_hand(g, mu, s)[0] * n,
                f"; that is the sum: what a rank holds stands for the mean, the sum "
                f"over {n} ranks divided by {n}",
            )
        )
        own_casts = spec_decode_e4m3(spec_encode_e4m3(g * (mu * own)[:, None], True))
        found.append(
            (
                np.sum(own_casts / (mu * own)[:, None], axis=0) / n,
                "; that is what each rank's own scale gives: codes cast with different "
                "scales cannot be added, every rank must use the same one",
            )
        )
        found.append(
            (
                _by_hand(g, mu, _shared_scale(g, max))[0],
                "; that is what the largest of the ranks' scales gives: it makes the "
                "rank with the largest gradient overflow",
            )
        )
        found.append(
            (
                _by_hand(g, mu, s, per_hop=False)[0],
                "; that is the sum of the casts rounded to E4M3 once: with an FP8 "
                "datatype NCCL's ring and tree kernels narrow every partial sum back to "
                "E4M3, one rank at a time (here in rank order), before the next rank's "
                "value is added",
            )
        )
        found.append(
            (
                _by_hand(g, mu, s, per_hop=False, recast=False)[0],
                "; that is the exact sum of the casts: every partial sum, the last "
                "one too, is an E4M3 number",
            )
        )
        found.append(
            (
                _by_hand(g, mu, s, output_scale=n * s)[0],
                f"; yours is {mu!r} times that: the sum stands for mu * N * s times "
                "the mean, mu included",
            )
        )
        found.append(
            (
                _by_hand(g, 1.0, s)[0],
                "; that is what mu = 1 gives: the inputs are multiplied by mu * s",
            )
        )
    return found


def check_fp8_all_reduce(values, what, grads, mu):
    """Check a learner's FP8 all-reduced ``values`` (the mean gradient every rank holds, one
    number per element) of ``grads`` (one row per rank) with factor ``mu`` against
    :func:`fp8_all_reduce_reference`, to a quarter of the smallest FP8 step or a relative
    1e-6 (float32), and against first principles (:func:`_by_hand`, and
    :func:`fp8_error_bound` where no partial sum saturates). Returns 1.0."""
    g = _grads(grads, what)
    mu = float(mu)
    got = answer_array(values, what, g.shape[1:], "fiu", "floats, one per gradient element")
    got = got.astype(np.float64)
    want = fp8_all_reduce_reference(g, mu)
    s = _shared_scale(g)
    spec, _, _ = _by_hand(g, mu, s)
    tol = np.maximum(1e-6 * np.abs(want), 2.0**-12 / (g.shape[0] * mu * s))
    bound = fp8_error_bound(g, mu)
    exact = np.sum(g, axis=0) / g.shape[0]
    if not (
        np.all(np.abs(spec - want) <= tol)
        and np.all(np.isnan(bound) | (np.abs(want - exact) <= bound * (1 + 1e-6)))
    ):
        raise disagreement("collectives.fp8.fp8_all_reduce and first principles")
    call = (
        f"collectives.fp8.fp8_all_reduce({show(g.tolist())}, collectives.grading.tasks.fp8"
        f".chain_all_reduce({g.shape[0]}), fmt='e4m3', scaling='auto', mu={mu!r}, "
        "quantize='per_hop', accumulate='fp8')"
    )
    hint = ""
    for value, text in _variants(g, mu):
        if np.all(np.isfinite(got) & (np.abs(got - value) <= tol)):
            hint = text
            break
    for j in range(got.size):
        ok = math.isfinite(got[j]) and abs(got[j] - want[j]) <= tol[j]
        within = np.isnan(bound[j]) or (
            math.isfinite(got[j]) and abs(got[j] - exact[j]) <= bound[j] * (1 + 1e-6)
        )
        if ok and within:
            continue
        beyond = ""
        if not within:
            beyond = (
                f"; it is {abs(got[j] - exact[j]):.6g} from the exact mean "
                f"{float(exact[j])!r}, more than the FP8 error bound {bound[j]:.6g}"
            )
        raise AssertionError(
            f"{what}: element {j} is {float(got[j])!r}, expected {float(want[j])!r} = "
            f"{call}.output[:, {j}] (shared scale {s:.9g}){beyond}{hint}"
        )
    return 1.0


# ---- how many ranks before pre-scaling flushes a value (Task 4 before issue 22) ------------------


def flushing_ranks(ratio, fmt="e4m3", limit=2**62):
    """The fewest ranks N for which pre-scaling casts a gradient element of ``ratio`` times
    the largest magnitude to zero: ``collectives.fp8.encode(max_value(fmt) * ratio / N, fmt)``
    is a zero code, found by bisection on N (the cast is monotone in N). Raises if N would
    exceed ``limit``, or if ``max_value * ratio / N`` is within 1e-12 (relative) of half the
    smallest subnormal without being it (a case too close to call for a test)."""
    from ...fp8 import FORMATS, encode

    ratio = float(ratio)
    if not 0 < ratio <= 1:
        raise GradingError(f"ratio must be in (0, 1], got {ratio!r} (a bug in the test)")
    f = FORMATS[fmt]
    top = f.max * ratio

    def flushed(n):
        return int(encode(top / n, fmt, saturate=True)) & 0x7F == 0

    hi = 1
    while not flushed(hi):
        hi *= 2
        if hi > limit:
            raise GradingError(f"more than {limit} ranks (a bug in the test)")
    lo = hi // 2  # not flushed (or 0)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if flushed(mid) else (mid, hi)
    half = f.min_subnormal / 2
    for n in (hi - 1, hi):
        if n >= 1 and top / n != half and math.isclose(top / n, half, rel_tol=1e-12):
            raise GradingError(
                f"{top!r} / {n} is too close to {half!r} to call (a bug in the test)"
            )
    return hi


def check_flushing_ranks(value, what, ratio, fmt="e4m3"):
    """Check a learner's count of ranks against :func:`flushing_ranks`: a whole number,
    equal; the message says when it is the answer of a usual mistake (the tie at half the
    smallest subnormal kept, the threshold at the smallest subnormal, the other format).
    Returns 1.0."""
    from ...fp8 import FORMATS
    from ..checks import check_number

    got = check_number(value, what)
    if got != math.floor(got):
        raise AssertionError(f"{what} is {got!r}, not a whole number of ranks")
    want = flushing_ranks(ratio, fmt)
    if got == want:
        return 1.0
    f = FORMATS[fmt]
    top = f.max * float(ratio)
    hint = ""
    if got == want + 1 and top / want == f.min_subnormal / 2:
        hint = (
            f"; with {want} ranks the cast sees exactly half the smallest subnormal, a tie "
            "between 0 and the smallest subnormal, which goes to the even code: 0"
        )
    elif got == math.ceil(top / f.min_subnormal):
        hint = (
            "; a value below the smallest subnormal is not zero yet: it rounds to zero only "
            "when it is nearer 0 than the smallest subnormal"
        )
    else:
        other = "e5m2" if fmt == "e4m3" else "e4m3"
        if got == flushing_ranks(ratio, other):
            hint = f"; that is the answer in {other}, not {fmt}"
    raise AssertionError(
        f"{what} is {int(got)}, expected {want} = "
        f"collectives.grading.flushing_ranks({float(ratio)!r}, {fmt!r}){hint}"
    )
