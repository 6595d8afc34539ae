// "Will it fit?": the planner's figures at the sliders' stops (data.plan, computed by
// `anatomy plan`'s rules when the page was made), looked up and summed here, offline.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("data").textContent);
  var t = data.plan;
  var root = document.getElementById("planner");
  if (!t || !root) return;
  var $ = function (id) { return document.getElementById(id); };
  var dev = $("plan-device"), rt = $("plan-runtime"), wf = $("plan-weights");
  var ctx = $("plan-context"), bat = $("plan-batch");
  function options(sel, items, label, chosen) {
    items.forEach(function (x, i) {
      var o = document.createElement("option");
      o.value = String(i);
      o.textContent = label(x);
      o.selected = i === chosen;
      sel.appendChild(o);
    });
  }
  function bytes(n) {
    var units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"], v = n, i = 0;
    while (v >= 1024 && i + 1 < units.length) { v /= 1024; i++; }
    return i === 0 ? n + " B" : v.toFixed(2) + " " + units[i];
  }
  function tokens(n) {
    return n >= 1048576 && n % 1048576 === 0 ? n / 1048576 + "M"
      : n >= 1024 && n % 1024 === 0 ? n / 1024 + "K" : String(n);
  }
  function rate(d, f) {
    if (f.rate === "fp8") return d.flops_fp8;
    if (f.rate === "int8") return d.flops_int8 || d.flops_bf16;
    return d.flops_bf16;
  }
  options(dev, t.devices, function (d) { return d.name; }, t.default_device);
  options(rt, t.runtimes, function (r) { return r.name; }, 0);
  options(wf, t.formats, function (f) { return f.name; }, 0);
  ctx.max = String(t.contexts.length - 1);
  ctx.value = String(Math.max(0, t.contexts.indexOf(8192)));
  bat.max = String(t.batches.length - 1);
  bat.value = "0";
  function cell(id, label, n, note) {
    return "<tr><th scope=\"row\">" + label + "</th><td id=\"" + id + "\" data-bytes=\"" + n + "\">" +
      bytes(n) + "</td><td>" + note + "</td></tr>";
  }
  function update() {
    var d = t.devices[+dev.value], r = t.runtimes[+rt.value], f = t.formats[+wf.value];
    var ci = +ctx.value, bi = +bat.value, nb = t.batches.length, b = t.batches[bi];
    var row = r.bytes[ci * nb + bi];
    var total = f.bytes + row[0] + row[1] + row[2] + row[3];
    var usable = Math.floor(d.memory * r.memory_fraction);
    var longest = -1;
    for (var i = 0; i < t.contexts.length; i++) {
      var q = r.bytes[i * nb + bi];
      if (f.bytes + q[0] + q[1] + q[2] + q[3] <= usable) longest = i;
    }
    var decode = d.bandwidth / (f.read[bi] + row[0] + row[1]) * b;
    var flops = rate(d, f);
    $("plan-context-out").textContent = tokens(t.contexts[ci]) + " tokens";
    $("plan-batch-out").textContent = b + (b === 1 ? " sequence" : " sequences");
    $("plan-rows").innerHTML =
      cell("plan-weights-bytes", "weights", f.bytes, "every matrix in " + f.name) +
      cell("plan-kv", "KV cache", row[0], "in " + r.kv_type + ", as " + r.name + " keeps it") +
      (row[1] > 0 ? cell("plan-state", "recurrent state", row[1], "per sequence, times the batch") : "") +
      cell("plan-compute", "compute", row[2], "working buffers") +
      cell("plan-overhead", "overhead", row[3], "the process") +
      cell("plan-total", "total", total, "");
    var verdict = (total <= usable ? "Fits in " : "Does not fit in ") + bytes(usable) + " of the " + d.name +
      (r.memory_fraction < 1 ? " (" + r.name + "'s share)" : "") + ". " +
      (longest < 0 ? "No context stop fits." : "Longest context stop that fits: " + tokens(t.contexts[longest]) + " tokens.") +
      " Decode ceiling " + decode.toFixed(1) + " tokens/s" +
      (flops ? "; prefill ceiling " + (flops / t.prefill_flops[ci]).toFixed(0) + " tokens/s." : ".");
    $("plan-verdict").textContent = verdict;
  }
  [dev, rt, wf, ctx, bat].forEach(function (el) { el.addEventListener("input", update); });
  update();
}());
