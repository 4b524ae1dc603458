// Charts are drawn when they come into view (src/chart.rs): the report's numbers first, a chart
// below the fold once it is scrolled to, and every chart before the page is printed.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { useApp, openPage, outsideRequests, fixtures } from "./harness.mjs";
import { DataPage, ReportPage } from "./pages.mjs";

const worked = fs.readFileSync(path.join(fixtures, "worked_example.csv"), "utf8");
const app = useApp();

/** The worked example's report, scrolled to the top (1280 × 900 viewport). */
async function workedReport(page) {
  const data = new DataPage(page);
  await data.open();
  await data.paste(worked);
  const report = new ReportPage(page);
  await report.waitForReport();
  await page.evaluate(() => window.scrollTo(0, 0));
  return report;
}

/** Whether plotly has drawn chart `id`. */
function drawn(page, id) {
  return page.evaluate((id) => document.querySelector(`#${id} svg.main-svg`) !== null, id);
}

/** Lets the page finish what it queued: the next frame (the observers report), then its tasks. */
function settle(page) {
  return page.evaluate(() => new Promise((done) => requestAnimationFrame(() => setTimeout(done, 0))));
}

/** Each chart's id and whether it is within the viewport or the 200 px beyond (src/chart.rs). */
function reach(page) {
  return page.evaluate(() =>
    [...document.querySelectorAll(".chart")].map((c) => ({
      id: c.id,
      near: c.getBoundingClientRect().top < innerHeight + 200,
    })),
  );
}

test("charts within reach are drawn at once, a chart below the fold once scrolled into view", async () => {
  const { page, context, requests, errors } = await openPage(app.browser, app.url);
  // 1,000 px high: the failures chart is within reach, the CDFs are below the fold.
  await page.setViewportSize({ width: 1280, height: 1000 });
  const report = await workedReport(page);
  const charts = await reach(page);
  const near = charts.filter((c) => c.near).map((c) => c.id);
  const far = charts.filter((c) => !c.near).map((c) => c.id);
  assert.ok(near.length > 0 && far.includes("chart-cdf-ttft"), JSON.stringify(charts));
  for (const id of near) await page.locator(`#${id} svg.main-svg`).first().waitFor({ timeout: 10000 });
  await settle(page);
  await settle(page);
  for (const id of far) assert.equal(await drawn(page, id), false, `${id} was drawn out of view`);
  // Scrolled to, a chart below the fold is drawn.
  await page.getByTestId("chart-cdf-ttft").scrollIntoViewIfNeeded();
  await page.locator("#chart-cdf-ttft svg.main-svg").first().waitFor({ timeout: 10000 });
  // A new target is drawn too: the dashed target line moves once the chart is in view again
  // (typing the target scrolled the page up to its field).
  const line = "#chart-cdf-ttft .shapelayer path";
  await page.locator(line).first().waitFor({ state: "attached" });
  const before = await page.locator(line).first().getAttribute("d");
  await report.setTarget("ttft_ms", 300);
  await page.getByTestId("chart-cdf-ttft").scrollIntoViewIfNeeded();
  await page.waitForFunction(
    ([line, before]) => {
      const path = document.querySelector(line);
      return path !== null && path.getAttribute("d") !== before;
    },
    [line, before],
    { timeout: 10000 },
  );
  assert.deepEqual(outsideRequests(requests), []);
  assert.deepEqual(errors, []);
  await context.close();
});

test("every chart is drawn before the page is printed", async () => {
  const { page, context, errors } = await openPage(app.browser, app.url);
  await workedReport(page);
  await settle(page);
  await settle(page);
  const far = (await reach(page)).filter((c) => !c.near);
  assert.ok(far.length > 0);
  for (const { id } of far) assert.equal(await drawn(page, id), false, id);
  // The browser fires `beforeprint` and lays the page out for print right after: the charts
  // must be there when the handlers return, not a task later.
  const after = await page.evaluate(() => {
    window.dispatchEvent(new Event("beforeprint"));
    return [...document.querySelectorAll(".chart")].map((c) => [c.id, c.querySelector("svg.main-svg") !== null]);
  });
  assert.ok(after.length >= 3, JSON.stringify(after));
  assert.deepEqual(
    after.filter(([, ok]) => !ok),
    [],
  );
  assert.deepEqual(errors, []);
  await context.close();
});
