// `anatomy html A --compare B` in headless Chromium: both diagrams render, the parts that
// differ are outlined and the others not, a click opens the part of both models, and the URL
// keeps both models and the selection.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { anatomy, launch, open, tempDir } from "./helpers.mjs";

let browser, file;
before(async () => {
  file = join(tempDir(), "compare.html");
  anatomy("html", "mistral-7b-v0.1", "--compare", "mixtral-8x7b-v0.1", "-o", file);
  browser = await launch();
});
after(async () => { await browser?.close(); });

test("the compare page draws both models and outlines what differs", async () => {
  const { page, problems } = await open(browser, file);
  assert.ok(await page.locator("#side-a svg .part").count() >= 6);
  assert.ok(await page.locator("#side-b svg .part").count() >= 6);
  assert.match(await page.locator(".summary").textContent(), /mixture of experts added \(experts 8, active experts 2/);
  // Mistral's dense FFN is Mixtral's MoE: both outlined. The norms are the same: not outlined.
  assert.equal(await page.locator("#a-part-ffn-mlp").getAttribute("class").then((c) => c.includes("differs")), true);
  assert.equal(await page.locator("#b-part-ffn-moe").getAttribute("class").then((c) => c.includes("differs")), true);
  assert.equal(await page.locator("#a-part-norm-1").getAttribute("class").then((c) => c.includes("differs")), false);
  assert.equal(await page.locator("#b-part-norm-1").getAttribute("class").then((c) => c.includes("differs")), false);
  assert.deepEqual(problems, []);
  await page.close();
});

test("a click opens the part of both models; the URL keeps the models and the part", async () => {
  const { page, problems } = await open(browser, file);
  await page.click("#b-part-attention");
  const detail = page.locator("#detail");
  await detail.waitFor({ state: "visible" });
  const text = await detail.textContent();
  assert.match(text, /mistral-7b-v0\.1.*mixtral-8x7b-v0\.1/s);
  // Mistral's sliding window against Mixtral's full attention: the scores' equation differs.
  assert.ok(await detail.locator("tr.differs").count() > 0);
  assert.equal(await page.locator("#a-part-attention.selected").count(), 1);
  assert.equal(await page.locator("#b-part-attention.selected").count(), 1);
  const hash = new URL(page.url()).hash;
  assert.equal(hash, "#a=mistral-7b-v0.1&b=mixtral-8x7b-v0.1&part=attention");
  // A part one model lacks says so on that side.
  await page.click("#b-part-ffn-moe");
  assert.match(await detail.textContent(), /Not in mistral-7b-v0\.1\./);
  await page.goBack();
  assert.match(new URL(page.url()).hash, /part=attention/);
  await page.keyboard.press("Escape");
  assert.equal(await detail.isHidden(), true);
  // Opened from the URL, the selection comes back.
  const again = await open(browser, file, hash);
  await again.page.locator("#detail").waitFor({ state: "visible" });
  assert.equal(await again.page.locator("#a-part-attention.selected").count(), 1);
  assert.deepEqual([...problems, ...again.problems], []);
  await page.close();
  await again.page.close();
});

test("matching parts sit level even where one model has parts the other lacks", async () => {
  // Gemma 2 adds a post-attention and a post-MLP norm to Llama's layer: Llama's column waits.
  const f = join(tempDir(), "llama-gemma.html");
  anatomy("html", "llama-3.2-3b", "--compare", "gemma-2-9b", "-o", f);
  const { page, problems } = await open(browser, f);
  // The same place in each drawing, and the drawings start level on the page.
  const y = (side, id) => page.locator(`#${side}-part-${id} rect`).first().getAttribute("y");
  for (const id of ["embedding", "attention", "ffn-mlp", "final-norm", "lm-head"]) {
    assert.equal(await y("a", id), await y("b", id), id);
  }
  const start = async (side) => (await page.locator(`#side-${side} svg`).boundingBox()).y;
  assert.ok(Math.abs((await start("a")) - (await start("b"))) < 1);
  assert.match(await page.locator("#b-part-norm-2").getAttribute("class"), /differs/, "Gemma's post-attention norm has no counterpart");
  assert.deepEqual(problems, []);
  await page.close();
});
