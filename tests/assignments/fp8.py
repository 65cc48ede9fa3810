"""fp8 (exercises/source/fp8/fp8.ipynb, 10 points): what the pipeline test expects. Format: the
docstring of tests/assignments/__init__.py.

The tasks must be solved without the collectives package: every hidden test re-runs the
learner's function from its source code in a process where ``collectives`` cannot be imported
(``_grading.call(f, ..., isolated=True)``), and the checks of collectives.grading.tasks.fp8
measure every answer with collectives.fp8 in the re-check process. Tasks 2 to 4 are recipes
judged by what they do (bytes, SNR, values flushed or clipped, range left unused) against the
reference recipe's numbers, on fixed cases and on cases drawn from the course seed; every
submission below scores the same whatever the seed (tests/package/grading/tasks/test_fp8.py
runs the same answers on other seeds). Submissions, besides the four every spec has:

- *correct* (every solution), *blank* (the release as handed out);
- *partial*: E4M3 by hand and the block recipe right, TE's default delayed-scaling recipe
  (which clips), the rest blank (1 + 1 + 2 = 4);
- *hostile*: wrong answers behind monkeypatching of ``collectives.grading`` (each cell
  patches what its own visible test reads, since every hidden test before it reloads the
  package), ``math.isclose`` and IPython, lying strings and floats, rebound names, edited test
  cells, and a package shortcut whose visible test it fools; its E4M3 decoder and encoder are
  genuinely right (1 + 1);
- *wrong*, *wrong-range* and *wrong-bound*: three plausible mistakes per task (subnormals
  with an implicit 1, 0xFF not NaN, the subnormal exponent -7; ties half up, subnormals
  flushed, every overflow saturated; E4M3 per tensor always, E5M2 per tensor whenever it
  keeps the values, E4M3 in blocks of 32 always; TE's defaults, the shortest history without
  margin, the longest history; mu from the total alone, pre-scaling, mu from the sum of the
  amaxes; the ranks in a chain, a balanced tree with post-scaling, a chain sorted by size):
  0 each;
- *variant*: every answer right but written differently (a table of all codes built with
  ``math.ldexp``; a Python loop with ``bisect`` over that table; the encoder itself for E4M3
  and a table of E5M2's values; a deque for the history and every margin tried; the largest
  mu by bisection, not a power of two; another balanced tree; a terser written answer): 10;
- *better*: the solutions with two that beat the reference: every number of blocks tried,
  not only powers of two (never more bytes, fewer where the best count of blocks is not a
  power of two), and the most accurate of three orders by the learner's own narrowing (a
  balanced tree, halving from the top, Huffman's order: never below the reference, up to
  about 2 dB above it): 10;
- *shortcut*: every answer computed by calling the package, in each way a learner might
  (the notebook's ``cl``, ``from collectives.fp8 import ...``, ``import collectives`` inside
  the function, ``importlib``, the package's own grading reference): 0, each cell failing
  with "this task must be solved without the collectives package".
"""

from assignments import TAMPERING, Error, origin_attack, submission

NOTEBOOK = "fp8"

# grade_id of each graded cell -> its points (exercises/README.md's table)
POINTS = {
    NOTEBOOK: {
        "test_e4m3_codec": 1,
        "test_e4m3_edges": 1,
        "test_block_recipe": 2,
        "test_delayed_recipe": 2,
        "test_safe_mu": 1,
        "test_all_reduce_design": 2,
        "written_fp8_ring": 1,
    }
}
# the written answer, graded by hand in the formgrader (its rubric is in the source notebook)
MANUAL = {NOTEBOOK: ("written_fp8_ring",)}
MAX_SCORE = 10
# solution cell -> the test cells that grade it (the encoder has two, the first also grades
# the decoder)
SOLUTIONS = {
    NOTEBOOK: {
        "decode_e4m3": "test_e4m3_codec",
        "encode_e4m3": ("test_e4m3_codec", "test_e4m3_edges"),
        "block_recipe": "test_block_recipe",
        "delayed_recipe": "test_delayed_recipe",
        "safe_mu": "test_safe_mu",
        "design_all_reduce": "test_all_reduce_design",
    }
}
ALL = tuple(SOLUTIONS[NOTEBOOK])
ZERO = dict.fromkeys(POINTS[NOTEBOOK], 0)

NO_PACKAGE = "this task must be solved without the collectives package"
ADVICE = (
    "; use the package in scratch cells to check your answers, not inside the functions "
    "that are graded"
)

# ---- Task 1: the solution's decoder and encoder, each with one line changed ------------------

DECODER = """
def decode_e4m3(codes):
    c = np.asarray(codes).astype(np.int64)
    sign = np.where(c & 0x80, -1.0, 1.0)
    exponent = (c >> 3) & 0b1111
    mantissa = c & 0b111
    magnitude = np.where(exponent > 0, (1 + mantissa / 8) * 2.0 ** (exponent - 7),
                         mantissa / 8 * 2.0**-6)
    return np.where((c & 0x7F) == 0x7F, np.nan, sign * magnitude)
"""

