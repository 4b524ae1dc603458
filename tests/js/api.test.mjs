// The JS API in pkg/ (node build), as a wiki page would call it.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const slo = require("../../pkg/node/slo.js");
const worked = fs.readFileSync(new URL("../fixtures/worked_example.csv", import.meta.url), "utf8");

function spec(targets) {
  return {
    version: 1,
    service: "chat",
    classes: [{ name: "all", rule: { kind: "default" }, targets: [targets] }],
    percentiles: [90],
    objective: 0.99,
    window: { kind: "rolling", days: 28 },
  };
}

test("report() gives the worked example's figures", () => {
  const out = slo.report([{ name: "worked.csv", text: worked }], spec({ ttft: { kind: "fixed", ms: 500 }, tpot_ms: 50 }), { duration_s: 10 });
  const o = out.report.overall;
  assert.equal(o.attempted, 10);
  assert.equal(o.good, 8);
  assert.equal(o.attainment, 0.8);
  // 8 good requests over the 10 s typed duration.
  assert.equal(o.goodput_rps, 0.8);
  const ttft = o.indicators.find((i) => i.indicator === "ttft").stats.percentiles[0];
  // numpy.percentile([180,220,260,310,640,300,350,240,390,410], 90) = 433 (to rounding)
  assert.ok(Math.abs(ttft.linear - 433) < 1e-9);
  assert.equal(ttft.nearest, 410);
  assert.deepEqual(out.report.failing.map((f) => [f.id, f.missed]), [["5", ["ttft"]], ["6", ["tpot"]]]);
  assert.equal(out.files[0].provenance.rows_read, 10);
});

test("bad rows come back located; an invalid spec throws with the field path", () => {
  const out = slo.report([{ name: "bad.csv", text: "ttft_ms,e2e_ms\n1,2\nx,3\n" }], undefined, undefined);
  assert.equal(out.files[0].errors[0].at.line, 3);
  assert.equal(out.files[0].errors[0].at.column, 1);
  assert.throws(() => slo.validateSpec({ ...spec({}), objective: 1.5 }), /objective/);
});
