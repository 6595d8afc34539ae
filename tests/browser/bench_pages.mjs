// Benchmark: per catalog model, the page's size and its time to first render in headless
// Chromium (first contentful paint, median of 5 fresh loads), of the block view and of the
// op-level view (opened from the URL). Targets from the web-explorer
// issue: DeepSeek-V3's page under 1 MB and first render under 300 ms.
//
// Usage: cargo build --release && node tests/browser/bench_pages.mjs
import { statSync, readdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { execFileSync } from "node:child_process";
import { launch, tempDir } from "./helpers.mjs";

const bin = process.env.ANATOMY_BIN || resolve(import.meta.dirname, "../../target/release/anatomy");
const dir = tempDir();
execFileSync(bin, ["site", "-o", dir]);
const browser = await launch();
const rows = [];
for (const f of readdirSync(dir).filter((f) => f.endsWith(".html")).sort()) {
  const fcp = async (hash) => {
    const times = [];
    for (let i = 0; i < 5; i++) {
      const page = await browser.newPage();
      await page.goto("file://" + join(dir, f) + hash);
      const fcp = await page.evaluate(() => new Promise((done) => {
      const read = () => performance.getEntriesByName("first-contentful-paint")[0];
      const e = read();
      if (e) return done(e.startTime);
      new PerformanceObserver(() => { const e = read(); if (e) done(e.startTime); }).observe({ type: "paint", buffered: true });
    }));
      times.push(fcp);
      await page.close();
    }
    times.sort((a, b) => a - b);
    return times[2];
  };
  const isModel = f !== "index.html";
  rows.push({ page: f, kb: statSync(join(dir, f)).size / 1024, ms: await fcp(""), ops: isModel ? await fcp("#ops=1") : NaN });
}
await browser.close();
console.log("page                              size KB   first render ms   op view ms");
for (const r of rows) console.log(`${r.page.padEnd(32)} ${r.kb.toFixed(1).padStart(8)} ${r.ms.toFixed(1).padStart(12)} ${r.ops.toFixed(1).padStart(12)}`);
const ds = rows.find((r) => r.page === "deepseek-v3.html");
console.log(`\nDeepSeek-V3: ${ds.kb.toFixed(1)} KB (target < 1024); first render ${ds.ms.toFixed(1)} ms, op view ${ds.ops.toFixed(1)} ms (target < 300)`);
