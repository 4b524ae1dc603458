// The vertical slice, end to end: paste and upload the guide's worked example and read the
// numbers a user would check, in a real browser, with no request leaving 127.0.0.1.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { useApp, openPage, outsideRequests, screenshot, fixtures } from "./harness.mjs";
import { DataPage, ReportPage } from "./pages.mjs";

const worked = fs.readFileSync(path.join(fixtures, "worked_example.csv"), "utf8");
const app = useApp();

async function checkWorkedExample(page) {
  const report = new ReportPage(page);
  await report.waitForReport();
  await report.setTarget("ttft_ms", 500);
  await report.setTarget("tpot_ms", 50);
  await report.setPercentiles("90");
  assert.equal(await report.text("attainment"), "80 %");
  // Hand check (the guide): sorted TTFT 180…640, numpy linear p90 = 410 + 0.1·(640−410) = 433;
  // nearest picks the 9th value, 410. TPOT = (E2E − TTFT)/100: linear 49.3 + 0.1·(66 − 49.3) = 50.97.
  assert.equal(await report.percentile("ttft", "90", "linear"), "433");
  assert.equal(await report.percentile("ttft", "90", "nearest"), "410");
  assert.equal(await report.percentile("tpot", "90", "linear"), "50.97");
  assert.equal(await report.percentile("tpot", "90", "nearest"), "49.3");
  const rows = await report.failingRows();
  assert.equal(rows.length, 2);
  const byId = Object.fromEntries(rows.map((r) => [r.split("\t")[0].trim(), r]));
  assert.match(byId["5"], /TTFT/);
  assert.doesNotMatch(byId["5"], /TPOT/);
  assert.match(byId["6"], /TPOT/);
  assert.doesNotMatch(byId["6"], /TTFT/);
  assert.ok(await report.chartDrawn("chart-cdf-ttft"));
}

test("pasting the worked example gives 80 % joint and the guide's percentiles", async () => {
  const { page, context, requests, errors } = await openPage(app.browser, app.url);
  const data = new DataPage(page);
  await data.open();
  await data.paste(worked);
  await checkWorkedExample(page);
  await screenshot(page, "foundation-report");
  assert.deepEqual(outsideRequests(requests), []);
  assert.deepEqual(errors, []);
  await context.close();
});

test("uploading the worked example file gives the same numbers", async () => {
  const { page, context, requests } = await openPage(app.browser, app.url);
  const data = new DataPage(page);
  await data.open();
  await data.upload(path.join(fixtures, "worked_example.csv"));
  await checkWorkedExample(page);
  assert.deepEqual(outsideRequests(requests), []);
  await context.close();
});

test("bad input gives a located message and keeps the page working", async () => {
  const { page, context } = await openPage(app.browser, app.url);
  const data = new DataPage(page);
  await data.open();
  await data.paste("");
  assert.match(await data.notice().innerText(), /empty/);

  await data.paste("e2e_ms,output_tokens\n4010,101\n");
  await new ReportPage(page).waitForReport();
  await data.open();
  assert.match(await data.notice().innerText(), /pasted text:1: no TTFT column/);

  await data.paste(worked.replace("1,180,4010,101", "1,abc,4010,101"));
  await new ReportPage(page).waitForReport();
  await data.open();
  assert.match(await data.notice().innerText(), /pasted text:2:2: column "ttft_ms": "abc" is not a number/);
  assert.match(await data.notice().innerText(), /Loaded 9 requests/);
  // Loaded with a row left out: a warning, not the green of a clean load.
  assert.match(await data.notice().getAttribute("class"), /\bwarn\b/);
  assert.match(await data.notice().innerText(), /^⚠/);
  // The report says that a row is not in its figures, beside them.
  await page.getByTestId("tab-report").click();
  assert.match(
    await page.getByTestId("rows-skipped").innerText(),
    /1 row of the files could not be read and is not in these figures/,
  );
  await data.open();

  // A paste with nothing readable keeps the previous data.
  await data.paste("hello\nworld\n");
  assert.match(await data.notice().innerText(), /previous data is still loaded/);
  await page.getByTestId("tab-report").click();
  assert.equal(await new ReportPage(page).text("attainment"), "77.78 %");
  await screenshot(page, "foundation-bad-input");
  await context.close();
});
