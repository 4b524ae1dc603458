// Production: pasted /metrics dumps give the fractions and merged percentiles the core computes
// (checked by hand from the fixtures), a window is the increase between two dumps with the
// counter reset said, and request logs with timestamps give the error budget, the alerts and
// the queue-vs-TTFT diagnosis.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { useApp, openPage, outsideRequests, screenshot, root } from "./harness.mjs";
import { DataPage, ProductionPage } from "./pages.mjs";

const prom = (name) =>
  fs.readFileSync(path.join(root, "crates/core/tests/fixtures/prometheus", name), "utf8");
const app = useApp();

test("two replicas' dumps: merged fractions and percentiles", async () => {
  const { page, context, requests, errors } = await openPage(app.browser, app.url);
  const prod = new ProductionPage(page);
  await prod.open();
  await prod.paste(0, prom("replica_a.prom"));
  await prod.addReplica();
  await prod.paste(1, prom("replica_b.prom"));

  // TTFT ≤ 500 ms, model meta-llama/Llama-3.1-8B-Instruct: replica_a has 80 of 100 at
  // le="0.5", replica_b 60 of 100; merged (140) / (200) = 70 %, exact since 0.5 s is an edge.
  // The second TTFT group is replica_a's model "other": 3 of 4 = 75 %.
  assert.deepEqual(await prod.fractions("ttft"), ["70 %", "75 %"]);
  // TPOT ≤ 50 ms (request_time_per_output_token_seconds, le="0.05"): (90 + 85) / 200 = 87.5 %.
  assert.deepEqual(await prod.fractions("tpot"), ["87.5 %"]);
  assert.match(await prod.text("prod-headline"), /across 2 replicas: 70 % of TTFT observations \(model_name=meta-llama\/Llama-3.1-8B-Instruct\) were at or under 500 ms/);
  // Merged p90 TTFT: rank 0.9 · 200 = 180 falls in the (0.5, 1.0] bucket, cumulative 140 → 185:
  // 0.5 + 0.5 · (180 − 140) / (185 − 140) = 0.94444 s. Per replica: a 0.5 + 0.5 · 10/15 =
  // 833.33 ms, b 0.5 + 0.5 · 30/30 = 1,000 ms; their mean 916.67 ms is 27.78 ms too low.
  assert.equal(await prod.text("prod-p-ttft-90"), "944.44 ms");
  const group = await prod.text("prod-group");
  assert.match(group, /916\.67 ms/);
  assert.match(group, /-27\.78 ms/);
  // replica_a exports both ITL names: the newer is read, and the page says so.
  assert.match(await prod.text("prod-notes"), /inter_token_latency_seconds is read/);
  assert.match(await prod.text("prod-caveat"), /not joint attainment/);
  assert.deepEqual(outsideRequests(requests), []);
  assert.deepEqual(errors, []);
  await context.close();
});

test("a window between two dumps, with a counter reset", async () => {
  const { page, context, errors } = await openPage(app.browser, app.url);
  const prod = new ProductionPage(page);
  await prod.open();
  await prod.paste(0, prom("window_after.prom"));
  await prod.pasteEarlier(0, prom("window_before.prom"));
  // TTFT le="0.5": 230 of 300 after, 80 of 100 before: (230 − 80) / (300 − 100) = 75 %.
  assert.deepEqual(await prod.fractions("ttft"), ["75 %"]);
  assert.match(await prod.text("prod-headline"), /^In the window between the two dumps/);
  // E2E's count went from 500 down to 40: the process restarted.
  assert.match(await prod.text("prod-notes"), /Counter reset on replica replica-1: vllm:e2e_request_latency_seconds/);
  assert.deepEqual(errors, []);
  await context.close();
});

/** Six hours of chat traffic, one request every 30 s; in the fourth hour requests queue. */
function incidentLog() {
  const t0 = Date.UTC(2026, 10, 1) / 1000;
  const lines = ["request_id,start_time,ttft_ms,queue_ms,e2e_ms,input_tokens,output_tokens"];
  for (let i = 0; i < 720; i++) {
    const queued = i >= 360 && i < 480;
    const queue = queued ? 1300 : 10;
    const ttft = queued ? 1500 : 200;
    lines.push(`r${i},${t0 + 30 * i},${ttft},${queue},${ttft + 2000},1000,101`);
  }
  return lines.join("\n");
}

