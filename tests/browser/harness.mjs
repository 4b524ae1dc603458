// Shared set-up for browser tests: serve dist/ on 127.0.0.1 under a sub-path, drive Debian's
// Chromium with playwright-core, record every request the page makes.
import http from "node:http";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { before, after } from "node:test";
import { chromium } from "playwright-core";

const here = path.dirname(fileURLToPath(import.meta.url));
export const root = path.resolve(here, "../..");
// SLO_DIST serves another build (the benchmarks compare two builds that way).
export const dist = process.env.SLO_DIST ? path.resolve(process.env.SLO_DIST) : path.join(root, "dist");
export const fixtures = path.join(root, "tests/fixtures");
export const outDir = path.join(root, "test-output");
export const SUBPATH = "/wiki/tools/slo-workbench/";

const TYPES = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript",
  ".mjs": "text/javascript",
  ".wasm": "application/wasm",
  ".css": "text/css",
  ".json": "application/json",
  ".svg": "image/svg+xml",
};

/** Starts a static server for dist/ under SUBPATH; resolves to { url, close }. */
export function serve() {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, "http://127.0.0.1");
    if (!url.pathname.startsWith(SUBPATH)) {
      res.writeHead(404).end("not under the app's sub-path");
      return;
    }
    let rel = decodeURIComponent(url.pathname.slice(SUBPATH.length)) || "index.html";
    const file = path.join(dist, rel);
    if (!file.startsWith(dist) || !fs.existsSync(file) || fs.statSync(file).isDirectory()) {
      res.writeHead(404).end("not found");
      return;
    }
    res.writeHead(200, { "content-type": TYPES[path.extname(file)] ?? "application/octet-stream" });
    fs.createReadStream(file).pipe(res);
  });
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      resolve({ url: `http://127.0.0.1:${port}${SUBPATH}`, close: () => new Promise((r) => server.close(r)) });
    });
  });
}

/** Launches headless Chromium (Debian's, never a downloaded one). */
export async function launch() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}

/**
 * The app for one test file: serves dist/ and launches Chromium before its tests, closes both
 * after them. `app.url` is the app's address, `app.browser` the browser to open pages in.
 */
export function useApp() {
  const app = {
    server: null,
    browser: null,
    get url() {
      return app.server.url;
    },
  };
  before(async () => {
    app.server = await serve();
    app.browser = await launch();
  });
  after(async () => {
    await app.browser?.close();
    await app.server?.close();
  });
  return app;
}

/** A new page that records every request and every console error; `init`, a function, runs in
 * the page before the app's own scripts. */
export async function openPage(browser, url, { init } = {}) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  if (init) await context.addInitScript(init);
  const page = await context.newPage();
  const requests = [];
  const errors = [];
  page.on("request", (r) => requests.push(r.url()));
  page.on("pageerror", (e) => errors.push(String(e)));
  page.on("console", (m) => m.type() === "error" && errors.push(m.text()));
  await page.goto(url);
  await page.waitForSelector("header.top");
  return { page, context, requests, errors };
}

/** Fails unless every request went to 127.0.0.1 (or was a data:/blob: URL). */
export function outsideRequests(requests) {
  return requests.filter((u) => {
    if (u.startsWith("data:") || u.startsWith("blob:")) return false;
    return new URL(u).hostname !== "127.0.0.1";
  });
}

/**
 * Scrolls every visible chart into view in turn and waits until plotly has drawn it, then goes
 * back to the top. Charts are drawn only once in view (src/chart.rs) and a full-page screenshot
 * does not scroll: without this it would show empty boxes below the fold.
 */
async function drawCharts(page) {
  for (const chart of await page.locator(".chart").all()) {
    if (!(await chart.isVisible())) continue;
    await chart.scrollIntoViewIfNeeded();
    await chart.locator("svg.main-svg").first().waitFor({ state: "attached", timeout: 10000 });
  }
  await page.evaluate(() => window.scrollTo(0, 0));
}

/** A full-page screenshot in test-output/, with every chart drawn as a reader scrolling sees it. */
export async function screenshot(page, name) {
  fs.mkdirSync(outDir, { recursive: true });
  await drawCharts(page);
  await page.screenshot({ path: path.join(outDir, `${name}.png`), fullPage: true });
}