ENCODER = """
def encode_e4m3(x, saturate=False):
    v = np.asarray(x, dtype=np.float64)
    a = np.where(np.isfinite(v), np.abs(v), 0.0)
    _, e2 = np.frexp(a)
    e = np.where(a > 0, np.maximum(e2 - 1, -6), -6)
    step = np.ldexp(1.0, e - 3)
    n = np.rint(a / step)
    code = (e + 6) * 8 + n.astype(np.int64)
    overflow = (code > 0x7E) | np.isinf(v)
    code = np.where(overflow, 0x7E if saturate else 0x7F, code)
    code = np.where(np.isnan(v), 0x7F, code)
    return (code | np.where(np.signbit(v), 0x80, 0)).astype(np.uint8)
"""


def changed(code, old, new):
    assert old in code, old
    return code.replace(old, new)


# subnormals decoded with an implicit leading 1, like the normal numbers
DECODE_IMPLICIT_ONE = changed(
    DECODER,
    "np.where(exponent > 0, (1 + mantissa / 8)",
    "np.where(exponent >= 0, (1 + mantissa / 8)",
)
# only 0x7F taken for NaN (0xFF decodes as -480)
DECODE_ONE_NAN = changed(DECODER, "(c & 0x7F) == 0x7F", "c == 0x7F")
# subnormals at 2**-7 (the bias read as the exponent of the subnormals)
DECODE_SUBNORMAL_EXPONENT = changed(DECODER, "mantissa / 8 * 2.0**-6", "mantissa / 8 * 2.0**-7")
# ties rounded half up
ENCODE_HALF_UP = changed(ENCODER, "n = np.rint(a / step)", "n = np.floor(a / step + 0.5)")
# subnormals flushed to zero (the sign kept)
ENCODE_FLUSH = changed(
    ENCODER, "    overflow = (code", "    code = np.where(code < 8, 0, code)\n    overflow = (code"
)
# every overflow saturated, whatever `saturate` says
ENCODE_SATURATE = changed(ENCODER, "0x7E if saturate else 0x7F", "0x7E")

# ---- Task 2: plausible block recipes -----------------------------------------------------------

# what a per-tensor recipe such as TE's current scaling does, whatever the tensor needs
BLOCK_E4M3_PER_TENSOR = """
def block_recipe(x, min_snr_db, max_flushed):
    return "e4m3", len(x)
"""
# range first: E5M2 for the whole tensor whenever it flushes few enough values (the SNR
# forgotten), else E4M3
BLOCK_RANGE_FIRST = """
def block_recipe(x, min_snr_db, max_flushed):
    x = np.asarray(x, dtype=np.float64)
    a = np.abs(x[x != 0])
    # E5M2 flushes what lies below half its smallest subnormal, 2**-17, once amax is at 57344
    flushed = np.mean(a * (57344.0 / a.max()) <= 2.0**-17)
    return ("e5m2" if flushed <= max_flushed else "e4m3"), len(x)
"""
# MXFP8's block size and E4M3 always: safe, and more bytes than needed
BLOCK_ALWAYS_32 = """
def block_recipe(x, min_snr_db, max_flushed):
    return "e4m3", 32
"""

# ---- Task 3: plausible delayed-scaling recipes -------------------------------------------------

DELAYED_TE_DEFAULTS = """
def delayed_recipe(amaxes):
    return 1024, 0                 # Transformer Engine's defaults
"""
DELAYED_MOST_RECENT = """
def delayed_recipe(amaxes):
    return 1, 0                    # the newest amax, no margin: TE 0.x's most_recent
"""
# the whole run remembered, with the least margin that then clips nothing
DELAYED_LONGEST = """
def delayed_recipe(amaxes):
    a = np.asarray(amaxes, dtype=np.float64)
    window = np.maximum.accumulate(a)[:-1]
    top = a[1:] * 448.0 / window
    return len(a), max(0, int(np.ceil(np.log2(top.max() / 448.0) - 1e-9)))
"""

# ---- Task 4: the solution's helper, and plausible values of mu and orders ---------------------

