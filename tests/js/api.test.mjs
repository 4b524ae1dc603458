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

test("options.ingest reads seconds, forces a format, and can leave the digest to the caller", async () => {
  const { createHash } = await import("node:crypto");
  const text = "ttft,e2e\n0.25,1.5\n";
  const sha = createHash("sha256").update(text).digest("hex");
  const out = slo.report([{ name: "s.csv", text }], undefined, { ingest: { default_time_unit: "s", format: "csv" } });
  const ttft = out.report.overall.indicators.find((i) => i.indicator === "ttft").stats.percentiles[0];
  assert.equal(ttft.linear, 250);
  assert.equal(out.files[0].provenance.format, "csv");
  assert.equal(out.files[0].provenance.sha256, sha);
  const later = slo.report([{ name: "s.csv", text }], undefined, { ingest: { sha256_elsewhere: true } });
  assert.equal(later.files[0].provenance.sha256, "");
});

test("sweep() finds the fixture sweep's capacity; document() writes the measured section", () => {
  const dir = new URL("../../crates/core/tests/fixtures/sweep/", import.meta.url);
  const names = fs.readdirSync(dir).filter((n) => n.startsWith("sweep_") && n.endsWith(".json"));
  const files = names.map((name) => ({ name, text: fs.readFileSync(new URL(name, dir), "utf8") }));
  const s = spec({ ttft: { kind: "fixed", ms: 500 }, tpot_ms: 50 });
  const expected = JSON.parse(fs.readFileSync(new URL("expected.json", dir), "utf8"));
  const out = slo.sweep(files, s);
  // The generator (tests/reference/make_sweep.py) computed the crossing independently (expected.json).
  assert.equal(out.capacity.passing_rps, expected.capacity_rps);
  assert.equal(out.capacity.first_failing_rps, expected.first_failing_rps);
  assert.ok(Math.abs(out.capacity.crossing_rps - expected.crossing_rps) < 1e-6);

  const result = slo.report([{ name: "worked.csv", text: worked }], s, {});
  const md = slo.document(s, result);
  assert.match(md, /80 %/);
  assert.match(md, /worked\.csv/);
  assert.doesNotMatch(slo.document(s, undefined), /worked\.csv/);
});
