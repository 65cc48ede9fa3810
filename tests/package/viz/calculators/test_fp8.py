"""The FP8 explorer (collectives.viz.calculators.fp8): its script, run under node, rounds a
grid of values exactly as the package does (explain: collectives.fp8's scaled casts and
viz.fp8.bf16_round), and the package rounds them as ml_dtypes does; the page block carries
the script and the formats' constants. Expected patterns beyond the range are worked out by
hand from OFP8's bit layouts (E4M3's +max 0 1111 110 = 0x7E, E5M2's 0 11110 11 = 0x7B)."""

import json
import math
import re
import shutil
import subprocess
from importlib import resources

import ml_dtypes
import numpy as np
import pytest

import collectives as cl
from collectives.viz.calculators import fp8 as ex

NODE = shutil.which("node")

# run the explorer's explain() on every case: [x, format, amax]; x as a string for the
# values JSON has no number for
DRIVER = r"""
const c = require(process.argv[1]);
const input = JSON.parse(require("fs").readFileSync(0, "utf8"));
const named = {"nan": NaN, "inf": Infinity, "-inf": -Infinity, "-0": -0};
const out = input.cases.map(([x, fmt, amax]) => {
  const r = c.explain(typeof x === "string" ? named[x] : x, fmt, input.formats, amax);
  const show = (v) => (Number.isNaN(v) ? "nan" : Object.is(v, -0) ? "-0" :
                       Number.isFinite(v) ? v : String(v));
  return [r.code, r.scale, show(r.stored), show(r.back)];
});
process.stdout.write(JSON.stringify(out));
"""


def _as_json(x):
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if x == 0 and math.copysign(1, x) < 0:
        return "-0"
    return x


def _from_json(v):
    return (
        {"nan": math.nan, "-0": -0.0, "Infinity": math.inf, "-Infinity": -math.inf}.get(v, v)
        if isinstance(v, str)
        else float(v)
    )


