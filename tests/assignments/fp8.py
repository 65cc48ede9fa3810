"""fp8 (exercises/source/fp8/fp8.ipynb, 10 points): what the pipeline test expects. Format: the
docstring of tests/assignments/__init__.py.

The tasks must be solved without the collectives package: every hidden test re-runs the
learner's function from its source code in a process where ``collectives`` cannot be imported
(``_grading.call(f, ..., isolated=True)``), and the checks of collectives.grading.fp8_tasks
compute every expected value with collectives.fp8 in the re-check process. The encoder is
graded by two cells (the normal range; the edges), so one mistake at the edges costs 2 of its
4 points. Submissions, besides the four every spec has:

- *correct* (every solution), *blank* (the release as handed out);
- *partial*: the decoder and the delayed scales right, an encoder that flushes subnormals to
  zero (right in the normal range only), the all-reduce of the notebook before issue 21 (the
  casts summed exactly and the total cast once, right for two ranks, not for three: every
  partial sum is an E4M3 number in FP8-LM's code), the rest blank (1 + 2 + 2 = 5);
- *hostile*: wrong answers behind monkeypatching of ``collectives.fp8``,
  ``collectives.grading`` (each cell patches what its own visible test reads, since every
  hidden test before it reloads the package), ``math.isclose`` and IPython, lying floats and
  ints, rebound names, edited test cells, and a package shortcut whose visible test it fools;
  its ``decode_e4m3`` is genuinely right (1);
- *wrong*: one plausible mistake per task (subnormals decoded with an implicit 1, ties
  rounded half up, the margin forgotten, the largest of the ranks' scales shared instead of
  the smallest, the tie at half the smallest subnormal not flushed): 0;
- *wrong-subnormals* and *wrong-overflow*: one other plausible mistake per task each (0xFF
  not taken for NaN, subnormals flushed to zero, the step's own amax used, the sum returned
  for the mean, the threshold at the smallest subnormal; the subnormal exponent taken as
  -7, every overflow saturated, the history never forgetting, each rank's own scale, E5M2
  forgotten): 2 each, the encoders' normal range;
- *variant*: every answer right but written differently (a table of all codes built with
  ``math.ldexp``; a Python loop with ``bisect`` over that table; a ``deque`` for the history
  and constants of its own; float32 arithmetic and the scale of the largest amax; exact
  fractions): 10;
- *shortcut*: every answer computed by calling the package, in each way a learner might
  (the notebook's ``cl``, ``from collectives.fp8 import encode``, ``import collectives``
  inside the function, ``importlib``, the package's own grading reference): 0, each cell
  failing with "this task must be solved without the collectives package".
"""

from assignments import TAMPERING, Error, submission, origin_attack

NOTEBOOK = "fp8"

# grade_id of each autograded test cell -> its points (exercises/README.md's table)
POINTS = {NOTEBOOK: {
    "test_decode_e4m3": 1,
    "test_encode_e4m3_rounding": 2,
    "test_encode_e4m3_special": 2,
    "test_delayed_scales": 2,
    "test_fp8_all_reduce": 2,
    "test_flushing_ranks": 1,
}}
MAX_SCORE = 10
# solution cell -> the test cells that grade it (the encoder has two)
SOLUTIONS = {NOTEBOOK: {
    "decode_e4m3": "test_decode_e4m3",
    "encode_e4m3": ("test_encode_e4m3_rounding", "test_encode_e4m3_special"),
    "delayed_scales": "test_delayed_scales",
    "fp8_all_reduce": "test_fp8_all_reduce",
    "flushing_ranks": "test_flushing_ranks",
}}
ALL = tuple(SOLUTIONS[NOTEBOOK])
ZERO = dict.fromkeys(POINTS[NOTEBOOK], 0)

NO_PACKAGE = "this task must be solved without the collectives package"
ADVICE = ("; use the package in scratch cells to check your answers, not inside the functions "
          "that are graded")

# ---- plausible mistakes (wrong, wrong-subnormals, wrong-overflow, partial) ------------------

