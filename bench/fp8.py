"""Benchmark: FP8 encode and decode of 16M float32 values against ml_dtypes' astype.

``collectives.fp8.encode`` (round to nearest-even, non-saturating, as ml_dtypes casts) and
``decode`` are timed against ``x.astype(ml_dtypes.float8_*)`` and
``codes.view(float8).astype(np.float32)`` on the same data in the same run; the ratio is
throughput against ml_dtypes' (ml_dtypes time / our time: 1.0 = as fast, target >= 0.5).
The data covers every regime: normal values, FP8 subnormals and underflow to zero,
overflow, Inf and NaN (float32 normals times 2^U(-14, 12), standard normal signs). The
results are checked against ml_dtypes before timing (NaN compared by NaN-ness). Also timed:
float64 input (rounded once from float64; ml_dtypes rounds float64 through float32, so its
results may differ there by design and are not compared).

Run: ``make bench`` or ``.venv/bin/python bench/fp8.py``.
"""

import time
import warnings

import numpy as np

import collectives.fp8 as fp8

try:
    import ml_dtypes
except ImportError as exc:  # pragma: no cover
    raise SystemExit("bench/fp8.py compares against ml_dtypes: pip install ml_dtypes") from exc

N = 1 << 24
REPEATS = 5
ML = {
    "e4m3": ml_dtypes.float8_e4m3fn,
    "e5m2": ml_dtypes.float8_e5m2,
    "e4m3fnuz": ml_dtypes.float8_e4m3fnuz,
    "e5m2fnuz": ml_dtypes.float8_e5m2fnuz,
}


def best_of(fn, repeats=REPEATS):
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def data():
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(N) * np.exp2(rng.uniform(-14, 12, N))).astype(np.float32)
    x[:1000] = np.nan
    x[1000:2000] = np.inf
    x[2000:3000] = -np.inf
    return x


def ml_cast(x, dtype):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return x.astype(dtype)


def main():
    x = data()
    x64 = x.astype(np.float64)
    print(
        f"{N:,} float32 values (normals, FP8 subnormals, underflow, overflow, +-Inf, NaN); "
        f"best of {REPEATS}; ratio = ml_dtypes time / ours (throughput vs ml_dtypes, "
        "target >= 0.5)"
    )
    print(f"{'format':9} {'op':7} {'ours':>9} {'ml_dtypes':>10} {'ratio':>7}")
    for name, dtype in ML.items():
        ours_bits = fp8.encode(x, name)
        ref_bits = ml_cast(x, dtype).view(np.uint8)
        nan_ours = np.isnan(fp8.decode(ours_bits, name))
        nan_ref = np.isnan(fp8.decode(ref_bits, name))
        same = np.array_equal(nan_ours, nan_ref) and np.array_equal(
            ours_bits[~nan_ours], ref_bits[~nan_ref]
        )
        if not same:
            raise SystemExit(f"{name}: encode differs from ml_dtypes")
        back = fp8.decode(ref_bits, name)
        ref_back = ref_bits.view(dtype).astype(np.float32)
        if not np.array_equal(back, ref_back, equal_nan=True):
            raise SystemExit(f"{name}: decode differs from ml_dtypes")
        # the defaults bind this iteration's format and bits (best_of calls each lambda at once)
        t_enc = best_of(lambda name=name: fp8.encode(x, name))
        t_ml_enc = best_of(lambda dtype=dtype: ml_cast(x, dtype))
        t_dec = best_of(lambda bits=ref_bits, name=name: fp8.decode(bits, name))
        t_ml_dec = best_of(lambda bits=ref_bits, dtype=dtype: bits.view(dtype).astype(np.float32))
        t_enc64 = best_of(lambda name=name: fp8.encode(x64, name))
        t_ml_enc64 = best_of(lambda dtype=dtype: ml_cast(x64, dtype))
        for op, ours, ml in (
            ("encode", t_enc, t_ml_enc),
            ("decode", t_dec, t_ml_dec),
            ("enc f64", t_enc64, t_ml_enc64),
        ):
            print(f"{name:9} {op:7} {ours * 1e3:7.1f} ms {ml * 1e3:7.1f} ms {ml / ours:6.2f}x")


if __name__ == "__main__":
    main()