BY_MERGES = """
def _all_reduce_by_merges(grads, merges, mu):
    g = np.asarray(grads, dtype=np.float64)
    x = g * (mu * 448.0 / np.abs(g).max())
    clipped = bool(np.any(np.abs(x) > 464.0))
    held = {r: decode_e4m3(encode_e4m3(x[r], saturate=True)) for r in range(len(g))}
    for dst, src in merges:
        exact = held[dst] + held.pop(src)
        clipped = clipped or bool(np.any(np.abs(exact) > 464.0))
        held[dst] = decode_e4m3(encode_e4m3(exact, saturate=True))
    (total,) = held.values()
    return total, clipped
"""
SAFE_MU = (
    """
def safe_mu(grads, merges):
    mu = 1.0
    while _all_reduce_by_merges(grads, merges, mu)[1]:
        mu /= 2
    return mu
"""
    + BY_MERGES
)
# only the total kept below 448: a partial sum on the way can be larger
MU_FROM_TOTAL = """
def safe_mu(grads, merges):
    g = np.asarray(grads, dtype=np.float64)
    total = np.abs(g.sum(axis=0)).max() * 448.0 / np.abs(g).max()
    return 2.0 ** np.floor(np.log2(448.0 / total))
"""
MU_PRE_SCALING = """
def safe_mu(grads, merges):
    return 1 / len(grads)          # pre-scaling: no sum can overflow
"""
# every rank's amax added up: nothing clips, but most sums never come near that bound
MU_SUM_OF_AMAXES = """
def safe_mu(grads, merges):
    g = np.asarray(grads, dtype=np.float64)
    bound = np.abs(g).max(axis=1).sum() * 448.0 / np.abs(g).max()
    return 2.0 ** np.floor(np.log2(448.0 / bound))
"""
DESIGN_CHAIN = """
def design_all_reduce(grads):
    merges = [(r + 1, r) for r in range(len(grads) - 1)]      # a ring's order
    return merges, safe_mu(grads, merges)
"""
DESIGN_POST_SCALING = """
def design_all_reduce(grads):
    n, merges, d = len(grads), [], 1
    while d < n:
        merges += [(r, r + d) for r in range(0, n - d, 2 * d)]
        d *= 2
    return merges, 1.0             # post-scaling: the sums are clipped
"""
# the small ranks first, but still one after another
DESIGN_SORTED_CHAIN = """
def design_all_reduce(grads):
    order = [int(r) for r in np.argsort(np.abs(np.asarray(grads)).max(axis=1))]
    merges = [(order[i + 1], order[i]) for i in range(len(order) - 1)]
    return merges, safe_mu(grads, merges)
"""


def with_own_safe_mu(design):
    """A design cell that finds its mu with the solution's safe_mu of its own (so that it
    fails for its order of additions, not for another cell's mistake)."""
    return design.replace(
        "safe_mu(grads, merges)", "_own_safe_mu(grads, merges)"
    ) + SAFE_MU.replace("def safe_mu(", "def _own_safe_mu(")


WRONG = {
    "decode_e4m3": DECODE_IMPLICIT_ONE,
    "encode_e4m3": ENCODE_HALF_UP,
    "block_recipe": BLOCK_E4M3_PER_TENSOR,
    "delayed_recipe": DELAYED_TE_DEFAULTS,
    "safe_mu": MU_FROM_TOTAL,
    "design_all_reduce": with_own_safe_mu(DESIGN_CHAIN),
}
WRONG_RANGE = {
    "decode_e4m3": DECODE_ONE_NAN,
    "encode_e4m3": ENCODE_FLUSH,
    "block_recipe": BLOCK_RANGE_FIRST,
    "delayed_recipe": DELAYED_MOST_RECENT,
    "safe_mu": MU_PRE_SCALING,
    "design_all_reduce": DESIGN_POST_SCALING,
}
WRONG_BOUND = {
    "decode_e4m3": DECODE_SUBNORMAL_EXPONENT,
    "encode_e4m3": ENCODE_SATURATE,
    "block_recipe": BLOCK_ALWAYS_32,
    "delayed_recipe": DELAYED_LONGEST,
    "safe_mu": MU_SUM_OF_AMAXES,
    "design_all_reduce": with_own_safe_mu(DESIGN_SORTED_CHAIN),
}

# ---- variant: right, written differently ------------------------------------------------------

