"""The checks of the graded notebook on FP8 (``exercises/source/fp8``): E4M3 by hand
(:mod:`.fp8_codec`, re-exported here), then three FP8 recipes a learner chooses, each judged
by what it does to the numbers, against what the course's reference recipe does:

* **a format and a block size for a tensor** (:func:`check_block_recipe`): the fewest bytes per
  element that keep a required SNR and flush at most a given fraction of the values to zero,
  one float32 scale per block (DeepSeek-V3's tiles in one dimension; one block is per-tensor
  scaling). Reference: E4M3 or E5M2 with the whole tensor or a power-of-two block.
* **a delayed-scaling recipe for a run** (:func:`check_delayed_recipe`): Transformer Engine's
  ``amax_history_len`` and integer ``margin`` that clip no step and leave the least range
  unused at the top on average. Reference: every history length, each with its least margin.
* **an FP8 gradient all-reduce as MS-AMP runs it** (:func:`check_safe_mu`,
  :func:`check_all_reduce_design`): FP8-LM's shared scale and factor ``mu``, every partial sum
  narrowed to E4M3 at every hop (NCCL's ring and tree kernels with an FP8 datatype), the order
  of additions the learner's own (a list of merges). Reference: the largest power of two
  ``mu`` that clips nothing; a balanced tree (:func:`balanced_merges`).

Each check returns 1.0 or raises (``AssertionError`` for a recipe that does worse than the
reference, with both recipes' numbers; :class:`~collectives.GradingError` for an answer of the
wrong form); :func:`~collectives.grading.check_reference` runs them by name in the isolated
re-check (``check_reference(1.0, what, "grading.tasks.fp8.check_block_recipe", (answer, what,
x, min_snr_db, max_flushed))``). A recipe at least as good as the reference's passes, whatever
it is: the checks compare consequences (bytes, SNR, flushed and clipped values, unused range),
never choices, so a learner who beats the reference (a block size that is not a power of two,
an order of additions that suits the data) passes too.

Every number comes from the package (:func:`collectives.fp8.tile_quantize` and
``tile_dequantize``, :func:`collectives.fp8.delayed_scales`, :func:`collectives.fp8.fp8_all_reduce`
with ``quantize="per_hop", accumulate="fp8"`` on the Schedule a merge list makes), and each
check also holds the package to first principles written here (the round trip with the
format's spacing, TE's rule in words, every hop of the merges narrowed); where they disagree
the check raises :class:`~collectives.GradingError` (a bug in the test or the package).

The inputs are drawn (:func:`block_recipe_cases`, :func:`delayed_recipe_cases`,
:func:`all_reduce_cases`): a few fixed cases first, then cases drawn from the *course seed*,
which reaches a test cell as its own key in the environment variable :data:`COURSE_SEED_ENV`
(``"practice"`` without it; the key is a hash of the seed, the submission and the cell),
hashed with the draw's label, so that the cases change from one submission to the next and a
table of answers taken from any feedback fails another submission. (The seed and its hashing are
:mod:`collectives.grading.cohort`'s: :func:`drawn_cases` is its ``cases``.)

Left out: the time of the collectives (the all-reduce's merges are judged on their numbers
only), E5M2 in the all-reduce, TE's float32 rounding of ``x * scale`` before the cast.
"""

import math
import numbers

import numpy as np

from ...errors import GradingError
from .. import cohort
from ..checks import in_words, show
from .fp8_codec import (
    E4M3_MAX,
    E4M3_MIN_SUBNORMAL,
    answer_array,
    check_e4m3_codes,
    check_e4m3_values,
    disagreement,
    input_array,
    is_nan_code,
    same_code,
    spec_decode_e4m3,
    spec_encode_e4m3,
)
from .fp8_retired import (
    chain_all_reduce,
    check_delayed_scales,
    check_flushing_ranks,
    check_fp8_all_reduce,
    delayed_scales_reference,
    flushing_ranks,
    fp8_all_reduce_reference,
    fp8_error_bound,
)

__all__ = [
    # E4M3 by hand (fp8_codec)
    "E4M3_MAX",
    "E4M3_MIN_SUBNORMAL",
    "spec_decode_e4m3",
    "spec_encode_e4m3",
    "check_e4m3_values",
    "check_e4m3_codes",
    "disagreement",
    "input_array",
    "answer_array",
    "is_nan_code",
    "same_code",
    # the notebook's tasks before issue 22 (fp8_retired)
    "delayed_scales_reference",
    "check_delayed_scales",
    "chain_all_reduce",
    "fp8_all_reduce_reference",
    "fp8_error_bound",
    "check_fp8_all_reduce",
    "flushing_ranks",
    "check_flushing_ranks",
    # drawn cases
    "COURSE_SEED_ENV",
    "PRACTICE_SEED",
    "course_rng",
    "drawn_cases",
    "E4M3_DRAWN_RANGES",
    "draw_e4m3_values",
    "e4m3_value_cases",
    # a format and a block size
    "BLOCK_FORMATS",
    "SCALE_BYTES",
    "SNR_SLACK_DB",
    "block_recipe_numbers",
    "block_recipe_reference",
    "check_block_recipe",
    "draw_block_case",
    "block_recipe_cases",
    # a delayed-scaling recipe
    "HEADROOM_SLACK",
    "delayed_recipe_numbers",
    "delayed_recipe_reference",
    "check_delayed_recipe",
    "draw_amax_trace",
    "delayed_recipe_cases",
    # the FP8 all-reduce
    "SNR_TOLERANCE_DB",
    "merge_schedule",
    "balanced_merges",
    "chain_merges",
    "merged_all_reduce",
    "largest_safe_mu",
    "check_safe_mu",
    "check_all_reduce_design",
    "draw_gradients",
    "draw_merges",
    "safe_mu_cases",
    "design_cases",
]


