/*
 * The book's calculators (collectives.viz.interactive): draw each .cl-calculator block with
 * plotly.js and wire its controls to the numbers computed when the book was built.
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
        metric: controls.metric.value,
      };
    }
    function update() {
      var s = state();
      block.querySelector('[data-show="rank"]').textContent = data.ranks[s.rank];
      block.querySelector('[data-show="size"]').textContent = data.size_labels[s.size];
      var rows = "";
      data.algorithms.forEach(function (name, a) {
        if (s.algorithm >= 0 && s.algorithm !== a) { return; }
        var t = data.seconds[a][s.rank][s.bandwidth][s.size];
        if (t === null) { return; }
        rows += '<tr><th scope="row">' + escapeHtml(name) + "</th><td>" + fmtSeconds(t) +
          "</td><td>" + fmtRate(data.busbw[a][s.rank][s.bandwidth][s.size]) + "</td></tr>";
      });
      block.querySelector(".cl-calc-readout tbody").innerHTML = rows;

      var time = s.metric === "seconds";
      var ys = data.algorithms.map(function (name, a) {
        var row = (time ? data.seconds : data.busbw)[a][s.rank][s.bandwidth];
        return row.map(function (v) { return v === null ? null : (time ? v : v / 1e9); });
      });
      var visible = data.algorithms.map(function (name, a) {
        return s.algorithm < 0 || s.algorithm === a ? true : "legendonly";
      });
      var hover = time ? "%{x:.3s}B: %{y:.3s}s" : "%{x:.3s}B: %{y:.3g} GB/s";
      Plotly.restyle(plot, {
        y: ys, visible: visible,
        hovertemplate: data.algorithms.map(function (name) {
          return "<b>" + escapeHtml(name) + "</b><br>" + hover + "<extra></extra>";
        }),
      });
      var x = data.sizes[s.size];
      Plotly.relayout(plot, {
        "yaxis.type": time ? "log" : "linear",
        "yaxis.title.text": time ? "time" : "busbw (GB/s)",
        "yaxis.tickformat": time ? "~s" : "~g",
        "yaxis.ticksuffix": time ? "s" : "",
        "yaxis.dtick": time ? 1 : null,
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

  function start() {
    var blocks = document.querySelectorAll(".cl-calculator");
    if (!blocks.length) { return; }
    loadPlotly().then(function (Plotly) {
      blocks.forEach(function (block) { setup(block, Plotly); });
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