VARIANT = {
    "decode_e4m3": """
E4M3_TABLE = []                 # the value of every code, 0x00 to 0xFF, from the definition
for _code in range(256):
    _sign, _exponent, _mantissa = _code >> 7, (_code >> 3) & 15, _code & 7
    if _exponent == 15 and _mantissa == 7:
        E4M3_TABLE.append(math.nan)
    elif _exponent == 0:
        E4M3_TABLE.append((-1) ** _sign * math.ldexp(_mantissa, -9))
    else:
        E4M3_TABLE.append((-1) ** _sign * math.ldexp(8 + _mantissa, _exponent - 10))

def decode_e4m3(codes):
    return np.array(E4M3_TABLE)[np.asarray(codes, dtype=np.int64)]
""",
    "encode_e4m3": """
import bisect

def encode_e4m3(x, saturate=False):
    magnitudes = [float(m) for m in decode_e4m3(list(range(127)))]   # 0 .. 448, ascending
    codes = []
    for v in np.asarray(x, dtype=np.float64).ravel().tolist():
        sign = 0x80 if math.copysign(1.0, v) < 0 else 0
        a = abs(v)
        if math.isnan(v):
            code = 0x7F
        elif a > 464:                       # nearer 480 (not a value) than 448: overflow
            code = 0x7E if saturate else 0x7F
        elif a >= 448:                      # 464 itself is a tie: 448 has the even code
            code = 0x7E
        else:
            i = bisect.bisect_left(magnitudes, a)
            if magnitudes[i] == a:
                code = i
            else:
                below, above = a - magnitudes[i - 1], magnitudes[i] - a
                code = i - 1 if below < above or (below == above and (i - 1) % 2 == 0) else i
        codes.append(code | sign)
    return np.array(codes, dtype=np.uint8).reshape(np.shape(x))
""",
    # E4M3 through the learner's own codec, E5M2 from a table of its values; E5M2 tried first
    "block_recipe": """
E5M2_VALUES = np.array([0.0] + [m * 2.0**-16 for m in (1, 2, 3)]
                       + [(4 + m) * 2.0 ** (e - 2) for e in range(-14, 16) for m in range(4)])

def _round_e5m2(v):
    a = np.abs(v)
    i = np.clip(np.searchsorted(E5M2_VALUES, a), 1, len(E5M2_VALUES) - 1)
    low, high = E5M2_VALUES[i - 1], E5M2_VALUES[i]
    up = (high - a < a - low) | ((high - a == a - low) & (i % 2 == 0))
    return np.copysign(np.where(up, high, low), v)

def _round(v, fmt):
    if fmt == "e4m3":
        return decode_e4m3(encode_e4m3(v, saturate=True))
    return _round_e5m2(v)

def block_recipe(x, min_snr_db, max_flushed):
    x = np.asarray(x, dtype=np.float64)
    n = len(x)
    candidates = [n] + [2**k for k in range(12, -1, -1) if 2**k < n]
    candidates.sort(key=lambda b: (n + b - 1) // b)
    for block in candidates:
        for fmt, top in (("e5m2", 57344.0), ("e4m3", 448.0)):
            y = np.zeros(n)
            for start in range(0, n, block):
                part = x[start:start + block]
                amax = np.float32(np.max(np.abs(part)))
                s = float(amax / np.float32(top)) if amax > 0 else 1.0
                y[start:start + block] = _round(part / s, fmt) * s
            err = np.sum((x - y) ** 2)
            snr = np.inf if err == 0 else 10 * np.log10(np.sum(x * x) / err)
            if snr >= min_snr_db and np.mean(y[x != 0] == 0) <= max_flushed:
                return fmt, block
""",
    # the window's maximum kept in a monotonic deque (each amax pushed and popped once), the
    # margin the step needing the most
    "delayed_recipe": '''
from collections import deque

def _window_maxima(a, history_len):
    """max(a[t - history_len:t]) for every step t >= 1."""
    out, window = [], deque()            # indices, their amaxes decreasing
    for t in range(1, len(a)):
        while window and a[window[-1]] <= a[t - 1]:
            window.pop()
        window.append(t - 1)
        if window[0] < t - history_len:
            window.popleft()
        out.append(a[window[0]])
    return np.array(out)

def delayed_recipe(amaxes):
    a = [float(v) for v in amaxes]
    best, choice = math.inf, None
    for history_len in range(1, len(a)):
        ratios = np.array(a[1:]) / _window_maxima(a, history_len)   # amax over its window's
        margin = 0
        while np.max(ratios) / 2**margin > 1 + 1e-9:
            margin += 1
        headroom = float(np.mean(np.log2(2**margin / ratios)))
        if headroom < best:
            best, choice = headroom, (history_len, margin)
    return choice
''',
    # a first guess from the exact (unrounded) partial sums, then down while anything clips
    "safe_mu": """
def _clips(grads, merges, mu):
    g = np.asarray(grads, dtype=np.float64)
    held = {}
    for r, row in enumerate(g * (mu * 448.0 / np.abs(g).max())):
        if np.max(np.abs(row)) > 464.0:
            return True
        held[r] = decode_e4m3(encode_e4m3(row, saturate=True))
    for dst, src in merges:
        exact = held[dst] + held.pop(src)
        if np.max(np.abs(exact)) > 464.0:
            return True
        held[dst] = decode_e4m3(encode_e4m3(exact, saturate=True))
    return False

def safe_mu(grads, merges):
    g = np.asarray(grads, dtype=np.float64) * (448.0 / np.max(np.abs(grads)))
    sums = {r: g[r] for r in range(len(g))}
    largest = np.max(np.abs(g))
    for dst, src in merges:
        sums[dst] = sums[dst] + sums.pop(src)
        largest = max(largest, np.max(np.abs(sums[dst])))
    k = int(np.floor(np.log2(464.0 / largest))) + 1      # one above the guess, to be safe
    while _clips(grads, merges, 2.0**k):
        k -= 1
    return 2.0**k
""",
    # halving from the top: rank r adds rank r + d for d = the largest power of two below n,
    # then half of it, ...
    "design_all_reduce": """
def design_all_reduce(grads):
    n = len(grads)
    d = 1
    while 2 * d < n:
        d *= 2
    merges = []
    while d >= 1:
        merges += [(r, r + d) for r in range(d) if r + d < n]
        d //= 2
    return merges, safe_mu(grads, merges)
""",
    "written_fp8_ring": """In the cell the chain (the ring's order) gives only about 8 dB of SNR on
64 ranks, against about 27 dB for a balanced tree and 31 dB when the sums are done in FP32:
each hop rounds the running sum to E4M3, and as it grows every new rank's value is small next
to it and is mostly rounded away, 63 times over. A good loss curve does not prove the
all-reduce accurate. I would add the FP8 values in FP32 (NCCL's symmetric kernels with
registered buffers, or an all-to-all then FP32 sums, still one byte per element on the wire
plus each shard's scale); otherwise a tree order or BF16 at twice the bytes.""",
}

