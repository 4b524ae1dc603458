// Saved reports reopen with the same numbers; comparing two runs finds the regressed cell.
import { test } from "node:test";
import assert from "node:assert/strict";
import os from "node:os";
import path from "node:path";
import { useApp, openPage, outsideRequests, screenshot, root } from "./harness.mjs";
import { DataPage, ReportPage, TargetsPage } from "./pages.mjs";

const fixtures = path.join(root, "crates/core/tests/fixtures/compare");
const app = useApp();

test("save a report, reload, open the file: the same numbers; compare finds the regression", async () => {
  const { page, context, requests, errors } = await openPage(app.browser, app.url + "#targets");
  await new TargetsPage(page).open();
  await page.getByTestId("spec-import").setInputFiles(path.join(fixtures, "spec.json"));
  await page.getByText("Imported the spec").waitFor();
  const data = new DataPage(page);
  await data.open();
  await data.upload(path.join(fixtures, "run_a.csv"));
  const report = new ReportPage(page);
  await report.waitForReport();
  // run A: every cell has 990 of 1000 good (tests/reference/make_compare.py): 3960 / 4000 = 99 %.
  const before = await report.text("attainment");
  assert.equal(before, "99 %");

  const [download] = await Promise.all([page.waitForEvent("download"), page.getByTestId("save-report").click()]);
  const saved = path.join(os.tmpdir(), `slo-report-${process.pid}.json`);
  await download.saveAs(saved);

  await page.reload();
  await data.open();
  await data.upload(saved);
  await report.waitForReport();
  assert.match(await report.text("saved-banner"), /Saved report from .*run_a\.csv \(4,?000 rows\)/);
  assert.equal(await report.text("attainment"), before);

  // Run B: chat >=2k dropped from 990 to 900 good of 1000: z ≈ 8.6, far past p < 0.05; the other
  // cells moved by at most 3 requests.
  await page.getByTestId("compare-file").setInputFiles(path.join(fixtures, "run_b.csv"));
  await page.getByTestId("compare-table").waitFor();
  const rows = await page.getByTestId("compare-row").allInnerTexts();
  const worse = rows.filter((r) => /worse/.test(r));
  assert.ok(worse.some((r) => r.startsWith("chat / >=2k")), worse.join("\n"));
  assert.ok(!worse.some((r) => /^(batch|chat \/ <2k)/.test(r)), worse.join("\n"));
  await screenshot(page, "compare");
  assert.deepEqual(outsideRequests(requests), []);
  assert.deepEqual(errors, []);
  await context.close();
});