# the solution's encoder with one line changed: (the line, its replacement)
ENCODER = '''
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
'''


def encoder(old, new):
    assert old in ENCODER, old
    return ENCODER.replace(old, new)


# ties rounded half up
ENCODE_HALF_UP = encoder("n = np.rint(a / step)", "n = np.floor(a / step + 0.5)")
# subnormals flushed to zero (the sign kept)
ENCODE_FLUSH = encoder("    overflow = (code", "    code = np.where(code < 8, 0, code)\n"
                       "    overflow = (code")
# every overflow saturated, whatever `saturate` says
ENCODE_SATURATE = encoder("0x7E if saturate else 0x7F", "0x7E")

DECODER = '''
def decode_e4m3(codes):
    c = np.asarray(codes).astype(np.int64)
    sign = np.where(c & 0x80, -1.0, 1.0)
    exponent = (c >> 3) & 0b1111
    mantissa = c & 0b111
    magnitude = np.where(exponent > 0, (1 + mantissa / 8) * 2.0 ** (exponent - 7),
                         mantissa / 8 * 2.0**-6)
    return np.where((c & 0x7F) == 0x7F, np.nan, sign * magnitude)
'''


def decoder(old, new):
    assert old in DECODER, old
    return DECODER.replace(old, new)


# subnormals decoded with an implicit leading 1, like the normal numbers
DECODE_IMPLICIT_ONE = decoder("np.where(exponent > 0, (1 + mantissa / 8)",
                              "np.where(exponent >= 0, (1 + mantissa / 8)")
# only 0x7F taken for NaN (0xFF decodes as -480)
DECODE_ONE_NAN = decoder("(c & 0x7F) == 0x7F", "c == 0x7F")
# subnormals at 2**-7 (the bias read as the exponent of the subnormals)
DECODE_SUBNORMAL_EXPONENT = decoder("mantissa / 8 * 2.0**-6", "mantissa / 8 * 2.0**-7")

DELAYED = '''
def delayed_scales(amaxes, history_len, margin=0, fmt="e4m3"):
    fp8_max = {"e4m3": 448.0, "e5m2": 57344.0}[fmt]
    scales, scale, history = [], 1.0, []
    for amax in amaxes:
        scales.append(scale)
        history = (history + [amax])[-history_len:]
        largest = max(history)
        if largest > 0:
            scale = fp8_max / largest / 2**margin
    return np.array(scales)
'''


def delayed(old, new):
    assert old in DELAYED, old
    return DELAYED.replace(old, new)


DELAYED_NO_MARGIN = delayed(" / 2**margin", "")
# the step casts with the scale of its own amax: current scaling, not delayed
DELAYED_CURRENT = delayed('''        scales.append(scale)
        history = (history + [amax])[-history_len:]
        largest = max(history)
        if largest > 0:
            scale = fp8_max / largest / 2**margin
''', '''        history = (history + [amax])[-history_len:]
        largest = max(history)
        if largest > 0:
            scale = fp8_max / largest / 2**margin
        scales.append(scale)
''')
# a history that never forgets
DELAYED_FOREVER = delayed("(history + [amax])[-history_len:]", "history + [amax]")

ALL_REDUCE = '''
def fp8_all_reduce(grads, mu):
    g = np.asarray(grads, dtype=np.float64)
    amaxes = np.max(np.abs(g), axis=1)
    scale = min(448.0 / amax for amax in amaxes if amax > 0)
    casts = [decode_e4m3(encode_e4m3(row * (mu * scale), saturate=True)) for row in g]
    stored = casts[0]
    for cast in casts[1:]:
        stored = decode_e4m3(encode_e4m3(stored + cast, saturate=True))
    return stored / (len(g) * mu * scale)
'''


def all_reduce(old, new):
    assert old in ALL_REDUCE, old
    return ALL_REDUCE.replace(old, new)


