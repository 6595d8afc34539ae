// The web explorer in real headless Chromium: it loads offline and quietly, hovers, clicks,
// keeps its state in the URL, works from the keyboard, switches layer variants, and renders
// hostile strings inert.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { accessibleName, anatomy, launch, open, root, tempDir } from "./helpers.mjs";

let browser, dir;
before(async () => {
  dir = tempDir();
  anatomy("html", "llama-3.1-70b", "-o", join(dir, "llama.html"));
  anatomy("html", "deepseek-v3", "-o", join(dir, "deepseek.html"));
  anatomy("html", "mimo-v2-flash", "-o", join(dir, "mimo.html"));
  anatomy("html", "mamba-codestral-7b", "-o", join(dir, "mamba.html"));
  anatomy("html", "qwen3-next-80b-a3b", "-o", join(dir, "qwen3-next.html"));
  // Zamba2 as its config class builds it by default: 54 Mamba2 layers, 9 running the shared block.
  mkdirSync(join(dir, "zamba2"));
  writeFileSync(join(dir, "zamba2", "config.json"), JSON.stringify({ model_type: "zamba2" }));
  anatomy("html", join(dir, "zamba2"), "-o", join(dir, "zamba2.html"));
  // xLSTM 7B's shape as its config class builds it by default.
  mkdirSync(join(dir, "xlstm"));
  writeFileSync(join(dir, "xlstm", "config.json"), JSON.stringify({ model_type: "xlstm" }));
  anatomy("html", join(dir, "xlstm"), "-o", join(dir, "xlstm.html"));
  anatomy("html", "gemma-3-27b", "-o", join(dir, "gemma3.html"));
  anatomy("html", "jamba-v0.1", "-o", join(dir, "jamba.html"));
  anatomy("html", "llama-3.2-11b-vision", "-o", join(dir, "mllama.html"));
  anatomy("html", "hrm-text-1b", "-o", join(dir, "hrm.html"));
  anatomy("html", "dots3-note-prev", "-o", join(dir, "dots3.html"));
  anatomy("html", join(root, "crates/exec/tests/fixtures/minimax-m3"), "-o", join(dir, "m3.html"));
  anatomy("html", join(root, "crates/exec/tests/fixtures/zaya"), "-o", join(dir, "zaya.html"));
  anatomy("html", join(root, "crates/exec/tests/fixtures/dory"), "-o", join(dir, "dory.html"));
  anatomy("html", join(root, "crates/exec/tests/fixtures/blt"), "-o", join(dir, "blt.html"));
  anatomy("html", join(root, "crates/exec/tests/fixtures/deepseek-v4"), "-o", join(dir, "dsv4.html"));
  anatomy("html", join(root, "crates/exec/tests/fixtures/qwen4-exp-ple"), "-o", join(dir, "qwen4.html"));
  anatomy("html", join(root, "crates/exec/tests/fixtures/draft/gemma4-assistant/assistant"), "-o", join(dir, "assistant.html"));
  browser = await launch();
});
after(async () => { await browser?.close(); });

test("loads with no console error and no network request", async () => {
  for (const f of ["llama.html", "deepseek.html"]) {
    const { page, problems } = await open(browser, join(dir, f));
    await page.waitForLoadState("load");
    await page.click("#part-attention");
    await page.hover("#part-embedding");
    assert.deepEqual(problems, [], f);
    await page.close();
  }
});

test("a click hides the hover summary, which would cover the details", async () => {
  const { page } = await open(browser, join(dir, "llama.html"));
  await page.hover("#part-attention");
  await page.locator("#tooltip").waitFor({ state: "visible" });
  await page.click("#part-attention");
  await page.locator("#detail").waitFor({ state: "visible" });
  assert.equal(await page.locator("#tooltip").isHidden(), true);
  await page.close();
});

test("a page made alone links to its config's source, not to a gallery it is not in", async () => {
  const { page } = await open(browser, join(dir, "llama.html"));
  assert.equal(await page.locator(".provenance a").getAttribute("href"), "https://huggingface.co/meta-llama/Llama-3.1-70B");
  assert.equal(await page.locator("nav").count(), 0);
  await page.close();
});

test("links read at 4.5:1 or better, light and dark", async () => {
  const { page } = await open(browser, join(dir, "llama.html"));
  for (const colorScheme of ["light", "dark"]) {
    await page.emulateMedia({ colorScheme });
    const ratio = await page.evaluate(() => {
      const rgb = (c) => c.match(/\d+/g).slice(0, 3).map(Number);
      const lum = ([r, g, b]) => [r, g, b].map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; })
        .reduce((s, v, i) => s + v * [0.2126, 0.7152, 0.0722][i], 0);
      const [a, b] = [getComputedStyle(document.querySelector(".provenance a")).color, getComputedStyle(document.body).backgroundColor].map((c) => lum(rgb(c)));
      return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
    });
    assert.ok(ratio >= 4.5, `${colorScheme}: ${ratio.toFixed(2)}:1`);
  }
  await page.close();
});

test("hovering a box shows its one-line summary", async () => {
  const { page } = await open(browser, join(dir, "llama.html"));
  await page.hover("#part-attention");
  const tip = page.locator("#tooltip");
  await tip.waitFor({ state: "visible" });
  assert.equal(await tip.textContent(), "64 query heads share 8 KV heads (d_h=128).");
  await page.close();
});

test("clicking a box shows this model's numbers and a PyTorch reference", async () => {
  const { page } = await open(browser, join(dir, "llama.html"));
  await page.click("#part-embedding");
  const detail = page.locator("#detail");
  await detail.waitFor({ state: "visible" });
  const text = await detail.textContent();
  assert.match(text, /1,050,673,152 parameters/);
  assert.match(text, /this table alone is 1\.05B parameters/);
  assert.match(await page.locator("#detail pre.code").textContent(), /nn\.Embedding\(128256, 8192\)/);
  assert.match(await page.locator("#detail pre.code").textContent(), /stored as model\.embed_tokens/);
  // Opened down to its tensor-level steps, the ones `anatomy show` numbers.
  await page.click("#detail .steps-box summary");
  assert.match(await page.locator("#detail ol.steps").textContent(), /Token embedding.*model\.embed_tokens\.weight/s);
  await page.close();
});

