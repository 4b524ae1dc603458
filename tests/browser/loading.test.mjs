// Large files load in a Web Worker with a progress bar and a Cancel button; cancelling keeps the
// data loaded before.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { serve, launch, openPage, outsideRequests, screenshot } from "./harness.mjs";
import { DataPage, ReportPage } from "./pages.mjs";

const ROWS = 400_000;
let server;
let browser;
let bigFile;
let expected;

/** Request `i` of the big log: its TTFT, E2E, output tokens and TPOT. */
function bigLogRow(i) {
  const ttft = i % 1000;
  const out = 51 + (i % 7) * 25; // 51 ... 201 tokens
  const tpot = 30 + (i % 11) * 3; // 30 ... 60 ms
  return { ttft, e2e: ttft + tpot * (out - 1), out, tpot };
}

/** The big log's joint attainment against TTFT <= `ttftMs` and TPOT <= `tpotMs`, as the app
 * shows it, counted here by hand. */
function bigLogAttainment(ttftMs, tpotMs) {
  let good = 0;
  for (let i = 0; i < ROWS; i++) {
    const { ttft, tpot } = bigLogRow(i);
    if (ttft <= ttftMs && tpot <= tpotMs) good++;
  }
  const pct = ((100 * good) / ROWS).toFixed(2).replace(/0+$/, "").replace(/\.$/, "");
  return `${pct} %`;
}

/** Line of the big log's one bad row: past its middle, in the second worker's half. */
const BAD_LINE = ROWS + 2;

/** A log of ROWS requests (about 11 MB) and, last, one bad row (on BAD_LINE); returns its
 * attainment against the app's starting targets (TTFT <= 500 ms, TPOT <= 50 ms). */
function writeBigLog(file) {
  const lines = ["request_id,ttft_ms,e2e_ms,output_tokens"];
  for (let i = 0; i < ROWS; i++) {
    const { ttft, e2e, out } = bigLogRow(i);
    lines.push(`${i},${ttft},${e2e},${out}`);
  }
  lines.push("bad,x,1,2");
  fs.writeFileSync(file, lines.join("\n") + "\n");
  return bigLogAttainment(500, 50);
}

/** Pastes a two-request log and waits for its report: the data a later load must not lose. */
async function loadSmallLog(page) {
  const data = new DataPage(page);
  await data.open();
  await data.paste("request_id,ttft_ms,e2e_ms,output_tokens\n1,100,600,11\n2,200,700,11\n");
  const report = new ReportPage(page);
  await report.waitForReport();
  return { data, report };
}

before(async () => {
  bigFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "slo-big-")), "big_log.csv");
  expected = writeBigLog(bigFile);
  server = await serve();
  browser = await launch();
});
after(async () => {
  await browser?.close();
  await server?.close();
  fs.rmSync(path.dirname(bigFile), { recursive: true, force: true });
});

test("a large file is parsed in a worker, with progress, and gives the hand-computed attainment", async () => {
  const { page, context, requests, errors } = await openPage(browser, server.url + "#data");
  const workers = [];
  page.on("worker", (w) => workers.push(w.url()));
  const data = new DataPage(page);
  await data.open();
  await recordProgress(page);
  await data.upload(bigFile);
  await page.getByTestId("load-progress").waitFor({ timeout: 30000 });
  await screenshot(page, "loading-progress");
  const report = new ReportPage(page);
  await page.getByTestId("load-progress").waitFor({ state: "detached", timeout: 120000 });
  await report.waitForReport();
  assert.equal(await report.text("attainment"), expected);
  // The bar moved while the file was being parsed (reading is 0-20 %, parsing 20-84 %), and
  // never went back.
  const seen = await page.evaluate(() => window.__progress);
  const parsing = seen.filter(([phase]) => phase.startsWith("Parsing big_log.csv"));
  assert.ok(parsing.some(([, v]) => v > 20 && v < 84), JSON.stringify(seen));
  assert.ok(seen.every(([, v], k) => k === 0 || v >= seen[k - 1][1]), JSON.stringify(seen));
  // One loader per load; a file this large it reads with a second worker, whose half it joins;
  // once the load is in, a third computes the file's digest.
  await waitForWorkers(page, workers, 3);
  assert.ok(workers.every((w) => /worker\.js$/.test(w)), JSON.stringify(workers));
  assert.ok(seen.some(([phase]) => phase.startsWith("Joining the halves of big_log.csv")), JSON.stringify(seen));
  await data.open();
  const notice = await data.notice().innerText();
  assert.match(notice, /Loaded 400,000 requests from 1 file; 1 row skipped/);
  // The bad row was read by the second worker, which numbers its lines from its own first
  // row: the line shown is the line in the file.
  assert.match(notice, new RegExp(`big_log\\.csv:${BAD_LINE}:2: column "ttft_ms": "x" is not a number`));
  // The file's digest, computed by the browser after the load, is node's.
  const sha = crypto.createHash("sha256").update(fs.readFileSync(bigFile)).digest("hex");
  await page.waitForFunction(() => document.querySelector('[data-testid="files"] code')?.title.length === 64);
  assert.equal(await page.getByTestId("files").locator("code").first().getAttribute("title"), sha);
  assert.deepEqual(outsideRequests(requests), []);
  assert.deepEqual(errors, []);
  await context.close();
});

