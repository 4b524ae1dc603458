// The single-file edition (scripts/build-single.sh): opened from disk as file://, with no server,
// it runs the guide's worked example like the served app, and nothing goes to any http(s) URL.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { launch, screenshot, fixtures, root } from "./harness.mjs";
import { DataPage, ReportPage, TargetsPage } from "./pages.mjs";

const single = path.join(root, "dist-single/slo-workbench.html");
const worked = fs.readFileSync(path.join(fixtures, "worked_example.csv"), "utf8");
let browser;

before(async () => {
  assert.ok(fs.existsSync(single), `${single} is missing: run bash scripts/build-single.sh`);
  browser = await launch();
});
after(async () => {
  await browser?.close();
});

/** Opens the single file from disk, recording requests and errors (as harness.openPage does). */
async function openSingle(url = pathToFileURL(single).href) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const requests = [];
  const errors = [];
  page.on("request", (r) => requests.push(r.url()));
  page.on("pageerror", (e) => errors.push(String(e)));
  page.on("console", (m) => m.type() === "error" && errors.push(m.text()));
  // Any CSP refusal (a hash that does not match, a blocked load) shows as a console error.
  await page.goto(url);
  await page.waitForSelector("header.top");
  return { page, context, requests, errors };
}

test("the single file opened from disk gives the worked example's numbers, offline", async () => {
  const { page, context, requests, errors } = await openSingle();
  assert.match(page.url(), /^file:\/\//);
  const data = new DataPage(page);
  await data.open();
  await data.paste(worked);
  const report = new ReportPage(page);
  await report.waitForReport();
  await report.setTarget("ttft_ms", 500);
  await report.setTarget("tpot_ms", 50);
  await report.setPercentiles("90");
  assert.equal(await report.text("attainment"), "80 %");
  // TPOT = (E2E − TTFT)/100; numpy linear p90 = 49.3 + 0.1·(66 − 49.3) = 50.97, nearest = 49.3.
  assert.equal(await report.percentile("tpot", "90", "linear"), "50.97");
  assert.equal(await report.percentile("tpot", "90", "nearest"), "49.3");
  // plotly is inline too: the CDF chart draws.
  assert.ok(await report.chartDrawn("chart-cdf-ttft"));
  await screenshot(page, "single-file-report");
  assert.deepEqual(
    requests.filter((u) => /^https?:/i.test(u)),
    [],
    "the single file must not request any http(s) URL",
  );
  // Only the page itself (and data:/blob: URLs) are loaded.
  assert.deepEqual(
    requests.filter((u) => !u.startsWith("data:") && !u.startsWith("blob:") && u !== page.url().split("#")[0]),
    [],
  );
  assert.deepEqual(errors, []);
  await context.close();
});

test("from file://: upload, autosave across a reload, share link and download all work", async () => {
  const first = await openSingle();
  await new DataPage(first.page).open();
  await new DataPage(first.page).upload(path.join(fixtures, "worked_example.csv"));
  const report = new ReportPage(first.page);
  await report.waitForReport();
  const targets = new TargetsPage(first.page);
  await targets.open();
  await targets.setField("cell-0-0-tpot", 70);
  // localStorage works for file:// pages: the spec survives a reload.
  await first.page.reload();
  await first.page.waitForSelector("header.top");
  await targets.open();
  assert.equal(await targets.value("cell-0-0-tpot"), "70");
  // The spec downloads as a file (a blob: URL, no network).
  const [download] = await Promise.all([
    first.page.waitForEvent("download"),
    first.page.getByTestId("spec-export").click(),
  ]);
  assert.equal(download.suggestedFilename(), "slo-spec.json");
  assert.match(fs.readFileSync(await download.path(), "utf8"), /"tpot_ms": 70/);
  // A share link is a file:// URL with the spec in its fragment; it opens the same spec.
  await first.page.getByTestId("spec-share").click();
  const link = await first.page.getByTestId("share-link").inputValue();
  assert.match(link, /^file:\/\/.*#spec=/);
  assert.deepEqual(first.requests.filter((u) => /^https?:/i.test(u)), []);
  assert.deepEqual(first.errors, []);
  await first.context.close();

  const second = await openSingle(link);
  const t2 = new TargetsPage(second.page);
  await t2.open();
  assert.equal(await t2.value("cell-0-0-tpot"), "70");
  await second.context.close();
});

test("the single file's policy blocks a fetch to any origin", async () => {
  const { page, context } = await openSingle();
  // The refusal must come from the policy (a closed port would fail the fetch too).
  const violated = await page.evaluate(async () => {
    const seen = new Promise((resolve) =>
      document.addEventListener("securitypolicyviolation", (e) => resolve(e.effectiveDirective)),
    );
    await fetch("http://127.0.0.1:9/steal").catch(() => {});
    return seen;
  });
  assert.equal(violated, "connect-src");
  await context.close();
});

test("the single file's policy allows its inline scripts by hash and no other origin", async () => {
  const html = fs.readFileSync(single, "utf8");
  const csp = html.match(/http-equiv="Content-Security-Policy"\s+content="([^"]*)"/)?.[1];
  assert.ok(csp, "no CSP meta");
  assert.match(csp, /default-src 'none'/);
  assert.match(csp, /connect-src 'none'/);
  assert.doesNotMatch(csp, /https?:|'self'|'unsafe-eval'|script-src[^;]*'unsafe-inline'/);
  const hashes = [...csp.matchAll(/'sha256-[^']+'/g)].length;
  const inline = [...html.matchAll(/<script>/g)].length;
  assert.equal(hashes, inline, "one hash per inline script");
  assert.ok(fs.statSync(single).size <= 3_000_000, "docs/single-file.md: limit 3 MB");
});