# ---- drawn cases --------------------------------------------------------------------------------

#: the environment variable that holds a test cell's key to its cases while it grades
COURSE_SEED_ENV = cohort.ENV
#: the seed when none is set (a learner's own kernel, the package's tests)
PRACTICE_SEED = cohort.PRACTICE
#: a numpy generator for a test cell's label, from the course seed (:func:`cohort.rng`)
course_rng = cohort.rng
#: fixed cases, then cases drawn from the course seed (:func:`cohort.cases`)
drawn_cases = cohort.cases


def _plain(values):
    """float32 values as a list of Python floats (what a test hands a learner's function)."""
    return np.asarray(values, dtype=np.float32).astype(np.float64).tolist()


# ---- E4M3 by hand: values drawn for the encoder --------------------------------------------------

#: the ranges the encoder's drawn values come from, per test cell: its normal range; the
#: subnormals and the numbers around the top of the range
E4M3_DRAWN_RANGES = {
    "test_e4m3_codec": ((2.0**-6, 448.0),),
    "test_e4m3_edges": ((2.0**-12, 2.0**-6), (400.0, 600.0)),
}


def draw_e4m3_values(rng, ranges, size=400):
    """``size`` numbers for the encoder, spread evenly over ``ranges`` (pairs ``(low, high)``
    of magnitudes), log-uniform, with random signs; a quarter of them rounded to float32, as
    a tensor's values would be. A list of floats."""
    parts = []
    for low, high in ranges:
        k = size // len(ranges)
        v = np.exp2(rng.uniform(math.log2(low), math.log2(high), k)) * rng.choice([-1.0, 1.0], k)
        v[: k // 4] = v[: k // 4].astype(np.float32)
        parts.append(v)
    return np.concatenate(parts).tolist()


def e4m3_value_cases(label, count=2, course_seed=None):
    """``count`` lists of numbers drawn from the course seed for the encoder's test cell
    ``label`` (``"test_e4m3_codec"`` or ``"test_e4m3_edges"``, :data:`E4M3_DRAWN_RANGES`), so
    that a table of the fixed cases' codes does not pass."""
    ranges = E4M3_DRAWN_RANGES[label]
    return drawn_cases(label, [], lambda rng: draw_e4m3_values(rng, ranges), count, course_seed)


# ---- first principles: rounding to an FP8 format's grid -----------------------------------------

#: (mantissa bits, exponent of the smallest normal binade, largest value): OFP8 rev 1.0
_GRIDS = {"e4m3": (3, -6, 448.0), "e5m2": (2, -14, 57344.0)}


def _round_by_hand(v, fmt):
    """``v`` rounded to nearest-even on ``fmt``'s grid, saturating at its largest value: in the
    binade ``[2**e, 2**(e+1))`` the spacing is ``2**(e - M)``, below the smallest normal binade
    that of the subnormals. Written without :mod:`collectives.fp8`."""
    bits, emin, top = _GRIDS[fmt]
    a = np.abs(np.asarray(v, dtype=np.float64))
    _, e2 = np.frexp(a)
    e = np.where(a > 0, np.maximum(e2 - 1, emin), emin)
    step = np.ldexp(1.0, e - bits)
    return np.copysign(np.minimum(np.rint(a / step) * step, top), v)


# ---- a format and a block size for a tensor -----------------------------------------------------

#: the formats a block recipe may use
BLOCK_FORMATS = ("e4m3", "e5m2")
#: bytes of one block's scale (a float32, as TE's per-tensor scale and DeepSeek-V3's tile scales)
SCALE_BYTES = 4
#: the reference keeps this much above the SNR asked, a learner's recipe may fall this much
#: below it (float32 scales, float64 sums: the same recipe's SNR differs in the 7th digit)
SNR_SLACK_DB = 0.01


def _tensor(x, what):
    v = input_array(x, what)
    if v.ndim != 1 or v.size < 1 or not np.all(np.isfinite(v)) or not np.any(v):
        raise GradingError(
            f"the test's tensor for {what} is not a 1-D array of finite numbers, "
            "not all zero (a bug in the test)"
        )
    return v


def _bytes_per_element(n, block):
    return 1 + SCALE_BYTES * (-(-n // block)) / n


def block_recipe_numbers(x, fmt, block):
    """What casting the tensor ``x`` (1-D) to ``fmt`` in consecutive blocks of ``block``
    values does, one float32 scale per block (the last block may be shorter): DeepSeek-V3's
    tiles in one dimension, :func:`collectives.fp8.tile_quantize` with ``tile=(block,)``,
    each block's scale ``amax / FP8_MAX``; ``block = len(x)`` is per-tensor scaling. Returns
    ``{"snr_db", "flushed", "bytes"}``: the SNR of the round trip against ``x``
    (:func:`collectives.fp8.snr_db`), the fraction of the nonzero values that come back as 0,
    and the bytes per element stored or sent (1 per code, :data:`SCALE_BYTES` per block)."""
    from ...fp8 import snr_db, tile_dequantize, tile_quantize

    v = _tensor(x, "block_recipe_numbers")
    codes, scales = tile_quantize(v, tile=(int(block),), fmt=fmt)
    y = tile_dequantize(codes, scales, tile=(int(block),), fmt=fmt).astype(np.float64)
    # first principles: each value divided by its block's scale, rounded to the format's grid
    per_value = np.repeat(scales.astype(np.float64), int(block))[: v.size]
    spec = _round_by_hand(v / per_value, fmt) * per_value
    if not np.allclose(y, spec, rtol=1e-6, atol=0):
        raise disagreement("collectives.fp8.tile_quantize and the FP8 grid")
    nonzero = v != 0
    return {
        "snr_db": snr_db(v, y),
        "flushed": float(np.count_nonzero(nonzero & (y == 0)) / np.count_nonzero(nonzero)),
        "bytes": _bytes_per_element(v.size, int(block)),
    }


def _block_candidates(n):
    """The reference's blocks, fewest bytes first: the whole tensor, then powers of two."""
    blocks = [n] + [2**k for k in range(n.bit_length() - 1, -1, -1) if 2**k < n]
    return sorted(set(blocks), key=lambda b: (-(-n // b), -b))


def block_recipe_reference(x, min_snr_db, max_flushed):
    """The course's recipe for ``x``: among E4M3 and E5M2 with the whole tensor or a block of
    a power of two values, the one with the fewest bytes per element whose SNR is at least
    ``min_snr_db + SNR_SLACK_DB`` and which flushes at most ``max_flushed`` of the nonzero
    values (the higher SNR of the two formats at the same bytes). Returns ``((fmt, block),
    numbers)``; one value per block always qualifies (every value cast exactly)."""
    v = _tensor(x, "block_recipe_reference")
    for block in _block_candidates(v.size):
        found = []
        for fmt in BLOCK_FORMATS:
            numbers_ = block_recipe_numbers(v, fmt, block)
            if (
                numbers_["snr_db"] >= min_snr_db + SNR_SLACK_DB
                and numbers_["flushed"] <= max_flushed
            ):
                found.append((numbers_["snr_db"], fmt, numbers_))
        if found:
            _, fmt, numbers_ = max(found)
            return (fmt, block), numbers_
    raise GradingError(f"no recipe reaches {min_snr_db!r} dB (a bug in the test)")


def _recipe_text(recipe, numbers_):
    fmt, block = recipe
    return (
        f"({fmt!r}, {block}): {numbers_['bytes']:.6g} bytes per element, SNR "
        f"{numbers_['snr_db']:.2f} dB, {numbers_['flushed']:.3%} flushed"
    )


def _block_answer(answer, what, n):
    if answer is None:
        raise GradingError(f"{what} is None: nothing was returned (did you forget `return`?)")
    if not isinstance(answer, (tuple, list)) or len(answer) != 2:
        raise GradingError(
            f"{what} is {in_words(answer)}; expected a pair (fmt, block) such as ('e4m3', 128)"
        )
    fmt, block = answer
    if not isinstance(fmt, str) or fmt not in BLOCK_FORMATS:
        raise GradingError(f"{what}: the format is {in_words(fmt)}; expected 'e4m3' or 'e5m2'")
    if (
        isinstance(block, bool)
        or not isinstance(block, numbers.Integral)
        or not 1 <= int(block) <= n
    ):
        raise GradingError(
            f"{what}: the block is {in_words(block)}; expected a whole number of "
            f"values from 1 to {n} (the tensor's length: one scale for all)"
        )
    return fmt, int(block)


def _block_hint(fmt, block, numbers_, min_snr_db, max_flushed, n):
    if numbers_["snr_db"] < min_snr_db - SNR_SLACK_DB and fmt == "e5m2":
        return (
            "; E5M2 has one mantissa bit less than E4M3, which costs it about 6 dB of "
            "SNR (the chapter's 32 against 26 dB)"
        )
    if numbers_["flushed"] > max_flushed and block == n:
        return (
            f"; one scale for the whole tensor puts its largest value at the top of {fmt} "
            "and flushes what lies further below it than the format's range: E5M2 spans 14 "
            "binades more than E4M3, and smaller blocks each span fewer"
        )
    return ""


def check_block_recipe(answer, what, x, min_snr_db, max_flushed):
    """Check a learner's ``(fmt, block)`` for the tensor ``x``: its SNR at least ``min_snr_db``
    (to :data:`SNR_SLACK_DB`), at most ``max_flushed`` of the nonzero values flushed, and no
    more bytes per element than :func:`block_recipe_reference`'s recipe. Returns 1.0."""
    v = _tensor(x, what)
    min_snr_db, max_flushed = float(min_snr_db), float(max_flushed)
    fmt, block = _block_answer(answer, what, v.size)
    mine = block_recipe_numbers(v, fmt, block)
    recipe, best = block_recipe_reference(v, min_snr_db, max_flushed)
    asked = f"(asked: SNR at least {min_snr_db:.2f} dB, at most {max_flushed:.3%} flushed)"
    hint = _block_hint(fmt, block, mine, min_snr_db, max_flushed, v.size)
    if mine["snr_db"] < min_snr_db - SNR_SLACK_DB:
        raise AssertionError(
            f"{what} is {_recipe_text((fmt, block), mine)}: the SNR is too low {asked}{hint}"
        )
    if mine["flushed"] > max_flushed:
        raise AssertionError(
            f"{what} is {_recipe_text((fmt, block), mine)}: it flushes too many "
            f"values to zero {asked}{hint}"
        )
    if mine["bytes"] > best["bytes"] * (1 + 1e-12):
        raise AssertionError(
            f"{what} is {_recipe_text((fmt, block), mine)}: it meets both {asked}, but "
            f"{_recipe_text(recipe, best)} meets them with fewer bytes (the reference, "
            "collectives.grading.tasks.fp8.block_recipe_reference)"
        )
    return 1.0


def draw_block_case(rng, kind=None):
    """A tensor and what its use asks, for :func:`check_block_recipe`: ``(x, min_snr_db,
    max_flushed)``, ``x`` 2,048 to 4,096 float32 values of one of three kinds: gradient-like
    (log-normal magnitudes, 1.5 to 5 binades of standard deviation, random signs), an
    activation of 128 channels with 1 to 6 outlier channels 30 to 10,000 times larger,
    heavy-tailed (Student's t, 0.7 to 3 degrees of freedom), the kind drawn too unless given
    (0, 1, 2); an SNR of 18 to 38 dB and 0.01 % to 3 % flushed at most."""
    n = int(rng.choice([2048, 3000, 4096]))
    kind = int(rng.integers(3)) if kind is None else int(kind)
    if kind == 0:
        x = np.exp2(rng.normal(rng.uniform(-16, 0), rng.uniform(1.5, 5), n)) * rng.choice(
            [-1.0, 1.0], n
        )
    elif kind == 1:
        rows = -(-n // 128)
        x = rng.standard_normal((rows, 128)) * np.exp2(rng.uniform(-8, 4))
        outliers = rng.choice(128, int(rng.integers(1, 7)), replace=False)
        x[:, outliers] *= 10 ** rng.uniform(1.5, 4)
        x = x.ravel()[:n]
    else:
        x = rng.standard_t(rng.uniform(0.7, 3), n) * np.exp2(rng.uniform(-10, 2))
    return (
        _plain(x),
        round(float(rng.uniform(18, 38)), 2),
        float(f"{10 ** rng.uniform(-4, -1.5):.2g}"),
    )


def block_recipe_cases(count=4, course_seed=None):
    """The cases of the notebook's block-recipe test, ``(name, x, min_snr_db, max_flushed)``:
    three fixed ones (a gradient-like tensor that E5M2 per tensor serves, an activation with
    outlier channels that needs E4M3 in blocks of 64, a heavy-tailed tensor that E4M3 per
    tensor serves), then ``count`` drawn from the course seed."""
    fixed = []
    for name, kind, number, min_snr, max_flushed in (
        ("the gradient-like tensor", 0, 5, 22.0, 0.001),
        ("the activation with outlier channels", 1, 4, 30.0, 0.002),
        ("the heavy-tailed tensor", 2, 0, 30.0, 0.01),
    ):
        x, _, _ = draw_block_case(_fixed_rng(10 * kind + number), kind)
        fixed.append((name, x, min_snr, max_flushed))
    return _named(
        drawn_cases("test_block_recipe", fixed, draw_block_case, count, course_seed),
        len(fixed),
        "drawn tensor",
    )


def _named(cases, n_fixed, what):
    """Drawn cases with a name in front, as the fixed ones have: ``drawn tensor 1``, ..."""
    return cases[:n_fixed] + [(f"{what} {i + 1}", *case) for i, case in enumerate(cases[n_fixed:])]


def _fixed_rng(number):
    """The generator of a fixed case (the same in every cohort)."""
    return np.random.default_rng([22, number])


# ---- a delayed-scaling recipe for a run ---------------------------------------------------------

#: a recipe may leave this many binades more unused, on average, than the reference's
HEADROOM_SLACK = 0.05
#: an amax times its scale above E4M3_MAX by more than this (relative) is clipped (TE computes
#: scales in float32)
_CLIP_REL = 1e-6


def _trace(amaxes, what):
    a = input_array(amaxes, what)
    if a.ndim != 1 or a.size < 2 or not np.all(np.isfinite(a)) or np.any(a <= 0):
        raise GradingError(
            f"the test's amaxes for {what} are not a run of at least two "
            "positive numbers (a bug in the test)"
        )
    return a


def _scales_by_hand(a, history_len, margin):
    """TE's delayed scaling in words: step t casts with 448 / (the largest amax of steps
    t - history_len .. t - 1) / 2**margin; step 0 with 1.0."""
    scales = np.ones(a.size)
    for t in range(1, a.size):
        scales[t] = E4M3_MAX / a[max(0, t - history_len) : t].max() / 2.0**margin
    return scales


def delayed_recipe_numbers(amaxes, history_len, margin, by_hand=True):
    """What TE's delayed scaling with ``history_len`` and ``margin`` (E4M3, ``"max"``) does to
    a run whose tensor has amax ``amaxes[t]`` at step ``t``, from step 1 on (step 0 casts with
    1.0 whatever the recipe): ``{"clipped": [steps whose amax times its scale exceeds 448],
    "headroom": the mean of log2(448 / (amax * scale)), the binades left unused at the top,
    "top": amax * scale per step}``, with :func:`collectives.fp8.delayed_scales` (held to TE's
    rule in words unless ``by_hand`` is false)."""
    from ...fp8 import delayed_scales

    a = _trace(amaxes, "delayed_recipe_numbers")
    scales = delayed_scales(a, "e4m3", history_len=int(history_len), margin=int(margin))
    scales = np.asarray(scales, dtype=np.float64)
    if by_hand and not np.allclose(
        scales, _scales_by_hand(a, int(history_len), int(margin)), rtol=1e-6, atol=0
    ):
        raise disagreement("collectives.fp8.delayed_scales and Transformer Engine's rules")
    top = a[1:] * scales[1:]
    clipped = [int(t) + 1 for t in np.flatnonzero(top > E4M3_MAX * (1 + _CLIP_REL))]
    return {"clipped": clipped, "headroom": float(np.mean(np.log2(E4M3_MAX / top))), "top": top}


def delayed_recipe_reference(amaxes):
    """The course's recipe for a run: every ``history_len`` from 1 to the run's length, each
    with the least integer margin that clips no step, and the one that leaves the least
    range unused on average (the shortest history among equals). Returns ``((history_len,
    margin), numbers)``."""
    a = _trace(amaxes, "delayed_recipe_reference")
    best = None
    for history_len in range(1, a.size):
        top = delayed_recipe_numbers(a, history_len, 0, by_hand=False)["top"]
        margin = max(0, math.ceil(math.log2(top.max() / E4M3_MAX) - 1e-9))
        headroom = float(np.mean(np.log2(E4M3_MAX / top))) + margin
        if best is None or headroom < best[0] - 1e-12:
            best = (headroom, history_len, margin)
    recipe = (best[1], best[2])
    return recipe, delayed_recipe_numbers(a, *recipe)


def _delayed_answer(answer, what):
    if answer is None:
        raise GradingError(f"{what} is None: nothing was returned (did you forget `return`?)")
    if not isinstance(answer, (tuple, list)) or len(answer) != 2:
        raise GradingError(
            f"{what} is {in_words(answer)}; expected a pair (history_len, margin) such as (16, 1)"
        )
    found = []
    for name, value, low in zip(("history_len", "margin"), answer, (1, 0)):
        whole = isinstance(value, numbers.Integral) or (
            isinstance(value, float) and value.is_integer()
        )
        if isinstance(value, bool) or not whole or value < low:
            raise GradingError(
                f"{what}: {name} is {in_words(value)}; expected a whole number "
                f">= {low} (TE's recipe takes integers)"
            )
        found.append(int(value))
    return tuple(found)


def check_delayed_recipe(answer, what, amaxes):
    """Check a learner's ``(history_len, margin)`` for a run: no step from 1 on clipped, and a
    mean unused range at most :data:`HEADROOM_SLACK` binades above
    :func:`delayed_recipe_reference`'s. Returns 1.0."""
    a = _trace(amaxes, what)
    history_len, margin = _delayed_answer(answer, what)
    mine = delayed_recipe_numbers(a, history_len, margin)
    recipe, best = delayed_recipe_reference(a)
    reference = (
        f"the reference {recipe} clips none and leaves {best['headroom']:.3f} "
        "binades unused on average (collectives.grading.tasks.fp8."
        "delayed_recipe_reference)"
    )
    if mine["clipped"]:
        t = mine["clipped"][0]
        raise AssertionError(
            f"{what} is ({history_len}, {margin}): at step {t} the amax {a[t]:.6g} times the "
            f"scale is {mine['top'][t - 1]:.6g}, above 448: the step's largest values are "
            f"clipped ({len(mine['clipped'])} of the {a.size - 1} steps from step 1 on); "
            f"{reference}"
        )
    if mine["headroom"] > best["headroom"] + HEADROOM_SLACK:
        raise AssertionError(
            f"{what} is ({history_len}, {margin}): it clips no step but leaves "
            f"{mine['headroom']:.3f} binades unused at the top on average, more than "
            f"{HEADROOM_SLACK} above the best: {reference}"
        )
    return 1.0


def draw_amax_trace(rng, kind=None):
    """A run of 150 to 250 steps for :func:`check_delayed_recipe`: ``log2`` of the amax is a
    random walk (a drift of up to 0.02 binade per step) plus noise (0.05 to 0.4 binade), and
    one of: nothing more, a spike of 0.5 to 3 binades every 6 to 40 steps, such spikes at
    random steps (2 % to 10 % of them), or a pattern repeating every 2 to 5 steps (one step
    in each that much larger): kind 0, 1, 2 or 3, drawn too unless given."""
    steps = int(rng.integers(150, 251))
    kind = int(rng.integers(4)) if kind is None else int(kind)
    log2a = (
        np.cumsum(rng.normal(rng.uniform(-0.02, 0.02), rng.uniform(0.01, 0.06), steps))
        + rng.normal(0, rng.uniform(0.05, 0.4), steps)
        + rng.uniform(-12, 4)
    )
    height = rng.uniform(0.5, 3)
    if kind == 1:
        period = int(rng.integers(6, 41))
        log2a[int(rng.integers(period)) :: period] += height
    elif kind == 2:
        log2a[rng.random(steps) < rng.uniform(0.02, 0.1)] += height
    elif kind == 3:
        log2a += height * (np.arange(steps) % int(rng.integers(2, 6)) == 0)
    return _plain(np.exp2(log2a))


def delayed_recipe_cases(count=4, course_seed=None):
    """The runs of the notebook's delayed-recipe test, ``(name, amaxes)``: three fixed ones
    (periodic spikes, a repeating pattern, drift and noise alone), then ``count`` drawn from
    the course seed."""
    fixed = [
        (name, draw_amax_trace(_fixed_rng(100 + kind), kind))
        for name, kind in (
            ("the run with periodic spikes", 1),
            ("the run with a repeating pattern", 3),
            ("the run of drift and noise", 0),
        )
    ]
    return _named(
        drawn_cases(
            "test_delayed_recipe", fixed, lambda rng: (draw_amax_trace(rng),), count, course_seed
        ),
        len(fixed),
        "drawn run",
    )


# ---- the FP8 all-reduce: the order of additions and mu ------------------------------------------

#: a design's SNR may be this much below the balanced tree's
SNR_TOLERANCE_DB = 2.0
#: a partial sum above this (scaled) is clipped: above E4M3_MAX plus half its step, 464, which
#: itself is a tie that goes to the even code 448
_E4M3_LIMIT = 464.0


def _gradients(grads, what):
    g = input_array(grads, what)
    if (
        g.ndim != 2
        or g.shape[0] < 2
        or g.shape[1] < 1
        or not np.all(np.isfinite(g))
        or not np.any(g)
    ):
        raise GradingError(
            f"the test's gradients for {what} are not one row per rank of at "
            "least two ranks, finite, not all zero (a bug in the test)"
        )
    return g.astype(np.float32)


def _merges(merges, what, n):
    """A learner's merges as a list of ``(dst, src)`` int pairs that reduce ``n`` ranks to one;
    a :class:`GradingError` for the wrong form, an ``AssertionError`` for a plan that does
    not add every rank exactly once."""
    if merges is None:
        raise GradingError(
            f"{what}: the merges are None: nothing was returned (did you forget `return`?)"
        )
    if not isinstance(merges, (list, tuple)):
        raise GradingError(
            f"{what}: the merges are {in_words(merges)}; expected a list of (dst, src) pairs"
        )
    pairs = []
    for i, pair in enumerate(merges):
        if (
            not isinstance(pair, (list, tuple))
            or len(pair) != 2
            or not all(isinstance(r, numbers.Integral) and not isinstance(r, bool) for r in pair)
        ):
            raise GradingError(
                f"{what}: merge {i} is {in_words(pair)}; expected a pair of ranks (dst, src)"
            )
        pairs.append((int(pair[0]), int(pair[1])))
    sent = {}
    for i, (dst, src) in enumerate(pairs):
        for rank in (dst, src):
            if not 0 <= rank < n:
                raise AssertionError(
                    f"{what}: merge {i} is {(dst, src)}, but the ranks are 0 to {n - 1}"
                )
        if dst == src:
            raise AssertionError(
                f"{what}: merge {i} is {(dst, src)}: a rank cannot add its own "
                "partial sum to itself"
            )
        for rank, role in ((src, "sends"), (dst, "adds into")):
            if rank in sent:
                raise AssertionError(
                    f"{what}: merge {i} {role} rank {rank}, which sent its partial sum away at "
                    f"merge {sent[rank]} and holds nothing more to add"
                )
        sent[src] = i
    if len(pairs) != n - 1:
        left = sorted(set(range(n)) - set(sent))
        raise AssertionError(
            f"{what}: {len(pairs)} merges leave {len(left)} partial sums "
            f"(ranks {show(left)}); {n} ranks need {n - 1} merges to end "
            "with one"
        )
    return pairs


def merge_schedule(merges, n_ranks):
    """The all-reduce :class:`~collectives.Schedule` of a list of merges: merge ``(dst, src)``
    sends rank ``src``'s partial sum to rank ``dst``, which adds it (one chunk, the whole
    buffer), each merge in the first step after the earlier merges of its two ranks; the rank
    left holding the total then sends it to the others, doubling the ranks that hold it at
    every step (copies). Verified with :func:`collectives.verify`."""
    from ...replay import verify
    from ...schedule import Schedule

    n = int(n_ranks)
    pairs = _merges(merges, "merge_schedule", n)
    ready = [0] * n
    transfers = []
    for dst, src in pairs:
        step = max(ready[dst], ready[src])
        transfers.append((step, src, dst, True))
        ready[dst] = step + 1
    root = pairs[-1][0] if pairs else 0
    step = max(ready) if pairs else 0
    holders, waiting = [root], [r for r in range(n) if r != root]
    while waiting:
        for holder in list(holders):
            if waiting:
                transfers.append((step, holder, waiting[0], False))
                holders.append(waiting.pop(0))
        step += 1
    transfers.sort(key=lambda t: t[0])
    arrays = [np.array([t[k] for t in transfers], dtype=np.int64) for k in range(3)]
    zeros = np.zeros(len(transfers), dtype=np.int64)
    reduce = np.array([t[3] for t in transfers], dtype=bool)
    schedule = Schedule.from_arrays(
        "all_reduce", n, 1, *arrays, zeros, zeros, reduce, n_steps=step, name="merges"
    )
    verify(schedule)
    return schedule


def balanced_merges(n_ranks):
    """The reference's order of additions: a balanced tree, rank ``r`` adding rank ``r + d``
    for ``d = 1, 2, 4, ...`` (every ``r`` a multiple of ``2 d``), ``ceil(log2 n)`` levels."""
    n, merges, d = int(n_ranks), [], 1
    while d < n:
        merges += [(r, r + d) for r in range(0, n - d, 2 * d)]
        d *= 2
    return merges


def chain_merges(n_ranks):
    """The ranks added one after another in rank order, as one chunk of a ring adds them:
    rank ``r + 1`` adds rank ``r``'s partial sum."""
    return [(r + 1, r) for r in range(int(n_ranks) - 1)]


def _shared_scale(g):
    """FP8-LM's shared scale: 448 over the largest amax of any rank, in float32 (TE's
    formula), as :func:`collectives.fp8.fp8_all_reduce` computes it."""
    return float(np.float32(E4M3_MAX) / np.float32(np.abs(g).max()))


def _merged_by_hand(g, pairs, multiplier):
    """First principles: every rank's gradient times ``multiplier`` cast to E4M3 (saturating),
    then each merge's exact sum of two E4M3 values rounded to E4M3 again (NCCL's FP16 add and
    narrowing give the same). Returns (the total in E4M3, the first cast that clipped: None,
    ``("input", rank)`` or ``("merge", i)``, the largest magnitude anything was cast from)."""
    x = g.astype(np.float64) * multiplier
    values = _round_by_hand(x, "e4m3")
    first, largest = None, float(np.abs(x).max())
    if largest > _E4M3_LIMIT:
        first = ("input", int(np.flatnonzero(np.abs(x).max(axis=1) > _E4M3_LIMIT)[0]))
    held = {r: values[r] for r in range(g.shape[0])}
    for i, (dst, src) in enumerate(pairs):
        exact = held[dst] + held.pop(src)
        peak = float(np.abs(exact).max())
        largest = max(largest, peak)
        if first is None and peak > _E4M3_LIMIT:
            first = ("merge", i)
        held[dst] = _round_by_hand(exact, "e4m3")
    (total,) = held.values()
    return total, first, largest


def merged_all_reduce(grads, merges, mu):
    """:func:`collectives.fp8.fp8_all_reduce` of ``grads`` (one row per rank) over
    :func:`merge_schedule` of ``merges``, as MS-AMP's NCCL runs it (``fmt="e4m3",
    scaling="auto", mu=mu, quantize="per_hop", accumulate="fp8"``: FP8-LM's shared scale,
    every partial sum narrowed to E4M3), held to :func:`_merged_by_hand`. Returns the
    :class:`~collectives.fp8.FP8AllReduceResult`."""
    from ...fp8 import fp8_all_reduce

    g = _gradients(grads, "merged_all_reduce")
    pairs = _merges(merges, "merged_all_reduce", g.shape[0])
    mu = float(mu)
    result = fp8_all_reduce(
        g,
        merge_schedule(pairs, g.shape[0]),
        fmt="e4m3",
        scaling="auto",
        mu=mu,
        quantize="per_hop",
        accumulate="fp8",
    )
    scale = _shared_scale(g)
    total, first, _ = _merged_by_hand(g, pairs, mu * scale)
    by_hand = total / (g.shape[0] * mu * scale)
    if not (
        np.allclose(result.output[0], by_hand, rtol=1e-6, atol=1e-30)
        and (first is None) == (result.overflow_rate == 0)
    ):
        raise disagreement("collectives.fp8.fp8_all_reduce and the merges narrowed by hand")
    return result


def largest_safe_mu(grads, merges):
    """The reference's ``mu`` for ``merges``: the largest power of two with which nothing is
    clipped (no input cast, no partial sum above 464 once scaled), found from the largest
    partial sum and confirmed by :func:`merged_all_reduce`. Returns ``(mu, result)``."""
    g = _gradients(grads, "largest_safe_mu")
    pairs = _merges(merges, "largest_safe_mu", g.shape[0])
    scale = _shared_scale(g)

    def clips(k):
        return _merged_by_hand(g, pairs, 2.0**k * scale)[1] is not None

    # a first guess from the largest value cast with mu = 1 (scaling by a power of two moves
    # the normal values' roundings with it), then the next powers until the edge
    k = math.floor(math.log2(_E4M3_LIMIT / _merged_by_hand(g, pairs, scale)[2]))
    if clips(k):
        while clips(k):
            k -= 1
    else:
        while not clips(k + 1):
            k += 1
    result = merged_all_reduce(g, pairs, 2.0**k)
    if result.overflow_rate:
        raise disagreement("collectives.fp8.fp8_all_reduce and the merges narrowed by hand")
    return 2.0**k, result


def _mu(value, what):
    """A learner's mu: a positive power of two (a power of two changes no rounding in the normal
    range; any other would make an answer at the edge of clipping hang on the float32 rounding
    of the shared scale)."""
    if value is None:
        raise GradingError(f"{what} is None: nothing was returned (did you forget `return`?)")
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Real)
        or not math.isfinite(float(value))
        or float(value) <= 0
    ):
        raise GradingError(
            f"{what}: mu is {in_words(value)}; expected a power of two such as 0.125"
        )
    if math.frexp(float(value))[0] != 0.5:
        raise GradingError(
            f"{what}: mu is {float(value)!r}, not a power of two (2**k for a whole number k)"
        )
    return float(value)


def _where_clipped(g, pairs, mu):
    _, first, _ = _merged_by_hand(g, pairs, mu * _shared_scale(g))
    if first is None:
        return ""
    if first[0] == "input":
        return f" (first at the cast of rank {first[1]}'s gradient)"
    dst, src = pairs[first[1]]
    return f" (first at merge {first[1]}, where rank {dst} adds rank {src}'s partial sum)"


def check_safe_mu(mu, what, grads, merges):
    """Check a learner's ``mu`` (a power of two) for ``grads`` added in the order ``merges``:
    nothing clipped, and no more nonzero inputs flushed to zero than with
    :func:`largest_safe_mu` (a smaller power of two passes only if it flushes no more).
    Returns 1.0."""
    g = _gradients(grads, what)
    pairs = _merges(merges, f"the merges of {what}", g.shape[0])
    mu = _mu(mu, what)
    mine = merged_all_reduce(g, pairs, mu)
    best_mu, best = largest_safe_mu(g, pairs)
    reference = (
        f"mu = {best_mu!r}, the largest power of two that clips nothing, flushes "
        f"{best.underflow_rate:.3%} of the nonzero inputs (collectives.grading.tasks."
        "fp8.largest_safe_mu)"
    )
    if mine.overflow_rate:
        raise AssertionError(
            f"{what} is {mu!r}: {mine.overflow_rate:.3%} of the results are clipped on the way"
            f"{_where_clipped(g, pairs, mu)}: every partial sum is narrowed to E4M3, and one "
            f"larger than 448 (464 with rounding) saturates; {reference}"
        )
    if mine.underflow_rate > best.underflow_rate + 1e-12:
        hint = ""
        if math.isclose(mu, 1 / g.shape[0], rel_tol=1e-6):
            hint = (
                "; that is pre-scaling, 1/N: the sum of N casts rarely comes near N times "
                "the largest one"
            )
        raise AssertionError(
            f"{what} is {mu!r}: nothing is clipped, but {mine.underflow_rate:.3%} of the "
            f"nonzero inputs are flushed to zero; {reference}{hint}"
        )
    return 1.0


def check_all_reduce_design(answer, what, grads):
    """Check a learner's ``(merges, mu)`` (``mu`` a power of two) for ``grads``: nothing
    clipped, and the SNR of the mean every rank gets at most :data:`SNR_TOLERANCE_DB` below
    the balanced tree's (:func:`balanced_merges` with :func:`largest_safe_mu`). Returns
    1.0."""
    g = _gradients(grads, what)
    if answer is None:
        raise GradingError(f"{what} is None: nothing was returned (did you forget `return`?)")
    if not isinstance(answer, (tuple, list)) or len(answer) != 2:
        raise GradingError(f"{what} is {in_words(answer)}; expected a pair (merges, mu)")
    pairs = _merges(answer[0], what, g.shape[0])
    mu = _mu(answer[1], what)
    mine = merged_all_reduce(g, pairs, mu)
    best_mu, best = largest_safe_mu(g, balanced_merges(g.shape[0]))
    reference = f"the course's reference design gives {best.snr_db:.2f} dB (with mu = {best_mu!r})"
    if mine.overflow_rate:
        raise AssertionError(
            f"{what}: with mu = {mu!r}, {mine.overflow_rate:.3%} of the results are clipped on "
            f"the way{_where_clipped(g, pairs, mu)}; {reference}"
        )
    if mine.snr_db < best.snr_db - SNR_TOLERANCE_DB:
        hint = ""
        if pairs == chain_merges(g.shape[0]):
            hint = (
                "; your merges add the ranks one after another, as a ring does: every "
                "rank's value is added to a partial sum ever larger than it, rounded to "
                "E4M3 each time"
            )
        raise AssertionError(
            f"{what}: nothing is clipped, but the mean's SNR is {mine.snr_db:.2f} dB, more "
            f"than {SNR_TOLERANCE_DB:g} dB below the reference: {reference}{hint}"
        )
    return 1.0


def draw_gradients(rng, n_ranks=None, opposed=0.0):
    """Gradients of ``n_ranks`` ranks (20 to 40 if not given), 1,024 float32 values each, made
    as in the chapter's experiment but with magnitudes spread over fewer binades: a part
    shared by all ranks plus a part of each rank's own, both with log-normal magnitudes
    (``log2|g|`` normal, mean -14, standard deviation 1, against the chapter's 2, so that the
    SNR of 1,024 values does not hang on a handful of them) and random signs; then each
    rank's gradient scaled by ``2**z``, ``z`` normal with a standard deviation of 0 to 0.5
    (ranks whose batches differ). On a fraction ``opposed`` of the ranks (the last ones) the
    shared part has the opposite sign, so that partial sums can exceed the total."""
    n = int(rng.integers(20, 41)) if n_ranks is None else int(n_ranks)
    size = 1024

    def part(shape):
        return np.exp2(rng.normal(-14.0, 1.0, shape)) * rng.choice([-1.0, 1.0], shape)

    signs = np.where(np.arange(n) >= n - round(opposed * n), -1.0, 1.0)
    g = signs[:, None] * part(size) + part((n, size))
    g *= np.exp2(rng.normal(0, rng.uniform(0, 0.5), (n, 1)))
    return [_plain(row) for row in g]


def draw_merges(rng, n_ranks, kind=None):
    """An order of additions for :func:`check_safe_mu`: the chain (kind 0), the balanced tree
    (1) or a random tree (2: two partial sums picked at random at every merge), the kind drawn
    too unless given."""
    n = int(n_ranks)
    kind = int(rng.integers(3)) if kind is None else int(kind)
    if kind == 0:
        return chain_merges(n)
    if kind == 1:
        return balanced_merges(n)
    active, merges = list(range(n)), []
    while len(active) > 1:
        i, j = (int(k) for k in rng.choice(len(active), 2, replace=False))
        merges.append((active[i], active[j]))
        active.pop(j)
    return merges


def safe_mu_cases(count=3, course_seed=None):
    """The cases of the notebook's test of ``mu``, ``(name, grads, merges)``: two fixed ones (16
    ranks added in rank order, half of them with the shared part of the opposite sign, so
    that the partial sums peak halfway and the total is small; 32 ranks added in a random
    tree), then ``count`` drawn from the course seed (up to half the ranks opposed, one of
    :func:`draw_merges`'s orders)."""
    fixed = [
        (
            "16 ranks in a chain, half of them opposed",
            draw_gradients(_fixed_rng(216), 16, opposed=0.5),
            chain_merges(16),
        ),
        (
            "32 ranks in a random tree",
            draw_gradients(_fixed_rng(232), 32),
            draw_merges(_fixed_rng(300), 32, kind=2),
        ),
    ]

    def draw(rng):
        grads = draw_gradients(rng, opposed=float(rng.uniform(0, 0.5)))
        return grads, draw_merges(rng, len(grads))

    return _named(
        drawn_cases("test_safe_mu", fixed, draw, count, course_seed), len(fixed), "drawn case"
    )


def design_cases(count=3, course_seed=None):
    """The cases of the notebook's all-reduce design test, ``(name, grads)``: two fixed ones (16
    and 32 ranks), then ``count`` drawn from the course seed (20 to 40 ranks)."""
    fixed = [
        ("16 ranks", draw_gradients(_fixed_rng(416), 16)),
        ("32 ranks", draw_gradients(_fixed_rng(432), 32)),
    ]
    return _named(
        drawn_cases(
            "test_all_reduce_design", fixed, lambda rng: (draw_gradients(rng),), count, course_seed
        ),
        len(fixed),
        "drawn case",
    )