# the largest of the ranks' scales: the rank with the largest gradient overflows
ALL_REDUCE_MAX = all_reduce("scale = min(", "scale = max(")
# the sum, not the mean
ALL_REDUCE_SUM = all_reduce("stored / (len(g) * mu * scale)", "stored / (mu * scale)")
# the model of the notebook before issue 21: the casts summed exactly, the total cast once
ALL_REDUCE_ONCE = '''
def fp8_all_reduce(grads, mu):
    g = np.asarray(grads, dtype=np.float64)
    amaxes = np.max(np.abs(g), axis=1)
    scale = min(448.0 / amax for amax in amaxes if amax > 0)
    total = np.zeros(g.shape[1])
    for row in g:
        total += decode_e4m3(encode_e4m3(row * (mu * scale), saturate=True))
    stored = decode_e4m3(encode_e4m3(total, saturate=True))
    return stored / (len(g) * mu * scale)
'''
# each rank with its own scale, dequantised before the sum
ALL_REDUCE_OWN = '''
def fp8_all_reduce(grads, mu):
    g = np.asarray(grads, dtype=np.float64)
    total = np.zeros(g.shape[1])
    for row in g:
        amax = np.max(np.abs(row))
        scale = 448.0 / amax if amax > 0 else 1.0
        total += decode_e4m3(encode_e4m3(row * (mu * scale), saturate=True)) / (mu * scale)
    return total / len(g)
'''

FLUSHING = '''
def flushing_ranks(ratio, fmt="e4m3"):
    fp8_max, smallest = {"e4m3": (448.0, 2.0**-9), "e5m2": (57344.0, 2.0**-16)}[fmt]
    return math.ceil(ratio * fp8_max / (smallest / 2))
'''
# the element survives exactly halfway (ties rounded away from zero)
FLUSHING_TIE_SURVIVES = '''
def flushing_ranks(ratio, fmt="e4m3"):
    fp8_max, smallest = {"e4m3": (448.0, 2.0**-9), "e5m2": (57344.0, 2.0**-16)}[fmt]
    return int(ratio * fp8_max / (smallest / 2)) + 1
'''
# flushed only below the smallest subnormal
FLUSHING_SMALLEST = FLUSHING.replace("(smallest / 2)", "smallest")
# E4M3 whatever fmt says
FLUSHING_E4M3_ONLY = '''
def flushing_ranks(ratio, fmt="e4m3"):
    return math.ceil(ratio * 448.0 / 2.0**-10)
'''

WRONG = {"decode_e4m3": DECODE_IMPLICIT_ONE, "encode_e4m3": ENCODE_HALF_UP,
         "delayed_scales": DELAYED_NO_MARGIN, "fp8_all_reduce": ALL_REDUCE_MAX,
         "flushing_ranks": FLUSHING_TIE_SURVIVES}
WRONG_SUBNORMALS = {"decode_e4m3": DECODE_ONE_NAN, "encode_e4m3": ENCODE_FLUSH,
                    "delayed_scales": DELAYED_CURRENT, "fp8_all_reduce": ALL_REDUCE_SUM,
                    "flushing_ranks": FLUSHING_SMALLEST}
WRONG_OVERFLOW = {"decode_e4m3": DECODE_SUBNORMAL_EXPONENT, "encode_e4m3": ENCODE_SATURATE,
                  "delayed_scales": DELAYED_FOREVER, "fp8_all_reduce": ALL_REDUCE_OWN,
                  "flushing_ranks": FLUSHING_E4M3_ONLY}

# ---- hostile ---------------------------------------------------------------------------------

