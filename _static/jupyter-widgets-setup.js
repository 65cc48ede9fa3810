/*
 * Set up the Jupyter widget manager for an offline book.
 *
 * myst-nb loads this file only on pages that embed widget state (nb_ipywidgets_js in
 * _config.yml), after vendor/requirejs/require.js and before
 * vendor/html-manager/embed-amd.js.
 *
 * 1. No CDN. embed-amd.js defines @jupyter-widgets/base, /controls and /output itself,
 *    so the standard ipywidgets render without any download. A module it does not
 *    define (a third-party widget library) is fetched from the URL in the last
 *    `data-jupyter-widgets-cdn` attribute of any <script> tag, jsDelivr by default.
 *    We point that at _static/vendor/: such a module is served from
 *    _static/vendor/<name>@<version>/dist/index.js once it has been vendored, and is a
 *    local 404, never a request to a CDN, until then.
 *
 * 2. Icon fonts. The bundle's CSS loads Font Awesome from files next to the module that
 *    require.js thinks it loaded, i.e. <page folder>/@jupyter-widgets/...; the paths
 *    below map those module names to the vendored folder, where the fonts are.
 *
 * 3. MathJax 3. ipywidgets typesets widget labels with the MathJax 2 call
 *    MathJax.Hub.Queue(["Typeset", MathJax.Hub, element]) whenever window.MathJax
 *    exists; the book loads MathJax 3, which has no Hub, so every labelled widget on a
 *    page with math would throw. A small Hub.Queue forwards to MathJax 3's typesetPromise.
 */
(function () {
  "use strict";
  var script = document.currentScript;
  var vendor = new URL("vendor/", script.src).href;
  var manager = vendor + "html-manager";

  // 1. Fallback "CDN" for widget modules: our own vendor folder.
  script.setAttribute("data-jupyter-widgets-cdn", vendor);

  // 2. Module URLs (and so the bundle's asset path) inside the vendored folder.
  window.__jupyter_widgets_assets_path__ = manager + "/";
  if (window.requirejs) {
    window.requirejs.config({
      paths: {
        "@jupyter-widgets": manager,
        "@jupyter-widgets/html-manager/dist": manager,
      },
    });
  }

  // 3. MathJax 2 Hub.Queue on top of MathJax 3, only where MathJax is on the page.
  if (window.MathJax === undefined) {
    return;
  }
  var pending = [];
  function typeset(element) {
    var mj = window.MathJax;
    if (mj && mj.typesetPromise && mj.startup && mj.startup.promise) {
      mj.startup.promise = mj.startup.promise
        .then(function () {
          return mj.typesetPromise(element ? [element] : undefined);
        })
        .catch(function (err) {
          console.warn("MathJax could not typeset a widget label:", err);
        });
    } else {
      pending.push(element);
    }
  }
  var hub = {
    Queue: function () {
      Array.prototype.forEach.call(arguments, function (job) {
        if (Array.isArray(job) && job[0] === "Typeset") {
          typeset(job[2]);
        } else if (typeof job === "function") {
          job();
        }
      });
    },
  };
  var mj = window.MathJax;
  if (mj.version) {
    // MathJax 3 has already started.
    mj.Hub = mj.Hub || hub;
    return;
  }
  // MathJax (loaded with `defer`) has not run yet: window.MathJax is still its
  // configuration. Offer the Hub now, and again once MathJax has replaced the object.
  mj.Hub = hub;
  mj.startup = mj.startup || {};
  var ready = mj.startup.ready;
  mj.startup.ready = function () {
    if (ready) {
      ready();
    } else {
      window.MathJax.startup.defaultReady();
    }
    window.MathJax.Hub = window.MathJax.Hub || hub;
    pending.splice(0).forEach(typeset);
  };
})();