/** From now on, every state the progress bar shows is noted in `window.__progress`, as
 * (phase, percent). */
async function recordProgress(page) {
  await page.evaluate(() => {
    window.__progress = [];
    new MutationObserver(() => {
      const bar = document.querySelector("#load-bar");
      const label = document.querySelector('[data-testid="load-progress"] label');
      if (bar) window.__progress.push([label.textContent, Number(bar.getAttribute("value"))]);
    }).observe(document.body, { childList: true, subtree: true, attributes: true, characterData: true });
  });
}

/** From now on, every phase the progress bar names is noted in `window.__phases`. */
async function recordPhases(page) {
  await page.evaluate(() => {
    window.__phases = new Set();
    new MutationObserver(() => {
      const label = document.querySelector('[data-testid="load-progress"] label');
      if (label) window.__phases.add(label.textContent);
    }).observe(document.body, { childList: true, subtree: true, characterData: true });
  });
}

/** Clicks a file control (the Data tab's upload unless named) as a person does; resolves to
 * the file dialog Playwright caught. */
async function openFileDialog(page, testId = "upload") {
  const [chooser] = await Promise.all([page.waitForEvent("filechooser"), page.getByTestId(testId).click()]);
  return chooser;
}

/** Waits until `workers` (urls, as page.on("worker") saw them) has `n` entries. */
async function waitForWorkers(page, workers, n) {
  for (let k = 0; k < 100 && workers.length < n; k++) await page.waitForTimeout(100);
  assert.equal(workers.length, n, JSON.stringify(workers));
}

test("a click on the upload control (or a drag over the drop zone) starts the next load's two workers, and the file chosen uses them", async () => {
  const { page, context, errors } = await openPage(browser, server.url + "#data");
  const workers = [];
  page.on("worker", (w) => workers.push(w.url()));
  const data = new DataPage(page);
  await data.open();
  await recordPhases(page);
  // While the dialog is open, both workers start; nothing is loading yet.
  let chooser = await openFileDialog(page);
  await waitForWorkers(page, workers, 2);
  assert.equal(await page.getByTestId("load-progress").count(), 0);
  // A second click while they wait starts no more.
  chooser = await openFileDialog(page);
  await page.waitForTimeout(500);
  assert.equal(workers.length, 2, JSON.stringify(workers));
  await chooser.setFiles(bigFile);
  const report = new ReportPage(page);
  await page.getByTestId("load-progress").waitFor({ state: "detached", timeout: 120000 });
  await report.waitForReport();
  assert.equal(await report.text("attainment"), expected);
  // The file was read in halves by the pair started at the click: no other worker started but
  // the one for its digest, once the load was in.
  const phases = await page.evaluate(() => [...window.__phases]);
  assert.ok(phases.some((p) => p.startsWith("Joining the halves of big_log.csv")), JSON.stringify(phases));
  await waitForWorkers(page, workers, 3);
  // A file dragged over the drop zone starts the next pair; a small file read by it leaves the
  // second unused.
  await data.open();
  const small = path.join(path.dirname(bigFile), "small_log.csv");
  // TPOT = (e2e - ttft) / (output_tokens - 1): 50, 50 and 60 ms; TTFT 100, 600 and 200 ms.
  // Against TTFT <= 500 ms and TPOT <= 50 ms only the first passes: 1 of 3.
  fs.writeFileSync(small, "request_id,ttft_ms,e2e_ms,output_tokens\n1,100,600,11\n2,600,1100,11\n3,200,800,11\n");
  await page.locator(".dropzone").dispatchEvent("dragover");
  await waitForWorkers(page, workers, 5);
  await data.upload(small);
  await page.waitForFunction(() => location.hash === "#report");
  await report.waitForReport();
  assert.equal(await report.text("attainment"), "33.33 %");
  assert.equal(workers.length, 5, JSON.stringify(workers));
  assert.deepEqual(errors, []);
  await context.close();
});

