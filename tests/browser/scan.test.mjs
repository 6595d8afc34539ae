// Every page of the gallery, every layer variant, on a laptop and a phone, light and dark: the
// scan of scan.mjs finds nothing.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { anatomy, launch, tempDir } from "./helpers.mjs";
import { scan, SCHEMES, SCREENS } from "./scan.mjs";

let browser, files;
before(async () => {
  const dir = tempDir();
  anatomy("site", "-o", dir);
  const names = anatomy("list").trim().split("\n").slice(1).map((line) => line.split(/\s+/)[0]);
  files = [...names, "index", "compare"].map((n) => join(dir, `${n}.html`));
  // Two models with long names and many differing facts, on the gallery's compare page and on
  // the page `html --compare` writes.
  files.push(join(dir, "compare.html#a=deepseek-v3&b=qwen3-next-80b-a3b&part=attention"));
  anatomy("html", "deepseek-v3", "--compare", "qwen3-next-80b-a3b", "-o", join(dir, "pair.html"));
  files.push(join(dir, "pair.html#a=deepseek-v3&b=qwen3-next-80b-a3b&part=attention"));
  browser = await launch();
});
after(async () => { await browser?.close(); });

for (const [screen, width, height] of SCREENS) {
  for (const scheme of SCHEMES) {
    test(`every catalog page and layer variant draws cleanly, ${screen} ${width}×${height}, ${scheme}`, async () => {
      assert.deepEqual(await scan(browser, files, [width, height], scheme), []);
    });
  }
}
