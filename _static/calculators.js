/*
 * The book's calculators: draw each .cl-calculator block (collectives.viz.interactive) and
 * each .cl-calculator-plan block (collectives.viz.plan) with plotly.js, and wire their
 * controls to the numbers computed when the book was built.
 *
 * Jupyter Book loads this file on every page; it does nothing where there is no calculator.
 * plotly.js is loaded once per page, from _static/vendor/plotly/ (never a CDN). Pages with
 * Jupyter widgets also load require.js. A UMD build of plotly.js (2.x) then registers itself
 * as an AMD module instead of setting window.Plotly, and a plain <script> would throw
 * "mismatched anonymous define"; so where require.js is present plotly.js is loaded through
 * it, and the module (2.x) or window.Plotly (3.x and later set only that) is used.
 */
(function () {
  "use strict";
  var script = document.currentScript;
  var plotlyUrl = new URL("vendor/plotly/plotly.min.js", script.src).href;
  var loading = null;

  function loadPlotly() {
    if (window.Plotly) {
      return Promise.resolve(window.Plotly);
    }
    if (loading) {
      return loading;
    }
    window.PlotlyConfig = { MathJaxConfig: "local" };  // leave the page's MathJax alone
    loading = new Promise(function (resolve, reject) {
      if (typeof window.define === "function" && window.define.amd &&
          typeof window.require === "function" && window.require.config) {
        window.require.config({ paths: { "cl-plotly": plotlyUrl.replace(/\.js$/, "") } });
        window.require(["cl-plotly"], function (Plotly) {
          window.Plotly = Plotly || window.Plotly;
          resolve(window.Plotly);
        }, reject);
        return;
      }
      var tag = document.createElement("script");
      tag.src = plotlyUrl;
      tag.onload = function () { resolve(window.Plotly); };
      tag.onerror = reject;
      document.head.appendChild(tag);
    });
    return loading;
  }

  // The same formats as collectives.viz.interactive (format_seconds, format_rate).
  function fmtSeconds(t) {
    if (t === null || !isFinite(t)) { return "n/a"; }
    var units = [[1, "s"], [1e-3, "ms"], [1e-6, "\u00b5s"]];
    for (var i = 0; i < units.length; i++) {
      if (t >= units[i][0]) { return sig3(t / units[i][0]) + " " + units[i][1]; }
    }
    return sig3(t / 1e-9) + " ns";
  }
  function fmtRate(b) {
    return (b === null || !isFinite(b)) ? "n/a" : sig3(b / 1e9) + " GB/s";
  }
  // formats.format_latency: the time axis's tick labels (10 µs, 0.5 ms, 2 s)
  function fmtTick(t) {
    var units = [[1, "s", 1], [1e-3, "ms", 1e-3], [1e-6, "\u00b5s", 1e-7]];
    for (var i = 0; i < units.length; i++) {
      if (t >= units[i][2]) { return Number((t / units[i][0]).toPrecision(3)) + " " + units[i][1]; }
    }
    return Number((t / 1e-9).toPrecision(3)) + " ns";
  }
  // collective.time_axis: powers of ten where three of them span the values shown, else 1, 2
  // and 5 per decade, else every digit; the range from the tick at or below the smallest
  // value to the one at or above the largest, so that 2 to 15 ticks are labelled
  var MANTISSAS = [[1], [1, 2, 5], [1, 2, 3, 4, 5, 6, 7, 8, 9]];
  function timeAxis(rows) {
    var lo = Infinity, hi = 0;
    rows.forEach(function (row) {
      row.forEach(function (v) {
        if (v !== null && v > 0 && isFinite(v)) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
      });
    });
    if (!isFinite(lo)) { return null; }
    var ticks, below, above;
    for (var k = 0; k < MANTISSAS.length; k++) {
      var candidates = [];
      for (var e = Math.floor(Math.log10(lo)) - 1; e <= Math.ceil(Math.log10(hi)) + 1; e++) {
        MANTISSAS[k].forEach(function (m) {
          candidates.push(e >= 0 ? m * Math.pow(10, e) : m / Math.pow(10, -e));
        });
      }
      candidates.sort(function (a, b) { return a - b; });
      below = Math.max.apply(null, candidates.filter(function (c) { return c <= lo * (1 + 1e-9); }));
      above = Math.min.apply(null, candidates.filter(function (c) {
        return c >= hi * (1 - 1e-9) && c > below; }));
      ticks = candidates.filter(function (c) { return c >= below && c <= above; });
      if (ticks.length >= 3) { break; }
    }
    var low = Math.log10(below), high = Math.log10(above), pad = 0.03 * (high - low);
    return { ticks: ticks, range: [low - pad, high + pad] };
  }
  function sig3(x) {  // interactive._digits: about three significant digits
    return x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2);
  }
  function escapeHtml(s) {
    return String(s).replace(/[&<>"]/g, function (c) {
      return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" }[c];
    });
  }

  function setup(block, Plotly) {
    var data = JSON.parse(block.querySelector("script.cl-calc-data").textContent);
    var plot = block.querySelector(".cl-calc-plot");
    var controls = {};
    block.querySelectorAll("[data-control]").forEach(function (el) {
      controls[el.getAttribute("data-control")] = el;
    });
    function state() {
      return {
        rank: Number(controls.rank.value), size: Number(controls.size.value),
        bandwidth: Number(controls.bandwidth.value), algorithm: Number(controls.algorithm.value),
        metric: controls.metric.value, latency: Number(controls.latency.value),
      };
    }
    // Calculator.values: the latency setting's alpha added to every step that moves data,
    // busbw scaled by t / (t + alpha k), in the same order as the Python (the same digits)
    function values(a, s) {
      var alpha = data.latencies[s.latency], k = data.steps[a][s.rank];
      var busbw = data.busbw[a][s.rank][s.bandwidth];
      return data.seconds[a][s.rank][s.bandwidth].map(function (t, i) {
        if (t === null) { return [null, null]; }
        var total = t + alpha * k;
        return [total, busbw[i] * (t / total)];
      });
    }
    function update() {
      var s = state();
      block.querySelector('[data-show="rank"]').textContent = data.ranks[s.rank];
      block.querySelector('[data-show="size"]').textContent = data.size_labels[s.size];
      var rows = "";
      var all = data.algorithms.map(function (name, a) { return values(a, s); });
      data.algorithms.forEach(function (name, a) {
        if (s.algorithm >= 0 && s.algorithm !== a) { return; }
        var point = all[a][s.size];
        if (point[0] === null) { return; }
        rows += '<tr><th scope="row">' + escapeHtml(name) + "</th><td>" + fmtSeconds(point[0]) +
          "</td><td>" + fmtRate(point[1]) + "</td></tr>";
      });
      block.querySelector(".cl-calc-readout tbody").innerHTML = rows;

      var time = s.metric === "seconds";
      var ys = all.map(function (row) {
        return row.map(function (p) { return p[0] === null ? null : (time ? p[0] : p[1] / 1e9); });
      });
      var visible = data.algorithms.map(function (name, a) {
        return s.algorithm < 0 || s.algorithm === a ? true : "legendonly";
      });
      var hover = data.hover[s.metric];   // the size as the slider names it (KiB, MiB, GiB)
      Plotly.restyle(plot, {
        y: ys, visible: visible,
        hovertemplate: data.algorithms.map(function (name) {
          return "<b>" + escapeHtml(name) + "</b><br>" + hover + "<extra></extra>";
        }),
      });
      var x = data.sizes[s.size];
      // time: a log axis with the ticks of timeAxis over the lines shown; busbw: a linear axis
      // with automatic ticks (nothing of the time axis kept: its dtick of 1 once drew a tick
      // per GB/s)
      var shownYs = ys.filter(function (row, a) { return visible[a] === true; });
      var axis = time ? timeAxis(shownYs) : null;
      var top = 0;   // collective.busbw_range: from 0, so that a flat line gets ticks too
      shownYs.forEach(function (row) {
        row.forEach(function (v) { if (v !== null && isFinite(v)) { top = Math.max(top, v); } });
      });
      Plotly.relayout(plot, {
        "yaxis.type": time ? "log" : "linear",
        "yaxis.title.text": time ? "time" : "busbw (GB/s)",
        "yaxis.tickformat": time ? null : "~g",
        "yaxis.ticksuffix": null,
        "yaxis.dtick": null,
        "yaxis.tickmode": axis ? "array" : "auto",
        "yaxis.tickvals": axis ? axis.ticks : null,
        "yaxis.ticktext": axis ? axis.ticks.map(fmtTick) : null,
        "yaxis.autorange": false,
        "yaxis.range": axis ? axis.range : [0, top > 0 ? 1.08 * top : 1],
        shapes: [{ type: "line", xref: "x", yref: "paper", x0: x, x1: x, y0: 0, y1: 1,
                   line: { color: "#777777", width: 1.5, dash: "dot" } }],
      });
      block.setAttribute("data-ready", "true");
    }
    var fig = data.figure;
    Plotly.newPlot(plot, fig.data, fig.layout,
                   { responsive: true, displaylogo: false, scrollZoom: false }).then(function () {
      Object.keys(controls).forEach(function (key) {
        controls[key].addEventListener("input", update);
        controls[key].addEventListener("change", update);
      });
      update();
    });
  }

  // --- plan calculators (collectives.viz.plan): .cl-calculator-plan blocks, five selects over
  // the plans computed when the book was built. The readout, the table and both figures are
  // built from the block's JSON exactly as collectives/viz/calculators/plan.py builds them
  // (readout_rows, _collectives_html, _figure_spec, timeline_traces).
  function fmtTime(t) { return t === 0 ? "none" : fmtSeconds(t); }
  function fmtGB(x) { return x === null ? "n/a" : (x / 1e9).toFixed(1) + " GB"; }
  function thousands(x) { return Math.round(x).toLocaleString("en-US"); }

  function readoutRows(s) {  // plan._readout_rows
    var fits = s.fits === null ? "" : (s.fits ? ": fits" : ": does NOT fit");
    return [["step time", fmtSeconds(s.step)], ["compute at peak", fmtSeconds(s.compute)],
            ["exposed communication", fmtTime(s.exposed)], ["pipeline bubble", fmtTime(s.bubble)],
            ["all communication, serial", fmtTime(s.communication)],
            ["compute / communication", s.ratio === null ? "no communication" : s.ratio.toFixed(2)],
            ["bottleneck link level", s.bottleneck],
            ["memory per device", fmtGB(s.memory_total) + " of " + fmtGB(s.hbm) + fits],
            ["tokens per device", thousands(s.tokens_per_device)]];
  }

  function figureSpec(s) {  // plan._figure_spec
    var rows = ["step", "by parallelism", "by link level"];
    var step = [["compute", s.compute, "#777777"], ["pipeline bubble", s.bubble, "#999933"],
                ["exposed communication", s.exposed, "#D55E00"]];
    var traces = [];
    [step, s.classes, s.levels].forEach(function (items, k) {
      items.forEach(function (it) {
        traces.push({ x: [it[1]], y: [rows[k]], name: it[0], orientation: "h", type: "bar",
                      marker: { color: it[2] }, legendgroup: rows[k],
                      hovertemplate: escapeHtml(it[0]) + ": %{x:.3s}s<extra></extra>" });
      });
    });
    var mem = s.memory.map(function (it) {
      return { x: [it[1] / 1e9], y: ["memory"], name: it[0], orientation: "h", type: "bar",
               marker: { color: it[2] }, hovertemplate: it[0] + ": %{x:.1f} GB<extra></extra>" };
    });
    return { time: traces, memory: mem, timeline: timelineTraces(s.timeline) };
  }

  // plan.timeline_traces: one bar trace per lane and kind, each bar from its span's start
  var KIND_LOOK = { c: ["", 1.0], b: ["", 0.45], h: [", hidden", 0.3], e: [", exposed", 1.0] };
  function timelineTraces(t) {
    var traces = [], byKey = {};
    t.spans.forEach(function (sp) {
      var lane = t.lanes[sp[0]], kind = sp[3], key = sp[0] + kind;
      if (!byKey[key]) {
        var name = kind === "b" ? "pipeline bubble" : lane[0] + KIND_LOOK[kind][0];
        byKey[key] = { type: "bar", orientation: "h", name: name, y: [], base: [], x: [],
                       marker: { color: kind === "b" ? "#999933" : lane[1] },
                       opacity: KIND_LOOK[kind][1],
                       hovertemplate: escapeHtml(name) + ": %{x:.3s}s<extra></extra>" };
        traces.push(byKey[key]);
      }
      byKey[key].y.push(lane[0]);
      byKey[key].base.push(sp[1]);
      byKey[key].x.push(sp[2] - sp[1]);
    });
    return traces;
  }

  function setupPlan(block, Plotly) {
    var data = JSON.parse(block.querySelector("script.cl-plan-data").textContent);
    var controls = {};
    block.querySelectorAll("[data-plan-control]").forEach(function (el) {
      controls[el.getAttribute("data-plan-control")] = el;
    });
    var timePlot = block.querySelector(".cl-plan-time");
    var memPlot = block.querySelector(".cl-plan-memory");
    var timelinePlot = block.querySelector(".cl-plan-timeline");
    var base = { template: "none", barmode: "stack", autosize: true,
                 font: { size: 14, family: "system-ui, sans-serif" },
                 hoverlabel: { font: { size: 14 } },
                 // at the foot of the figure, below the axis title, whatever its rows
                 legend: { orientation: "h", x: 0, yref: "container", y: 0,
                           yanchor: "bottom" } };

    function fill(select, labels, chosen) {
      select.innerHTML = labels.map(function (label, k) {
        return '<option value="' + k + '"' + (k === chosen ? " selected" : "") + ">" +
          escapeHtml(label) + "</option>";
      }).join("");
      select.value = String(chosen);
    }
    function setting() {
      var s = {};
      Object.keys(controls).forEach(function (k) { s[k] = Number(controls[k].value); });
      return s;
    }
    function update(event) {
      var s = setting();
      var changed = event && event.target.getAttribute("data-plan-control");
      if (changed === "model" || changed === "cluster") {  // their layouts and batches
        var layouts = data.layouts[s.model][s.cluster];
        s.layout = Math.min(s.layout, layouts.length - 1);
        s.batch = Math.min(s.batch, data.batches[s.cluster].length - 1);
        fill(controls.layout, layouts, s.layout);
        fill(controls.batch, data.batches[s.cluster], s.batch);
      }
      var key = [s.model, s.cluster, s.layout, s.recipe, s.batch].join(",");
      var p = data.plans[key];
      block.querySelector(".cl-plan-readout tbody").innerHTML = readoutRows(p).map(function (r) {
        return '<tr><th scope="row">' + escapeHtml(r[0]) + "</th><td>" + escapeHtml(r[1]) +
          "</td></tr>";
      }).join("");
      block.querySelector(".cl-plan-collectives tbody").innerHTML = p.collectives.map(function (c) {
        return "<tr><td>" + escapeHtml(c[0]) + " (" + escapeHtml(c[1]) + ")</td><td>" +
          escapeHtml(c[2]) + "</td><td>" + thousands(c[3]) + " \u00d7 " + fmtSeconds(c[4]) +
          "</td><td>" + fmtSeconds(c[5]) + "</td></tr>";
      }).join("");
      var spec = figureSpec(p);
      // on a phone the legends wrap to one entry per row: leave them the room
      var narrow = block.clientWidth < 560;
      var timeLayout = Object.assign({}, base, {
        height: narrow ? 560 : 420, margin: { l: 120, r: 12, t: 12, b: narrow ? 270 : 150 },
        xaxis: { title: { text: "seconds per step" }, tickformat: "~s",
                 ticksuffix: "s", gridcolor: "#e5e5e5" },
        yaxis: { autorange: "reversed" } });
      var top = 1.05 * Math.max(p.memory_total, p.hbm || 0) / 1e9;
      var memLayout = Object.assign({}, base, {
        height: narrow ? 340 : 210, margin: { l: 120, r: 12, t: 12, b: narrow ? 230 : 100 },
        xaxis: { title: { text: "GB per device" }, gridcolor: "#e5e5e5", range: [0, top] },
        shapes: p.hbm === null ? [] : [{ type: "line", xref: "x", yref: "paper",
          x0: p.hbm / 1e9, x1: p.hbm / 1e9, y0: 0, y1: 1,
          line: { color: "#000000", width: 2, dash: "dash" } }],
        annotations: p.hbm === null ? [] : [{ x: p.hbm / 1e9, y: 1, xref: "x", yref: "paper",
          text: "HBM", showarrow: false, yanchor: "bottom" }] });
      var step = p.timeline.step;
      var lineLayout = Object.assign({}, base, {
        barmode: "overlay", height: (narrow ? 220 : 120) + 44 * p.timeline.lanes.length,
        margin: { l: narrow ? 96 : 120, r: 12, t: 12, b: narrow ? 210 : 110 },
        xaxis: { title: { text: "seconds into the step" }, tickformat: "~s",
                 ticksuffix: "s", gridcolor: "#e5e5e5", range: [0, 1.02 * step] },
        yaxis: { autorange: "reversed", type: "category", categoryorder: "array",
                 categoryarray: p.timeline.lanes.map(function (l) { return l[0]; }) },
        shapes: [{ type: "line", xref: "x", yref: "paper", x0: step, x1: step, y0: 0, y1: 1,
                   line: { color: "#000000", width: 2, dash: "dash" } }] });
      var config = { responsive: true, displaylogo: false, scrollZoom: false };
      return Promise.all([Plotly.react(timePlot, spec.time, timeLayout, config),
                          Plotly.react(memPlot, spec.memory, memLayout, config),
                          Plotly.react(timelinePlot, spec.timeline, lineLayout, config)
      ]).then(function () {
        block.setAttribute("data-plan", key);
        block.setAttribute("data-ready", "true");
      });
    }
    Object.keys(controls).forEach(function (k) {
      controls[k].addEventListener("change", update);
    });
    update();
  }

  function start() {
    var blocks = document.querySelectorAll(".cl-calculator");
    var plans = document.querySelectorAll(".cl-calculator-plan");
    if (!blocks.length && !plans.length) { return; }
    loadPlotly().then(function (Plotly) {
      blocks.forEach(function (block) { setup(block, Plotly); });
      plans.forEach(function (block) { setupPlan(block, Plotly); });
    }, function (err) {
      console.error("calculators: plotly.js could not be loaded", err);
    });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