# Wrong answers, made to pass the visible tests by tampering with everything in reach; every
# cell patches again what its own visible test reads (the hidden test before it reloaded
# collectives.grading from disk).
PATCH_CHECKS = '''
import collectives.grading
collectives.grading.check_reference = lambda *args, **kwargs: 1.0
'''
HOSTILE = {
    # genuinely right, in the cell that disables every check in the kernel
    "decode_e4m3": TAMPERING + DECODER,
    "encode_e4m3": PATCH_CHECKS + '''
import collectives.fp8
collectives.fp8.encode = lambda x, fmt, saturate=False: np.zeros(np.shape(x), np.uint8)
collectives.grading.fp8_tasks.check_e4m3_codes = lambda *args, **kwargs: 1.0
range = lambda *args: ()                      # names a hidden test might read
_checks = expected = _x = []

def encode_e4m3(x, saturate=False):
    return np.zeros(len(x), dtype=np.uint8)
''',
    "delayed_scales": PATCH_CHECKS + '''
collectives.fp8.delayed_scales = lambda amaxes, **kwargs: np.ones(len(amaxes))
math.isclose = lambda *args, **kwargs: True

def delayed_scales(amaxes, history_len, margin=0, fmt="e4m3"):
    class _Liar(float):                       # equal to every number
        def __eq__(self, other):
            return True
        __hash__ = float.__hash__
    return [_Liar(1.0) for _ in amaxes]
''',
    # the package's own answer: right in the kernel, so the visible test (its run_isolated
    # patched away) passes; the hidden re-run refuses the package
    "fp8_all_reduce": PATCH_CHECKS + '''
collectives.grading.run_isolated = lambda function, *args, **kwargs: function(*args)
collectives.grading.isolation.run_isolated = collectives.grading.run_isolated

def fp8_all_reduce(grads, mu):
    return cl.fp8.fp8_all_reduce(grads, fmt="e4m3", scaling="auto", mu=mu).output[0]
''',
    "flushing_ranks": PATCH_CHECKS + '''
collectives.grading.flushing_ranks = lambda *args: 0

def flushing_ranks(ratio, fmt="e4m3"):
    class _Count(int):                        # equal to every count
        def __eq__(self, other):
            return True
        __hash__ = int.__hash__
    return _Count(0)
''',
}
# test cells the hostile student edits (nbgrader restores them from the gradebook)
HOSTILE_TESTS = {"test_decode_e4m3": "print('all tests passed')",
                 "test_fp8_all_reduce": "pass"}

# ---- variant: right, written differently -----------------------------------------------------

VARIANT = {
    "decode_e4m3": '''
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
''',
    "encode_e4m3": '''
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
''',
    "delayed_scales": '''
from collections import deque

FP8_MAX = {"e4m3": 448.0, "e5m2": 57344.0}

def _scale_for(amax, fmt, margin):
    return FP8_MAX[fmt] / (amax * 2.0**margin)

def delayed_scales(amaxes, history_len, margin=0, fmt="e4m3"):
    history = deque(maxlen=history_len)
    out = np.empty(len(amaxes))
    scale = 1.0
    for t, amax in enumerate(amaxes):
        out[t] = scale
        history.append(amax)
        if max(history) > 0:
            scale = _scale_for(max(history), fmt, margin)
    return out
''',
    "fp8_all_reduce": '''
from functools import reduce

def fp8_all_reduce(grads, mu):
    g = np.array(grads, dtype=np.float32)
    # the scale of the largest amax of all ranks: the smallest of the ranks' own scales
    scale = np.float32(448.0) / np.abs(g).max()
    casts = decode_e4m3(encode_e4m3((g * (mu * scale)).ravel(), saturate=True)).reshape(g.shape)
    def hop(partial, cast):                   # add the next rank, narrow back to E4M3
        return decode_e4m3(encode_e4m3(partial + cast, saturate=True))
    stored = reduce(hop, list(casts))
    return (stored / (g.shape[0] * mu * scale)).astype(np.float32)
''',
    "flushing_ranks": '''
from fractions import Fraction

def flushing_ranks(ratio, fmt="e4m3"):
    top = Fraction(ratio) * {"e4m3": 448, "e5m2": 57344}[fmt]
    half_smallest = Fraction(1, 2**10) if fmt == "e4m3" else Fraction(1, 2**17)
    n = top // half_smallest
    return int(n) if n * half_smallest >= top else int(n) + 1
''',
}

# ---- shortcut: the package's answers, called from the graded functions ----------------------

