// The gallery: an index of the catalog that sorts and links every model's page.
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { anatomy, launch, open, tempDir } from "./helpers.mjs";

test("the index lists, sorts and links the catalog", async () => {
  const dir = tempDir();
  anatomy("site", "-o", dir);
  const browser = await launch();
  try {
    const { page, problems } = await open(browser, join(dir, "index.html"));
    const rows = page.locator("tbody tr");
    const n = await rows.count();
    assert.ok(n >= 20, `${n} rows`);
    assert.equal(await page.locator("tbody svg").count(), n, "a mini diagram per model");
    await page.click("th:nth-child(4)"); // params, ascending
    assert.equal(await rows.first().locator("td:nth-child(2)").textContent(), "gpt-2");
    await page.click("th:nth-child(4)"); // descending
    assert.equal(await rows.first().locator("td:nth-child(2)").textContent(), "deepseek-v3");
    await rows.first().locator("a").click();
    await page.waitForURL(/deepseek-v3\.html$/);
    assert.equal(await page.locator("h1").textContent(), "deepseek-v3");
    assert.deepEqual(problems, []);
  } finally {
    await browser.close();
  }
});
