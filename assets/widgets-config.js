// Loaded on pages with widgets, after require.js and before the widget manager
// (see nb_ipywidgets_js in _config.yml).
(function () {
  // 1. Tell require.js where the widget manager lives on this site, so that the fonts it loads
  //    relative to itself come from _static/ and never from a CDN.
  var root = document.documentElement.dataset.content_root || "";
  require.config({
    paths: { "@jupyter-widgets/html-manager/dist": root + "_static/html-manager" }
  });

  // 2. The widget manager typesets widget labels with the MathJax 2 call
  //    MathJax.Hub.Queue(["Typeset", MathJax.Hub, element]); the site uses MathJax 3, which has
  //    no Hub. Provide that one call on top of MathJax 3's typesetPromise, both before MathJax
  //    has loaded (window.MathJax is still its configuration) and after.
  function hub() {
    return {
      Queue: function (job) {
        var element = job && job[2];
        var mj = window.MathJax;
        if (element && mj && mj.typesetPromise) {
          mj.startup.promise.then(function () { return mj.typesetPromise([element]); });
        }
      }
    };
  }
  var config = (window.MathJax = window.MathJax || {});
  config.Hub = config.Hub || hub();
  config.startup = config.startup || {};
  var ready = config.startup.ready;
  config.startup.ready = function () {
    if (ready) { ready(); } else { window.MathJax.startup.defaultReady(); }
    window.MathJax.Hub = window.MathJax.Hub || hub();
  };
})();