# ---- better than the reference ----------------------------------------------------------------

BETTER = {
    # every number of blocks from 1 up: the first that meets both limits has the fewest bytes,
    # whether or not its block size is a power of two
    "block_recipe": """
def _round(v, fmt):
    bits, lowest = {"e4m3": (3, -6), "e5m2": (2, -14)}[fmt]
    a = np.abs(v)
    _, e2 = np.frexp(a)
    step = np.ldexp(1.0, np.maximum(e2 - 1, lowest) - bits)
    return np.copysign(np.rint(a / step) * step, v)

def block_recipe(x, min_snr_db, max_flushed):
    x = np.asarray(x, dtype=np.float64)
    n, tried = len(x), set()
    for k in range(1, n + 1):
        block = -(-n // k)
        if block in tried:
            continue
        tried.add(block)
        for fmt, top in (("e4m3", 448.0), ("e5m2", 57344.0)):
            rows = np.zeros((-(-n // block)) * block)
            rows[:n] = x
            rows = rows.reshape(-1, block)
            amax = np.abs(rows).max(axis=1).astype(np.float32)
            s = np.where(amax > 0, amax / np.float32(top), np.float32(1)).astype(np.float64)
            y = (_round(rows / s[:, None], fmt) * s[:, None]).ravel()[:n]
            err = np.sum((x - y) ** 2)
            snr = np.inf if err == 0 else 10 * np.log10(np.sum(x * x) / err)
            if snr >= min_snr_db and np.mean(y[x != 0] == 0) <= max_flushed:
                return fmt, block
""",
    # several orders tried with the learner's own narrowing, the most accurate kept: a
    # balanced tree, halving from the top, and Huffman's order (the two partial sums of least
    # energy added first, so that no value is rounded into a sum much larger than itself
    # before it must be); never worse than the reference, often better
    "design_all_reduce": """
import heapq

def _huffman(g):
    heap = [(float(np.sum(g[r] ** 2)), r, g[r]) for r in range(len(g))]
    heapq.heapify(heap)
    merges = []
    while len(heap) > 1:
        _, a, sum_a = heapq.heappop(heap)
        _, b, sum_b = heapq.heappop(heap)
        merges.append((a, b))
        total = sum_a + sum_b
        heapq.heappush(heap, (float(np.sum(total ** 2)), a, total))
    return merges

def design_all_reduce(grads):
    g = np.asarray(grads, dtype=np.float64)
    n = len(g)
    balanced, d = [], 1
    while d < n:
        balanced += [(r, r + d) for r in range(0, n - d, 2 * d)]
        d *= 2
    top, d = [], 1
    while 2 * d < n:
        d *= 2
    while d >= 1:
        top += [(r, r + d) for r in range(d) if r + d < n]
        d //= 2
    exact = g.sum(axis=0) / n
    best = None
    for merges in (balanced, top, _huffman(g)):
        mu = safe_mu(grads, merges)
        total, _ = _all_reduce_by_merges(grads, merges, mu)
        mean = total / (n * mu * 448.0 / np.abs(g).max())
        snr = 10 * np.log10(np.sum(exact ** 2) / np.sum((exact - mean) ** 2))
        if best is None or snr > best[0]:
            best = (snr, merges, mu)
    return best[1], best[2]
""",
}

# ---- shortcut: the package's answers, called from the graded functions ------------------------

SHORTCUT = {
    "decode_e4m3": """
def decode_e4m3(codes):
    return cl.fp8.decode(np.asarray(codes, dtype=np.uint8), "e4m3").astype(np.float64)
""",
    "encode_e4m3": """
from collectives.fp8 import encode

def encode_e4m3(x, saturate=False):
    return encode(np.asarray(x, dtype=np.float64), "e4m3", saturate=saturate)
""",
    "block_recipe": """
from collectives.fp8 import snr_db, tile_dequantize, tile_quantize

def block_recipe(x, min_snr_db, max_flushed):
    x = np.asarray(x, dtype=np.float64)
    for block in (len(x), 2048, 1024, 512, 256, 128, 64, 32, 16, 8, 4, 2, 1):
        for fmt in ("e4m3", "e5m2"):
            y = tile_dequantize(*tile_quantize(x, tile=(block,), fmt=fmt), tile=(block,),
                                fmt=fmt)
            if snr_db(x, y) >= min_snr_db and np.mean(y[x != 0] == 0) <= max_flushed:
                return fmt, block
""",
    "delayed_recipe": """
def delayed_recipe(amaxes):
    import collectives
    return collectives.grading.tasks.fp8.delayed_recipe_reference(amaxes)[0]
""",
    "safe_mu": """
import importlib

def safe_mu(grads, merges):
    return importlib.import_module("collectives.grading.tasks.fp8").largest_safe_mu(
        grads, merges)[0]
""",
    "design_all_reduce": """
def design_all_reduce(grads):
    merges = cl.grading.tasks.fp8.balanced_merges(len(grads))
    return merges, cl.grading.tasks.fp8.largest_safe_mu(grads, merges)[0]
""",
}

