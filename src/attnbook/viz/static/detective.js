// The chapter-6 detective in the browser (attnbook.viz.live): reads the committed safetensors
// checkpoint, tokenises as attnbook.tasks.vocab.tokenize does, and runs Detective.forward
// (attnbook.models.detective) with plain loops. The model file is fetched only when a reader opens
// a live panel. No kernel, no network beyond the site itself.
// API (window.attnbookDetective): load(url) -> Promise of a model {config, tensors}; parse(buffer);
// tokenize(text) -> tokens; run(model, tokens, vocab, data) -> {tokens, pronoun, weights: per layer
// (H, S, S), probs: (S), answer} or {error}; forward(model, ids, pronoun); setup(panel element).
(function () {
  "use strict";
  var NS = "attnbookDetective";
  if (!window[NS]) window[NS] = (function () {
    // Python's str.isspace() characters, and its \w (letters, numbers, underscore).
    var WS = "\\t-\\r\\x1c-\\x20\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";
    var SPACE = new RegExp("[" + WS + "]");
    var TRIM = new RegExp("^[" + WS + "]+|[" + WS + "]+$", "g");
    var WORDS = new RegExp("[\\p{L}\\p{N}_]+|[^\\p{L}\\p{N}_" + WS + "]", "gu");
    var CJK = /[\u3400-\u9fff]/;
    var PRONOUNS = ["he", "she", "\u4ed6", "\u5979"];  // he, she, 他, 她 (explorer.PRONOUNS)

    // attnbook.tasks.vocab.tokenize: characters for Chinese, else words and punctuation marks.
    function tokenize(text) {
      text = String(text).replace(TRIM, "");
      if (CJK.test(text)) return Array.from(text).filter(function (ch) { return !SPACE.test(ch); });
      return text.match(WORDS) || [];
    }

    // safetensors: 8-byte little-endian header length, a JSON header, raw little-endian data.
    function parse(buffer) {
      var view = new DataView(buffer);
      if (buffer.byteLength < 8) throw new Error("not a safetensors file: " + buffer.byteLength + " bytes");
      var n = view.getUint32(0, true) + view.getUint32(4, true) * 4294967296, start = 8 + n;
      if (start > buffer.byteLength) throw new Error("not a safetensors file: header of " + n + " bytes");
      var header = JSON.parse(new TextDecoder().decode(new Uint8Array(buffer, 8, n)));
      var tensors = {};
      Object.keys(header).forEach(function (name) {
        if (name === "__metadata__") return;
        var t = header[name], a = start + t.data_offsets[0], b = start + t.data_offsets[1];
        if (t.dtype !== "F32") throw new Error(name + ": dtype " + t.dtype + ", expected F32");
        var data = new Float32Array((b - a) / 4);
        for (var i = 0; i < data.length; i++) data[i] = view.getFloat32(a + 4 * i, true);
        tensors[name] = { shape: t.shape, data: data };
      });
      return { tensors: tensors, metadata: header.__metadata__ || {} };
    }

    function model(buffer) {
      var file = parse(buffer), meta = file.metadata;
      if (meta.model !== "Detective") throw new Error("the file holds a " + meta.model + ", not a Detective");
      return { config: JSON.parse(meta.config), tensors: file.tensors };
    }

    function load(url) {
      return fetch(url).then(function (r) {
        if (!r.ok) throw new Error(url + ": HTTP " + r.status);
        return r.arrayBuffer();
      }).then(model);
    }

    // y = W x + b for nn.Linear's (out, in) weight; x is row i of an (S, in) array.
    function linear(p, name, x, rows) {
      var W = p[name + ".weight"], b = p[name + ".bias"], out = W.shape[0], inp = W.shape[1];
      var y = new Float64Array(rows * out);
      for (var s = 0; s < rows; s++)
        for (var o = 0; o < out; o++) {
          var sum = b.data[o];
          for (var i = 0; i < inp; i++) sum += W.data[o * inp + i] * x[s * inp + i];
          y[s * out + o] = sum;
        }
      return y;
    }

    function layerNorm(p, name, x, S, E) {
      var w = p[name + ".weight"].data, b = p[name + ".bias"].data, y = new Float64Array(S * E);
      for (var s = 0; s < S; s++) {
        var mean = 0, v = 0, i;
        for (i = 0; i < E; i++) mean += x[s * E + i];
        mean /= E;
        for (i = 0; i < E; i++) v += (x[s * E + i] - mean) * (x[s * E + i] - mean);
        var inv = 1 / Math.sqrt(v / E + 1e-5);  // biased variance, PyTorch's default eps
        for (i = 0; i < E; i++) y[s * E + i] = (x[s * E + i] - mean) * inv * w[i] + b[i];
      }
      return y;
    }

    function softmax(row) {
      var most = -Infinity, sum = 0, out = row.map(function () { return 0; }), i;
      for (i = 0; i < row.length; i++) most = Math.max(most, row[i]);
      for (i = 0; i < row.length; i++) { out[i] = Math.exp(row[i] - most); sum += out[i]; }
      return out.map(function (x) { return x / sum; });
    }

    // One pre-LN encoder block: x + attention(norm1(x)), then + ff(norm2(x)). Returns the
    // (H, S, S) weights; ALiBi's -slope_h |i - j| is added to head h's scores.
    function block(p, prefix, x, S, E, H, slopes) {
      var D = E / H, h1 = layerNorm(p, prefix + "norm1", x, S, E), a = prefix + "self_attn.";
      var q = linear(p, a + "q_proj", h1, S), k = linear(p, a + "k_proj", h1, S), v = linear(p, a + "v_proj", h1, S);
      var merged = new Float64Array(S * E), weights = [];
      for (var h = 0; h < H; h++) {
        var rows = [];
        for (var i = 0; i < S; i++) {
          var scores = [];
          for (var j = 0; j < S; j++) {
            var dot = 0;
            for (var d = 0; d < D; d++) dot += q[i * E + h * D + d] * k[j * E + h * D + d];
            scores.push(dot / Math.sqrt(D) - slopes[h] * Math.abs(i - j));
          }
          var w = softmax(scores);
          for (d = 0; d < D; d++) {
            var sum = 0;
            for (j = 0; j < S; j++) sum += w[j] * v[j * E + h * D + d];
            merged[i * E + h * D + d] = sum;
          }
          rows.push(w);
        }
        weights.push(rows);
      }
      var attended = linear(p, a + "out_proj", merged, S), n;
      for (n = 0; n < S * E; n++) x[n] += attended[n];
      var hidden = linear(p, prefix + "ff.linear1", layerNorm(p, prefix + "norm2", x, S, E), S);
      for (n = 0; n < hidden.length; n++) hidden[n] = Math.max(hidden[n], 0);  // ReLU
      var ff = linear(p, prefix + "ff.linear2", hidden, S);
      for (n = 0; n < S * E; n++) x[n] += ff[n];
      return weights;
    }

    // Detective.forward for one sentence of token ids, pointing from position `pronoun`.
    // Returns {weights: per layer (H, S, S) nested arrays, probs: (S) pointer probabilities}.
    function forward(m, ids, pronoun) {
      var c = m.config, p = m.tensors, E = c.d_model, H = c.nhead, S = ids.length;
      var emb = p["embedding.tokens.weight"].data, x = new Float64Array(S * E), s, i;
      for (s = 0; s < S; s++)
        for (i = 0; i < E; i += 2) {  // sinusoidal positions (positional.sinusoidal_encoding)
          var angle = s * Math.exp(-Math.log(10000) * i / E);
          x[s * E + i] = emb[ids[s] * E + i] + Math.fround(Math.sin(angle));
          x[s * E + i + 1] = emb[ids[s] * E + i + 1] + Math.fround(Math.cos(angle));
        }
      var slopes = [];
      for (var h = 0; h < H; h++) slopes.push(c.alibi ? Math.pow(4, -h) : 0);
      var weights = [];
      for (var l = 0; l < c.num_layers; l++) weights.push(block(p, "encoder.layers." + l + ".", x, S, E, H, slopes));
      x = layerNorm(p, "encoder.norm", x, S, E);
      var query = linear(p, "pointer_query", x.subarray(pronoun * E, (pronoun + 1) * E), 1);
      var keys = linear(p, "pointer_key", x, S), logits = [];
      for (s = 0; s < S; s++) {
        var dot = 0;
        for (i = 0; i < E; i++) dot += query[i] * keys[s * E + i];
        logits.push(dot / Math.sqrt(E));
      }
      return { weights: weights, logits: logits, probs: softmax(logits) };
    }

    // A message of the panel in its language: d.text[key] (live.LIVE_TEXT) with {fields} filled in.
    function msg(d, key, fields) {
      return String(d.text[key]).replace(/\{([a-z ]+)\}/g, function (m, name) {
        return fields && name in fields ? String(fields[name]) : m;
      });
    }

    // Tokens -> everything the panel shows, or {error} naming what is wrong.
    function run(m, tokens, vocab, d) {
      if (!tokens.length) return { error: msg(d, "empty") };
      var ids = {}, unknown = [];
      vocab.forEach(function (t, i) { if (i > 0) ids[t] = i; });
      tokens.forEach(function (t, i) { if (!(t in ids)) unknown.push(msg(d, "unknown token", { token: t, i: i })); });
      if (unknown.length)
        return { error: msg(d, "unknown", { tokens: unknown.join(d.text["list sep"]) }), unknown: unknown };
      if (tokens.length > m.config.max_len)
        return { error: msg(d, "too long", { n: tokens.length, max: m.config.max_len }) };
      var pronoun = -1;
      tokens.forEach(function (t, i) { if (pronoun < 0 && PRONOUNS.indexOf(t) >= 0) pronoun = i; });
      if (pronoun < 0) return { error: msg(d, "no pronoun") };
      var out = forward(m, tokens.map(function (t) { return ids[t]; }), pronoun), answer = 0;
      out.probs.forEach(function (x, i) { if (x > out.probs[answer]) answer = i; });
      return { tokens: tokens, pronoun: pronoun, weights: out.weights, probs: out.probs, answer: answer };
    }

    // ---- the panel -------------------------------------------------------------------------
    function el(tag, attrs, text) {
      var e = document.createElement(tag);
      Object.keys(attrs || {}).forEach(function (k) { e.setAttribute(k, attrs[k]); });
      if (text !== undefined) e.textContent = text;
      return e;
    }

    // Shade from white to the views' dark blue, with black or white text (contrast >= 4.5).
    function shade(p) {
      var c = [255, 255, 255].map(function (w, k) { return Math.round(w + ([8, 48, 107][k] - w) * p); });
      var lum = c.map(function (x) { x /= 255; return x <= 0.04045 ? x / 12.92 : Math.pow((x + 0.055) / 1.055, 2.4); });
      var dark = 0.2126 * lum[0] + 0.7152 * lum[1] + 0.0722 * lum[2] < 0.18;
      return { background: "rgb(" + c.join(",") + ")", color: dark ? "#fff" : "#000" };
    }

    function show(panel, d, result) {
      var probs = panel.querySelector(".attnbook-live-probs"), slot = panel.querySelector(".attnbook-live-drawing");
      var t = result.tokens, a = result.answer;
      panel.querySelector(".attnbook-live-answer").textContent =
        t[result.pronoun] + " \u2192 " + t[a] + ", p = " + result.probs[a].toFixed(2);
      probs.textContent = "";
      probs.appendChild(el("p", { "class": "attnbook-live-caption" },
        msg(d, "pointer", { token: t[result.pronoun], i: result.pronoun })));
      var list = probs.appendChild(el("ol", { "class": "attnbook-live-list" }));
      result.probs.forEach(function (p, i) {
        var li = list.appendChild(el("li", { "data-p": p.toFixed(4), "data-token-index": i }));
        var s = shade(p);
        li.style.background = s.background;
        li.style.color = s.color;
        li.appendChild(el("span", { "class": "attnbook-live-token" }, t[i]));
        li.appendChild(el("span", { "class": "attnbook-live-p" }, p.toFixed(2)));
        if (i === a) li.classList.add("is-answer");
      });
      slot.textContent = "";
      // The hover view of attnbook.viz.attention_view, built by its one builder (attnview.js).
      window.attnbookViews1.attention(slot, { layers: d.layers, heads: d.heads, colors: d.colors, row: d.row,
        text: d.text, description: d.text.sentence, sentences: [{ label: "", title: "", queries: t, keys: t,
        query: result.pronoun, weights: result.weights }] });
    }

    function known(d, tokens) {
      var zh = tokens.some(function (t) { return CJK.test(t); });
      var groups = d.known[zh ? 1 : 0];
      return msg(d, "knows", { language: groups.language, groups: groups.groups.map(function (g) {
        return g.name + ": " + g.tokens.join(" ");
      }).join(d.text.sep) });
    }

    function setup(root) {
      if (root.dataset.liveReady) return;
      root.dataset.liveReady = "1";
      var d = JSON.parse(root.querySelector(".attnbook-live-data").textContent);
      var details = root.querySelector(".attnbook-live"), form = root.querySelector(".attnbook-live-form");
      var input = root.querySelector(".attnbook-live-text"), message = root.querySelector(".attnbook-live-message");
      var state = { model: null, loading: null };
      function clear() {
        root.querySelector(".attnbook-live-answer").textContent = "";
        root.querySelector(".attnbook-live-probs").textContent = "";
        root.querySelector(".attnbook-live-drawing").textContent = "";
      }
      function say(text, isError) {
        message.textContent = text;
        message.classList.toggle("is-error", Boolean(isError));
      }
      function url() {
        var base = document.documentElement.dataset.content_root;
        return base === undefined ? null : base + "_static/models/" + d.model;
      }
      function ensure() {
        if (state.model) return Promise.resolve(state.model);
        if (state.loading) return state.loading;
        var where = url();
        if (where === null) return Promise.reject(new Error("offsite"));
        say(msg(d, "loading", { model: d.model }));
        state.loading = load(where).then(function (m) {
          var rows = m.tensors["embedding.tokens.weight"].shape[0];
          if (rows !== d.vocab.length) throw new Error("the model has " + rows + " token embeddings, the panel " + d.vocab.length + " tokens");
          state.model = m;
          return m;
        });
        state.loading.catch(function () { state.loading = null; });
        return state.loading;
      }
      function go() {
        var tokens = tokenize(input.value);
        return ensure().then(function (m) {
          var result = run(m, tokens, d.vocab, d);
          clear();
          if (result.error) {
            say(result.error + (result.unknown ? known(d, tokens) : ""), true);
          } else {
            say(msg(d, "ran", { n: tokens.length }));
            show(root, d, result);
          }
          root.lastResult = result;
          return result;
        }, function (err) {
          clear();
          say(url() === null ? d.offsite : msg(d, "failed", { error: err.message }), true);
          root.lastResult = { error: err.message };
          return root.lastResult;
        });
      }
      root.liveRun = go;
      form.addEventListener("submit", function (e) { e.preventDefault(); go(); });
      Array.prototype.forEach.call(root.querySelectorAll("[data-example]"), function (b) {
        b.addEventListener("click", function () { input.value = d.examples[Number(b.dataset.example)]; go(); });
      });
      details.addEventListener("toggle", function () { if (details.open && !state.model && !root.lastResult) go(); });
    }

    return {
      tokenize: tokenize, parse: parse, load: load, forward: forward, run: run, setup: setup,
      setupAll: function (scope) {
        var roots = Array.prototype.slice.call(scope.querySelectorAll(".attnbook-live-panel"));
        if (scope.matches && scope.matches(".attnbook-live-panel")) roots.unshift(scope);
        roots.forEach(setup);
      }
    };
  })();
  var me = document.currentScript, panel = me && me.closest ? me.closest(".attnbook-live-panel") : null;
  window[NS].setupAll(panel || document);
})();
