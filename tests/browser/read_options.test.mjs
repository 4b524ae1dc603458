// The Data tab's reading options: the unit of times whose column names none, and a format chosen
// instead of detected. Either change reads the loaded files again.
import { test } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { useApp, openPage, fixtures } from "./harness.mjs";
import { DataPage, ReportPage } from "./pages.mjs";

const app = useApp();

test("times in seconds under unit-less headers are read right once the default unit says so", async () => {
  const { page, context, errors } = await openPage(app.browser, app.url + "#data");
  const data = new DataPage(page);
  const report = new ReportPage(page);
  await data.open();
  // The worked example with its times in seconds and headers "ttft", "e2e" (no unit).
  await data.upload(path.join(fixtures, "worked_example_seconds.csv"));
  await report.waitForReport();
  // Read as milliseconds: a p90 TTFT of 0.433 "ms" (shown as 0.43), which no one means.
  assert.equal(await report.percentile("ttft", "90", "linear"), "0.43");
  await data.open();
  await page.getByTestId("default-unit").selectOption({ label: "seconds" });
  await report.waitForReport();
  await page.waitForFunction(
    () => document.querySelector('[data-testid="pct-ttft-90-linear"]')?.textContent.trim() === "433",
  );
  // The guide's figures: p90 TTFT 433 ms (linear), 80 % of requests met both targets.
  assert.equal(await report.text("attainment"), "80 %");
  assert.equal(await report.percentile("tpot", "90", "linear"), "50.97");
  assert.deepEqual(errors, []);
  await context.close();
});

test("a chosen format overrides detection, and says what it made of the file", async () => {
  const { page, context, errors } = await openPage(app.browser, app.url + "#data");
  const data = new DataPage(page);
  await data.open();
  await data.paste("request_id,ttft_ms,e2e_ms,output_tokens\n1,100,600,11\n2,200,700,11\n");
  await new ReportPage(page).waitForReport();
  await data.open();
  assert.match(await page.getByTestId("files").innerText(), /CSV request log/);
  await page.getByTestId("input-format").selectOption({ label: "TSV request log" });
  // Re-read, the report is shown again; the Data tab says how the file was read.
  await page.waitForFunction(() => location.hash === "#report");
  await data.open();
  assert.match(await page.getByTestId("files").innerText(), /TSV request log/);
  assert.match(await data.notice().innerText(), /read as TSV, but the header has no tab/);
  assert.equal(await page.getByTestId("input-format").inputValue(), "tsv");
  assert.deepEqual(errors, []);
  await context.close();
});