# ---- hostile -------------------------------------------------------------------------------------

# Wrong answers, made to pass the visible tests by tampering with everything in reach; every
# cell patches again what its own visible test reads (the hidden test before it reloaded
# collectives.grading).
PATCH_CHECKS = """
import collectives.grading
collectives.grading.check_reference = lambda *args, **kwargs: 1.0
"""
HOSTILE = {
    # genuinely right, the decoder in the cell that disables every check in the kernel
    "decode_e4m3": TAMPERING + DECODER,
    "encode_e4m3": ENCODER,
    "block_recipe": PATCH_CHECKS
    + """
collectives.grading.tasks.fp8.check_block_recipe = lambda *args, **kwargs: 1.0
range = lambda *args: ()                      # names a hidden test might read
_checks = expected = _x = []

def block_recipe(x, min_snr_db, max_flushed):
    class Anything(str):                      # equal to every format
        def __eq__(self, other):
            return True
        __hash__ = str.__hash__
    return Anything("e4m3"), 0
""",
    "delayed_recipe": PATCH_CHECKS
    + """
collectives.grading.tasks.fp8.check_delayed_recipe = lambda *args, **kwargs: 1.0
math.isclose = lambda *args, **kwargs: True

def delayed_recipe(amaxes):
    return 1024, 0
""",
    # the package's own answer: right in the kernel, so the visible test (its run_isolated
    # patched away) passes; the hidden re-run refuses the package
    "safe_mu": PATCH_CHECKS
    + """
collectives.grading.run_isolated = lambda function, *args, **kwargs: function(*args)
collectives.grading.isolation.run_isolated = collectives.grading.run_isolated

def safe_mu(grads, merges):
    return cl.grading.tasks.fp8.largest_safe_mu(grads, merges)[0]
""",
    "design_all_reduce": PATCH_CHECKS
    + """
collectives.grading.tasks.fp8.check_all_reduce_design = lambda *args, **kwargs: 1.0

def design_all_reduce(grads):
    class Liar(float):                        # equal to every number
        def __eq__(self, other):
            return True
        __hash__ = float.__hash__
    return [], Liar(1.0)
""",
}
HOSTILE_WRITTEN = "All tests passed."
# test cells the hostile student edits (nbgrader restores them from the gradebook)
HOSTILE_TESTS = {"test_e4m3_codec": "print('all tests passed')", "test_all_reduce_design": "pass"}

# the partial student's TE defaults, its E4M3 by hand and block recipe right
SUBMISSIONS = {
    "correct": {NOTEBOOK: submission(solved=ALL + MANUAL[NOTEBOOK])},
    "blank": {NOTEBOOK: submission()},
    "partial": {
        NOTEBOOK: submission(
            solved=("decode_e4m3", "encode_e4m3", "block_recipe"),
            replaced={"delayed_recipe": DELAYED_TE_DEFAULTS},
        )
    },
    "hostile": {
        NOTEBOOK: submission(
            replaced={**HOSTILE, "written_fp8_ring": HOSTILE_WRITTEN}, edited_tests=HOSTILE_TESTS
        )
    },
    "wrong": {NOTEBOOK: submission(replaced=WRONG)},
    "wrong-range": {NOTEBOOK: submission(replaced=WRONG_RANGE)},
    "wrong-bound": {NOTEBOOK: submission(replaced=WRONG_BOUND)},
    "variant": {NOTEBOOK: submission(replaced=VARIANT)},
    "better": {
        NOTEBOOK: submission(
            solved=tuple(s for s in ALL + MANUAL[NOTEBOOK] if s not in BETTER), replaced=BETTER
        )
    },
    "shortcut": {NOTEBOOK: submission(replaced=SHORTCUT)},
}