def _run_script(cases):
    script = resources.files("collectives.viz.calculators").joinpath("fp8_explorer.js")
    payload = {
        "cases": [[_as_json(x), f, a] for x, f, a in cases],
        "formats": ex.explorer_formats(),
    }
    done = subprocess.run(
        [NODE, "-e", DRIVER, str(script)],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return [
        (code, scale, _from_json(s), _from_json(b)) for code, scale, s, b in json.loads(done.stdout)
    ]


def _same(a, b):
    return (math.isnan(a) and math.isnan(b)) or (
        a == b and math.copysign(1, a) == math.copysign(1, b)
    )


def _fp8_grid(fmt):
    """Every finite value of ``fmt``, the midpoints between neighbours (ties, rounded to the
    even code), the doubles just either side of each midpoint, values past max, both signs."""
    values = np.unique(cl.fp8.decode(np.arange(256, dtype=np.uint8), fmt).astype(np.float64))
    values = values[np.isfinite(values) & (values >= 0)]
    mids = (values[:-1] + values[1:]) / 2
    beyond = cl.fp8.max_value(fmt) * np.array([1.03, 1.0625, 1.125, 1.2, 4.0])
    grid = np.concatenate(
        [values, mids, np.nextafter(mids, 0), np.nextafter(mids, np.inf), beyond, [1e-300, 1e300]]
    )
    return np.concatenate([grid, -grid])


def _random(n=150):
    rng = np.random.default_rng(23)
    x = 10.0 ** rng.uniform(-12, 7, n)
    return np.where(rng.random(n) < 0.5, -x, x)


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_the_script_rounds_as_the_package_and_ml_dtypes_on_a_grid():
    cases = []
    for fmt in ("e4m3", "e5m2"):
        cases += [(float(x), fmt, None) for x in _fp8_grid(fmt)]
        cases += [(float(x), fmt, None) for x in _random()]
        cases += [(x, fmt, None) for x in (0.0, -0.0, math.inf, -math.inf, math.nan)]
        rng = np.random.default_rng(7)
        amaxes = 10.0 ** rng.uniform(-6, 6, 100)
        # x up to 1.2 amax: the scaled cast saturates past amax by more than max's half-step
        cases += [
            (float(a * u), fmt, float(a)) for a, u in zip(amaxes, rng.uniform(-1.2, 1.2, 100))
        ]
    bf16 = np.concatenate([_random(), np.float32(np.pi) * 2.0 ** np.arange(-20, 20)])
    # BF16 ties: float32 values whose low 16 bits are exactly 0x8000
    ties = (np.arange(0x3F80, 0x3FA0, dtype=np.uint32) << 16 | 0x8000).view(np.float32)
    cases += [(float(x), "bf16", None) for x in np.concatenate([bf16, ties, -ties])]
    got = _run_script(cases)
    assert len(got) == len(cases)
    for (x, fmt, amax), (code, scale, stored, back) in zip(cases, got):
        want = ex.explain(x, fmt, amax)
        assert code == want["code"], (x, fmt, amax)
        assert scale == want["scale"], (x, fmt, amax)
        assert _same(stored, want["stored"]) and _same(back, want["back"]), (x, fmt, amax)
    # the package against ml_dtypes: inside the range a non-saturating cast of x * scale
    names = {"e4m3": ml_dtypes.float8_e4m3fn, "e5m2": ml_dtypes.float8_e5m2}
    for x, fmt, amax in cases:
        if fmt == "bf16":
            expected = int(np.float32(x).astype(ml_dtypes.bfloat16).view(np.uint16))
            assert ex.explain(x, fmt)["code"] == expected, x
            continue
        want = ex.explain(x, fmt, amax)
        v = x * want["scale"]
        if math.isnan(v):
            continue
        if abs(v) > cl.fp8.max_value(fmt):  # saturated: +-max, by hand above
            assert want["code"] == {"e4m3": 0x7E, "e5m2": 0x7B}[fmt] | (0x80 if v < 0 else 0)
            continue
        expected = int(np.array(v, dtype=np.float64).astype(names[fmt]).view(np.uint8))
        assert want["code"] == expected, (x, fmt, amax)


def test_the_package_answers_by_hand():
    # pi: E4M3 has 3 mantissa bits, so 1.1001 (3.125) and 1.1010 (3.25): pi nearer 3.25
    # = 0 1000 101 = 0x45; E5M2's 2 bits: 3.0 = 0 10000 10 = 0x42; BF16 3.140625 = 0x4049
    assert ex.explain(math.pi, "e4m3")["code"] == 0x45
    assert ex.explain(math.pi, "e4m3")["stored"] == 3.25
    assert ex.explain(math.pi, "e5m2")["code"] == 0x42
    assert ex.explain(math.pi, "bf16") == {
        "code": 0x4049,
        "scale": 1.0,
        "stored": 3.140625,
        "back": 3.140625,
    }
    # amax 2: E4M3's scale 448 / 2 = 224, x = 1 stored as 224 (0 1110 110 = 0x76), back 1
    one = ex.explain(1.0, "e4m3", amax=2.0)
    assert (one["scale"], one["code"], one["stored"], one["back"]) == (224.0, 0x76, 224.0, 1.0)
    with pytest.raises(cl.CollectivesError):
        ex.explain(1.0, "fp16")


def test_the_block_carries_the_script_and_the_formats():
    page = ex.fp8_explorer(value=0.1, amax=3.0)._repr_html_()
    assert 'class="cl-fp8-explorer"' in page and 'value="0.1"' in page and 'value="3.0"' in page
    data = json.loads(re.search(r'class="cl-fp8-data">(.*?)</script>', page).group(1))
    assert data["order"] == ["e4m3", "e5m2", "bf16"]
    assert data["formats"]["e4m3"]["max"] == 448.0 and data["formats"]["e5m2"]["bias"] == 15
    assert data["formats"]["e5m2"]["nan_out"] == int(cl.fp8.encode(math.nan, "e5m2"))
    assert ex.explorer_script() in page and "http" not in ex.explorer_script()
    with pytest.raises(cl.CollectivesError):
        ex.fp8_explorer(value="pi")
    with pytest.raises(cl.CollectivesError):
        ex.fp8_explorer(amax=0.0)
