// The page's "Will it fit?" panel in real headless Chromium: its figures at every slider stop
// it is moved to are `anatomy plan --json`'s for the same device, runtime, weights, context and
// batch.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { anatomy, launch, open, tempDir } from "./helpers.mjs";

let browser, dir;
before(async () => {
  dir = tempDir();
  // Sliding-window layers (the KV cache's growth bends), and a hybrid with recurrent state.
  anatomy("html", "gemma-3-27b", "-o", join(dir, "gemma3.html"));
  anatomy("html", "qwen3-next-80b-a3b", "-o", join(dir, "qwen3-next.html"));
  browser = await launch();
});
after(async () => { await browser?.close(); });

function planned(model, device, runtime, weights, context, batch) {
  return JSON.parse(anatomy("plan", model, "--device", device, "--runtime", runtime, "--weights", weights,
    "--context", String(context), "--batch", String(batch), "--json"));
}

async function move(page, id, index) {
  await page.locator("#" + id).evaluate((el, v) => {
    el.value = String(v);
    el.dispatchEvent(new Event("input", { bubbles: true }));
  }, index);
}

test("moving the context slider changes the KV figure as plan --json says", async () => {
  for (const [file, model] of [["gemma3.html", "gemma-3-27b"], ["qwen3-next.html", "qwen3-next-80b-a3b"]]) {
    const { page, problems } = await open(browser, join(dir, file));
    const table = await page.evaluate(() => JSON.parse(document.getElementById("data").textContent).plan);
    const device = table.devices[table.default_device].id;
    assert.equal(device, "h100-sxm", "the page starts on plan's default device");
    const kvs = new Set();
    for (const [runtime, r] of [["llama.cpp", 0], ["vllm", 1]]) {
      await page.selectOption("#plan-runtime", String(r));
      for (const ci of [0, 3, table.contexts.length - 1]) {
        for (const bi of [0, 2]) {
          await move(page, "plan-context", ci);
          await move(page, "plan-batch", bi);
          const want = planned(model, device, runtime, "bf16", table.contexts[ci], table.batches[bi]);
          const kv = Number(await page.locator("#plan-kv").getAttribute("data-bytes"));
          const total = Number(await page.locator("#plan-total").getAttribute("data-bytes"));
          assert.equal(kv, want.kv_cache.bytes, `${model} ${runtime} context ${table.contexts[ci]} batch ${table.batches[bi]}`);
          assert.equal(total, want.total, `${model} ${runtime} total at ${table.contexts[ci]}`);
          assert.match(await page.locator("#plan-context-out").textContent(), /tokens/);
          kvs.add(kv);
          const verdict = await page.locator("#plan-verdict").textContent();
          assert.ok(verdict.startsWith(want.fits ? "Fits" : "Does not fit"), verdict);
        }
      }
    }
    // The slider moved the figure: not one number at every stop.
    assert.ok(kvs.size >= 6, `${model}: ${[...kvs]}`);
    assert.deepEqual(problems, [], file);
    await page.close();
  }
});

test("the weights picker changes the weights as plan --json says", async () => {
  const { page } = await open(browser, join(dir, "gemma3.html"));
  const table = await page.evaluate(() => JSON.parse(document.getElementById("data").textContent).plan);
  for (const [i, f] of table.formats.entries()) {
    await page.selectOption("#plan-weights", String(i));
    const want = planned("gemma-3-27b", table.devices[0].id, "llama.cpp", f.name, 8192, 1);
    assert.equal(Number(await page.locator("#plan-weights-bytes").getAttribute("data-bytes")), want.weights.bytes, f.name);
  }
  await page.close();
});
