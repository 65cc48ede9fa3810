/*
 * The FP8 explorer (collectives.viz.calculators.fp8): type a number, see its bits and its
 * rounding in E4M3, E5M2 and BF16, with Transformer Engine's per-tensor scale.
 *
 * The codec here is the package's (collectives.fp8.encode, saturating, and
 * collectives.viz.fp8.bf16_round), written again for the browser; the formats' constants come
 * from the page's data (collectives.fp8.FORMATS), and tests/package/viz/test_fp8_explorer.py
 * runs this file under node against the package and ml_dtypes on a grid of values.
 *
 * FP8 (saturating, as TE casts): round-to-nearest-even on the exact double, subnormals
 * included; beyond +-max (and +-Inf) gives +-max; NaN gives the format's NaN pattern.
 * BF16: the double to float32 (round to nearest even), then float32 to BF16 on its bits.
 * Scaled cast (collectives.fp8.quantize_scaled / dequantize_scaled): the scale is held as a
 * float32, x * scale is rounded once; back: decode(code) * float32(1 / scale) in float32.
 * No library, no network: the page's inline <script> defines window.clFp8Explorer and draws
 * every .cl-fp8-explorer block; under node the functions are module.exports.
 */
(function (root) {
  "use strict";

  var f64 = new Float64Array(1);
  var u32of64 = new Uint32Array(f64.buffer);
  var f32 = new Float32Array(1);
  var u32of32 = new Uint32Array(f32.buffer);
  var LITTLE = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

  // the unbiased binary exponent of a finite double a > 0 (floor(log2(a)), exactly)
  function exponentOf(a) {
    f64[0] = a;
    var high = u32of64[LITTLE ? 1 : 0];
    var field = (high >>> 20) & 0x7ff;
    if (field === 0) {            // a double subnormal: far below any 8-bit format
      return -1075;
    }
    return field - 1023;
  }

  // FP8 code (0..255) of x in format f, saturating: f = {mantissa_bits, bias, max,
  // max_pattern, nan_out}
  function encodeFp8(x, f) {
    if (x !== x) {
      return f.nan_out;
    }
    var sign = (x < 0 || (x === 0 && 1 / x < 0)) ? 0x80 : 0;
    var a = Math.abs(x);
    if (a === 0) {
      return sign;
    }
    if (a === Infinity || a > f.max) {   // a value that would round past max: max
      return sign | f.max_pattern;
    }
    var m = f.mantissa_bits;
    var minExp = 1 - f.bias;            // the exponent of the smallest normal value
    var e = Math.max(exponentOf(a), minExp);
    var quantum = Math.pow(2, e - m);
    var r = a / quantum;                // exact: a power-of-two division
    var n = Math.floor(r);
    var rest = r - n;                   // exact: r < 2^(m+1)
    if (rest > 0.5 || (rest === 0.5 && n % 2 === 1)) {
      n += 1;
    }
    if (n === 0) {
      return sign;                      // rounds to (signed) zero
    }
    if (n === Math.pow(2, m + 1)) {     // carried into the next binade
      n = Math.pow(2, m);
      e += 1;
    }
    if (n * Math.pow(2, e - m) > f.max) {
      return sign | f.max_pattern;
    }
    if (n < Math.pow(2, m)) {           // subnormal: exponent field 0
      return sign | n;
    }
    return sign | ((e + f.bias) << m) | (n - Math.pow(2, m));
  }

  // the value of FP8 code c in format f (NaN for its NaN patterns, +-Inf for E5M2's)
  function decodeFp8(c, f) {
    if (f.nan_patterns.indexOf(c) >= 0) {
      return NaN;
    }
    if (f.inf_patterns.indexOf(c) >= 0) {
      return (c & 0x80) ? -Infinity : Infinity;
    }
    var m = f.mantissa_bits;
    var magnitude = c & 0x7f;
    var field = magnitude >> m;
    var mantissa = magnitude & ((1 << m) - 1);
    var v = field === 0
      ? mantissa * Math.pow(2, 1 - f.bias - m)
      : (mantissa + Math.pow(2, m)) * Math.pow(2, field - f.bias - m);
    return (c & 0x80) ? -v : v;
  }

  // BF16 code (0..65535) of x: x to float32, then round-to-nearest-even on its top 16 bits
  function encodeBf16(x) {
    f32[0] = x;
    var u = u32of32[0];
    var rounded = Math.floor((u + 0x7fff + ((u >>> 16) & 1)) / 65536);
    return rounded % 65536;
  }

  function decodeBf16(c) {
    u32of32[0] = c * 65536;
    return f32[0];
  }

  // TE's scale for amax (float32: FP8_MAX / amax), 1 where amax gives none (0, Inf, NaN)
  function scaleFor(amax, f) {
    var a = Math.fround(amax);
    if (!(a > 0) || a === Infinity) {
      return 1;
    }
    var s = Math.fround(Math.fround(f.max) / a);
    return s === Infinity ? 3.4028234663852886e38 : s;
  }

  // one format's rounding of x: {code, bits, stored, back, scale, below, above}
  function explain(x, name, formats, amax) {
    if (name === "bf16") {
      var c16 = encodeBf16(x);
      var v16 = decodeBf16(c16);
      return { code: c16, width: 16, exponent_bits: 8, stored: v16, back: v16, scale: 1,
               neighbours: neighboursBf16(c16, x) };
    }
    var f = formats[name];
    var scale = amax === null ? 1 : scaleFor(amax, f);
    var c = encodeFp8(x * scale, f);
    var stored = decodeFp8(c, f);
    var inv = Math.fround(1 / scale);
    var back = Math.fround(Math.fround(stored) * inv);
    return { code: c, width: 8, exponent_bits: f.exponent_bits, stored: stored, back: back,
             scale: scale, neighbours: neighboursFp8(c, x * scale, f) };
  }

  // the two values of the format around v (the one it rounded to, and the nearest on the
  // other side of v), or null where v is exact, NaN or beyond the range
  function neighboursFp8(c, v, f) {
    var stored = decodeFp8(c, f);
    if (!isFinite(v) || stored === v || Math.abs(v) > f.max) {
      return null;
    }
    var magnitude = c & 0x7f;
    var otherMagnitude = Math.abs(v) > Math.abs(stored) ? magnitude + 1 : magnitude - 1;
    if (otherMagnitude < 0) {
      return null;
    }
    var other = decodeFp8((c & 0x80) | otherMagnitude, f);
    return [Math.min(stored, other), Math.max(stored, other)];
  }

  function neighboursBf16(c, x) {
    var stored = decodeBf16(c);
    if (!isFinite(x) || stored === x || !isFinite(stored)) {
      return null;
    }
    var magnitude = c & 0x7fff;
    var otherMagnitude = Math.abs(x) > Math.abs(stored) ? magnitude + 1 : magnitude - 1;
    if (otherMagnitude < 0) {
      return null;
    }
    var other = decodeBf16((c & 0x8000) | otherMagnitude);
    return [Math.min(stored, other), Math.max(stored, other)];
  }

  var api = { encodeFp8: encodeFp8, decodeFp8: decodeFp8, encodeBf16: encodeBf16,
              decodeBf16: decodeBf16, scaleFor: scaleFor, explain: explain };

  // ---- the page ----------------------------------------------------------------------

  function number(v) {
    if (v !== v) {
      return "NaN";
    }
    if (!isFinite(v)) {
      return v > 0 ? "Inf" : "-Inf";
    }
    if (v === 0) {
      return (1 / v < 0) ? "-0" : "0";
    }
    var a = Math.abs(v);
    return (a >= 1e5 || a < 1e-3) ? v.toExponential(5).replace(/\.?0+e/, "e")
                                   : String(Number(v.toPrecision(7)));
  }

  function bitsHtml(code, width, exponentBits) {
    var s = code.toString(2);
    while (s.length < width) {
      s = "0" + s;
    }
    return '<span class="cl-fp8-sign">' + s[0] + "</span>" +
           '<span class="cl-fp8-exponent">' + s.slice(1, 1 + exponentBits) + "</span>" +
           '<span class="cl-fp8-mantissa">' + s.slice(1 + exponentBits) + "</span>";
  }

  function row(x, name, label, formats, amax) {
    var r = explain(x, name, formats, amax);
    var hex = "0x" + r.code.toString(16).toUpperCase();
    var error = (isFinite(x) && x !== 0 && isFinite(r.back))
      ? String(Number((100 * (r.back - x) / Math.abs(x)).toPrecision(3))) + " %" : "–";
    var between = r.neighbours
      ? number(r.neighbours[0]) + " … " + number(r.neighbours[1])
      : (r.stored === (name === "bf16" ? x : x * r.scale) ? "exact" : "clipped");
    return "<tr><th>" + label + "</th>" +
      '<td class="cl-fp8-bits" data-format="' + name + '" title="' + hex + '">' +
      bitsHtml(r.code, r.width, r.exponent_bits) + "</td>" +
      '<td data-show="stored">' + number(r.stored) + "</td>" +
      '<td data-show="back">' + number(r.back) + "</td>" +
      "<td>" + error + "</td>" +
      "<td>" + between + "</td></tr>";
  }

  function parse(text) {
    var t = String(text).trim().toLowerCase().replace(/\u2212/g, "-");
    if (t === "") {
      return null;
    }
    if (t === "inf" || t === "+inf" || t === "infinity") {
      return Infinity;
    }
    if (t === "-inf" || t === "-infinity") {
      return -Infinity;
    }
    if (t === "nan") {
      return NaN;
    }
    if (!/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/.test(t)) {
      return undefined;
    }
    return parseFloat(t);
  }

  function draw(block) {
    var data = JSON.parse(block.querySelector("script.cl-fp8-data").textContent);
    var valueBox = block.querySelector('input[data-control="value"]');
    var amaxBox = block.querySelector('input[data-control="amax"]');
    var body = block.querySelector("tbody");
    var note = block.querySelector(".cl-fp8-note");
    function update() {
      var x = parse(valueBox.value);
      var amax = parse(amaxBox.value);
      if (x === null || x === undefined || amax === undefined ||
          (amax !== null && !(amax > 0))) {
        note.textContent = "Type a number (such as 3.14159, -2e-5 or 500), and an amax > 0 " +
          "or nothing.";
        return;
      }
      var scales = [];
      for (var j = 0; j < data.order.length; j++) {
        if (data.order[j] !== "bf16" && amax !== null) {
          scales.push(data.labels[j] + " " + number(scaleFor(amax, data.formats[data.order[j]])));
        }
      }
      note.textContent = amax === null
        ? "No scale: the FP8 rows round x itself."
        : "Each FP8 row stores x × scale (scale = max / amax: " + scales.join(", ") +
          ") and reads back stored / scale.";
      var rows = "";
      for (var i = 0; i < data.order.length; i++) {
        rows += row(x, data.order[i], data.labels[i], data.formats, amax);
      }
      body.innerHTML = rows;
    }
    valueBox.addEventListener("input", update);
    amaxBox.addEventListener("input", update);
    block.setAttribute("data-ready", "true");
    update();
  }

  api.drawAll = function () {
    var blocks = document.querySelectorAll(".cl-fp8-explorer:not([data-ready])");
    for (var i = 0; i < blocks.length; i++) {
      draw(blocks[i]);
    }
  };

  if (typeof module !== "undefined" && module.exports) {
    module.exports = api;
  } else {
    root.clFp8Explorer = api;
    if (document.readyState === "loading") {
      document.addEventListener("DOMContentLoaded", api.drawAll);
    } else {
      api.drawAll();
    }
  }
})(typeof window !== "undefined" ? window : this);
