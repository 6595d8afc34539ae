// The gallery: an index of the catalog that sorts, filters and links every model's page, with
// each model's real layer pattern, and a compare page for any two of its models.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { anatomy, launch, open, tempDir } from "./helpers.mjs";

let browser, dir;
before(async () => {
  dir = tempDir();
  anatomy("site", "-o", dir);
  browser = await launch();
});
after(async () => { await browser?.close(); });

// The catalog's models with their exact totals, from the CLI rather than from the page.
function catalogTotals() {
  return anatomy("list").trim().split("\n").slice(1).map((line) => line.split(/\s+/)[0])
    .map((name) => ({ name, total: JSON.parse(anatomy("stats", name, "--json")).total_params }));
}

test("the index lists, sorts and links the catalog", async () => {
  const { page, problems } = await open(browser, join(dir, "index.html"));
  const rows = page.locator("tbody tr");
  const n = await rows.count();
  const catalog = catalogTotals();
  assert.equal(n, catalog.length, "a row per catalog model");
  assert.equal(await page.locator("tbody svg").count(), n, "a mini diagram per model");
  const by = [...catalog].sort((a, b) => a.total - b.total);
  await page.click("th:nth-child(4)"); // params, ascending
  assert.equal(await rows.first().locator("td:nth-child(2)").textContent(), by[0].name);
  await page.click("th:nth-child(4)"); // descending
  const largest = by[by.length - 1].name;
  assert.equal(await rows.first().locator("td:nth-child(2)").textContent(), largest);
  await rows.first().locator("a").click();
  await page.waitForURL(new RegExp(`${largest.replace(/\./g, "\\.")}\\.html$`));
  assert.equal(await page.locator("h1").textContent(), largest);
  // Each page links back to the gallery and to its config's source on the Hub.
  assert.match(await page.locator(".provenance a").getAttribute("href"), /^https:\/\/huggingface\.co\/[\w.-]+\/[\w.-]+$/);
  await page.click("nav a");
  await page.waitForURL(/index\.html$/);
  assert.equal(await page.locator("tbody tr").count(), n);
  assert.deepEqual(problems, []);
  await page.close();
});

test("mini diagrams show each model's layer pattern; filters narrow the list", async () => {
  const { page, problems } = await open(browser, join(dir, "index.html"));
  const strip = (name) => page.locator("tbody tr", { has: page.locator(`a:text-is("${name}")`) }).locator("svg.strip");
  // One column per layer: DeepSeek-V3's 3 dense layers then 58 MoE, all latent attention.
  assert.equal(await strip("deepseek-v3").locator("rect.t-dense").count(), 3);
  assert.equal(await strip("deepseek-v3").locator("rect.t-moe").count(), 58);
  assert.equal(await strip("deepseek-v3").locator("rect.t-mla").count(), 61);
  // Gemma 3: five sliding layers to each global one; SmolLM3: every fourth layer without RoPE.
  assert.equal(await strip("gemma-3-27b").locator("rect.t-full").count(), 10);
  assert.equal(await strip("gemma-3-27b").locator("rect.t-sliding").count(), 52);
  assert.equal(await strip("smollm3-3b").locator("circle.t-nope").count(), 9);
  assert.equal(await strip("llama-3.1-8b").locator("rect.t-full").count(), 32);
  // Filters: MoE models only, then only those with latent attention.
  const visible = () => page.locator("tbody tr:not([hidden])");
  const all = await visible().count();
  await page.selectOption('select[name="ffn"]', "MoE");
  const moe = await visible().count();
  assert.ok(moe > 3 && moe < all, `${moe} of ${all}`);
  for (const r of await visible().all()) assert.equal(await r.getAttribute("data-ffn"), "MoE");
  // Latent attention: exactly the MoE models whose mini diagram draws MLA layers.
  const latent = [];
  for (const r of await visible().all()) {
    if (await r.locator("svg.strip rect.t-mla").count() > 0) latent.push(await r.locator("td:nth-child(2)").textContent());
  }
  assert.ok(latent.includes("deepseek-v3"), latent.join(", "));
  await page.selectOption('select[name="attention"]', "MLA");
  assert.deepEqual(await visible().locator("td:nth-child(2)").allTextContents(), latent);
  assert.equal(await page.locator("#shown").textContent(), `${latent.length} shown`);
  await page.selectOption('select[name="attention"]', "");
  await page.selectOption('select[name="ffn"]', "");
  await page.selectOption('select[name="size"]', "under 1B");
  for (const r of await visible().all()) assert.equal(await r.getAttribute("data-size"), "under 1B");
  await page.selectOption('select[name="size"]', "");
  // Mixers: recurrent models name no attention kind; hybrids draw both kinds of layer.
  await page.selectOption('select[name="mixers"]', "recurrent");
  const recurrent = await visible().locator("td:nth-child(2)").allTextContents();
  assert.ok(recurrent.includes("mamba-codestral-7b") && recurrent.includes("xlstm-7b"), recurrent.join(", "));
  for (const r of await visible().all()) assert.equal(await r.locator("td:nth-child(8)").textContent(), "none");
  await page.selectOption('select[name="mixers"]', "hybrid");
  const hybrid = await visible().locator("td:nth-child(2)").allTextContents();
  assert.ok(hybrid.includes("jamba-v0.1") && hybrid.includes("qwen3-next-80b-a3b"), hybrid.join(", "));
  for (const r of await visible().all()) assert.notEqual(await r.locator("td:nth-child(8)").textContent(), "none");
  await page.selectOption('select[name="mixers"]', "");
  // The filters are kept in the URL: a reload, or the link shared, shows the same list.
  await page.selectOption('select[name="ffn"]', "MoE");
  await page.selectOption('select[name="mixers"]', "hybrid");
  assert.equal(new URL(page.url()).hash, "#mixers=hybrid&ffn=MoE");
  const filtered = await visible().locator("td:nth-child(2)").allTextContents();
  await page.reload();
  assert.equal(await page.locator('select[name="ffn"]').inputValue(), "MoE");
  assert.deepEqual(await visible().locator("td:nth-child(2)").allTextContents(), filtered);
  await page.goto("file://" + join(dir, "index.html#ffn=%3Cb%3E&size=nonsense"));
  assert.equal(await page.locator('select[name="ffn"]').inputValue(), "");
  assert.equal(await visible().count(), all);
  await page.selectOption('select[name="ffn"]', "");
  assert.deepEqual(problems, []);
  await page.close();
});

