// Behaviour of attnbook's HTML views (attnbook.viz.web): defined once per page, then every view
// next to this script that is not yet set up is initialised. No kernel, no network.
// API (window.attnbookViews1): init(view), initAll(root), and attention(container, data), the one
// builder of the attention view's markup (attnbook.viz.attention_view and attnbook.viz.live).
(function () {
  "use strict";
  var NS = "attnbookViews1";
  if (!window[NS]) window[NS] = (function () {
    var FONT = '"WenQuanYi Micro Hei","Noto Sans CJK SC","PingFang SC","Microsoft YaHei",sans-serif';
    // White to dark blue, interpolated in OKLab: equal steps of weight, equal steps of lightness.
    var RAMP = ["#ffffff", "#dee3ed", "#bdc8da", "#9daec8", "#7e94b5", "#607aa3", "#436190",
      "#27497e", "#08306b"];
    var SVGNS = "http://www.w3.org/2000/svg";

    // A word of the view in its language: d.text[key] (attention_view.VIEW_TEXT, as Python sent
    // it) with its {fields} filled in.
    function say(d, key, fields) {
      return String(d.text[key]).replace(/\{([a-z ]+)\}/g, function (m, name) {
        return fields && name in fields ? String(fields[name]) : m;
      });
    }

    function rgb(hex) { return [1, 3, 5].map(function (i) { return parseInt(hex.substr(i, 2), 16); }); }
    function mix(w) {
      var t = Math.min(Math.max(w, 0), 1) * (RAMP.length - 1), i = Math.min(Math.floor(t), RAMP.length - 2);
      var a = rgb(RAMP[i]), b = rgb(RAMP[i + 1]), f = t - i;
      return a.map(function (x, k) { return Math.round(x + (b[k] - x) * f); });
    }
    function ramp(w) { return "rgb(" + mix(w).join(",") + ")"; }
    // Black or white text, whichever keeps a contrast of at least 4.5 (WCAG AA) on the colour.
    function ink(w) {
      var lum = mix(w).map(function (c) {
        c /= 255;
        return c <= 0.04045 ? c / 12.92 : Math.pow((c + 0.055) / 1.055, 2.4);
      });
      return 0.2126 * lum[0] + 0.7152 * lum[1] + 0.0722 * lum[2] >= 0.18 ? "#000" : "#fff";
    }
    function esc(s) {
      return String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
    }
    function all(root, sel) { return Array.prototype.slice.call(root.querySelectorAll(sel)); }
    function press(buttons, on) { buttons.forEach(function (b) { b.setAttribute("aria-pressed", String(b === on)); }); }
    function download(name, blob) {
      var a = document.createElement("a");
      a.href = URL.createObjectURL(blob);
      a.download = name;
      document.body.appendChild(a);
      a.click();
      a.remove();
      setTimeout(function () { URL.revokeObjectURL(a.href); }, 10000);
    }

    function initFigures(view, d) {
      var idx = d.controls.map(function () { return 0; });
      var imgs = all(view, ".attnbook-figure");
      function show() {
        var combo = 0;
        idx.forEach(function (i, c) { combo = combo * d.controls[c].options.length + i; });
        var k = d.images[combo];
        imgs.forEach(function (img) { img.hidden = Number(img.dataset.image) !== k; });
      }
      all(view, "[data-control]").forEach(function (el) {
        var c = Number(el.dataset.control), opts = d.controls[c].options;
        if (el.tagName === "SELECT") {
          idx[c] = Math.max(el.selectedIndex, 0);
          el.addEventListener("change", function () { idx[c] = el.selectedIndex; show(); });
        } else if (el.tagName === "INPUT") {
          var out = el.parentNode.querySelector("output");
          var set = function () {
            idx[c] = Number(el.value);
            out.textContent = opts[idx[c]];
            el.setAttribute("aria-valuetext", opts[idx[c]]);
          };
          set();
          el.addEventListener("input", function () { set(); show(); });
        } else {
          var buttons = all(el, "button");
          buttons.forEach(function (b) {
            b.addEventListener("click", function () { idx[c] = Number(b.dataset.index); press(buttons, b); show(); });
          });
        }
      });
      show();
    }

    var made = 0;  // ids for views built without one in their data
    function el(tag, attrs, text) {
      var e = tag === "svg" ? document.createElementNS(SVGNS, tag) : document.createElement(tag);
      Object.keys(attrs || {}).forEach(function (k) { e.setAttribute(k, attrs[k]); });
      if (text !== undefined) e.textContent = text;
      return e;
    }
    // A fieldset of toggle buttons; items are [value, label, swatch colour or undefined].
    function buttons(cls, legend, items) {
      var f = el("fieldset", { "class": "attnbook-buttons " + cls });
      f.appendChild(el("legend", {}, legend));
      items.forEach(function (it, n) {
        var b = f.appendChild(el("button", { type: "button", "data-value": it[0], "aria-pressed": String(n === 0) }));
        if (it[2]) b.appendChild(el("span", { "class": "attnbook-swatch", style: "background:" + it[2], "aria-hidden": "true" }));
        b.appendChild(document.createTextNode(it[1]));
      });
      return f;
    }
    // The attention view's markup (controls, one panel per sentence, status line); the lines,
    // shading, labels and status are drawn by initAttention.
    function buildAttention(d, uid) {
      var T = function (key, fields) { return say(d, key, fields); };
      var out = document.createDocumentFragment(), R = d.row;
      var controls = out.appendChild(el("div", { "class": "attnbook-controls" }));
      if (d.sentences.length > 1) {
        var box = controls.appendChild(el("div", { "class": "attnbook-control" }));
        box.appendChild(el("label", { "for": uid + "-s" }, d.description || T("sentence")));
        var select = box.appendChild(el("select", { id: uid + "-s", "class": "attnbook-sentence-select" }));
        d.sentences.forEach(function (sen) { select.appendChild(el("option", {}, sen.label)); });
      }
      controls.appendChild(buttons("attnbook-layers", "layer", d.layers.map(function (n, l) { return [l, n]; })));
      controls.appendChild(buttons("attnbook-heads", "head",
        d.heads.map(function (n, h) { return [h, n, d.colors[h]]; })
          .concat(d.heads.length > 1 ? [[-1, T("all")]] : [])));  // "all" of one head is that head
      var exp = controls.appendChild(el("div", { "class": "attnbook-export" }));
      ["svg", "png"].forEach(function (kind) {
        exp.appendChild(el("button", { type: "button", "data-export": kind,
          "aria-label": T("download", { kind: kind.toUpperCase() }) }, kind.toUpperCase()));
      });
      d.sentences.forEach(function (sen, k) {
        var panel = out.appendChild(el("div", { "class": "attnbook-sentence", "data-sentence": k }));
        panel.hidden = k > 0;
        if (sen.title) panel.appendChild(el("p", { "class": "attnbook-title" }, sen.title));
        var tokens = panel.appendChild(el("div", { "class": "attnbook-tokens" }));
        var qs = tokens.appendChild(el("div", { "class": "attnbook-col attnbook-queries" }));
        sen.queries.forEach(function (t, i) {
          qs.appendChild(el("button", { type: "button", "class": "attnbook-q" + (i === sen.query ? " is-current" : ""),
            "data-query-index": i, "aria-pressed": "false", "aria-label": T("query button", { i: i, token: t }) }, t));
        });
        var height = Math.max(sen.queries.length, sen.keys.length) * R;
        tokens.appendChild(el("svg", { "class": "attnbook-lines", role: "img", "aria-label": T("lines label"),
          viewBox: "0 0 100 " + height, preserveAspectRatio: "none", width: "100%", height: height,
          style: "height:" + height + "px" }));
        var ks = tokens.appendChild(el("div", { "class": "attnbook-col attnbook-keys" }));
        sen.keys.forEach(function (t, j) { ks.appendChild(el("span", { "class": "attnbook-k", "data-key-index": j }, t)); });
      });
      out.appendChild(el("p", { "class": "attnbook-status", "aria-live": "polite" }));
      return out;
    }

    // Public: build the attention view of `d` (the data attnbook.viz.attention_view embeds:
    // {layers, heads, colors, row, sentences: [{label, title, queries, keys, query, weights:
    // (layers, H, L, S)}], optional id, description}) and bring it to life. `container` is
    // either an .attnbook-view (its .attnbook-fallback is replaced) or any element, which then
    // gets a new .attnbook-view. Returns the view.
    function attention(container, d) {
      if (!d || !d.sentences || !d.sentences.length) throw new Error("attention view: data has no sentences");
      if (!d.text) throw new Error("attention view: data has no text (attention_view.VIEW_TEXT)");
      d = Object.assign({ row: 24, description: d.text.sentence }, d);
      var view = container;
      if (!container.classList.contains("attnbook-view")) {
        view = container.appendChild(el("div", { "class": "attnbook-view", "data-kind": "attention" }));
      }
      view.dataset.ready = "1";
      var markup = buildAttention(d, d.id || "attnbook-js" + (++made));
      var fallback = view.querySelector(".attnbook-fallback");
      if (fallback) fallback.parentNode.replaceChild(markup, fallback);
      else view.appendChild(markup);
      initAttention(view, d);
      return view;
    }

    function initAttention(view, d) {
      var T = function (key, fields) { return say(d, key, fields); };
      var st = { s: 0, layer: 0, head: 0, locked: null, q: d.sentences[0].query };
      var panels = all(view, ".attnbook-sentence");
      var status = view.querySelector(".attnbook-status");
      var layerButtons = all(view, ".attnbook-layers button"), headButtons = all(view, ".attnbook-heads button");
      var R = d.row;

      function shown() {  // the weight of every key for the current query, and per head
        var sen = d.sentences[st.s], W = sen.weights[st.layer];
        var heads = st.head < 0 ? W.map(function (_, h) { return h; }) : [st.head];
        var w = sen.keys.map(function (_, j) {
          var sum = 0;
          heads.forEach(function (h) { sum += W[h][st.q][j]; });
          return sum / heads.length;
        });
        return { sen: sen, W: W, heads: heads, w: w };
      }
      // Where a row peaks, as shown (2 decimals): every key that ties with the largest weight is
      // named, and a row whose keys all tie is said to spread its weight evenly. The same rule as
      // attention_view.peak in Python, which writes the fallback text.
      function peak(row, keys, mean) {
        var shown = row.map(function (x) { return x.toFixed(2); });
        var best = shown.reduce(function (a, x) { return Number(x) > Number(a) ? x : a; }, shown[0]);
        var tied = keys.filter(function (k, j) { return shown[j] === best; });
        var value = mean ? T("mean", { value: best }) : best;
        if (tied.length === keys.length && keys.length > 1)
          return T("evenly", { n: keys.length, value: value });
        var names = tied.map(function (k) { return T("quoted", { token: k }); });
        if (names.length === 1) return T("most", { listed: names[0], value: value });
        var listed = T("list", { first: names.slice(0, -1).join(T("list sep")), last: names[names.length - 1] });
        return T("most, tied", { listed: listed, value: value });
      }
      function label(sen) {
        var W = sen.weights[st.layer];
        var tops = d.heads.map(function (name, h) { return T("per head", { name: name, peak: peak(W[h][st.q], sen.keys) }); });
        return (sen.title ? sen.title + ": " : "") +
          T("lines", { layer: d.layers[st.layer], query: sen.queries[st.q], tops: tops.join(T("sep")) });
      }
      function line(v) {
        var head = st.head < 0 ? T("all heads") : d.heads[st.head];
        return T("status", { layer: d.layers[st.layer], head: head, query: v.sen.queries[st.q],
          peak: peak(v.w, v.sen.keys, st.head < 0) });
      }
      // Opacity in proportion to the weight, the strongest line drawn fully opaque.
      function strength(v) {
        var most = 0;
        v.heads.forEach(function (h) { v.W[h][st.q].forEach(function (x) { most = Math.max(most, x); }); });
        return most > 0 ? 1 / most : 0;
      }
      function draw() {
        var v = shown(), panel = panels[st.s], svg = panel.querySelector(".attnbook-lines");
        all(panel, ".attnbook-q").forEach(function (b, i) {
          b.classList.toggle("is-current", i === st.q);
          b.setAttribute("aria-pressed", String(i === st.locked));
        });
        all(panel, ".attnbook-k").forEach(function (k, j) {
          k.dataset.weight = v.w[j].toFixed(4);
          k.style.background = ramp(v.w[j]);
          k.style.color = ink(v.w[j]);
        });
        while (svg.firstChild) svg.removeChild(svg.firstChild);
        var k = strength(v);
        v.heads.forEach(function (h) {
          v.W[h][st.q].forEach(function (x, j) {
            if (x < 0.005) return;
            var el = document.createElementNS(SVGNS, "line");
            var attrs = { x1: 0, y1: (st.q + 0.5) * R, x2: 100, y2: (j + 0.5) * R, stroke: d.colors[h],
              "stroke-opacity": (k * x).toFixed(3), "stroke-width": (1 + 3 * k * x).toFixed(2),
              "vector-effect": "non-scaling-stroke", "data-head": h, "data-key": j };
            for (var a in attrs) el.setAttribute(a, attrs[a]);
            svg.appendChild(el);
          });
        });
        svg.setAttribute("aria-label", label(v.sen));
        status.textContent = line(v);
      }
      function show(i) { if (st.locked === null && i !== st.q) { st.q = i; draw(); } }

      panels.forEach(function (panel) {
        var qs = all(panel, ".attnbook-q");
        qs.forEach(function (b, i) {
          b.addEventListener("mouseenter", function () { show(i); });
          b.addEventListener("focus", function () { show(i); });
          b.addEventListener("click", function () {
            st.locked = st.locked === i ? null : i;
            st.q = i;
            draw();
          });
          b.addEventListener("keydown", function (e) {
            var to = e.key === "ArrowDown" ? i + 1 : e.key === "ArrowUp" ? i - 1 : -1;
            if (to >= 0 && to < qs.length) { e.preventDefault(); qs[to].focus(); }
          });
        });
      });
      var select = view.querySelector(".attnbook-sentence-select");
      function sentence(k) {
        st.s = k; st.locked = null; st.q = d.sentences[k].query;
        panels.forEach(function (p, i) { p.hidden = i !== k; });
        draw();
        // Bring the default query into the token box's view (the box only, never the page).
        var box = panels[k].querySelector(".attnbook-tokens");
        box.scrollTop = Math.max(0, (st.q + 0.5) * R - box.clientHeight / 2);
      }
      if (select) {
        select.addEventListener("change", function () { sentence(select.selectedIndex); });
        st.s = Math.max(select.selectedIndex, 0);
      }
      layerButtons.forEach(function (b) {
        b.addEventListener("click", function () { st.layer = Number(b.dataset.value); press(layerButtons, b); draw(); });
      });
      headButtons.forEach(function (b) {
        b.addEventListener("click", function () { st.head = Number(b.dataset.value); press(headButtons, b); draw(); });
      });

      function exportSvg() {
        var v = shown(), ctx = document.createElement("canvas").getContext("2d");
        ctx.font = "14px " + FONT;
        function width(tokens) { return Math.max.apply(null, tokens.map(function (t) { return ctx.measureText(t).width; })) + 16; }
        var qW = width(v.sen.queries), kW = width(v.sen.keys), gap = 160, pad = 8;
        var title = (v.sen.title ? v.sen.title + " — " : "") + d.layers[st.layer] + ", " +
          (st.head < 0 ? T("all heads") : d.heads[st.head]), caption = line(v);
        var titleW = (ctx.font = "600 14px " + FONT, ctx.measureText(title).width);
        var captionW = (ctx.font = "12px " + FONT, ctx.measureText(caption).width);
        var top0 = pad + 22, rows = Math.max(v.sen.queries.length, v.sen.keys.length);
        var W = Math.ceil(Math.max(qW + gap + kW, titleW, captionW) + 2 * pad);
        var H = Math.ceil(top0 + rows * R + 26 + pad);
        var out = ['<svg xmlns="' + SVGNS + '" width="' + W + '" height="' + H + '" viewBox="0 0 ' + W + " " + H +
          '" font-family=\'' + FONT + '\' font-size="14">', '<rect width="100%" height="100%" fill="#fff"/>',
          '<text x="' + pad + '" y="' + (pad + 14) + '" font-weight="600">' + esc(title) + "</text>"];
        var x0 = pad + qW, x1 = x0 + gap, k = strength(v);
        v.heads.forEach(function (h) {
          v.W[h][st.q].forEach(function (x, j) {
            if (x < 0.005) return;
            out.push('<line x1="' + x0 + '" y1="' + (top0 + (st.q + 0.5) * R) + '" x2="' + x1 + '" y2="' +
              (top0 + (j + 0.5) * R) + '" stroke="' + d.colors[h] + '" stroke-opacity="' + (k * x).toFixed(3) +
              '" stroke-width="' + (1 + 3 * k * x).toFixed(2) + '"/>');
          });
        });
        v.sen.queries.forEach(function (t, i) {
          out.push('<text x="' + (x0 - 8) + '" y="' + (top0 + (i + 0.5) * R + 5) + '" text-anchor="end"' +
            (i === st.q ? ' font-weight="700"' : "") + ">" + esc(t) + "</text>");
        });
        v.sen.keys.forEach(function (t, j) {
          out.push('<rect x="' + x1 + '" y="' + (top0 + j * R + 1) + '" width="' + kW + '" height="' + (R - 2) +
            '" rx="3" fill="' + ramp(v.w[j]) + '"/><text x="' + (x1 + 8) + '" y="' + (top0 + (j + 0.5) * R + 5) +
            '" fill="' + ink(v.w[j]) + '">' + esc(t) + "</text>");
        });
        out.push('<text x="' + pad + '" y="' + (H - pad - 4) + '" font-size="12">' + esc(caption) + "</text></svg>");
        return { svg: out.join(""), width: W, height: H };
      }
      function fileName(ext) {
        var head = st.head < 0 ? "all" : st.head;
        return "attention-s" + st.s + "-layer" + st.layer + "-head" + head + "-query" + st.q + "." + ext;
      }
      all(view, "[data-export]").forEach(function (b) {
        b.addEventListener("click", function () {
          var e = exportSvg();
          if (b.dataset.export === "svg") {
            download(fileName("svg"), new Blob([e.svg], { type: "image/svg+xml" }));
            return;
          }
          var img = new Image();
          img.onload = function () {
            var canvas = document.createElement("canvas");
            canvas.width = 2 * e.width; canvas.height = 2 * e.height;
            var c = canvas.getContext("2d");
            c.scale(2, 2);
            c.drawImage(img, 0, 0);
            canvas.toBlob(function (blob) { download(fileName("png"), blob); }, "image/png");
          };
          img.src = "data:image/svg+xml;charset=utf-8," + encodeURIComponent(e.svg);
        });
      });
      sentence(st.s);
    }

    function init(view) {
      if (view.dataset.ready) return;
      var script = view.querySelector(".attnbook-data");
      if (!script) return;
      view.dataset.ready = "1";
      var d = JSON.parse(script.textContent);
      if (view.dataset.kind === "figures") initFigures(view, d);
      else if (view.dataset.kind === "attention") attention(view, d);
    }
    return {
      init: init,
      attention: attention,
      initAll: function (root) {
        var views = all(root, ".attnbook-view");
        if (root.classList && root.classList.contains("attnbook-view")) views.unshift(root);
        views.forEach(init);
      }
    };
  })();
  var me = document.currentScript, view = me && me.closest ? me.closest(".attnbook-view") : null;
  window[NS].initAll(view ? view.parentNode || view : document);
})();