test("a box inside the ×80 frame gives one layer's figure, the total beside; math is MathML", async () => {
  const { page } = await open(browser, join(dir, "llama.html"));
  // Llama 3.1 70B's attention RMSNorm: 8,192 weights per layer, 80 layers.
  const norm = page.locator("#part-norm-1");
  assert.equal(await norm.locator("text.sub").textContent(), "8.19K params · 655K in all");
  await norm.click();
  const detail = page.locator("#detail");
  assert.match(await detail.textContent(), /8,192 parameters per layer × 80 layers = 655,360/);
  // The gain's space is typeset, not shown as ℝ^{8192}.
  assert.equal(await detail.locator("math msup mn").first().textContent(), "8192");
  assert.doesNotMatch(await detail.textContent(), /ℝ\^\{/);
  // Every box's accessible name is what it shows, its title once; its description the summary.
  for (const g of await page.locator("#diagram .part:not(.frame)").all()) {
    const name = await accessibleName(g);
    const title = await g.locator("text.title").first().textContent();
    assert.equal(name.split(title).length - 1, 1, name);
    assert.ok(name.includes(await g.locator("text.sub").textContent()), name);
  }
  await page.close();
});

test("the layer strip draws one column per layer and a click shows that layer's variant (DeepSeek-V3, Jamba, Gemma 3)", async () => {
  const { page, problems } = await open(browser, join(dir, "deepseek.html"));
  const columns = page.locator(".layer-strip .layer");
  const badge = page.locator("#part-block .badge text");
  assert.equal(await columns.count(), 61);
  // The shown variant's columns stand out: the 58 MoE layers.
  assert.equal(await page.locator(".layer-strip .layer.current").count(), 58);
  assert.equal(await page.locator(".layer-strip .layer .t-moe").count(), 58);
  assert.equal(await page.locator(".layer-strip .layer .t-mla").count(), 61);
  await columns.nth(1).click();
  assert.equal(await page.locator("button.variant").nth(0).getAttribute("aria-pressed"), "true");
  assert.equal(await badge.textContent(), "×3");
  assert.equal(await page.locator(".layer-strip .layer.current").count(), 3);
  assert.equal(new URL(page.url()).hash, "#v=0");
  await columns.nth(30).click();
  assert.equal(await badge.textContent(), "×58");
  assert.deepEqual(problems, []);
  await page.close();
  const jamba = await open(browser, join(dir, "jamba.html"));
  const jc = jamba.page.locator(".layer-strip .layer");
  assert.equal(await jc.count(), 32);
  assert.equal(await jamba.page.locator(".layer-strip .layer .t-ssm").count(), 28);
  assert.equal(await jamba.page.locator(".layer-strip .layer .t-full").count(), 4);
  // Its attention layers rotate nothing: a dot under each.
  assert.equal(await jamba.page.locator(".layer-strip .layer .t-nope").count(), 4);
  await jc.nth(4).click();
  const pressed = jamba.page.locator('button.variant[aria-pressed="true"]');
  assert.match(await pressed.textContent(), /full attention, dense FFN/);
  assert.match(await jc.nth(4).locator("title").textContent(), /^layer 4: full attention, dense FFN, no RoPE$/);
  assert.deepEqual(jamba.problems, []);
  await jamba.page.close();
  const gemma = await open(browser, join(dir, "gemma3.html"));
  assert.equal(await gemma.page.locator(".layer-strip .layer .t-full").count(), 10);
  assert.equal(await gemma.page.locator(".layer-strip .layer .t-sliding").count(), 52);
  await gemma.page.close();
});

test("the layer strip is one Tab stop: the arrow keys move along it and Enter shows a layer's variant (DeepSeek-V3)", async () => {
  const { page, problems } = await open(browser, join(dir, "deepseek.html"));
  const columns = page.locator(".layer-strip .layer");
  const badge = page.locator("#part-block .badge text");
  // One column takes the Tab key: the first of the variant shown (the MoE layers, from layer 3).
  assert.equal(await page.locator('.layer-strip .layer[tabindex="0"]').count(), 1);
  assert.equal(await page.locator('.layer-strip .layer[tabindex="0"]').getAttribute("data-layer"), "3");
  assert.equal(await columns.nth(3).getAttribute("role"), "button");
  assert.match(await columns.nth(3).getAttribute("aria-label"), /^layer 3: /);
  await columns.nth(3).focus();
  await page.keyboard.press("Home");
  assert.equal(await page.evaluate(() => document.activeElement.dataset.layer), "0");
  await page.keyboard.press("ArrowRight");
  assert.equal(await page.evaluate(() => document.activeElement.dataset.layer), "1");
  await page.keyboard.press("Enter");
  assert.equal(await badge.textContent(), "×3");
  assert.equal(await page.locator("button.variant").nth(0).getAttribute("aria-pressed"), "true");
  // The focus stays where it was, the only Tab stop.
  assert.equal(await page.evaluate(() => document.activeElement.dataset.layer), "1");
  assert.equal(await page.locator('.layer-strip .layer[tabindex="0"]').count(), 1);
  await page.keyboard.press("End");
  await page.keyboard.press("ArrowRight");
  assert.equal(await page.evaluate(() => document.activeElement.dataset.layer), "60");
  await page.keyboard.press(" ");
  assert.equal(await badge.textContent(), "×58");
  assert.deepEqual(problems, []);
  await page.close();
});

test("an attention box shared by sliding and full layers says each variant's span (Gemma 3)", async () => {
  const { page, problems } = await open(browser, join(dir, "gemma3.html"));
  const shown = () => page.locator("#part-attention .sub tspan").evaluateAll(
    (ts) => ts.filter((t) => getComputedStyle(t).display !== "none").map((t) => t.textContent));
  assert.deepEqual(await shown(), [" · window 1024"]);
  await page.locator("button.variant").nth(1).click();
  assert.deepEqual(await shown(), [" · full"]);
  assert.deepEqual(problems, []);
  await page.close();
});

test("the decoder layer's frame opens as a layer, not as one of its parts, with the layer's code", async () => {
  const { page } = await open(browser, join(dir, "llama.html"));
  await page.click("#part-block .block-title");
  assert.equal(await page.locator("#detail .kind").textContent(), "layer");
  assert.equal(await page.locator("#detail h2").textContent(), "Decoder layer");
  // Its reference code is the layer class, not the whole module.
  const code = await page.locator("#detail pre.code").textContent();
  assert.match(code, /class DecoderLayer\(nn\.Module\):/);
  assert.doesNotMatch(code, /class Model\(/);
  await page.close();
});

test("the URL keeps the selection; back and forward restore it", async () => {
  const { page } = await open(browser, join(dir, "llama.html"));
  await page.click("#part-attention");
  assert.equal(new URL(page.url()).hash, "#part=attention");
  await page.click("#part-embedding");
  await page.goBack();
  assert.equal(new URL(page.url()).hash, "#part=attention");
  assert.equal(await page.locator("#detail h2").textContent(), "Grouped-query attention");
  await page.goForward();
  assert.equal(await page.locator("#detail h2").textContent(), "Token embedding");
  // Opening a shared URL restores it.
  const fresh = await open(browser, join(dir, "llama.html"), "#part=ffn-mlp");
  assert.equal(await fresh.page.locator("#detail h2").textContent(), "Feed-forward (MLP)");
  assert.ok(await fresh.page.locator("#part-ffn-mlp.selected").count());
  await fresh.page.close();
  await page.close();
});

test("keyboard: Tab reaches a box, arrows move, Enter opens, Escape closes", async () => {
  const { page } = await open(browser, join(dir, "llama.html"));
  // Tab past the variant-free header to the first box.
  for (let i = 0; i < 10; i++) {
    await page.keyboard.press("Tab");
    if (await page.evaluate(() => document.activeElement?.dataset?.part)) break;
  }
  assert.equal(await page.evaluate(() => document.activeElement.dataset.part), "embedding");
  await page.keyboard.press("ArrowDown");
  await page.keyboard.press("ArrowDown");
  const focused = await page.evaluate(() => document.activeElement.dataset.part);
  assert.equal(focused, "norm-1", "embedding, then the block frame, then its first norm");
  await page.keyboard.press("Enter");
  await page.locator("#detail").waitFor({ state: "visible" });
  assert.equal(await page.locator("#detail h2").textContent(), "Attention RMSNorm");
  // Focus moves into the panel: Tab goes on through its contents, not to the next box.
  assert.equal(await page.evaluate(() => document.activeElement.id), "detail");
  await page.keyboard.press("Tab");
  assert.equal(await page.evaluate(() => !!document.activeElement.closest("#detail")), true);
  // Focus (orange) and selection (purple, dashed) look different.
  const stroke = (sel) => page.locator(sel).evaluate((r) => getComputedStyle(r).stroke);
  const [focusRing, selected] = ["rgb(255, 138, 0)", "rgb(122, 79, 196)"];
  assert.equal(await stroke("#part-norm-1.selected rect"), selected);
  await page.keyboard.press("Escape");
  assert.equal(await page.locator("#detail").isHidden(), true);
  // Back on the box it opened, whose focus ring is not the selection's.
  assert.equal(await page.evaluate(() => document.activeElement.dataset.part), "norm-1");
  assert.equal(await stroke("#part-norm-1 rect"), focusRing);
  // Every box shown has an accessible name.
  for (const g of await page.locator(".part:visible").all()) assert.notEqual(await accessibleName(g), "");
  await page.close();
});

test("DeepSeek-V3 opens on its MoE layers, the variant holding the most parameters; the badge counts each variant's layers", async () => {
  const { page } = await open(browser, join(dir, "deepseek.html"));
  const variants = page.locator("button.variant");
  const badge = page.locator("#part-block .badge text");
  assert.equal(await variants.count(), 2);
  assert.match(await variants.nth(1).textContent(), /layers 3–60.*MoE FFN/);
  assert.equal(await variants.nth(1).getAttribute("aria-pressed"), "true");
  assert.equal(await page.locator("#part-ffn-mlp").isVisible(), false);
  assert.equal(await page.locator("#part-ffn-moe").isVisible(), true);
  assert.equal(await badge.textContent(), "×58");
  assert.equal(new URL(page.url()).hash, "");
  await page.click("#part-ffn-moe");
  assert.match(await page.locator("#detail").textContent(), /256 experts of width 2048, 8 active per token \+ 1 shared/);
  await variants.nth(0).click();
  assert.match(await variants.nth(0).textContent(), /layers 0–2.*dense FFN/);
  assert.equal(await page.locator("#part-ffn-mlp").isVisible(), true);
  assert.equal(await page.locator("#part-ffn-moe").isVisible(), false);
  assert.equal(await badge.textContent(), "×3");
  assert.equal(await page.locator("#part-block").getAttribute("aria-label"), "decoder layer ×3, repeated 3 times");
  assert.equal(new URL(page.url()).hash, "#v=0");
  await page.close();
});

test("a page opens on the variant holding the most parameters, each variant's badge its own layer count (Gemma 3, Qwen3-Next, Jamba)", async () => {
  // [page, the layer count of each variant in order, the variant it opens on, a label pattern each]
  const cases = [
    ["gemma3.html", [52, 10], 0, [/sliding 1024 attention/, /full attention/]],
    ["qwen3-next.html", [36, 12], 0, [/Gated DeltaNet/, /full attention/]],
    ["jamba.html", [12, 16, 4], 1, [/Mamba, dense FFN/, /Mamba, MoE FFN/, /full attention, dense FFN/]],
  ];
  for (const [f, counts, first, labels] of cases) {
    const { page, problems } = await open(browser, join(dir, f));
    const variants = page.locator("button.variant");
    const badge = page.locator("#part-block .badge text");
    assert.equal(await variants.count(), counts.length, f);
    for (let i = 0; i < counts.length; i++) {
      assert.equal(await variants.nth(i).getAttribute("aria-pressed"), String(i === first), `${f} variant ${i}`);
      assert.match(await variants.nth(i).textContent(), labels[i], f);
    }
    assert.equal(await badge.textContent(), `×${counts[first]}`, f);
    for (let i = 0; i < counts.length; i++) {
      await variants.nth(i).click();
      assert.equal(await badge.textContent(), `×${counts[i]}`, `${f} variant ${i}`);
    }
    // A click on a layer's column of the strip selects that layer's variant, from any other.
    for (let i = counts.length - 1; i >= 0; i--) {
      const column = page.locator(`.layer-strip .layer[data-variant="${i}"]`);
      assert.equal(await column.count(), counts[i], `${f} variant ${i}'s columns`);
      await variants.nth((i + 1) % counts.length).click();
      await column.last().click();
      assert.equal(await variants.nth(i).getAttribute("aria-pressed"), "true", `${f} strip, variant ${i}`);
      assert.equal(await badge.textContent(), `×${counts[i]}`, `${f} strip, variant ${i}`);
    }
    assert.deepEqual(problems, [], f);
    await page.close();
  }
});

test("each layer variant's own attention is drawn as attention, with its own heads (MiMo-V2-Flash)", async () => {
  const cfg = JSON.parse(readFileSync(join(root, "crates/core/catalog/mimo-v2-flash.json"), "utf8"));
  const { page, problems } = await open(browser, join(dir, "mimo.html"));
  const variants = page.locator("button.variant");
  for (let i = 0; i < await variants.count(); i++) {
    await variants.nth(i).click();
    const label = await variants.nth(i).textContent();
    const shown = page.locator('[data-part^="attention"]:visible');
    assert.equal(await shown.count(), 1, label);
    assert.match(await shown.getAttribute("class"), /cat-attention/, label);
    const sliding = /sliding/.test(label);
    const kind = sliding ? /^Sliding-window attention/ : /^Full attention/;
    assert.match(await accessibleName(shown), kind, label);
    const kv = sliding ? cfg.swa_num_key_value_heads : cfg.num_key_value_heads;
    assert.match(await shown.locator("desc").textContent(), new RegExp(`share ${kv} KV heads`), label);
    for (const mlp of await page.locator('[data-part="ffn-mlp"]:visible').all()) {
      assert.match(await accessibleName(mlp), /^Feed-forward/, label);
    }
  }
  assert.deepEqual(problems, []);
  await page.close();
});

test("a state-space model draws its mixer, not attention, with its state's size", async () => {
  const { page, problems } = await open(browser, join(dir, "mamba.html"));
  assert.equal(await page.locator('[data-part="attention"]').count(), 0);
  const mixer = page.locator("#part-mixer");
  assert.match(await mixer.getAttribute("class"), /cat-mixer/);
  await mixer.click();
  const detail = await page.locator("#detail").textContent();
  assert.match(detail, /128 heads carry a 64 × 128 state/);
  // Per layer: 128 × 64 × 128 of scan state and 3 inputs of 10,240 convolved channels.
  assert.match(detail, /1,079,296 values per layer/);
  assert.match(detail, /class Mamba2\(nn.Module\)/);
  // Over its 64 layers: 64 × 1,079,296 values of state, whatever the context.
  assert.match(detail, /recurrent state: 69,074,944 values per sequence/);
  assert.deepEqual(problems, []);
  await page.close();
});

test("a hybrid switches between its Gated DeltaNet and its gated attention (Qwen3-Next)", async () => {
  const { page, problems } = await open(browser, join(dir, "qwen3-next.html"));
  const variants = page.locator("button.variant");
  assert.equal(await variants.count(), 2);
  const labels = [await variants.nth(0).textContent(), await variants.nth(1).textContent()];
  const delta = labels.findIndex((l) => /Gated DeltaNet/.test(l));
  assert.notEqual(delta, -1, labels.join(" | "));
  await variants.nth(delta).click();
  assert.equal(await page.locator('[data-part="attention"]:visible').count(), 0);
  // The legend names the mixer's colour.
  assert.match(await page.locator(".legend").textContent(), /recurrent mixer/);
  await page.locator('[data-part="mixer"]:visible').first().click();
  const detail = await page.locator("#detail").textContent();
  assert.match(detail, /32 heads each carry a 128 × 128 memory/);
  // Per layer: 32 × 128 × 128 of memory and 3 inputs of 8,192 convolved channels.
  assert.match(detail, /548,864 values per layer/);
  assert.match(detail, /class GatedDeltaNet\(nn.Module\)/);
  // Over its 36 DeltaNet layers, whatever the context.
  assert.match(detail, /recurrent state: 19,759,104 values per sequence/);
  await variants.nth(1 - delta).click();
  const attention = page.locator('[data-part="attention"]:visible');
  assert.equal(await attention.count(), 1);
  await attention.click();
  assert.match(await page.locator("#detail").textContent(), /the query projection's second half per head/);
  assert.deepEqual(problems, []);
  await page.close();
});

test("Zamba2's shared block is drawn once, with the layers that run it and its own code", async () => {
  const { page, problems } = await open(browser, join(dir, "zamba2.html"));
  const variants = page.locator("button.variant");
  assert.equal(await variants.count(), 2);
  assert.equal(await page.locator("#part-shared-block:visible").count(), 0);
  assert.match(await variants.nth(1).textContent(), /^layers 6, 12, 18, .* \(9 layers\): Mamba2, the shared block first$/);
  await variants.nth(1).click();
  const block = page.locator("#part-shared-block");
  assert.match(await block.getAttribute("class"), /cat-attention/);
  await block.click();
  const detail = await page.locator("#detail").textContent();
  assert.match(detail, /Attention and an MLP whose weights 9 layers share \(one block\)/);
  assert.match(detail, /In layers 6, 12, 18/);
  assert.match(detail, /rank-128 adapter on the fused gate\/up projection/);
  const code = await page.locator("#detail pre.code").textContent();
  assert.match(code, /class SharedBlock\(nn\.Module\)/);
  assert.match(code, /self\.shared_transformer = block/);
  assert.equal(await page.locator('[data-part="mixer"]').count() > 0, true);
  assert.deepEqual(problems, []);
  await page.close();
});

test("xLSTM's mLSTM is drawn as a mixer with its matrix memory's size and its recurrence", async () => {
  const { page, problems } = await open(browser, join(dir, "xlstm.html"));
  assert.equal(await page.locator('[data-part="attention"]').count(), 0);
  await page.locator("#part-mixer").click();
  const detail = await page.locator("#detail").textContent();
  assert.match(detail, /8 heads each carry a 256 × 512 matrix memory/);
  // Per layer: 8 × (256 × 512 + 256 + 1) values, whatever the context.
  assert.match(detail, /1,050,632 values/);
  assert.match(await page.locator("#detail pre.code").textContent(), /class MLstm\(nn\.Module\)/);
  assert.deepEqual(problems, []);
  await page.close();
});

test("a multimodal wrapper draws each tower beside the embedding, joined to it; a click opens its steps and tensors", async () => {
  const { page, problems } = await open(browser, join(dir, "gemma3.html"));
  // Every number from anatomy's own stats and manifest of the same model, not typed in.
  const stats = JSON.parse(anatomy("stats", "gemma-3-27b", "--json"));
  const manifest = JSON.parse(anatomy("manifest", "gemma-3-27b", "--json"));
  const towers = Object.entries(stats.towers);
  assert.equal(towers.length, 2);
  for (const [what, t] of towers) {
    // The boxes in the wrapper's order, whatever the JSON's.
    const box = page.locator("svg .part.cat-tower", { has: page.locator("text.title", { hasText: what }) });
    await box.waitFor({ state: "visible" });
    assert.match(await box.locator("desc").textContent(), new RegExp(`${t.params.toLocaleString("en-US")} parameters`));
  }
  const vision = stats.towers["vision tower"];
  // The join: one edge from the towers' column into the token embedding's right side, at its height.
  const edge = await page.locator("svg path.join").getAttribute("d");
  const [, y0, x1] = edge.match(/^M\S+ \S+ V(\S+) H(\S+)$/).map(Number);
  const e = await page.locator("#part-embedding rect");
  const [rx, ry, rw, rh] = await Promise.all(["x", "y", "width", "height"].map((a) => e.getAttribute(a).then(Number)));
  assert.ok(Math.abs(x1 - (rx + rw + 2)) < 1 && y0 === ry + rh / 2, JSON.stringify([edge, rx, ry, rw, rh]));
  // Clicking the vision tower opens its steps, each with the tensors the manifest lists.
  await page.locator("svg #part-tower-0").click();
  const detail = page.locator("#detail");
  await detail.waitFor({ state: "visible" });
  assert.equal(await detail.locator("h2").textContent(), "Vision tower");
  assert.equal(await detail.locator("pre.code").count(), 0, "no PyTorch reference is claimed for a tower");
  const steps = detail.locator(".tower-steps > ol > li");
  assert.ok(await steps.count() >= 3);
  assert.match(await steps.nth(1).locator("strong").textContent(), /^encoder layer ×\d+$/);
  const listed = await detail.locator(".tower-steps code.tensor").allTextContents();
  const shown = new Map(listed.map((line) => {
    const [, name, shape] = line.match(/^(\S+) \[(.*)\]$/);
    return [name, shape.split(", ").map(Number)];
  }));
  // Every tensor of the tower the manifest lists, layer 0's standing for all ({i} is the layer).
  const stored = Object.entries(manifest.tensors).filter(([name]) => name.startsWith("vision_tower."));
  assert.equal(stored.length, vision.tensors);
  for (const [name, shape] of stored.filter(([name]) => !/\.layers\.[1-9]/.test(name))) {
    const want = name.replace(/\.layers\.0\./, ".layers.{i}.");
    assert.deepEqual(shown.get(want), shape, want);
  }
  assert.match(await detail.textContent(), new RegExp(vision.params.toLocaleString("en-US")));
  assert.deepEqual(problems, []);
  await page.close();
});

test("a config full of markup renders inert", async () => {
  const evil = join(dir, "<img src=x onerror=window.__pwned=2>");
  mkdirSync(evil, { recursive: true });
  const markup = "</svg></script><script>window.__pwned=1</script>\"'<b>";
  const config = {
    model_type: "llama", hidden_size: 64, intermediate_size: 128, num_hidden_layers: 2, num_attention_heads: 4,
    num_key_value_heads: 2, vocab_size: 100,
  };
  // A key anatomy does not know, kept under --lenient: the page lists it with its value.
  config[markup] = markup;
  writeFileSync(join(evil, "config.json"), JSON.stringify(config));
  const out = join(dir, "evil.html");
  anatomy("html", evil, "-o", out, "--lenient");
  const { page, problems } = await open(browser, out);
  await page.waitForLoadState("load");
  assert.equal(await page.evaluate(() => window.__pwned), undefined);
  assert.equal(await page.locator("h1").textContent(), "<img src=x onerror=window.__pwned=2>");
  assert.match(await page.locator(".warning").textContent(), /anatomy ignored: <\/svg><\/script><script>window\.__pwned=1<\/script>/);
  await page.click("#part-ffn-mlp");
  assert.equal(await page.evaluate(() => window.__pwned), undefined);
  assert.equal(await page.locator("script").count(), 2, "only the page's own scripts exist");
  assert.deepEqual(problems, []);
  await page.close();
});

test("layers that cross-attend to an image are a part of their own, counted as stats counts them", async () => {
  // The layers whose stored parameters differ from layer 0's are the cross-attention layers.
  const runs = JSON.parse(anatomy("stats", "llama-3.2-11b-vision", "--json")).layer_runs;
  const cross = runs.filter((r) => r.params_per_layer !== runs[0].params_per_layer);
  const total = cross.reduce((n, r) => n + r.count * r.params_per_layer, 0);
  const { page, problems } = await open(browser, join(dir, "mllama.html"));
  await page.waitForLoadState("load");
  // Drawn in the variant of those layers, not beside the self-attention layers.
  const variants = page.locator("button.variant");
  assert.equal(await variants.count(), 2);
  assert.equal(await page.locator("#part-cross-attention").isVisible(), false);
  await variants.nth(1).click();
  assert.match(await variants.nth(1).textContent(), /cross-attention to the image/);
  // Drawn whole, as the self-attention layers are: its norms, its gated adds and its MLP too.
  const inBlock = async () => (await page.locator("#diagram .part.gated:visible").evaluateAll((gs) => gs.map((g) => g.dataset.part)));
  assert.deepEqual(await inBlock(), ["cross-norm-1", "cross-attention", "cross-residual-1", "cross-norm-2", "cross-ffn-mlp", "cross-residual-2"]);
  assert.match(await page.locator("#part-cross-residual-1 desc").textContent(), /through a learned tanh gate/);
  await page.click("#part-cross-attention");
  const detail = page.locator("#detail");
  await detail.waitFor({ state: "visible" });
  const text = await detail.textContent();
  assert.match(text, new RegExp(total.toLocaleString("en-US")));
  assert.match(text, /skips these layers whole/);
  assert.match(await page.locator("#detail pre.code").textContent(), /class CrossAttentionLayer/);
  assert.deepEqual(problems, []);
  await page.close();
});

test("on a phone the diagram fits the screen and a tapped box's details open as a sheet in view", async () => {
  const context = await browser.newContext({ viewport: { width: 390, height: 844 }, hasTouch: true, isMobile: true });
  const page = await context.newPage();
  const problems = [];
  page.on("pageerror", (e) => problems.push(String(e)));
  await page.goto("file://" + join(dir, "deepseek.html"));
  assert.ok(await page.evaluate(() => document.documentElement.scrollWidth) <= 390);
  const svg = await page.locator("#diagram svg").boundingBox();
  assert.ok(svg.x >= 0 && svg.x + svg.width <= 390, JSON.stringify(svg));
  // A box far down the page: the sheet opens where the screen is, not below the diagram.
  const box = page.locator("#part-lm-head");
  await box.scrollIntoViewIfNeeded();
  await box.tap();
  const detail = page.locator("#detail");
  await detail.waitFor({ state: "visible" });
  assert.match(await detail.textContent(), /Scores all 129,280 vocabulary entries/);
  const sheet = await detail.boundingBox();
  assert.equal(Math.round(sheet.x), 0);
  assert.equal(Math.round(sheet.width), 390);
  assert.equal(Math.round(sheet.y + sheet.height), 844, "the sheet sits on the screen's bottom edge");
  assert.ok(sheet.height < 844 * 0.75, "and leaves the diagram above it");
  assert.ok(await page.evaluate(() => document.documentElement.scrollWidth) <= 390);
  await detail.locator("button.close").tap();
  assert.equal(await detail.isHidden(), true);
  assert.deepEqual(problems, []);
  await context.close();
});

test("HRM-Text's page draws its loop over two stacks as a part, with the visits its config gives", async () => {
  const cfg = JSON.parse(readFileSync(join(root, "crates/core/catalog/hrm-text-1b.json"), "utf8"));
  const per = cfg.num_layers_per_stack, high = cfg.H_cycles, low = cfg.L_cycles;
  const { page, problems } = await open(browser, join(dir, "hrm.html"));
  await page.waitForLoadState("load");
  await page.click("#part-hierarchy");
  const detail = page.locator("#detail");
  await detail.waitFor({ state: "visible" });
  const text = await detail.textContent();
  assert.match(text, new RegExp(`runs the low-level stack ${high * low} times and the high-level one ${high}`));
  assert.match(text, new RegExp(`a token runs ${per * high * (low + 1)} layers in all`));
  const code = await page.locator("#detail pre.code").textContent();
  assert.match(code, /class Stack/);
  assert.match(code, new RegExp(`for _ in range\\(${low}\\):\\s+low = self\\.L_module\\(low \\+ high, rope\\)`));
  assert.deepEqual(problems, []);
  await page.close();
});

test("BLT's page draws its byte-level stacks as parts, with the sizes and patching its config gives", async () => {
  const cfg = JSON.parse(readFileSync(join(root, "crates/exec/tests/fixtures/blt/config.json"), "utf8"));
  const { page, problems } = await open(browser, join(dir, "blt.html"));
  await page.waitForLoadState("load");
  const detail = page.locator("#detail");
  await page.click("#part-patcher");
  await detail.waitFor({ state: "visible" });
  const threshold = String(cfg.patching_threshold).slice(0, 5);
  assert.match(await detail.textContent(), new RegExp(`whose entropy exceeds ${threshold.replace(".", "\\.")}`));
  await page.click("#part-local-encoder");
  const enc = cfg.encoder_config;
  const hashed = cfg.encoder_hash_byte_group_size.length * cfg.encoder_hash_byte_group_nb_functions;
  const text = await detail.textContent();
  assert.match(text, new RegExp(`gets ${hashed} more rows added: for each n in ${cfg.encoder_hash_byte_group_size.join(", ")}`));
  assert.match(text, new RegExp(`${enc.num_hidden_layers} layers of width ${enc.hidden_size}`));
  const code = await page.locator("#detail pre.code").textContent();
  assert.match(code, /class LocalEncoder\(Stack\)/);
  assert.match(code, new RegExp(`K = ${cfg.cross_attn_k} `));
  // The latent transformer's edges carry patches, not bytes.
  assert.match(await page.locator("#diagram svg").textContent(), new RegExp(`\\[B, P, ${cfg.global_config.hidden_size}\\]`));
  // The decoder layer's box shows the layer classes the stacks share, not the whole module.
  await page.click("#part-block");
  const layer = await page.locator("#detail pre.code").textContent();
  assert.match(layer, /class DecoderLayer\(nn\.Module\)/);
  assert.doesNotMatch(layer, /class BltModel\(/);
  assert.deepEqual(problems, []);
  await page.close();
});

test("dots.3 Note's sliding layers show latent attention of the sizes their config gives", async () => {
  const cfg = JSON.parse(readFileSync(join(root, "crates/core/catalog/dots3-note-prev.json"), "utf8"));
  // The first sliding layer's entry (saved by index, "02"), over the model's sizes.
  const first = cfg.layer_types.indexOf("sliding_attention");
  const key = Object.keys(cfg.per_layer_config).find((k) => Number(k) === first);
  const own = { ...cfg, ...cfg.per_layer_config[key] };
  const { page, problems } = await open(browser, join(dir, "dots3.html"));
  await page.waitForLoadState("load");
  const detail = page.locator("#detail");
  const variants = page.locator("button.variant");
  const labels = await variants.allTextContents();
  // The indexed layers' part says how the sliding layers' attention differs.
  await variants.nth(labels.findIndex((t) => !/sliding/.test(t))).click();
  await page.click("#part-attention");
  await detail.waitFor({ state: "visible" });
  let text = await detail.textContent();
  assert.match(text, new RegExp(`${own.num_attention_heads} query heads sharing ${own.num_key_value_heads} K/V heads`));
  assert.match(text, new RegExp(`latents of ${own.q_lora_rank} \\(query\\) and ${own.kv_lora_rank} \\(keys and values\\)`));
  assert.match(text, /RMS-normed, with a weight of its own, before RoPE/);
  // The sliding layers' variant has a part of its own, describing its own attention.
  const i = labels.findIndex((t) => /sliding/.test(t));
  assert.ok(i >= 0, "a variant of the sliding layers");
  await variants.nth(i).click();
  assert.equal(await page.locator("#part-attention").isVisible(), false);
  await page.click("#part-attention-2");
  text = await detail.textContent();
  assert.match(text, new RegExp(`${own.num_attention_heads} heads read keys and values from a ${own.kv_lora_rank}-dim latent`));
  assert.match(text, new RegExp(`a ${own.q_lora_rank}-dim query latent`));
  const code = await page.locator("#detail pre.code").textContent();
  assert.match(code, new RegExp(`class Attention1\\(nn\\.Module\\)[\\s\\S]*nn\\.Linear\\(${cfg.hidden_size}, ${own.q_lora_rank}, bias=False\\)`));
  assert.match(code, /self\.k_rope_only_layernorm\(k_pe\)/);
  assert.equal(new Set(await page.locator("[id]").evaluateAll((es) => es.map((e) => e.id))).size,
    await page.locator("[id]").count(), "every id is unique");
  assert.deepEqual(problems, []);
  await page.close();
});

test("MiniMax-M3's sparse layers draw the lightning indexer with the sizes their config gives", async () => {
  const cfg = JSON.parse(readFileSync(join(root, "crates/exec/tests/fixtures/minimax-m3/config.json"), "utf8"));
  const { page, problems } = await open(browser, join(dir, "m3.html"));
  await page.waitForLoadState("load");
  const variants = page.locator("button.variant");
  const texts = await variants.allTextContents();
  const sparse = cfg.layer_types.map((t, i) => [t, i]).filter(([t]) => t === "minimax_m3_sparse").map(([, i]) => i);
  const i = texts.findIndex((t) => t.includes(`layers ${sparse[0]}`));
  assert.ok(i >= 0, `a variant of the sparse layers among ${JSON.stringify(texts)}`);
  await variants.nth(i).click();
  await page.locator('[data-part^="attention"]:visible').click();
  const detail = page.locator("#detail");
  await detail.waitFor({ state: "visible" });
  const text = await detail.textContent();
  const keys = cfg.index_topk_blocks * cfg.index_block_size;
  assert.match(text, new RegExp(`${cfg.index_n_heads} index heads of ${cfg.index_head_dim} dims`));
  assert.match(text, new RegExp(`blocks of ${cfg.index_block_size} keys`));
  assert.match(text, new RegExp(`${cfg.index_topk_blocks} blocks in all`));
  assert.match(text, new RegExp(`at most ${keys} keys`));
  const code = await page.locator("#detail pre.code").textContent();
  assert.match(code, /class BlockIndexer\(nn\.Module\)/);
  assert.match(code, new RegExp(`\\.repeat_interleave\\(${cfg.num_attention_heads / cfg.index_n_heads}, dim=1\\)`));
  assert.deepEqual(problems, []);
  await page.close();
});

test("Dory's page explains its looped layers and its moves on the sphere with its config's counts", async () => {
  const cfg = JSON.parse(readFileSync(join(root, "crates/exec/tests/fixtures/dory/config.json"), "utf8"));
  // The released form counts blocks, an attention and an MLP each.
  const [layers, input, output] = [cfg.num_hidden_layers / 2, cfg.n_input_layers / 2, cfg.n_output_layers / 2];
  const looped = layers - input - output;
  const loops = cfg.n_recurrent_loops;
  const { page, problems } = await open(browser, join(dir, "dory.html"));
  await page.waitForLoadState("load");
  const detail = page.locator("#detail");
  await page.click("#part-loop");
  await detail.waitFor({ state: "visible" });
  let text = await detail.textContent();
  assert.match(text, new RegExp(`runs ${loops} times in a row: a token runs ${input + loops * looped + output} layers, from ${layers} stored`));
  assert.match(text, /each pass caches keys and values of its own/);
  assert.match(await page.locator("#detail pre.code").textContent(), new RegExp(`for _ in range\\(${loops}\\):`));
  await page.click("#part-residual-1");
  text = await detail.textContent();
  assert.match(text, /towards the sublayer's normed output/);
  const rate = (cfg.ngpt_alpha_init ?? 0.05) / (cfg.initializer_range ?? 0.0177);
  assert.match(text, new RegExp(`r = \\|λ · ≈?${rate.toPrecision(4)}\\|`));
  assert.deepEqual(problems, []);
  await page.close();
});

test("ZAYA's page explains its convolutional attention and router with the sizes its config gives", async () => {
  const cfg = JSON.parse(readFileSync(join(root, "crates/exec/tests/fixtures/zaya/config.json"), "utf8"));
  const { page, problems } = await open(browser, join(dir, "zaya.html"));
  await page.waitForLoadState("load");
  const detail = page.locator("#detail");
  await page.locator('[data-part^="attention"]').first().click();
  await detail.waitFor({ state: "visible" });
  let text = await detail.textContent();
  const { num_attention_heads: h, num_key_value_heads: kv, head_dim: hd } = cfg;
  assert.match(text, new RegExp(`over their ${(h + kv) * hd} channels together: ${cfg.cca_time0} taps per channel, then ${cfg.cca_time1} taps`));
  assert.match(text, new RegExp(`scaled to length √${hd}`));
  assert.match(await page.locator("#detail pre.code").textContent(), /p\.conv_qk_grouped = nn\.Conv1d\(/);
  await page.click("#part-ffn-moe");
  text = await detail.textContent();
  assert.match(text, new RegExp(`projected to ${cfg.router_hidden_size} features`));
  assert.match(text, new RegExp(`logits over the ${cfg.num_experts} experts and one class that computes nothing`));
  assert.match(await page.locator("#detail pre.code").textContent(), /class RouterMLP\(nn\.Module\)/);
  assert.deepEqual(problems, []);
  await page.close();
});


test("DeepSeek-V4's page explains its compressed attention, Sinkhorn streams and token-id routing with its config's numbers", async () => {
  const cfg = JSON.parse(readFileSync(join(root, "crates/exec/tests/fixtures/deepseek-v4/config.json"), "utf8"));
  const { page, problems } = await open(browser, join(dir, "dsv4.html"));
  await page.waitForLoadState("load");
  const detail = page.locator("#detail");
  await page.locator('[data-part^="attention"]').first().click();
  await detail.waitFor({ state: "visible" });
  const text = await detail.textContent();
  const layersOf = (kind) => cfg.layer_types.map((t, i) => [t, i]).filter(([t]) => t === kind).map(([, i]) => i).join(", ");
  const csa = cfg.compress_rates.compressed_sparse_attention;
  const hca = cfg.compress_rates.heavily_compressed_attention;
  assert.match(text, new RegExp(`one ${cfg.head_dim}-dim head, RMS-normed, is both the key and the value`));
  assert.match(text, new RegExp(`Compressed sparse attention \\(layers ${layersOf("compressed_sparse_attention")}\\): a compressor pools every window of ${csa} tokens`));
  assert.match(text, new RegExp(`its top ${cfg.index_topk} entries`));
  assert.match(text, new RegExp(`Heavily compressed attention \\(layers ${layersOf("heavily_compressed_attention")}\\): the same pooling over windows of ${hca} tokens`));
  assert.match(text, new RegExp(`by ${cfg.hc_sinkhorn_iters} Sinkhorn iterations`));
  const code = await page.locator("#detail pre.code").textContent();
  assert.match(code, /class Compressor\(nn\.Module\)/);
  assert.match(code, new RegExp(`O_GROUPS, O_RANK, WINDOW, EPS = ${cfg.o_groups}, ${cfg.o_lora_rank}, ${cfg.sliding_window},`));
  await page.click("#part-ffn-moe");
  const hashed = cfg.mlp_layer_types.map((t, i) => [t, i]).filter(([t]) => t === "hash_moe").map(([, i]) => i).join(", ");
  assert.match(await detail.textContent(), new RegExp(`in layers ${hashed} a stored table picks the top-k by token id`));
  assert.match(await page.locator("#detail pre.code").textContent(), /self\.gate\.tid2eid\[ids\.reshape\(-1\)\]/);
  assert.deepEqual(problems, []);
  await page.close();
});

test("a Gemma 4 assistant's page says it drafts from its target's state, with its config's numbers", async () => {
  const cfg = JSON.parse(readFileSync(join(root, "crates/exec/tests/fixtures/draft/gemma4-assistant/assistant/config.json"), "utf8"));
  const { page, problems } = await open(browser, join(dir, "assistant.html"));
  await page.waitForLoadState("load");
  assert.match(await page.locator("body").textContent(), new RegExp(`draft model for speculative decoding: it reads its target's state \\(${cfg.backbone_hidden_size} features\\)`));
  assert.match(await accessibleName(page.locator("#part-embedding")), /^Target state /);
  assert.match(await page.locator("#part-embedding desc").textContent(),
    new RegExp(`^Projects its target's embedding of the last token and a hidden state, ${2 * cfg.backbone_hidden_size} features, to ${cfg.text_config.hidden_size}\\.`));
  const detail = page.locator("#detail");
  await page.click("#part-embedding");
  await detail.waitFor({ state: "visible" });
  const text = await detail.textContent();
  assert.match(text, new RegExp(`beside a hidden state of ${cfg.backbone_hidden_size} features`));
  const perCluster = cfg.text_config.vocab_size / cfg.num_centroids;
  assert.match(text, new RegExp(`${cfg.num_centroids} centroids score the final state, and only the ${cfg.centroid_intermediate_top_k * perCluster} tokens of the ${cfg.centroid_intermediate_top_k} best clusters`));
  await page.locator('[data-part^="attention"]:visible').first().click();
  assert.match(await detail.textContent(), /attend over the keys and values their target's last layer of their kind cached/);
  assert.deepEqual(problems, []);
  await page.close();
});


test("Qwen4-Exp's page explains its QSA indexer, gated residual streams and n-gram embeddings with its config's numbers", async () => {
  const cfg = JSON.parse(readFileSync(join(root, "crates/exec/tests/fixtures/qwen4-exp-ple/config.json"), "utf8"));
  const { page, problems } = await open(browser, join(dir, "qwen4.html"));
  await page.waitForLoadState("load");
  const variants = page.locator("button.variant");
  const texts = await variants.allTextContents();
  const indexed = cfg.layer_types.map((t, i) => [t, i]).filter(([t]) => t === "indexed_attention").map(([, i]) => i);
  const i = texts.findIndex((t) => t.includes(`layers ${indexed.join(", ")}`));
  assert.ok(i >= 0, `a variant of the indexed layers among ${JSON.stringify(texts)}`);
  await variants.nth(i).click();
  await page.locator(".part:visible", { has: page.locator("text.title", { hasText: /^Full attention/ }) }).first().click();
  const detail = page.locator("#detail");
  await detail.waitFor({ state: "visible" });
  const text = await detail.textContent();
  const r = cfg.indexer_compress_ratio;
  assert.match(text, new RegExp(`gives ${cfg.indexer_n_heads} index queries of ${cfg.indexer_head_dim} dims`));
  assert.match(text, new RegExp(`complete block of ${r} visible tokens`));
  assert.match(text, new RegExp(`keeps its ${cfg.indexer_budget / r} best blocks \\(${cfg.indexer_budget} tokens\\)`));
  assert.match(text, new RegExp(`at most ${cfg.indexer_budget + r - 1} keys a query`));
  const n = cfg.hc_count;
  assert.match(text, new RegExp(`the residual stream is ${n} streams of ${cfg.hidden_size} values per token \\(${n * cfg.hidden_size} in all\\)`));
  assert.match(text, new RegExp(`a rank-${cfg.hc_lowrank} bottleneck`));
  assert.match(await page.locator("#detail pre.code").textContent(), /class QsaIndexer\(nn\.Module\)/);
  // The stream's mix before each sublayer, and the writes back by each stream's weight.
  await page.click("#part-norm-1");
  assert.match(await detail.textContent(), new RegExp(`normalizes each of the ${n} residual streams.*through rank ${cfg.hc_lowrank}`));
  await page.click("#part-residual-1");
  assert.match(await detail.textContent(), new RegExp(`to each of the ${n} residual streams, by that stream's weight`));
  await page.click("#part-final-norm");
  assert.match(await detail.textContent(), /no final norm follows it/);
  await page.click("#part-block");
  const code = await page.locator("#detail pre.code").textContent();
  assert.match(code, /class GatedMix\(nn\.Module\)/);
  assert.match(code, new RegExp(`N = ${n}  # residual streams`));
  // The hashed n-gram embeddings, in the layers the config lists (one-indexed there).
  const ple = cfg.ple_layer_ids.map((i) => i - 1);
  await page.click("button.variant >> nth=1");
  await page.locator("#part-per-layer:visible").click();
  const heads = (cfg.ngram_size - 1) * cfg.heads_per_ngram;
  const pleText = await detail.textContent();
  assert.match(pleText, new RegExp(`In layers ${ple.join(", ")}, each token's n-grams read ${heads} rows`));
  assert.match(pleText, new RegExp(`past an end of sequence, id ${cfg.eos_token_id}`));
  assert.match(pleText, new RegExp(`${cfg.ple_conv_kernel_size} taps ${cfg.ngram_size} positions apart`));
  const pleCode = await page.locator("#detail pre.code").textContent();
  assert.match(pleCode, /class NgramTable\(nn\.Module\)/);
  assert.match(pleCode, new RegExp(`NGRAM, EOS, KERNEL = ${cfg.ngram_size}, ${cfg.eos_token_id}, ${cfg.ple_conv_kernel_size}`));
  assert.deepEqual(problems, []);
  await page.close();
});