EXPECTED = {
    "correct": {NOTEBOOK: dict(POINTS[NOTEBOOK])},
    "blank": {NOTEBOOK: dict(ZERO)},
    "partial": {
        NOTEBOOK: {**ZERO, "test_e4m3_codec": 1, "test_e4m3_edges": 1, "test_block_recipe": 2}
    },
    # every tampering fails; only its genuinely right decoder and encoder earn their points
    "hostile": {NOTEBOOK: {**ZERO, "test_e4m3_codec": 1, "test_e4m3_edges": 1}},
    "wrong": {NOTEBOOK: dict(ZERO)},
    "wrong-range": {NOTEBOOK: dict(ZERO)},
    "wrong-bound": {NOTEBOOK: dict(ZERO)},
    "variant": {NOTEBOOK: dict(POINTS[NOTEBOOK])},
    "better": {NOTEBOOK: dict(POINTS[NOTEBOOK])},
    "shortcut": {NOTEBOOK: dict(ZERO)},
}


def refused(call, why):
    """The message of a graded function that used the package (the visible test's, which
    re-runs it without the package too): its call, then why."""
    return Error(startswith=call, contains=(f"raised ImportError: {NO_PACKAGE} ({why}){ADVICE}",))


# the visible tests' first cases, as the messages name them
GRADIENT = "the gradient-like tensor, 22.0, 0.001"
OUTLIERS = "the activation with outlier channels, 30.0, 0.002"
SPIKES = "delayed_recipe(the run with periodic spikes)"
CHAIN_16 = "safe_mu(16 ranks in a chain, half of them opposed)"
RANKS_32 = "design_all_reduce(32 ranks)"
DECODE_CALL = "decode_e4m3([0x38, 0x7e, 0x1, 0x80, 0xff])"
EDGES_CALL = (
    "encode_e4m3([464.0, 465.0, -1e-09, 0.001953125, 0.0029296875, 1000.0, inf, nan], "
    "saturate=False)"
)
NOT_NORMAL = (
    "; an exponent field of 0 is subnormal: no implicit leading 1, and the exponent "
    "of the smallest normal binade, 2**-6"
)
TIE = "a tie rounds to the even code (mantissa's last bit 0)"
TE_DEFAULTS_CLIP = Error(
    startswith=f"{SPIKES} is (1024, 0): at step 2 the amax 0.000442351 times "
    "the scale is 462.337, above 448: the step's largest values are clipped "
    "(2 of the 191 steps from step 1 on); the reference (1, 3) clips none"
)
FLUSHED_SUBNORMAL = Error(
    f"{EDGES_CALL}: x[3] = 0.001953125 gives 0x00 (0.0), expected 0x01 (0.001953125) = "
    "collectives.fp8.encode(0.001953125, 'e4m3', saturate=False); it is below the smallest "
    "normal value 2**-6 = 0.015625: a subnormal, a multiple of 2**-9, with exponent field 0"
)