/** In the page, before the app: a worker message whose kind the test lists in
 * `window.__hold` is held until `window.__release[kind]()`; every other passes at once. */
function holdMessages() {
  window.__hold = [];
  window.__release = {};
  const Native = window.Worker;
  window.Worker = class extends Native {
    set onmessage(handler) {
      super.onmessage = handler && ((e) => {
        const kind = e.data?.kind;
        if (window.__hold.includes(kind)) window.__release[kind] = () => handler(e);
        else handler(e);
      });
    }
    get onmessage() {
      return super.onmessage;
    }
  };
}

/** Opens the app with `holdMessages`, holding worker messages of `kinds`. */
async function openHolding(kinds) {
  const opened = await openPage(browser, server.url + "#data", { init: holdMessages });
  await opened.page.evaluate((k) => (window.__hold = k), kinds);
  return opened;
}

/** Waits for the loader's columns to be held (`openHolding(["done"])`) with the report already shown. */
async function waitForEarlyReport(page) {
  await page.waitForFunction(() => typeof window.__release.done === "function", null, { timeout: 120000 });
  await page.waitForFunction(() => location.hash === "#report");
  await page.getByTestId("attainment").waitFor();
}

test("the worker's report shows while the columns are on their way; the load keeps it, and new targets use the columns", async () => {
  const { page, context, errors } = await openHolding(["done"]);
  const data = new DataPage(page);
  await data.open();
  await data.upload(bigFile);
  await waitForEarlyReport(page);
  const report = new ReportPage(page);
  // The report, computed by the worker, is up while the load is still running; saving waits
  // for the data.
  assert.equal(await report.text("attainment"), expected);
  assert.match(await page.getByTestId("load-progress").innerText(), /Report shown; readying the data for new targets/);
  assert.ok(await page.getByTestId("save-report").isDisabled());
  assert.equal(await page.getByTestId("sample-badge").count(), 0);
  assert.equal(await page.getByTestId("sample-banner").count(), 0);
  await screenshot(page, "loading-early-report");
  await page.getByTestId("attainment").evaluate((el) => (el.__early = true));
  // The columns arrive: the same report stays, not drawn again.
  await page.evaluate(() => window.__release.done());
  await page.getByTestId("load-progress").waitFor({ state: "detached", timeout: 30000 });
  assert.equal(await report.text("attainment"), expected);
  assert.equal(await page.getByTestId("attainment").evaluate((el) => el.__early === true), true);
  // Saving waits for the file's digest, computed once the load is in.
  await page.waitForFunction(() => !document.querySelector('[data-testid="save-report"]').disabled);
  // A new target is evaluated on the page, from the columns that arrived.
  await report.setTarget("ttft_ms", 1000);
  await page.waitForFunction((want) => document.querySelector('[data-testid="attainment"]')?.textContent.trim() === want, bigLogAttainment(1000, 50));
  // A target changed while the next load's columns are on their way: that load's early report
  // (for TTFT <= 1000 ms) shows until they arrive, then the report is computed for the new one.
  await page.evaluate(() => delete window.__release.done);
  await data.open();
  await data.upload(bigFile);
  await waitForEarlyReport(page);
  assert.match(await page.getByTestId("load-progress").innerText(), /Report shown/);
  assert.equal(await report.text("attainment"), bigLogAttainment(1000, 50));
  await report.setTarget("ttft_ms", 300);
  // The table on the page is still the previous load's: the early report stays until the
  // columns arrive.
  await page.waitForTimeout(300);
  assert.equal(await report.text("attainment"), bigLogAttainment(1000, 50));
  await page.evaluate(() => window.__release.done());
  await page.getByTestId("load-progress").waitFor({ state: "detached", timeout: 30000 });
  await page.waitForFunction((want) => document.querySelector('[data-testid="attainment"]')?.textContent.trim() === want, bigLogAttainment(300, 50));
  assert.notEqual(bigLogAttainment(300, 50), bigLogAttainment(1000, 50));
  assert.deepEqual(errors, []);
  await context.close();
});

