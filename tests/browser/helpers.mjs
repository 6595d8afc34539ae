// Shared setup for the browser tests: the anatomy binary, a temporary folder, headless Chromium.
import { chromium } from "playwright-core";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

export const root = resolve(import.meta.dirname, "../..");
export const anatomyBin = process.env.ANATOMY_BIN || join(root, "target/debug/anatomy");
export const chromiumPath = process.env.CHROMIUM || "/usr/bin/chromium";

// Each test file's folder goes when its process ends: hundreds were left behind in /tmp.
export function tempDir() {
  const dir = mkdtempSync(join(tmpdir(), "anatomy-browser-"));
  process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export function anatomy(...args) {
  return execFileSync(anatomyBin, args, { encoding: "utf8" });
}

export async function launch() {
  // Flags keep Chromium from reaching out to the network on its own.
  return chromium.launch({
    executablePath: chromiumPath,
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
      "--disable-sync", "--no-first-run", "--disable-default-apps"],
  });
}

/// Open `file` (with an optional hash) and record console errors, page errors and any request
/// that is not the page itself.
export async function open(browser, file, hash = "") {
  const page = await browser.newPage({ viewport: { width: 1300, height: 900 } });
  const problems = [];
  const url = "file://" + file;
  page.on("console", (m) => { if (m.type() === "error") problems.push("console: " + m.text()); });
  page.on("pageerror", (e) => problems.push("error: " + e));
  // Only the page itself, and pages beside it that it links to, may load: nothing from a network.
  const folder = url.slice(0, url.lastIndexOf("/") + 1);
  page.on("request", (r) => { if (!r.url().startsWith(folder)) problems.push("request: " + r.url()); });
  await page.goto(url + hash);
  return { page, problems };
}

/// The accessible name Chromium gives an element, as its aria snapshot says it.
export async function accessibleName(locator) {
  const m = /^- [\w-]+ "((?:[^"\\]|\\.)*)"/.exec(await locator.ariaSnapshot());
  return m ? JSON.parse(`"${m[1]}"`) : "";
}
