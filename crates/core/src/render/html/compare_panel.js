// Two models compared part by part, shared by `anatomy html A --compare B` and the gallery's
// compare page: the panel that opens one part of both, step by step with each side's equation;
// and, for the gallery, which computes it in the page, the step pairing of `anatomy diff`
// (diff/mod.rs: `align`, `pair_status`) written again in JavaScript.
var anatomyCompare = (function () {
  "use strict";
  var MARK = { same: "=", mechanism: "*", dims: "#", only_a: "-", only_b: "+" };
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }
  // One model's side of a part: its steps, each marked by how it differs from the other's.
  function column(m, id) {
    var box = el("div");
    var p = m.parts[id];
    box.appendChild(el("h3", null, m.name));
    if (!p) { box.appendChild(el("p", "none", "Not in " + m.name + ".")); return box; }
    box.appendChild(el("h4", null, p.title + (p.layers ? " (layers " + p.layers + ")" : "")));
    if (p.params) box.appendChild(el("p", null, p.params));
    var t = el("table");
    p.steps.forEach(function (s) {
      var tr = el("tr", s.status === "same" ? null : "differs");
      tr.appendChild(el("td", null, MARK[s.status] || ""));
      tr.appendChild(el("td", null, s.number + " " + s.title));
      tr.appendChild(el("td", null, s.equation));
      t.appendChild(tr);
    });
    box.appendChild(t);
    return box;
  }
  // `shown()`: the two models on the page, { a: { name, parts }, b: { name, parts } }, each
  // part { title, layers, params, steps: [{ number, title, equation, status }] }. Returns
  // `select(id, push)`, which opens part `id` of both (or closes the panel for null) and keeps
  // the models and the part in the URL.
  function panel(detail, shown) {
    function select(id, push) {
      var data = shown();
      document.querySelectorAll(".part.selected").forEach(function (g) { g.classList.remove("selected"); });
      detail.textContent = "";
      if (!id) { detail.hidden = true; } else {
        ["a", "b"].forEach(function (side) {
          var g = document.querySelector("#side-" + side + ' .part[data-part="' + CSS.escape(id) + '"]');
          if (g) g.classList.add("selected");
        });
        var close = el("button", "close", "close");
        close.type = "button";
        close.addEventListener("click", function () { select(null, true); });
        detail.appendChild(close);
        var pair = el("div", "pair");
        pair.appendChild(column(data.a, id));
        pair.appendChild(column(data.b, id));
        detail.appendChild(pair);
        detail.hidden = false;
      }
      var hash = "#a=" + encodeURIComponent(data.a.name) + "&b=" + encodeURIComponent(data.b.name) +
        (id ? "&part=" + encodeURIComponent(id) : "");
      if (push) history.pushState(null, "", hash); else history.replaceState(null, "", hash);
    }
    return select;
  }
  // The part named in the URL, if either model has it.
  function partInHash(data) {
    var m = /(?:^#|&)part=([^&]*)/.exec(location.hash);
    var id = m ? decodeURIComponent(m[1]) : null;
    return id && (data.a.parts[id] || data.b.parts[id]) ? id : null;
  }
  // The longest common subsequence of two key lists, walked as diff/mod.rs's `align` walks it:
  // [i, j] pairs, [i, null] and [null, j] steps of one side; A's before B's between pairs.
  function align(a, b) {
    var n = a.length, m = b.length, rest = [], i, j;
    for (i = 0; i <= n; i++) rest.push(new Uint32Array(m + 1));
    for (i = n - 1; i >= 0; i--) {
      for (j = m - 1; j >= 0; j--) {
        rest[i][j] = a[i] === b[j] ? rest[i + 1][j + 1] + 1 : Math.max(rest[i + 1][j], rest[i][j + 1]);
      }
    }
    var out = [], onlyA = [], onlyB = [];
    function flush() {
      onlyA.forEach(function (x) { out.push([x, null]); });
      onlyB.forEach(function (y) { out.push([null, y]); });
      onlyA = []; onlyB = [];
    }
    i = 0; j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && a[i] === b[j]) { flush(); out.push([i, j]); i++; j++; }
      else if (j === m || (i < n && rest[i + 1][j] >= rest[i][j + 1])) { onlyA.push(i); i++; }
      else { onlyB.push(j); j++; }
    }
    flush();
    return out;
  }
  // An equation with its numbers masked: what is computed, not at what size.
  function shape(eq) { return eq.replace(/[0-9][0-9.]*/g, "#"); }
  // Each model's steps as [key, op, equation, output, number, title], in the order they run;
  // returns each side's status by step number.
  function pair(A, B) {
    var sa = {}, sb = {};
    var key = function (s) { return s[0]; };
    align(A.map(key), B.map(key)).forEach(function (p) {
      var x = p[0] === null ? null : A[p[0]], y = p[1] === null ? null : B[p[1]];
      if (x && y) {
        var status = x[1] !== y[1] || shape(x[2]) !== shape(y[2]) ? "mechanism"
          : x[3].join("\u0000") !== y[3].join("\u0000") || x[2] !== y[2] ? "dims" : "same";
        sa[x[4]] = status;
        sb[y[4]] = status;
      } else if (x) {
        sa[x[4]] = "only_a";
      } else {
        sb[y[4]] = "only_b";
      }
    });
    return { a: sa, b: sb };
  }
  return { panel: panel, partInHash: partInHash, pair: pair };
})();
