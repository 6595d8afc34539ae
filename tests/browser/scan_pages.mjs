// `node scan_pages.mjs DIR`: the scan of scan.test.mjs over every page in DIR (pages made from
// held-out configs, say), at each screen size and colour scheme; prints what is wrong and exits
// non-zero if anything is.
import { readdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { launch } from "./helpers.mjs";
import { scan, SCHEMES, SCREENS } from "./scan.mjs";

const dir = resolve(process.argv[2] || ".");
const files = readdirSync(dir).filter((f) => f.endsWith(".html")).sort().map((f) => join(dir, f));
const browser = await launch();
let bad = 0;
for (const [screen, width, height] of SCREENS) {
  for (const scheme of SCHEMES) {
    const found = await scan(browser, files, [width, height], scheme);
    for (const f of found) console.log(`${screen} ${scheme}: ${f}`);
    bad += found.length;
  }
}
await browser.close();
console.log(`${files.length} pages, ${SCREENS.length * SCHEMES.length} screens: ${bad} problems`);
process.exit(bad ? 1 : 0);