test("a load stopped while its early report shows leaves the data loaded before, and its report goes", async () => {
  const { page, context, errors } = await openHolding(["done"]);
  const { data, report } = await loadSmallLog(page);
  // The pasted log: TTFT 100 and 200 ms, TPOT 50 ms: both meet the starting targets.
  assert.equal(await report.text("attainment"), "100 %");
  await data.open();
  await data.upload(bigFile);
  await waitForEarlyReport(page);
  assert.equal(await report.text("attainment"), expected);
  await page.getByTestId("cancel-load").click();
  await page.getByTestId("load-progress").waitFor({ state: "detached" });
  assert.equal(await report.text("attainment"), "100 %");
  assert.ok(await page.getByTestId("save-report").isEnabled());
  // The sample, chosen while the next load's early report shows, replaces that load: the
  // sample's report (the guide's worked example: 80 %) stays, and the load never lands.
  await data.open();
  await page.evaluate(() => delete window.__release.done);
  await data.upload(bigFile);
  await waitForEarlyReport(page);
  await data.open();
  await page.getByTestId("try-sample").click();
  await page.waitForFunction(() => location.hash === "#report");
  assert.equal(await report.text("attainment"), "80 %");
  // The report says it is the sample, and where one's own logs go.
  assert.match(await page.getByTestId("sample-banner").innerText(), /built-in sample/);
  assert.equal(await page.getByTestId("load-progress").count(), 0);
  await page.waitForTimeout(1000);
  assert.equal(await report.text("attainment"), "80 %");
  await data.open();
  assert.doesNotMatch(await page.getByTestId("files").innerText(), /big_log/);
  assert.deepEqual(errors, []);
  await context.close();
});

test("a large file's digest comes after its report, and saving waits for it", async () => {
  const { page, context, errors } = await openHolding(["digest"]);
  const data = new DataPage(page);
  await data.open();
  await data.upload(bigFile);
  await page.getByTestId("load-progress").waitFor({ state: "detached", timeout: 120000 });
  const report = new ReportPage(page);
  await report.waitForReport();
  assert.equal(await report.text("attainment"), expected);
  // The load is in; its file's digest is not yet.
  await page.waitForFunction(() => typeof window.__release.digest === "function", null, { timeout: 30000 });
  assert.ok(await page.getByTestId("save-report").isDisabled());
  await data.open();
  assert.equal(await page.getByTestId("files").locator("code").first().getAttribute("title"), "");
  await page.evaluate(() => window.__release.digest());
  const sha = crypto.createHash("sha256").update(fs.readFileSync(bigFile)).digest("hex");
  await page.waitForFunction((want) => document.querySelector('[data-testid="files"] code')?.title === want, sha);
  await page.getByTestId("tab-report").click();
  assert.ok(await page.getByTestId("save-report").isEnabled());
  assert.equal(await report.text("attainment"), expected);
  assert.deepEqual(errors, []);
  await context.close();
});