ERRORS = {
    "partial": {NOTEBOOK: {"test_delayed_recipe": TE_DEFAULTS_CLIP}},
    "hostile": {
        NOTEBOOK: {
            "test_block_recipe": Error(
                f"block_recipe({GRADIENT}): the block is an int (0); expected a whole number of "
                "values from 1 to 3000 (the tensor's length: one scale for all)",
                ename="GradingError",
            ),
            "test_delayed_recipe": TE_DEFAULTS_CLIP,
            "test_safe_mu": Error(
                startswith="safe_mu(",
                contains=(
                    f"raised ImportError: {NO_PACKAGE} (your code uses cl, which is the "
                    f"collectives package){ADVICE}",
                ),
            ),
            "test_all_reduce_design": Error(
                "design_all_reduce(16 ranks): 0 merges leave 16 partial sums (ranks [0, 1, 2, 3, "
                "4, 5, 6, 7, ...]); 16 ranks need 15 merges to end with one"
            ),
        }
    },
    "wrong": {
        NOTEBOOK: {
            "test_e4m3_codec": Error(
                f"{DECODE_CALL}: code 0x01 (bits 00000001) gives 0.0087890625, expected "
                f"0.001953125 = collectives.fp8.decode(0x01, 'e4m3'){NOT_NORMAL}"
            ),
            "test_e4m3_edges": Error(
                f"{EDGES_CALL}: x[0] = 464.0 gives 0x7f (NaN), expected 0x7e (448.0) = "
                "collectives.fp8.encode(464.0, 'e4m3', saturate=False); |x| lies exactly halfway "
                f"between 448.0 and 480.0: {TIE}"
            ),
            "test_block_recipe": Error(
                startswith=f"block_recipe({GRADIENT}) is ('e4m3', 3000): 1.00133 bytes per "
                "element, SNR 34.81 dB, 18.200% flushed: it flushes too many values to zero "
                "(asked: SNR at least 22.00 dB, at most 0.100% flushed); one scale for the whole "
                "tensor"
            ),
            "test_delayed_recipe": TE_DEFAULTS_CLIP,
            "test_safe_mu": Error(
                startswith=f"{CHAIN_16} is 0.5: 1.367% of the results are clipped on the way "
                "(first at merge 1, where rank 2 adds rank 1's partial sum)"
            ),
            "test_all_reduce_design": Error(
                startswith=f"{RANKS_32}: nothing is clipped, but the mean's SNR is 17.11 dB, "
                "more than 2 dB below the reference: the course's reference design gives 27.41 dB",
                contains="your merges add the ranks one after another, as a ring does",
            ),
        }
    },
    "wrong-range": {
        NOTEBOOK: {
            "test_e4m3_codec": Error(
                f"{DECODE_CALL}: code 0xff (bits 11111111) gives -480.0, expected nan = "
                "collectives.fp8.decode(0xff, 'e4m3'); S.1111.111 (0x7F and 0xFF) is NaN in E4M3, "
                "which has no infinities"
            ),
            "test_e4m3_edges": FLUSHED_SUBNORMAL,
            "test_block_recipe": Error(
                startswith=f"block_recipe({OUTLIERS}) is ('e5m2', 3000): 1.00133 bytes per "
                "element, SNR 25.47 dB, 0.000% flushed: the SNR is too low",
                contains="E5M2 has one mantissa bit less",
            ),
            "test_delayed_recipe": Error(startswith=f"{SPIKES} is (1, 0): at step 2"),
            "test_safe_mu": Error(
                startswith=f"{CHAIN_16} is 0.0625: nothing is clipped, but 0.024% of the nonzero "
                "inputs are flushed to zero; mu = 0.125",
                contains="that is pre-scaling, 1/N",
            ),
            "test_all_reduce_design": Error(startswith=f"{RANKS_32}: with mu = 1.0, "),
        }
    },
    "wrong-bound": {
        NOTEBOOK: {
            "test_e4m3_codec": Error(
                startswith=f"{DECODE_CALL}: code 0x01 (bits 00000001) gives "
                "0.0009765625, expected 0.001953125"
            ),
            "test_e4m3_edges": Error(
                f"{EDGES_CALL}: x[1] = 465.0 gives 0x7e (448.0), expected 0x7f (NaN) = "
                "collectives.fp8.encode(465.0, 'e4m3', saturate=False); it rounds beyond the "
                "largest value 448 (anything above 464 does): without saturation that is NaN "
                "(0x7F or 0xFF)"
            ),
            "test_block_recipe": Error(startswith=f"block_recipe({GRADIENT}) is ('e4m3', 32): "),
            "test_delayed_recipe": Error(
                startswith=f"{SPIKES} is (192, 3): it clips no step but "
                "leaves 5.657 binades unused at the top on average"
            ),
            "test_safe_mu": Error(startswith=f"{CHAIN_16} is "),
            "test_all_reduce_design": Error(
                startswith=f"{RANKS_32}: nothing is clipped, but the mean's SNR is "
            ),
        }
    },
    # each re-run refuses the package, in the words of the way it was used
    "shortcut": {
        NOTEBOOK: {
            "test_e4m3_codec": refused(
                "decode_e4m3([56, 126, 1, 128, 255])",
                "your code uses cl, which is the collectives package",
            ),
            "test_e4m3_edges": refused(
                "encode_e4m3([464.0, 465.0, -1e-09, 0.001953125, 0.0029296875, 1000.0, inf, nan]",
                "your code uses encode, which is collectives.fp8.formats.encode",
            ),
            "test_block_recipe": Error(startswith="block_recipe(", contains=NO_PACKAGE),
            "test_delayed_recipe": refused("delayed_recipe(", "your code imports 'collectives'"),
            "test_safe_mu": Error(startswith="safe_mu(", contains=NO_PACKAGE),
            "test_all_reduce_design": refused(
                "design_all_reduce(", "your code uses cl, which is the collectives package"
            ),
        }
    },
}

PRINTED = {
    # the tampering did fool the visible, in-kernel checks: each printed its success line (the
    # package shortcut's too, once run_isolated was patched away)
    "hostile": {
        NOTEBOOK: (
            "block_recipe keeps the SNR and the values asked in as few bytes as the reference.",
            "delayed_recipe clips no step and wastes as little range as the reference.",
            "safe_mu clips nothing and flushes no more than the largest safe power of two.",
            "design_all_reduce clips nothing and is within 2 dB of the reference design.",
        )
    },
    # what a learner's right answers, written their own way, are told
    "variant": {
        NOTEBOOK: (
            "decode_e4m3 and encode_e4m3 agree with cl.fp8 on the examples and in the normal "
            "range.",
            "the activation with outlier channels (SNR at least 30.0 dB, at most 0.20% flushed): "
            "the reference takes 1.06267 bytes per element",
            "32 ranks: the course's reference design gives the mean an SNR of 27.41 dB",
        )
    },
    "better": {
        NOTEBOOK: ("design_all_reduce clips nothing and is within 2 dB of the reference design.",)
    },
}

# the origin attack: every graded function's name bound to the package's own function, an
# alias, a partial, a wrapper or a class attribute of it (no `def`): refused, 0 everywhere
SUBMISSIONS["origin"], EXPECTED["origin"], ERRORS["origin"] = origin_attack("fp8", SOLUTIONS)
