#!/usr/bin/env bash
# Fuzzes every parser of slo-core: each cargo-fuzz target in fuzz/ runs for SECONDS (default 60),
# one after another, one job each, then the execution counts are printed.
#
#   scripts/fuzz.sh                 # every target, 60 s each
#   scripts/fuzz.sh 600             # every target, 10 minutes each
#   scripts/fuzz.sh 300 prometheus  # only the named targets
#   FUZZ_RUNS=10000000 scripts/fuzz.sh 3600 prometheus   # stop at 10 million executions or 1 h
#
# Several invocations may run at once (each target has its own corpus, log and artifacts), e.g.
# one per core under `nice -n 19` so that builds still get the machine.
#
# The machine has the stable toolchain only. cargo-fuzz passes nightly flags to rustc, so they are
# allowed with RUSTC_BOOTSTRAP=1, and the targets are built with `--sanitizer none`: the core has
# no `unsafe`, so AddressSanitizer has nothing to add, and without it every run is about 2-3 times
# faster. Panics, failed assertions and integer overflow (the fuzz build keeps debug assertions
# and overflow checks) are what crash. docs/reliability.md has the counts of the last long run.
#
# Seeds: tests/malformed/ (the malformed-input corpus), the parser fixtures and fuzz/seeds/
# (batches for `transfer` in the form of Parts::to_bytes, written by
# `SLO_WRITE_SEEDS=1 cargo test -p slo-core --test transfer seeds`), copied into
# fuzz/corpus/<target>/ (git-ignored), which libFuzzer then grows. A crash leaves its input in
# fuzz/artifacts/<target>/ and the script exits non-zero; reproduce it with
#   RUSTC_BOOTSTRAP=1 cargo fuzz run --sanitizer none <target> fuzz/artifacts/<target>/crash-...
# (from fuzz/), then add it to tests/malformed/ with a regression test in
# crates/core/tests/malformed.rs named after the bug.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh

SECONDS_EACH="${1:-60}"
shift || true
ALL_TARGETS=(ingest_csv ingest_json ingest_vllm prometheus spec_json share_fragment evaluate transfer)
if [ "$#" -gt 0 ]; then TARGETS=("$@"); else TARGETS=("${ALL_TARGETS[@]}"); fi

say() { printf '\033[1mfuzz:\033[0m %s\n' "$*"; }

if ! cargo fuzz --version >/dev/null 2>&1; then
  say "installing cargo-fuzz from crates.io"
  cargo install cargo-fuzz --version 0.13.2 --locked
fi

export RUSTC_BOOTSTRAP=1
# Keep the machine usable: at most two compile jobs.
export CARGO_BUILD_JOBS="${CARGO_BUILD_JOBS:-2}"

# Which seed files suit which target (by name; the parsers must survive any input anyway).
seeds_for() {
  local m=tests/malformed f=crates/core/tests/fixtures
  case "$1" in
    ingest_csv|evaluate)
      ls $m/*.csv $m/*.tsv $m/*.bin $f/*.csv tests/fixtures/*.csv 2>/dev/null ;;
    ingest_json)
      ls $m/*.json $m/*.jsonl $f/formats/* 2>/dev/null ;;
    ingest_vllm)
      ls $m/vllm_* $m/json_* $f/formats/vllm_* $f/formats/sglang* 2>/dev/null ;;
    prometheus)
      ls $m/prom_* $f/prometheus/* 2>/dev/null ;;
    spec_json)
      ls $m/spec_* 2>/dev/null ;;
    share_fragment)
      ls $m/share_* 2>/dev/null ;;
    transfer)
      ls fuzz/seeds/transfer/* 2>/dev/null ;;
  esac
}

say "building the targets (release, debug assertions, no sanitizer)"
(cd fuzz && cargo fuzz build --sanitizer none)

summary=()
status=0
for target in "${TARGETS[@]}"; do
  corpus="fuzz/corpus/$target"
  mkdir -p "$corpus" "fuzz/artifacts/$target"
  for seed in $(seeds_for "$target"); do
    # evaluate reads a 12-byte spec header first: give each seed one.
    if [ "$target" = evaluate ]; then
      { printf '\x3f\x32\x28\x19\x28\x06\x01\x14\x7f\x00\x01\x10'; cat "$seed"; } >"$corpus/seed-$(basename "$seed")"
    else
      cp "$seed" "$corpus/seed-$(basename "$seed")"
    fi
  done
  before=$(ls "fuzz/artifacts/$target" | grep -c -E '^(crash|oom|timeout|leak|slow-unit)-' || true)
  log="fuzz/artifacts/$target/fuzz-$(date +%Y%m%d-%H%M%S).log"
  say "$target: ${SECONDS_EACH}s, seeds $(ls "$corpus" | wc -l), log $log"
  set +e
  (cd fuzz && cargo fuzz run --sanitizer none "$target" "corpus/$target" -- \
      -max_total_time="$SECONDS_EACH" -runs="${FUZZ_RUNS:--1}" -print_final_stats=1 \
      -rss_limit_mb=2048 -max_len=65536 -timeout=20 \
      -artifact_prefix="artifacts/$target/" >"../$log" 2>&1)
  rc=$?
  set -e
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | tail -n 1 | grep -o '[0-9]*$' || true)
  after=$(ls "fuzz/artifacts/$target" | grep -c -E '^(crash|oom|timeout|leak|slow-unit)-' || true)
  crashes=$((after - before))
  if [ "$rc" -ne 0 ] || [ "$crashes" -gt 0 ]; then status=1; fi
  secs=$(grep -o 'Done [0-9]* runs in [0-9]* second' "$log" | tail -n 1 | grep -o 'in [0-9]*' | grep -o '[0-9]*' || true)
  summary+=("$(printf '%-15s %12s executions in %ss (limit %ss), exit %s, new artifacts %s' "$target" "${execs:-?}" "${secs:-?}" "$SECONDS_EACH" "$rc" "$crashes")")
done

say "summary"
printf '  %s\n' "${summary[@]}"
exit "$status"