test("a large file with a quote in either half is read whole by the first worker", async () => {
  // The same log with one id quoted, in the first worker's half or in the second's: neither
  // half is read alone, so the loader reads the whole file (and finds the bad row's line).
  const text = fs.readFileSync(bigFile, "utf8");
  for (const [name, id] of [["quoted_early.csv", 0], ["quoted_late.csv", ROWS - 1]]) {
    const quoted = path.join(path.dirname(bigFile), name);
    fs.writeFileSync(quoted, text.replace(`\n${id},`, `\n"${id}",`));
    const { page, context, errors } = await openPage(browser, server.url + "#data");
    const data = new DataPage(page);
    await data.open();
    await recordPhases(page);
    await recordProgress(page);
    await data.upload(quoted);
    await page.getByTestId("load-progress").waitFor({ timeout: 30000 });
    await page.getByTestId("load-progress").waitFor({ state: "detached", timeout: 120000 });
    const report = new ReportPage(page);
    await report.waitForReport();
    assert.equal(await report.text("attainment"), expected, name);
    const phases = await page.evaluate(() => [...window.__phases]);
    assert.ok(!phases.some((p) => p.startsWith("Joining")), JSON.stringify(phases));
    // The bar did not go back when the file, declined for slices, was read again whole.
    const seen = await page.evaluate(() => window.__progress);
    assert.ok(seen.every(([, v], k) => k === 0 || v >= seen[k - 1][1]), JSON.stringify(seen));
    await data.open();
    const notice = await data.notice().innerText();
    assert.match(notice, /Loaded 400,000 requests from 1 file; 1 row skipped/, name);
    assert.match(notice, new RegExp(`${name}:${BAD_LINE}:2: column "ttft_ms": "x" is not a number`));
    assert.deepEqual(errors, []);
    await context.close();
  }
});

test("cancelling a load keeps the data loaded before and says so", async () => {
  const { page, context, errors } = await openPage(browser, server.url + "#data");
  const { data } = await loadSmallLog(page);
  await data.open();
  await data.upload(bigFile);
  await page.getByTestId("cancel-load").click({ timeout: 30000 });
  await page.getByTestId("load-progress").waitFor({ state: "detached" });
  assert.match(await data.notice().innerText(), /Loading cancelled; the previous data is still loaded/);
  const files = await page.getByTestId("files").innerText();
  assert.match(files, /pasted text/);
  assert.doesNotMatch(files, /big_log/);
  // The cancelled load must not land later either.
  await page.waitForTimeout(3000);
  assert.doesNotMatch(await page.getByTestId("files").innerText(), /big_log/);
  // Re-reading (here: a new default unit) reads what is loaded, not the cancelled file.
  await page.getByTestId("default-unit").selectOption({ label: "seconds" });
  await page.waitForFunction(() => location.hash === "#report");
  await data.open();
  const reread = await page.getByTestId("files").innerText();
  assert.match(reread, /pasted text/);
  assert.doesNotMatch(reread, /big_log/);
  assert.deepEqual(errors, []);
  await context.close();
});

test("a run to compare with is read off the page too, and an unreadable one is named once", async () => {
  const { page, context, errors } = await openPage(browser, server.url + "#data");
  const { data } = await loadSmallLog(page);
  const empty = path.join(path.dirname(bigFile), "empty_run.csv");
  fs.writeFileSync(empty, "");
  await page.getByTestId("compare-file").setInputFiles(empty);
  const alert = page.locator('[role="alert"]', { hasText: "empty_run.csv" });
  await alert.waitFor({ timeout: 30000 });
  const text = await alert.innerText();
  assert.match(text, /^empty_run\.csv: the file is empty/);
  assert.doesNotMatch(text, /empty_run\.csv: empty_run\.csv/);
  // The big log as the other run, chosen as a person does: the click starts the workers (a
  // pair: loader and second), the file dialog's choice uses them; the comparison table
  // appears, from the worker's result.
  const workers = [];
  page.on("worker", (w) => workers.push(w.url()));
  const chooser = await openFileDialog(page, "compare-file");
  await waitForWorkers(page, workers, 2);
  await chooser.setFiles(bigFile);
  await page.getByTestId("compare-table").waitFor({ timeout: 120000 });
  assert.equal(workers.length, 2, JSON.stringify(workers));
  assert.deepEqual(errors, []);
  await context.close();
});
