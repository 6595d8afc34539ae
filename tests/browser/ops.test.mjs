// The op-level view: opened from the block view, every op shows its NumPy function, folded lanes
// open, and values from a run of the executor are there.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { anatomy, launch, open, root, tempDir } from "./helpers.mjs";

let browser, dir;
before(async () => {
  dir = tempDir();
  anatomy("html", "deepseek-v3", "-o", join(dir, "deepseek.html"));
  const pair = join(root, "crates/exec/tests/fixtures/draft/gemma4-assistant");
  anatomy("html", join(pair, "assistant"), "--target", join(pair, "target"), "-o", join(dir, "assistant.html"));
  browser = await launch();
});
after(async () => { await browser?.close(); });

test("the op view opens from the block view and shows code, lanes and values", async () => {
  const { page, problems } = await open(browser, join(dir, "deepseek.html"));
  assert.equal(await page.locator("#ops").isHidden(), true);
  // From the block: the decoder layer's detail offers the op view.
  await page.click("#part-block");
  await page.click("#open-ops");
  assert.equal(await page.locator("#ops").isVisible(), true);
  assert.equal(await page.locator("#diagram").isHidden(), true);
  assert.match(new URL(page.url()).hash, /ops=1/);

  // Values from a run: token ids, a router table with zeros for unchosen experts, activation stats.
  const values = await page.locator("#ops .values").textContent();
  assert.match(values, /scaled-down copy on random weights/);
  assert.deepEqual(await page.locator("#ops .tokens .token b").allTextContents(), ["1", "7", "3", "12", "5", "9"]);
  assert.match(values, /Router weights in layer 1/);
  const zeros = await page.locator("#ops .values-table td.zero").count();
  assert.ok(zeros > 0, "unchosen experts are zeros");
  assert.ok(await page.locator("#ops .op .stats").count() > 10, "stats beside the ops");

  // A node shows its NumPy function.
  const router = page.locator('#ops .op[aria-label^="26 Top-8 expert selection"]').first();
  await router.click();
  const code = await page.locator("#detail pre.code").textContent();
  assert.match(code, /def route\(logits, correction\):/);
  assert.match(code, /"experts": 256/);
  // The constants it reads, not the whole CONFIG: the router never reads the vocabulary size.
  assert.doesNotMatch(code, /"vocab":/);
  assert.match(new URL(page.url()).hash, /op=26/);

  // Lanes beyond three fold into a count that opens.
  const fold = page.locator("#ops details.fold", { hasText: "253 more experts" }).first();
  assert.equal(await fold.getAttribute("open"), null);
  await fold.locator("summary").click();
  assert.equal(await fold.getAttribute("open"), "");
  assert.match(await fold.textContent(), /e=255/);
  assert.deepEqual(problems, []);
  await page.close();
});

test("each head lane shows its own head's values", async () => {
  // Llama 3.1 8B's scaled-down copy: 4 query heads in 2 groups of K/V heads, random weights, so
  // no two heads compute the same thing.
  anatomy("html", "llama-3.1-8b", "-o", join(dir, "llama.html"));
  const { page, problems } = await open(browser, join(dir, "llama.html"));
  await page.click("#to-ops");
  // The stats of every drawn lane of the op titled `title` (lanes of heads the scaled-down copy
  // does not have show none).
  const stats = async (title) =>
    (await page.locator(`#ops .op[aria-label*=" ${title} GQA"] .stats`).allTextContents());
  const q = await stats("Q projection");
  assert.equal(q.length, 4, `a Q projection with values per head the copy has, 2 groups × 2 heads: ${q}`);
  assert.equal(new Set(q).size, 4, `each query head has its own values: ${q}`);
  const k = await stats("K projection");
  assert.equal(k.length, 2);
  assert.notEqual(k[0], k[1], "each K/V head has its own values");
  const probs = await stats("Causal softmax");
  assert.equal(new Set(probs).size, probs.length, `attention weights differ by head: ${probs}`);
  assert.deepEqual(problems, []);
  await page.close();
});

test("a draft model's op view shows one draft step's values, after its target read the prompt", async () => {
  const { page, problems } = await open(browser, join(dir, "assistant.html"));
  await page.click("#part-block");
  await page.click("#open-ops");
  const values = await page.locator("#ops .values").textContent();
  assert.match(values, /Values from one draft step of assistant on its own weights, after .*target read the prompt/);
  // The step runs at the prompt's last token (the target has no tokenizer: the sample ids 1 7 3 12 5 9).
  assert.deepEqual(await page.locator("#ops .tokens .token b").allTextContents(), ["9"]);
  for (const op of ["Target state", "Projection in", "Centroid scores", "Projection out", "Language-model head"]) {
    const node = page.locator(`#ops .op[aria-label*="${op}"]`).first();
    assert.ok(await node.locator(".stats").count() > 0, `${op} has values`);
  }
  assert.deepEqual(problems, []);
  await page.close();
});
