#!/usr/bin/env bash
# `make bench`: every performance figure of docs/performance.md, measured in one run.
#
#   1. a deterministic 1,000,000-request CSV in target/bench/ (generated once; ~35 MB)
#   2. `slo report` against the numpy/pandas reference, whole processes, alternately
#      (bench/compare_cli.py; CLI built with `cargo build --profile cli -p slo-cli`)
#   3. the criterion benchmarks of slo-core: re-evaluation after a target change and prepare at
#      1,000,000 requests, and the load sweep (`cargo bench -p slo-core`)
#   4. the app in headless Chromium: file → report, long tasks, memory (bench/browser_bench.mjs,
#      on dist/ built by `trunk build --release`), each run after a run of the reference, and
#      the ratio of their medians
#   5. where the app's wasm bytes are: its code by crate, the engine's against the UI's
#      (bench/wasm_sizes.sh)
#
# Settings (environment): BENCH_ROWS (1000000), BENCH_RUNS (5, CLI comparison), BENCH_BROWSER_RUNS
# (3), BENCH_SKIP (space-separated parts to leave out: cli criterion browser wasm), BENCH_OUT
# (where the log and the figures go: target/bench), BENCH_DIST_BUILT=1 (dist/ is built already:
# no trunk build). The test command runs a small one, to keep these scripts working.
# Benchmarks, not tests: nothing here fails on a slow figure; the comparison fails only when the
# two sides give different answers. Numbers move with machine load: run on a quiet machine.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
source scripts/env.sh

ROWS=${BENCH_ROWS:-1000000}
RUNS=${BENCH_RUNS:-5}
BROWSER_RUNS=${BENCH_BROWSER_RUNS:-3}
SKIP=" ${BENCH_SKIP:-} "
OUT=${BENCH_OUT:-target/bench}
FILE=$OUT/requests_${ROWS}.csv
mkdir -p "$OUT"

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
skipped() { [[ "$SKIP" == *" $1 "* ]]; }

if ! python3 -c 'import numpy, pandas' 2>/dev/null; then
  step "installing numpy and pandas (pinned, bench/requirements.txt)"
  python3 -m pip install --quiet -r bench/requirements.txt
fi

if [ ! -s "$FILE" ]; then
  step "generating $FILE ($ROWS requests, fixed seed)"
  python3 bench/gen_requests.py "$ROWS" "$FILE.tmp" && mv "$FILE.tmp" "$FILE"
fi

if ! skipped cli; then
  step "building slo (cargo build --profile cli -p slo-cli)"
  cargo build --profile cli -p slo-cli
  step "slo report vs the numpy reference ($RUNS runs each, alternating)"
  python3 bench/compare_cli.py "$FILE" --runs "$RUNS" --slo target/cli/slo --json "$OUT/cli.json"
fi

if ! skipped criterion; then
  step "criterion benchmarks (cargo bench -p slo-core)"
  cargo bench -p slo-core 2>&1 | tee "$OUT/criterion.txt"
fi

if ! skipped browser; then
  if [ "${BENCH_DIST_BUILT:-}" != 1 ]; then
    step "building the app (trunk build --release)"
    # Another trunk build in the same tree (a test run) pulls dist/.stage away under this one:
    # try again rather than give up.
    for attempt in 1 2 3; do
      trunk build --release && break
      [ "$attempt" = 3 ] && exit 1
      echo "trunk build failed (attempt $attempt); trying again in 20 s"
      sleep 20
    done
  fi
  step "the app in headless Chromium ($BROWSER_RUNS runs, each after a run of the reference)"
  node bench/browser_bench.mjs "$FILE" --runs "$BROWSER_RUNS" --reference --json "$OUT/browser.json"
fi

if ! skipped wasm; then
  step "where the app's wasm bytes are (bench/wasm_sizes.sh)"
  bash bench/wasm_sizes.sh "$OUT/wasm-sizes" | tee "$OUT/wasm-sizes.txt"
fi

step "summary"
python3 - "$OUT" "$SKIP" <<'PY'
import glob, json, os, sys
out, skip = sys.argv[1], sys.argv[2].split()
def load(name):
    path = os.path.join(out, name)
    return json.load(open(path)) if os.path.exists(path) else None
# Only the parts run this time: a skipped part's file is from an earlier run.
cli = None if "cli" in skip else load("cli.json")
browser = None if "browser" in skip else load("browser.json")
print(f"machine: {os.cpu_count()} CPUs")
if cli:
    print(f"CLI: reference {cli['reference']['wall_s'] * 1e3:.0f} ms, slo {cli['slo']['wall_s'] * 1e3:.0f} ms "
          f"(medians, whole processes): {cli['ratio_wall']:.1f}x faster (target 8x); "
          f"CPU {cli['ratio_cpu']:.1f}x; answers {'the same' if cli['same_answers'] else 'DIFFERENT'}")
criterion = [] if "criterion" in skip else glob.glob("target/criterion/**/new/estimates.json", recursive=True)
for path in sorted(criterion):
    est = json.load(open(path))
    name = os.path.relpath(os.path.dirname(os.path.dirname(path)), "target/criterion")
    print(f"criterion: {name}: {est['mean']['point_estimate'] / 1e6:.1f} ms (mean)"
          + ("   (target <= 50 ms)" if "reevaluate" in name else ""))
if browser:
    line = (f"app: file -> report {browser['toReportMs']:.0f} ms (median), longest main-thread task "
            f"{browser['longestTaskMs']:.0f} ms (target <= 200 ms), renderer peak {browser['rendererPeakMiB']:.0f} MiB")
    if "ratioToReference" in browser:
        line += f", {browser['ratioToReference']:.2f}x the reference's speed (target 2x)"
    print(line)
PY
