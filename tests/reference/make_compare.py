#!/usr/bin/env python3
"""Writes the fixtures of `slo compare`: crates/core/tests/fixtures/compare/{run_a,run_b}.csv and
expected.json.

Two runs of the same service, 2 classes (`chat`, `batch`: the `class` column) x 2 input-length
buckets (`<2k`, `>=2k`: bucket edge 2000 tokens), exactly 1,000 requests per cell and run, judged
against TTFT <= 500 ms and TPOT <= 50 ms in every cell (spec.json):

- good requests: TTFT uniform in [80, 450] ms, TPOT uniform in [15, 45] ms;
- bad requests: TTFT uniform in [600, 1200] ms (they miss TTFT only), TPOT as above;
- good requests per cell (A -> B):
    chat  <2k   990 -> 988     (no significant change)
    chat  >=2k  990 -> 900     (the regression: 99 % -> 90 %)
    batch <2k   990 -> 992     (no significant change)
    batch >=2k  990 -> 991     (no significant change)
  so class chat and the overall figure are significantly worse, class batch is not.

Rows of all cells are shuffled together. Times are written with one decimal and E2E =
TTFT + (output_tokens - 1) * TPOT, so TPOT stays at least 5 ms from its target after rounding.
expected.json records, per run and cell, the counts and the numpy 'linear' (Hyndman & Fan type 7)
percentiles p50/p90/p99 of TTFT and TPOT computed here from the values as written (the same
arithmetic as slo-core: TPOT = (E2E - TTFT) / (n - 1)), and their shifts B - A.

Plain `random` with a fixed seed: run `python3 tests/reference/make_compare.py` from the
repository root to rewrite the files byte for byte.
"""

import json
import math
import os
import random

SEED = 20240611
N = 1000
CLASSES = ["chat", "batch"]
BUCKETS = [("<2k", 100, 1999), (">=2k", 2000, 8000)]
GOOD = {
    "a": {("chat", "<2k"): 990, ("chat", ">=2k"): 990, ("batch", "<2k"): 990, ("batch", ">=2k"): 990},
    "b": {("chat", "<2k"): 988, ("chat", ">=2k"): 900, ("batch", "<2k"): 992, ("batch", ">=2k"): 991},
}
PERCENTILES = [50.0, 90.0, 99.0]
OUT = os.path.join("crates", "core", "tests", "fixtures", "compare")


def linear_percentile(sorted_xs, q):
    """numpy.percentile(x, q, method='linear') (Hyndman & Fan type 7)."""
    h = (len(sorted_xs) - 1) * q / 100.0
    lo = math.floor(h)
    hi = min(lo + 1, len(sorted_xs) - 1)
    return sorted_xs[lo] + (h - lo) * (sorted_xs[hi] - sorted_xs[lo])


def run(name, rng):
    rows = []
    for cls in CLASSES:
        for bucket, lo_tokens, hi_tokens in BUCKETS:
            good = GOOD[name][(cls, bucket)]
            bad = set(rng.sample(range(N), N - good))
            for k in range(N):
                out_tokens = rng.randint(20, 400)
                tpot = rng.uniform(15.0, 45.0)
                ttft = rng.uniform(600.0, 1200.0) if k in bad else rng.uniform(80.0, 450.0)
                ttft_s = f"{ttft:.1f}"
                e2e_s = f"{float(ttft_s) + (out_tokens - 1) * tpot:.1f}"
                rows.append(
                    {
                        "class": cls,
                        "bucket": bucket,
                        "input_tokens": rng.randint(lo_tokens, hi_tokens),
                        "output_tokens": out_tokens,
                        "ttft_ms": ttft_s,
                        "e2e_ms": e2e_s,
                    }
                )
    rng.shuffle(rows)
    return rows


def stats(name, rows):
    cells = {}
    for cls in CLASSES:
        for bucket, _, _ in BUCKETS:
            mine = [r for r in rows if r["class"] == cls and r["bucket"] == bucket]
            ttft = sorted(float(r["ttft_ms"]) for r in mine)
            tpot = sorted(
                (float(r["e2e_ms"]) - float(r["ttft_ms"])) / (r["output_tokens"] - 1) for r in mine
            )
            good = sum(
                1
                for r in mine
                if float(r["ttft_ms"]) <= 500.0
                and (float(r["e2e_ms"]) - float(r["ttft_ms"])) / (r["output_tokens"] - 1) <= 50.0
            )
            assert good == GOOD[name][(cls, bucket)], (cls, bucket, good)
            cells[f"{cls} / {bucket}"] = {
                "class": cls,
                "bucket": bucket,
                "attempted": len(mine),
                "good": good,
                "ttft_ms": {f"{q:g}": linear_percentile(ttft, q) for q in PERCENTILES},
                "tpot_ms": {f"{q:g}": linear_percentile(tpot, q) for q in PERCENTILES},
            }
    return cells


def write_csv(path, rows):
    with open(path, "w", newline="\n") as f:
        f.write("request_id,class,input_tokens,output_tokens,ttft_ms,e2e_ms\n")
        for i, r in enumerate(rows, start=1):
            f.write(f"{i},{r['class']},{r['input_tokens']},{r['output_tokens']},{r['ttft_ms']},{r['e2e_ms']}\n")


def main():
    rng = random.Random(SEED)
    os.makedirs(OUT, exist_ok=True)
    runs = {}
    for name in ["a", "b"]:
        rows = run(name, rng)
        write_csv(os.path.join(OUT, f"run_{name}.csv"), rows)
        runs[name] = stats(name, rows)
    shifts = {}
    for key, a in runs["a"].items():
        b = runs["b"][key]
        shifts[key] = {
            ind: {q: b[ind][q] - a[ind][q] for q in a[ind]} for ind in ["ttft_ms", "tpot_ms"]
        }
    expected = {
        "generator": "tests/reference/make_compare.py",
        "targets": {"ttft_ms": 500, "tpot_ms": 50},
        "method": "numpy.percentile(x, q, method='linear')",
        "a": runs["a"],
        "b": runs["b"],
        "shift_b_minus_a": shifts,
    }
    with open(os.path.join(OUT, "expected.json"), "w", newline="\n") as f:
        json.dump(expected, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()
