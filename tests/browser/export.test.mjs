// `anatomy export` in a real browser: the SVG parses as XML and draws the same boxes, at the
// same places, as the page's diagram; the Mermaid flowchart parses and renders with the official
// Mermaid (npm `mermaid`).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { anatomy, launch, open, tempDir } from "./helpers.mjs";

const MODELS = ["llama-3.1-70b", "deepseek-v3", "gemma-3-27b", "gpt-oss-20b", "gpt-2"];
let browser, dir;
before(async () => {
  dir = tempDir();
  browser = await launch();
});
after(async () => { await browser?.close(); });

/// The drawn boxes of an SVG: each visible part's id and rectangle in SVG units.
async function boxes(page, svg) {
  return page.evaluate((sel) => {
    const root = document.querySelector(sel);
    return Array.from(root.querySelectorAll(".part"))
      .filter((g) => g.getClientRects().length > 0 && g.querySelector("rect"))
      .map((g) => {
        const r = g.querySelector("rect");
        return [g.id, +r.getAttribute("x"), +r.getAttribute("y"), +r.getAttribute("width"), +r.getAttribute("height"),
          g.querySelector("text.title")?.textContent ?? ""];
      });
  }, svg);
}

test("the SVG export is the page's drawing: same boxes, same places, no script", async () => {
  for (const model of MODELS) {
    const svgFile = join(dir, `${model}.svg`);
    const htmlFile = join(dir, `${model}.html`);
    anatomy("export", model, "--format", "svg", "-o", svgFile);
    anatomy("html", model, "-o", htmlFile);
    const { page: svgPage, problems } = await open(browser, svgFile);
    // Loaded as image/svg+xml: a parse error would leave no <svg> root.
    assert.equal(await svgPage.evaluate(() => document.documentElement.localName), "svg", model);
    assert.equal(await svgPage.locator("script").count(), 0);
    const fromSvg = await boxes(svgPage, "svg");
    // Styled: a box's fill comes from the inlined stylesheet, not the default black.
    const fill = await svgPage.evaluate(() => getComputedStyle(document.querySelector(".part rect")).fill);
    assert.notEqual(fill, "rgb(0, 0, 0)", model);
    assert.deepEqual(problems, [], model);
    await svgPage.close();
    const { page } = await open(browser, htmlFile);
    const fromPage = await boxes(page, "#diagram svg");
    await page.close();
    assert.ok(fromSvg.length >= 6, `${model}: ${fromSvg.length} boxes`);
    assert.deepEqual(fromSvg, fromPage, model);
  }
});

test("the SVG export draws the largest variant unless --variant names one, under the model's name", async () => {
  for (const [args, moe] of [[[], true], [["--variant", "0"], false], [["--variant", "1"], true]]) {
    const svgFile = join(dir, `deepseek-v3-${args.join("")}.svg`);
    anatomy("export", "deepseek-v3", "--format", "svg", ...args, "-o", svgFile);
    const { page, problems } = await open(browser, svgFile);
    assert.equal(await page.locator("svg > title").textContent(), "deepseek-v3");
    // Its own dark palette, as the page has.
    const fill = () => page.locator("#part-embedding rect").evaluate((r) => getComputedStyle(r).fill);
    const light = await fill();
    await page.emulateMedia({ colorScheme: "dark" });
    assert.notEqual(await fill(), light);
    await page.emulateMedia({ colorScheme: "light" });
    assert.equal(await page.locator("#part-ffn-moe").isVisible(), moe, args.join(" "));
    assert.equal(await page.locator("#part-ffn-mlp").isVisible(), !moe, args.join(" "));
    assert.deepEqual(problems, []);
    await page.close();
  }
});

test("the Mermaid export parses and renders with Mermaid", async () => {
  const blank = join(dir, "blank.html");
  writeFileSync(blank, "<!doctype html><meta charset=utf-8><body></body>");
  const { page, problems } = await open(browser, blank);
  await page.addScriptTag({ path: resolve(import.meta.dirname, "node_modules/mermaid/dist/mermaid.min.js") });
  await page.evaluate(() => window.mermaid.initialize({ startOnLoad: false, securityLevel: "strict" }));
  const check = (t) => page.evaluate(async (t) => {
    try {
      const parsed = await window.mermaid.parse(t);
      const { svg } = await window.mermaid.render("m" + Math.random().toString(36).slice(2), t);
      return { ok: !!parsed, nodes: (svg.match(/class="node /g) || []).length };
    } catch (e) {
      return { ok: false, error: String(e) };
    }
  }, t);
  // The parser does refuse a broken flowchart.
  assert.equal((await check('flowchart TD\n  a["x" --> b\n')).ok, false);
  for (const model of [...MODELS, "mixtral-8x7b-v0.1", "llama-4-scout-17b-16e"]) {
    const text = anatomy("export", model, "--format", "mermaid");
    const result = await check(text);
    assert.equal(result.ok, true, `${model}: ${result.error}\n${text}`);
    assert.ok(result.nodes >= 6, `${model}: ${result.nodes} nodes`);
  }
  assert.deepEqual(problems, []);
  await page.close();
});

// Folder names hostile to Mermaid's YAML front matter and to Markdown, as model names.
const NAMES = ["evil\\x", "evil\\N{bogus}", "[click me](javascript:alert(1))", "x'y: \"z\" #c",
  "<img src=x onerror=alert(1)>", "**bold** `code` ![i](x.png) <mailto:a@b.c> www.e.com"];

test("a hostile model name stays text in the Mermaid and Markdown exports", async () => {
  const blank = join(dir, "blank-names.html");
  writeFileSync(blank, "<!doctype html><meta charset=utf-8><body></body>");
  const { page, problems } = await open(browser, blank);
  await page.addScriptTag({ path: resolve(import.meta.dirname, "node_modules/mermaid/dist/mermaid.min.js") });
  await page.addScriptTag({ path: resolve(import.meta.dirname, "node_modules/marked/lib/marked.umd.js") });
  await page.evaluate(() => window.mermaid.initialize({ startOnLoad: false, securityLevel: "strict" }));
  const config = readFileSync(resolve(import.meta.dirname, "../hostile/st-good/config.json"));
  for (const name of NAMES) {
    const model = join(dir, name);
    mkdirSync(model);
    writeFileSync(join(model, "config.json"), config);
    const mermaid = anatomy("export", model, "--format", "mermaid");
    const parsed = await page.evaluate(async (t) => {
      try {
        await window.mermaid.parse(t);
        const { svg } = await window.mermaid.render("m" + Math.random().toString(36).slice(2), t);
        return { ok: true, svg };
      } catch (e) {
        return { ok: false, error: String(e) };
      }
    }, mermaid);
    assert.equal(parsed.ok, true, `${name}: ${parsed.error}\n${mermaid}`);
    // The title is the name as written.
    const title = mermaid.split("\n")[1];
    assert.ok(title.startsWith("title: '"), title);
    // Markdown as a renderer with no link validation renders it: no link, image or HTML from
    // the name, and the name's text is there.
    const md = anatomy("export", model, "--format", "md");
    const html = await page.evaluate((md) => {
      const el = document.createElement("div");
      el.innerHTML = window.marked.parse(md);
      const h = el.querySelector("h2");
      return { links: el.querySelectorAll("a, img, strong, code").length, heading: h?.textContent ?? "" };
    }, md);
    assert.equal(html.links, 0, `${name}: ${md}`);
    assert.ok(html.heading.includes(name), `${name}: ${html.heading}`);
  }
  assert.deepEqual(problems, []);
  await page.close();
});