test("the compare action shows any two models side by side with what differs", async () => {
  const { page, problems } = await open(browser, join(dir, "index.html"));
  await page.selectOption("#cmp-a", "mistral-7b-v0.1");
  await page.selectOption("#cmp-b", "mixtral-8x7b-v0.1");
  await page.click("#cmp-go");
  await page.waitForURL(/compare\.html#a=mistral-7b-v0\.1&b=mixtral-8x7b-v0\.1$/);
  assert.equal(await page.locator("#side-a svg .part").count() > 5, true);
  assert.equal(await page.locator("#side-b svg .part").count() > 5, true);
  const facts = await page.locator("#facts").textContent();
  assert.match(facts, /mixture of experts/);
  assert.match(facts, /RoPE base/);
  assert.match(await page.locator("#verdict").textContent(), /mechanisms and \d+ sizes or settings differ/);
  // The same model twice: nothing differs; the URL follows the choice.
  await page.selectOption("#pick-b", { label: "mistral-7b-v0.1" });
  assert.equal(await page.locator("#facts tr").count(), 0);
  assert.match(await page.locator("#verdict").textContent(), /same architecture with the same sizes/);
  assert.match(new URL(page.url()).hash, /b=mistral-7b-v0\.1/);
  assert.deepEqual(problems, []);
  await page.close();
});

test("the compare page shows two models step by step in the browser, as `html --compare` does", async () => {
  for (const [a, b] of [["mistral-7b-v0.1", "mixtral-8x7b-v0.1"], ["deepseek-v3", "qwen3-next-80b-a3b"]]) {
    const file = join(dir, `${a}-${b}.html`);
    anatomy("html", a, "--compare", b, "-o", file);
    const cli = await open(browser, file);
    const web = await open(browser, join(dir, "compare.html"), `#a=${a}&b=${b}`);
    // The same parts outlined (another mechanism, or none) and dotted (other sizes).
    const marks = (page) => page.$$eval("#side-a .part, #side-b .part", (gs) => gs.map((g) =>
      `${g.closest("section").id} ${g.dataset.part} ${g.classList.contains("differs") ? "differs" : g.classList.contains("resized") ? "resized" : "same"}`));
    const want = await marks(cli.page);
    assert.deepEqual(await marks(web.page), want, `${a} vs ${b}`);
    assert.ok(want.some((m) => m.endsWith("differs")) && want.some((m) => m.endsWith("same")), `${a} vs ${b}: ${want}`);
    // Every part opens with the same steps, statuses and equations on both pages.
    const ids = [...new Set(want.map((m) => m.split(" ")[1]).filter((id) => id !== "block"))];
    for (const id of ids) {
      const text = [];
      for (const page of [cli.page, web.page]) {
        await page.locator(`#side-a .part[data-part="${id}"], #side-b .part[data-part="${id}"]`).first().dispatchEvent("click");
        text.push(await page.locator("#detail").textContent());
      }
      assert.equal(text[1], text[0], `${a} vs ${b}, part ${id}`);
    }
    assert.ok(await web.page.locator("#detail tr.differs").count() > 0);
    // Each side's layer variants, as the CLI's page offers them, switch what its diagram shows.
    for (const side of ["a", "b"]) {
      const labels = async (page) => page.locator(`#side-${side} button.variant`).allTextContents();
      assert.deepEqual(await labels(web.page), await labels(cli.page), `${side}: ${a} vs ${b}`);
      const buttons = web.page.locator(`#side-${side} button.variant`);
      for (let v = 0; v < await buttons.count(); v++) {
        await buttons.nth(v).click();
        await cli.page.locator(`#side-${side} button.variant`).nth(v).click();
        const shown = (page) => page.locator(`#side-${side} .part:visible`).evaluateAll((gs) => gs.map((g) => g.dataset.part));
        assert.deepEqual(await shown(web.page), await shown(cli.page), `${side} variant ${v}: ${a} vs ${b}`);
        assert.equal(await buttons.nth(v).getAttribute("aria-pressed"), "true");
      }
    }
    assert.match(new URL(web.page.url()).hash, new RegExp(`^#a=${a}&b=${b}&part=`));
    // Escape closes the panel; the URL keeps the part it opened, so the part comes back with it.
    const hash = new URL(web.page.url()).hash;
    await web.page.keyboard.press("Escape");
    assert.equal(await web.page.locator("#detail").isHidden(), true);
    const again = await open(browser, join(dir, "compare.html"), hash);
    await again.page.locator("#detail").waitFor({ state: "visible" });
    assert.deepEqual([...cli.problems, ...web.problems, ...again.problems], []);
    for (const p of [cli.page, web.page, again.page]) await p.close();
  }
});
