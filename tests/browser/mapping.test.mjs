// The column-mapping step: unknown headers are mapped by the user, the file is re-read, and the
// mapping is remembered for the next file.
import { test } from "node:test";
import assert from "node:assert/strict";
import { useApp, openPage, screenshot } from "./harness.mjs";
import { DataPage, ReportPage } from "./pages.mjs";

const app = useApp();

// The worked example with headers the tool does not know; TTFT in seconds.
const log = [
  "first_byte,total_time,tokens_generated",
  "0.18,4010,101", "0.22,4690,101", "0.26,4860,101", "0.31,5240,101", "0.64,4420,101",
  "0.30,6900,101", "0.35,5230,101", "0.24,4600,101", "0.39,5220,101", "0.41,5330,101",
].join("\n");

test("map unknown columns with units, re-read, and the mapping is remembered", async () => {
  const { page, context } = await openPage(app.browser, app.url + "#data");
  const data = new DataPage(page);
  await data.open();
  await data.paste(log);
  assert.match(await data.notice().innerText(), /no latency column/);
  await page.getByTestId("mapping").waitFor();
  await page.getByTestId("map-field-0").selectOption({ label: "TTFT" });
  await page.getByTestId("map-unit-0").selectOption({ label: "s" });
  await page.getByTestId("map-field-1").selectOption({ label: "E2E latency" });
  await page.getByTestId("map-field-2").selectOption({ label: "output tokens" });
  // A unit is asked for times only.
  assert.equal(await page.getByTestId("map-unit-0").isDisabled(), false);
  assert.equal(await page.getByTestId("map-unit-2").isDisabled(), true);
  await screenshot(page, "mapping");
  await page.getByTestId("map-apply").click();
  const report = new ReportPage(page);
  await report.waitForReport();
  await report.setTarget("ttft_ms", 500);
  await report.setTarget("tpot_ms", 50);
  // Same rows as the worked example once mapped: 8 of 10 good.
  assert.equal(await report.text("attainment"), "80 %");

  // Remembered: a fresh paste with the same headers reads at once.
  await page.reload();
  await data.open();
  await data.paste(log);
  await report.waitForReport();
  assert.equal(await report.text("attainment"), "80 %");
  await context.close();
});
