// The scan of generated pages: each layer variant of a model page drawn cleanly (no two boxes it
// shows overlap, no text leaves its box, no two variants draw the same), nothing wider than the
// screen, no console error, and no serious or critical axe-core violation. scan.test.mjs runs it
// on the catalog's gallery; `node scan_pages.mjs DIR` on any folder of pages (held-out configs).
import { readFileSync } from "node:fs";

const AXE = readFileSync(new URL("./node_modules/axe-core/axe.min.js", import.meta.url), "utf8");
export const SCREENS = [["laptop", 1440, 900], ["phone", 390, 844]];
export const SCHEMES = ["light", "dark"];

// What the diagram shows now: each visible box with its visible text, the boxes that overlap,
// the text that leaves its box. Runs in the page.
function drawn() {
  const shown = (g) => {
    let out = "";
    const walk = document.createTreeWalker(g, NodeFilter.SHOW_TEXT);
    for (let n = walk.nextNode(); n; n = walk.nextNode()) {
      const e = n.parentElement;
      if (!e.closest("desc") && getComputedStyle(e).display !== "none") out += n.textContent;
    }
    return out;
  };
  const parts = [...document.querySelectorAll("#diagram svg .part:not(.frame)")].filter((g) => g.getClientRects().length);
  const boxes = parts.map((g) => ({ id: g.id, r: g.querySelector("rect").getBoundingClientRect() }));
  const overlaps = [];
  for (let i = 0; i < boxes.length; i++) {
    for (let j = i + 1; j < boxes.length; j++) {
      const [a, b] = [boxes[i].r, boxes[j].r];
      if (a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1 && b.top < a.bottom - 1) {
        overlaps.push(`${boxes[i].id} on ${boxes[j].id}`);
      }
    }
  }
  const spills = [];
  for (const g of parts) {
    const box = g.querySelector("rect").getBBox();
    for (const t of g.querySelectorAll("text")) {
      if (!shown(t).trim()) continue;
      const b = t.getBBox();
      if (b.x < box.x - 0.5 || b.x + b.width > box.x + box.width + 0.5) spills.push(`${g.id}: "${shown(t)}"`);
    }
  }
  return { signature: parts.map((g) => `${g.id}:${shown(g)}`).join("|"), overlaps, spills };
}

async function axe(page) {
  if (!(await page.evaluate(() => typeof window.axe !== "undefined"))) await page.evaluate(AXE);
  return page.evaluate(async () => {
    const r = await window.axe.run(document, { resultTypes: ["violations"] });
    return r.violations.filter((v) => v.impact === "serious" || v.impact === "critical")
      .map((v) => `${v.id} (${v.impact}): ${v.nodes.slice(0, 3).map((n) => n.target.join(" ")).join("; ")}`);
  });
}

/// Scan `files` (paths of pages; model pages have a diagram, others are checked for width, axe
/// and errors only) at one screen size and colour scheme; what is wrong, one line each.
export async function scan(browser, files, [width, height], scheme) {
  const context = await browser.newContext({ viewport: { width, height }, colorScheme: scheme });
  const page = await context.newPage();
  let errors = [];
  page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
  page.on("pageerror", (e) => errors.push(String(e)));
  const found = [];
  for (const file of files) {
    errors = [];
    const name = file.split("/").pop();
    await page.goto("file://" + file);
    if (await page.locator("#diagram svg").count()) {
      const buttons = page.locator("button.variant");
      const n = await buttons.count();
      const seen = [];
      for (let v = 0; v < Math.max(1, n); v++) {
        if (n) await buttons.nth(v).click();
        const d = await page.evaluate(drawn);
        const at = `${name} variant ${v}`;
        for (const o of d.overlaps) found.push(`${at}: ${o}`);
        for (const s of d.spills) found.push(`${at}: text leaves ${s}`);
        const same = seen.indexOf(d.signature);
        if (same >= 0) found.push(`${at} draws as variant ${same} does`);
        seen.push(d.signature);
      }
    }
    const wide = await page.evaluate(() => document.documentElement.scrollWidth);
    if (wide > width) found.push(`${name}: the page is ${wide} px wide`);
    for (const v of await axe(page)) found.push(`${name}: ${v}`);
    for (const e of errors) found.push(`${name}: console: ${e}`);
  }
  await context.close();
  return found;
}
