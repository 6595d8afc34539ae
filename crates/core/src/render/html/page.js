// anatomy web explorer: hover for a summary, click or Enter for details, arrows to move,
// Escape to close; the URL hash keeps the selection and the layer variant.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("data").textContent);
  var svg = document.querySelector("#diagram svg");
  var detail = document.getElementById("detail");
  var tooltip = document.getElementById("tooltip");
  // The page opens on the variant whose layers hold the most parameters.
  var firstVariant = data.default_variant || 0;
  var state = { part: null, variant: firstVariant, ops: false, op: null };
  var opsView = document.getElementById("ops");

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  // Text with `ℝ^{a × b}` in it, the space written as MathML (no script, no fonts: the browser
  // typesets it, offline).
  var MATHML = "http://www.w3.org/1998/Math/MathML";
  function withMath(tag, text) {
    var e = document.createElement(tag);
    var re = /ℝ\^\{([^}]*)\}/g, at = 0, m;
    while ((m = re.exec(text))) {
      e.appendChild(document.createTextNode(text.slice(at, m.index)));
      var math = document.createElementNS(MATHML, "math");
      var sup = document.createElementNS(MATHML, "msup");
      var base = document.createElementNS(MATHML, "mi");
      base.textContent = "ℝ";
      var row = document.createElementNS(MATHML, "mrow");
      m[1].split("×").forEach(function (d, i) {
        if (i) {
          var times = document.createElementNS(MATHML, "mo");
          times.textContent = "×";
          row.appendChild(times);
        }
        var n = document.createElementNS(MATHML, "mn");
        n.textContent = d.trim();
        row.appendChild(n);
      });
      sup.appendChild(base);
      sup.appendChild(row);
      math.appendChild(sup);
      e.appendChild(math);
      at = re.lastIndex;
    }
    e.appendChild(document.createTextNode(text.slice(at)));
    return e;
  }

  function visibleParts() {
    return Array.prototype.filter.call(svg.querySelectorAll(".part"), function (g) {
      return g.getClientRects().length > 0;
    });
  }

  function parseHash() {
    var out = { part: null, variant: firstVariant, ops: false, op: null };
    location.hash.replace(/^#/, "").split("&").forEach(function (kv) {
      var i = kv.indexOf("=");
      if (i < 0) return;
      var k = kv.slice(0, i), v = decodeURIComponent(kv.slice(i + 1));
      if (k === "part" && Object.prototype.hasOwnProperty.call(data.parts, v)) out.part = v;
      if (k === "v" && /^\d+$/.test(v) && +v < Math.max(1, data.variants.length)) out.variant = +v;
      if (k === "ops" && v === "1") out.ops = true;
      if (k === "op" && Object.prototype.hasOwnProperty.call(data.ops, v)) out.op = v;
    });
    return out;
  }

  function hashOf(s) {
    var parts = [];
    if (s.part) parts.push("part=" + encodeURIComponent(s.part));
    if (s.variant !== firstVariant) parts.push("v=" + s.variant);
    if (s.ops) parts.push("ops=1");
    if (s.op) parts.push("op=" + encodeURIComponent(s.op));
    return parts.length ? "#" + parts.join("&") : location.pathname + location.search;
  }

  function applyVariant(v) {
    for (var i = 0; i < 8; i++) svg.classList.remove("show-v" + i);
    svg.classList.add("show-v" + v);
    Array.prototype.forEach.call(document.querySelectorAll(".variant"), function (b) {
      b.setAttribute("aria-pressed", String(+b.dataset.variant === v));
    });
    // The strip's columns of the variant shown stand out; the first of them is the strip's one
    // stop for the Tab key, unless a column has the focus already.
    var columns = document.querySelectorAll(".layer-strip .layer");
    var focused = document.activeElement && document.activeElement.closest && document.activeElement.closest(".layer-strip .layer");
    var stop = focused || Array.prototype.find.call(columns, function (c) { return +c.dataset.variant === v; }) || columns[0];
    Array.prototype.forEach.call(columns, function (c) {
      c.classList.toggle("current", +c.dataset.variant === v);
      c.setAttribute("tabindex", c === stop ? "0" : "-1");
    });
    // The ×N badge counts the layers of the variant shown.
    var badge = svg.querySelector(".frame .badge text");
    if (badge && data.variants[v]) {
      badge.textContent = "\u00d7" + data.variants[v].count;
      badge.closest(".frame").setAttribute("aria-label", "decoder layer \u00d7" + data.variants[v].count + ", repeated " + data.variants[v].count + " times");
    }
  }

  function renderOp(id) {
    var o = data.ops[id];
    detail.textContent = "";
    var close = el("button", "close", "close");
    close.type = "button";
    close.addEventListener("click", function () { go({ part: null, variant: state.variant, ops: true, op: null }); });
    detail.appendChild(close);
    detail.appendChild(el("div", "kind", "op " + o.glyph + " · step " + id));
    detail.appendChild(el("h2", null, o.title));
    detail.appendChild(el("code", "equation", o.equation));
    if (o.stats) detail.appendChild(el("p", "stats", "In the run: " + o.stats));
    detail.appendChild(el("h3", null, "NumPy (anatomy numpy writes the whole model)"));
    detail.appendChild(el("pre", "code", o.code));
    detail.hidden = false;
  }

  function render(s) {
    document.getElementById("diagram").hidden = s.ops;
    opsView.hidden = !s.ops;
    document.getElementById("to-ops").setAttribute("aria-pressed", String(s.ops));
    document.getElementById("to-blocks").setAttribute("aria-pressed", String(!s.ops));
    if (s.ops) {
      if (s.op) renderOp(s.op); else { detail.hidden = true; detail.textContent = ""; }
      return;
    }
    applyVariant(s.variant);
    Array.prototype.forEach.call(svg.querySelectorAll(".part.selected"), function (g) { g.classList.remove("selected"); });
    if (!s.part) {
      detail.hidden = true;
      detail.textContent = "";
      return;
    }
    var p = data.parts[s.part];
    var box = document.getElementById("part-" + s.part);
    if (box) box.classList.add("selected");
    detail.textContent = "";
    var close = el("button", "close", "close");
    close.type = "button";
    close.setAttribute("aria-label", "close details");
    close.addEventListener("click", function () { go({ part: null, variant: state.variant }); });
    detail.appendChild(close);
    if (s.part === "block") {
      var toOps = el("button", "close", "open op-level view");
      toOps.type = "button";
      toOps.id = "open-ops";
      toOps.addEventListener("click", function () { go({ part: null, variant: state.variant, ops: true, op: null }); });
      detail.appendChild(toOps);
    }
    detail.appendChild(el("div", "kind", p.category));
    detail.appendChild(el("h2", null, p.title));
    detail.appendChild(el("p", "summary", p.summary));
    if (p.layers) detail.appendChild(el("p", "layers", "In layers " + p.layers + "."));
    detail.appendChild(withMath("p", p.explanation));
    if (p.subtleties.length) {
      detail.appendChild(el("h3", null, "Subtleties"));
      var ul = el("ul");
      p.subtleties.forEach(function (t) { ul.appendChild(el("li", null, t)); });
      detail.appendChild(ul);
    }
    if (p.numbers.length) {
      detail.appendChild(el("h3", null, "In this model"));
      var nl = el("ul", "numbers");
      p.numbers.forEach(function (t) { nl.appendChild(el("li", null, t)); });
      detail.appendChild(nl);
    }
    if (p.code) {
      detail.appendChild(el("h3", null, "Reference implementation (PyTorch)"));
      var copy = el("button", "copy", "copy");
      copy.type = "button";
      copy.addEventListener("click", function () { copyText(p.code, copy); });
      detail.appendChild(copy);
      detail.appendChild(el("pre", "code", p.code));
    }
    if (p.blocks && p.blocks.length) {
      // A tower's steps, open: each with the tensors it stores.
      var box = el("details", "steps-box tower-steps");
      box.open = true;
      box.appendChild(el("summary", null, "Steps (" + p.blocks.length + ")"));
      var list = el("ol", "steps");
      p.blocks.forEach(function (b) {
        var li = el("li");
        li.appendChild(el("strong", null, b.label));
        li.appendChild(el("div", null, b.params + " parameters" + (b.repeat > 1 ? " over its " + b.repeat + " layers" : "")));
        b.tensors.forEach(function (t) { li.appendChild(el("code", "tensor", t.name + " [" + t.shape.join(", ") + "]")); });
        list.appendChild(li);
      });
      box.appendChild(list);
      detail.appendChild(box);
    }
    if (p.steps.length) {
      var steps = el("details", "steps-box");
      steps.appendChild(el("summary", null, "Tensor-level steps (" + p.steps.length + ")"));
      var ol = el("ol", "steps");
      p.steps.forEach(function (st) {
        var li = el("li");
        li.value = st.n;
        li.appendChild(el("strong", null, st.title));
        li.appendChild(el("div", null, st.operation));
        li.appendChild(el("code", null, st.equation));
        st.sources.forEach(function (src) { li.appendChild(el("div", "source", "reads " + src)); });
        ol.appendChild(li);
      });
      steps.appendChild(ol);
      detail.appendChild(steps);
    }
    detail.hidden = false;
  }

  function copyText(text, button) {
    function done() { button.textContent = "copied"; setTimeout(function () { button.textContent = "copy"; }, 1200); }
    if (navigator.clipboard && navigator.clipboard.writeText) {
      navigator.clipboard.writeText(text).then(done, fallback);
    } else {
      fallback();
    }
    function fallback() {
      var ta = el("textarea");
      ta.value = text;
      document.body.appendChild(ta);
      ta.select();
      try { document.execCommand("copy"); done(); } catch (e) { /* nothing to do */ }
      document.body.removeChild(ta);
    }
  }

  function go(s) {
    state = s;
    history.pushState(null, "", hashOf(s));
    render(s);
  }

  function showTip(g, x, y) {
    var p = data.parts[g.dataset.part];
    if (!p) return;
    tooltip.textContent = p.summary;
    tooltip.hidden = false;
    tooltip.style.left = Math.min(x + 14, window.innerWidth - 360) + "px";
    tooltip.style.top = (y + 14) + "px";
  }

  Array.prototype.forEach.call(svg.querySelectorAll(".part"), function (g) {
    g.addEventListener("mouseenter", function (e) { showTip(g, e.clientX, e.clientY); });
    g.addEventListener("mousemove", function (e) { showTip(g, e.clientX, e.clientY); });
    g.addEventListener("mouseleave", function () { tooltip.hidden = true; });
    g.addEventListener("focus", function () {
      var r = g.getBoundingClientRect();
      showTip(g, r.right, r.top);
    });
    g.addEventListener("blur", function () { tooltip.hidden = true; });
    // A click opens the details: the summary would only cover them.
    g.addEventListener("click", function () {
      tooltip.hidden = true;
      go({ part: g.dataset.part, variant: state.variant });
    });
    g.addEventListener("keydown", function (e) {
      if (e.key === "Enter" || e.key === " ") {
        e.preventDefault();
        tooltip.hidden = true;
        go({ part: g.dataset.part, variant: state.variant });
        // Into the panel, so that Tab goes on through its contents; Escape comes back here.
        detail.focus();
      } else if (e.key === "ArrowDown" || e.key === "ArrowRight" || e.key === "ArrowUp" || e.key === "ArrowLeft") {
        e.preventDefault();
        var list = visibleParts();
        var i = list.indexOf(g);
        var next = e.key === "ArrowDown" || e.key === "ArrowRight" ? i + 1 : i - 1;
        if (next >= 0 && next < list.length) list[next].focus();
      }
    });
  });

  // A strip column shows its layer's variant: clicked, or with Enter or Space; the arrow keys,
  // Home and End move along the strip.
  var stripColumns = Array.prototype.slice.call(document.querySelectorAll(".layer-strip .layer"));
  stripColumns.forEach(function (c, i) {
    c.addEventListener("click", function () { go({ part: null, variant: +c.dataset.variant }); });
    c.addEventListener("keydown", function (e) {
      var to = { ArrowRight: i + 1, ArrowLeft: i - 1, Home: 0, End: stripColumns.length - 1 }[e.key];
      if (to !== undefined) {
        e.preventDefault();
        var next = stripColumns[Math.max(0, Math.min(stripColumns.length - 1, to))];
        c.setAttribute("tabindex", "-1");
        next.setAttribute("tabindex", "0");
        next.focus();
      } else if (e.key === "Enter" || e.key === " ") {
        e.preventDefault();
        go({ part: null, variant: +c.dataset.variant });
      }
    });
  });
  Array.prototype.forEach.call(document.querySelectorAll(".variant"), function (b) {
    b.addEventListener("click", function () {
      var v = +b.dataset.variant;
      var part = state.part;
      var box = part && document.getElementById("part-" + part);
      go({ part: part, variant: v });
      // A part the chosen layers do not have is closed.
      if (box && box.getClientRects().length === 0) go({ part: null, variant: v });
    });
  });

  document.addEventListener("keydown", function (e) {
    if (e.key === "Escape" && state.op) {
      go({ part: null, variant: state.variant, ops: true, op: null });
      return;
    }
    if (e.key === "Escape" && state.part) {
      var box = document.getElementById("part-" + state.part);
      go({ part: null, variant: state.variant });
      if (box) box.focus();
    }
  });

  document.getElementById("to-ops").addEventListener("click", function () { go({ part: null, variant: state.variant, ops: true, op: null }); });
  document.getElementById("to-blocks").addEventListener("click", function () { go({ part: null, variant: state.variant, ops: false, op: null }); });
  Array.prototype.forEach.call(opsView.querySelectorAll(".op"), function (node) {
    function open() { go({ part: null, variant: state.variant, ops: true, op: node.dataset.op }); }
    node.addEventListener("click", open);
    node.addEventListener("keydown", function (e) { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); open(); } });
  });

  window.addEventListener("popstate", function () {
    state = parseHash();
    render(state);
  });

  state = parseHash();
  render(state);
})();