SHORTCUT = {
    "decode_e4m3": '''
def decode_e4m3(codes):
    return cl.fp8.decode(np.asarray(codes, dtype=np.uint8), "e4m3").astype(np.float64)
''',
    "encode_e4m3": '''
from collectives.fp8 import encode

def encode_e4m3(x, saturate=False):
    return encode(np.asarray(x, dtype=np.float64), "e4m3", saturate=saturate)
''',
    "delayed_scales": '''
def delayed_scales(amaxes, history_len, margin=0, fmt="e4m3"):
    import collectives
    return collectives.fp8.delayed_scales(amaxes, fmt=fmt, history_len=history_len,
                                          margin=margin)
''',
    "fp8_all_reduce": '''
def fp8_all_reduce(grads, mu):
    return cl.fp8.fp8_all_reduce(grads, fmt="e4m3", scaling="auto", mu=mu).output[0]
''',
    "flushing_ranks": '''
import importlib

def flushing_ranks(ratio, fmt="e4m3"):
    return importlib.import_module("collectives.grading").flushing_ranks(ratio, fmt)
''',
}

SUBMISSIONS = {
    "correct": {NOTEBOOK: submission(solved=ALL)},
    "blank": {NOTEBOOK: submission()},
    "partial": {NOTEBOOK: submission(solved=("decode_e4m3", "delayed_scales"),
                                     replaced={"encode_e4m3": ENCODE_FLUSH,
                                               "fp8_all_reduce": ALL_REDUCE_ONCE})},
    "hostile": {NOTEBOOK: submission(replaced=HOSTILE, edited_tests=HOSTILE_TESTS)},
    "wrong": {NOTEBOOK: submission(replaced=WRONG)},
    "wrong-subnormals": {NOTEBOOK: submission(replaced=WRONG_SUBNORMALS)},
    "wrong-overflow": {NOTEBOOK: submission(replaced=WRONG_OVERFLOW)},
    "variant": {NOTEBOOK: submission(replaced=VARIANT)},
    "shortcut": {NOTEBOOK: submission(replaced=SHORTCUT)},
}

# the exact score of every test cell for every submission
EXPECTED = {
    "correct": {NOTEBOOK: dict(POINTS[NOTEBOOK])},
    "blank": {NOTEBOOK: dict(ZERO)},
    "partial": {NOTEBOOK: {**ZERO, "test_decode_e4m3": 1, "test_encode_e4m3_rounding": 2,
                           "test_delayed_scales": 2}},
    # every tampering fails; only its genuinely correct decode_e4m3 earns its point
    "hostile": {NOTEBOOK: {**ZERO, "test_decode_e4m3": 1}},
    "wrong": {NOTEBOOK: dict(ZERO)},
    # right in the normal range, wrong at the edges: the encoder's first cell only
    "wrong-subnormals": {NOTEBOOK: {**ZERO, "test_encode_e4m3_rounding": 2}},
    "wrong-overflow": {NOTEBOOK: {**ZERO, "test_encode_e4m3_rounding": 2}},
    "variant": {NOTEBOOK: dict(POINTS[NOTEBOOK])},
    "shortcut": {NOTEBOOK: dict(ZERO)},
}


def refused(call, why):
    """The message of a graded function that used the package (the visible test's, which
    re-runs it without the package too)."""
    return Error(f"{call} raised ImportError: {NO_PACKAGE} ({why}){ADVICE}")


# the visible tests' calls, as the messages name them
DECODE_CALL = "decode_e4m3([0x38, 0x7e, 0x1, 0x80, 0xff])"
ROUNDING_CALL = "encode_e4m3([1.0, 1.0625, 1.1875, -2.5, 0.3, 0.0, -0.0], saturate=False)"
EDGES = "[464.0, 465.0, -1e-09, 0.001953125, 0.0029296875, 1000.0, inf, nan]"
EDGES_CALL = f"encode_e4m3({EDGES}, saturate=False)"
EXAMPLE_RUN = "[2.0, 4.0, 1.0, 1.0, 1.0]"
EXAMPLE_GRADS = "[[1.0, -0.3], [4.0, 0.01]]"
PACKAGE_ALL_REDUCE = (f"collectives.fp8.fp8_all_reduce({EXAMPLE_GRADS}, collectives.grading."
                      "tasks.fp8.chain_all_reduce(2), fmt='e4m3', scaling='auto', mu=0.5, "
                      "quantize='per_hop', accumulate='fp8').output[:, 0] (shared scale 112)")
