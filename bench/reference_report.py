#!/usr/bin/env python3
"""The seed's `slo_report` (shared/docs/slo-guide.txt) at scale: pandas reads, numpy computes.

    python3 bench/reference_report.py FILE.csv [--ttft 500] [--tpot 50] [--json]

This is the baseline `slo report` is measured against (bench/compare_cli.py), so it is written
the way a numpy user would write it: vectorised, no Python loop over requests. It follows the
guide's function and the rules `slo report` documents where the guide is silent:

- TPOT = (E2E - TTFT) / (n - 1) for n > 1. The guide sets TPOT to 0 when n <= 1; here such
  requests are left out of TPOT percentiles and pass the TPOT target (vLLM's rule, and slo's),
  so that both sides compute the same thing.
- Failures (status error / timeout) stay in the denominator of joint attainment (good /
  attempted); percentiles are over completed requests (status ok).
- p50/p90/p99 of TTFT, TPOT and E2E by numpy's `linear` and `nearest` methods, overall and per
  class; joint attainment (TTFT <= target and TPOT <= target) overall and per class.

Prints a short text report, or with --json the figures compare_cli.py checks.
"""

import argparse
import json

import numpy as np
import pandas as pd

QS = (50, 90, 99)


def percentiles(x):
    """{indicator q: (linear, nearest)} for one sample; None when empty."""
    if x.size == 0:
        return {q: (None, None) for q in QS}
    lin = np.percentile(x, QS)  # linear interpolation (numpy's default, Hyndman & Fan 7)
    near = np.percentile(x, QS, method="nearest")
    return {q: (float(a), float(b)) for q, a, b in zip(QS, lin, near)}


def slo_report(df, ttft_ms=500.0, tpot_ms=50.0):
    """The guide's slo_report on a DataFrame: per-request joint check, percentiles by two methods."""
    ttft = df["ttft_ms"].to_numpy(float)
    e2e = df["e2e_ms"].to_numpy(float)
    n = df["output_tokens"].to_numpy(float)
    ok = (df["status"].to_numpy() == "ok") if "status" in df else np.ones(len(df), bool)
    with np.errstate(divide="ignore", invalid="ignore"):
        tpot = np.where(n > 1, (e2e - ttft) / (n - 1), np.nan)
    one_token = n <= 1
    # Per request, all targets at once; failures are attempted and bad.
    good = ok & (ttft <= ttft_ms) & ((tpot <= tpot_ms) | one_token)
    out = {
        "attempted": int(len(df)),
        "good": int(good.sum()),
        "attainment": float(good.mean()) if len(df) else None,
        "percentiles": {
            "ttft_ms": percentiles(ttft[ok & ~np.isnan(ttft)]),
            "tpot_ms": percentiles(tpot[ok & ~np.isnan(tpot)]),
            "e2e_ms": percentiles(e2e[ok & ~np.isnan(e2e)]),
        },
    }
    return out, good


def report(path, ttft_ms, tpot_ms):
    df = pd.read_csv(path)
    overall, _ = slo_report(df, ttft_ms, tpot_ms)
    classes = {}
    if "class" in df:
        for name, part in df.groupby("class", sort=True):
            classes[str(name)] = slo_report(part, ttft_ms, tpot_ms)[0]
    return {"overall": overall, "classes": classes}


def text(r, ttft_ms, tpot_ms):
    lines = []
    for name, g in [("overall", r["overall"])] + sorted(r["classes"].items()):
        lines.append(f"{name}: joint attainment {g['attainment']:.4%} ({g['good']} of {g['attempted']})")
        for ind, slo in (("ttft_ms", ttft_ms), ("tpot_ms", tpot_ms), ("e2e_ms", None)):
            for q, (lin, near) in g["percentiles"][ind].items():
                lines.append(f"  p{q} {ind}: linear {lin:.3f}  nearest {near:.3f}  target {slo}")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file")
    ap.add_argument("--ttft", type=float, default=500.0)
    ap.add_argument("--tpot", type=float, default=50.0)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    r = report(a.file, a.ttft, a.tpot)
    print(json.dumps(r) if a.json else text(r, a.ttft, a.tpot))


if __name__ == "__main__":
    main()