test("a log without timestamps: the budget says why in amber, not as an error", async () => {
  // The first visit shows the built-in sample: the guide's ten requests, with no start times.
  const { page, context, errors } = await openPage(app.browser, app.url);
  const prod = new ProductionPage(page);
  await prod.open();
  const headline = page.getByTestId("budget-headline");
  assert.match(await prod.text("budget-headline"), /^None of the 10 attempted requests has a timestamp/);
  assert.equal(await headline.getAttribute("class"), "notice warn");
  assert.deepEqual(errors, []);
  await context.close();
});

test("request logs: error budget, alerts and diagnosis", async () => {
  const { page, context, requests, errors } = await openPage(app.browser, app.url);
  const data = new DataPage(page);
  await data.open();
  await data.paste(incidentLog());
  const prod = new ProductionPage(page);
  await prod.open();
  await page.getByTestId("prod-example").click();
  await page.getByTestId("prod-fraction-ttft").first().waitFor();

  // 120 of 720 requests miss TTFT 500 ms. The log covers 6 h of the 28-day window, so the
  // volume is extrapolated: 720 · (28 · 24 / 6) = 80,640 requests, of which 1 % = 806.4 may be
  // bad; 120 / 806.4 = 14.88 % of the budget is spent.
  assert.equal(await prod.text("budget-consumed"), "14.88 %");
  assert.match(await prod.text("budget-headline"), /^14\.88 % of the error budget is spent: 120 bad requests of 806\.4 allowed/);
  // In the fourth hour every request is bad: burn rate 100, above every alert's threshold.
  const alerts = await prod.text("budget-alerts");
  assert.match(alerts, /page\s+2 % in 1 h.*would have fired 1×: 2026-11-01 03:/s);
  assert.ok(await prod.chartDrawn("chart-burn"));
  assert.ok(await prod.chartDrawn("chart-burndown"));
  // Median TTFT per hour: 200 ms usually, 1,500 ms in the fourth hour, with queue time up by
  // 1,290 ms (more than half the 1,300 ms rise): short of capacity.
  assert.match(await prod.text("diagnosis"), /rose well above its usual 200 ms 1 time/);
  assert.match(await prod.text("diagnosis-incidents"), /2026-11-01 03:00 UTC – 2026-11-01 04:00 UTC: Short of capacity/);
  assert.ok(await prod.chartDrawn("chart-diagnosis"));
  await screenshot(page, "production");
  assert.deepEqual(outsideRequests(requests), []);
  assert.deepEqual(errors, []);
  await context.close();
});

test("a dump read with a warning says so apart from the lines it skipped", async () => {
  const { page, context, errors } = await openPage(app.browser, app.url);
  const prod = new ProductionPage(page);
  await prod.open();
  // _count (11) disagrees with the le="+Inf" bucket (10): read, with the bucket used, and a
  // warning. Until 2026-12-01 the page listed that warning as "0 lines skipped".
  await prod.paste(
    0,
    [
      "# TYPE vllm:time_to_first_token_seconds histogram",
      'vllm:time_to_first_token_seconds_bucket{le="0.5"} 8',
      'vllm:time_to_first_token_seconds_bucket{le="+Inf"} 10',
      "vllm:time_to_first_token_seconds_count 11",
      "vllm:time_to_first_token_seconds_sum 4.2",
      "",
    ].join("\n"),
  );
  assert.deepEqual(await prod.fractions("ttft"), ["80 %"]);
  await page.getByTestId("prod-read").locator("summary").click();
  const read = await prod.text("prod-read");
  assert.match(read, /read with a warning/);
  // The metric's name keeps its case at the head of the sentence ("Vllm:" until 2026-12-01).
  assert.match(await prod.text("prod-warnings"), /^vllm:time_to_first_token_seconds: _count is 11 but the le="\+Inf" bucket is 10/);
  assert.doesNotMatch(read, /skipped/);
  assert.equal(await page.getByTestId("prod-errors").count(), 0);
  assert.deepEqual(errors, []);
  await context.close();
});