NOT_NORMAL = ("; an exponent field of 0 is subnormal: no implicit leading 1, and the exponent "
              "of the smallest normal binade, 2**-6")
FLUSHED_SUBNORMAL = Error(
    f"{EDGES_CALL}: x[3] = 0.001953125 gives 0x00 (0.0), expected 0x01 (0.001953125) = "
    "collectives.fp8.encode(0.001953125, 'e4m3', saturate=False); it is below the smallest "
    "normal value 2**-6 = 0.015625: a subnormal, a multiple of 2**-9, with exponent field 0")
TIE = "a tie rounds to the even code (mantissa's last bit 0)"

ERRORS = {
    # the feedback a learner reads for an encoder that flushes subnormals
    "partial": {NOTEBOOK: {
        "test_encode_e4m3_special": FLUSHED_SUBNORMAL,
        # the cast-once model passes the two-rank example and fails the three-rank one
        "test_fp8_all_reduce": Error(
            "fp8_all_reduce([[6.0, 1.5], [0.25, 3.0], [0.3, 0.1]], 0.5): element 0 is "
            "2.142857142857143, expected 2.2857143878936768 = collectives.fp8.fp8_all_reduce("
            "[[6.0, 1.5], [0.25, 3.0], [0.3, 0.1]], collectives.grading.tasks.fp8."
            "chain_all_reduce(3), fmt='e4m3', scaling='auto', mu=0.5, quantize='per_hop', "
            "accumulate='fp8').output[:, 0] (shared scale 74.6666667); that is the sum of the "
            "casts rounded to E4M3 once: with an FP8 datatype NCCL's ring and tree kernels "
            "narrow every partial sum back to E4M3, one rank at a time (here in rank order), "
            "before the next rank's value is added"),
    }},
    # the in-kernel checks were all disabled: these are the isolated re-check's verdicts, on
    # the values the learner's process returned (not the lying objects), except for the
    # encoder's second cell: the hidden test of its first cell reloaded collectives.grading,
    # and the restored visible check found collectives.fp8.encode (patched in the kernel)
    # at odds with the OFP8 rules
    "hostile": {NOTEBOOK: {
        "test_encode_e4m3_rounding": Error(
            "encode_e4m3(x, saturate=False): x[0] = 0.015625 gives 0x00 (0.0), expected 0x08 "
            "(0.015625) = collectives.fp8.encode(0.015625, 'e4m3', saturate=False)"),
        "test_encode_e4m3_special": Error(
            "collectives.fp8.encode and the OFP8 rules disagree (a bug in the test or the "
            "package, or collectives.fp8 was changed in this notebook)", ename="GradingError"),
        "test_delayed_scales": Error(
            "delayed_scales(amaxes, 2, 0, 'e4m3'): the scale at step 1 is 1.0, expected 224.0 "
            f"= collectives.fp8.delayed_scales({EXAMPLE_RUN}, fmt='e4m3', history_len=2, "
            "margin=0)[1]"),
        "test_fp8_all_reduce": refused(
            "fp8_all_reduce([[1.2861328125, -1.0146484375, -1.5556640625, 2.8544921875, "
            "-1.8984375, -1.0625], [3.33984375, 6.76171875, 3.2734375, 8.66796875, "
            "-10.58984375, -2.5546875]], 0.5)",
            "your code uses cl, which is the collectives package"),
        "test_flushing_ranks": Error(
            "flushing_ranks(0.001, 'e4m3') is 0, expected 459 = "
            "collectives.grading.flushing_ranks(0.001, 'e4m3')"),
    }},
    # one plausible mistake per task, each named by the visible test (the margin and the tie
    # of flushing_ranks only by cases the visible examples do not have)
    "wrong": {NOTEBOOK: {
        "test_decode_e4m3": Error(
            f"{DECODE_CALL}: code 0x01 (bits 00000001) gives 0.0087890625, expected "
            f"0.001953125 = collectives.fp8.decode(0x01, 'e4m3'){NOT_NORMAL}"),
        "test_encode_e4m3_rounding": Error(
            f"{ROUNDING_CALL}: x[1] = 1.0625 gives 0x39 (1.125), expected 0x38 (1.0) = "
            "collectives.fp8.encode(1.0625, 'e4m3', saturate=False); |x| lies exactly halfway "
            f"between 1.0 and 1.125: {TIE}"),
        "test_encode_e4m3_special": Error(
            f"{EDGES_CALL}: x[0] = 464.0 gives 0x7f (NaN), expected 0x7e (448.0) = "
            "collectives.fp8.encode(464.0, 'e4m3', saturate=False); |x| lies exactly halfway "
            f"between 448.0 and 480.0: {TIE}"),
        "test_delayed_scales": Error(
            "delayed_scales([1.0, 1.0, 8.0, 1.0, 1.0, 1.0, 1.0], 3, 1, 'e4m3'): the scale at "
            "step 1 is 448.0, expected 224.0 = collectives.fp8.delayed_scales([1.0, 1.0, 8.0, "
            "1.0, 1.0, 1.0, 1.0], fmt='e4m3', history_len=3, margin=1)[1]; yours is 2**1 times "
            "that: the margin divides the scale by 2**margin"),
        "test_fp8_all_reduce": Error(
            f"fp8_all_reduce({EXAMPLE_GRADS}, 0.5): element 0 is 1.0, expected "
            f"2.5714285373687744 = {PACKAGE_ALL_REDUCE}; it is 1.5 from the exact mean 2.5, "
            "more than the FP8 error bound 0.3125; that is what the largest of the ranks' "
            "scales gives: it makes the rank with the largest gradient overflow"),
        "test_flushing_ranks": Error(
            "flushing_ranks(0.0625, 'e4m3') is 28673, expected 28672 = "
            "collectives.grading.flushing_ranks(0.0625, 'e4m3'); with 28672 ranks the cast "
            "sees exactly half the smallest subnormal, a tie between 0 and the smallest "
            "subnormal, which goes to the even code: 0"),
    }},
    "wrong-subnormals": {NOTEBOOK: {
        "test_decode_e4m3": Error(
            f"{DECODE_CALL}: code 0xff (bits 11111111) gives -480.0, expected nan = "
            "collectives.fp8.decode(0xff, 'e4m3'); S.1111.111 (0x7F and 0xFF) is NaN in E4M3, "
            "which has no infinities"),
        "test_encode_e4m3_special": FLUSHED_SUBNORMAL,
        "test_delayed_scales": Error(
            f"delayed_scales({EXAMPLE_RUN}, 2, 0, 'e4m3'): the scale at step 0 is 224.0, "
            f"expected 1.0 = collectives.fp8.delayed_scales({EXAMPLE_RUN}, fmt='e4m3', "
            "history_len=2, margin=0)[0]; that is the scale of this step's own amax, which "
            "delayed scaling cannot know yet: step t uses the amaxes recorded before it"),
        "test_fp8_all_reduce": Error(
            f"fp8_all_reduce({EXAMPLE_GRADS}, 0.5): element 0 is 5.142857142857143, expected "
            f"2.5714285373687744 = {PACKAGE_ALL_REDUCE}; it is 2.64286 from the exact mean "
            "2.5, more than the FP8 error bound 0.3125; that is the sum: what a rank holds "
            "stands for the mean, the sum over 2 ranks divided by 2"),
        "test_flushing_ranks": Error(
            "flushing_ranks(0.001, 'e4m3') is 230, expected 459 = "
            "collectives.grading.flushing_ranks(0.001, 'e4m3'); a value below the smallest "
            "subnormal is not zero yet: it rounds to zero only when it is nearer 0 than the "
            "smallest subnormal"),
    }},
    "wrong-overflow": {NOTEBOOK: {
        "test_decode_e4m3": Error(
            f"{DECODE_CALL}: code 0x01 (bits 00000001) gives 0.0009765625, expected "
            f"0.001953125 = collectives.fp8.decode(0x01, 'e4m3'){NOT_NORMAL}"),
        "test_encode_e4m3_special": Error(
            f"{EDGES_CALL}: x[1] = 465.0 gives 0x7e (448.0), expected 0x7f (NaN) = "
            "collectives.fp8.encode(465.0, 'e4m3', saturate=False); it rounds beyond the "
            "largest value 448 (anything above 464 does): without saturation that is NaN "
            "(0x7F or 0xFF)"),
        "test_delayed_scales": Error(
            f"delayed_scales({EXAMPLE_RUN}, 2, 0, 'e4m3'): the scale at step 4 is 112.0, "
            f"expected 448.0 = collectives.fp8.delayed_scales({EXAMPLE_RUN}, fmt='e4m3', "
            "history_len=2, margin=0)[4]; the history holds the amaxes of the last 2 steps "
            "before this one, no more and no fewer"),
        "test_fp8_all_reduce": Error(
            f"fp8_all_reduce({EXAMPLE_GRADS}, 0.5): element 0 is 2.5, expected "
            f"2.5714285373687744 = {PACKAGE_ALL_REDUCE}; that is what each rank's own scale "
            "gives: codes cast with different scales cannot be added, every rank must use the "
            "same one"),
        "test_flushing_ranks": Error(
            "flushing_ranks(0.001, 'e5m2') is 459, expected 7516193 = "
            "collectives.grading.flushing_ranks(0.001, 'e5m2'); that is the answer in e4m3, "
            "not e5m2"),
    }},
    # each re-run refuses the package, in the words of the way it was used
    "shortcut": {NOTEBOOK: {
        "test_decode_e4m3": refused(
            "decode_e4m3([56, 126, 1, 128, 255])",
            "your code uses cl, which is the collectives package"),
        "test_encode_e4m3_rounding": refused(
            "encode_e4m3([1.0, 1.0625, 1.1875, -2.5, 0.3, 0.0, -0.0], False)",
            "your code uses encode, which is collectives.fp8.formats.encode"),
        "test_encode_e4m3_special": refused(
            f"encode_e4m3({EDGES}, False)",
            "your code uses encode, which is collectives.fp8.formats.encode"),
        "test_delayed_scales": refused(
            f"delayed_scales({EXAMPLE_RUN}, 2, 0, 'e4m3')", "your code imports 'collectives'"),
        "test_fp8_all_reduce": refused(
            f"fp8_all_reduce({EXAMPLE_GRADS}, 0.5)",
            "your code uses cl, which is the collectives package"),
        "test_flushing_ranks": refused(
            "flushing_ranks(0.001, 'e4m3')", "your code imports 'collectives'"),
    }},
}

PRINTED = {
    # the tampering did fool the visible, in-kernel checks: each printed its success line (the
    # package shortcut's too, once run_isolated was patched away)
    "hostile": {NOTEBOOK: (
        "encode_e4m3 agrees with cl.fp8.encode in the normal range.",
        "delayed_scales agrees with cl.fp8.delayed_scales on both runs.",
        "fp8_all_reduce agrees with cl.fp8.fp8_all_reduce on the three examples.",
        "flushing_ranks agrees with cl.fp8.encode in both formats.",
    )},
    # what a learner's right answers, written their own way, are told
    "variant": {NOTEBOOK: (
        "decode_e4m3 agrees with cl.fp8.decode on the examples.",
        "encode_e4m3 agrees with cl.fp8.encode at the edges of the range.",
        "fp8_all_reduce agrees with cl.fp8.fp8_all_reduce on the three examples.",
    )},
}

# the origin attack: every graded function's name bound to the package's own function, an
# alias, a partial, a wrapper or a class attribute of it (no `def`): refused, 0 everywhere
SUBMISSIONS["origin"], EXPECTED["origin"], ERRORS["origin"] = origin_attack('fp8', SOLUTIONS)
