#!/usr/bin/env bash
# The one test command (README: `make test`; .ci/run calls it). Installs what is missing, then:
# format, lint, native tests, the fuzz targets' build, the wasm builds (app and pkg/), budgets,
# the browser tests, and the benchmark scripts on a small log.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
source scripts/env.sh

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "cargo fmt --check"
cargo fmt --all -- --check

step "cargo clippy (native, every crate and target)"
cargo clippy --workspace --all-targets -- -D warnings

step "native tests"
cargo test --workspace

# The fuzz targets are their own workspace, run with nightly (docs/reliability.md); checking
# that they still compile on stable keeps them from falling behind the engine's types.
step "fuzz targets compile (cargo check, fuzz/)"
cargo check --manifest-path fuzz/Cargo.toml --all-targets

step "wasm build of the app (trunk, release)"
trunk build --release

step "wasm build of the JS API into pkg/"
bash scripts/build-pkg.sh

step "single-file edition into dist-single/"
bash scripts/build-single.sh

step "size budget"
node scripts/check-size.mjs

step "browser tests (headless Debian chromium)"
node --test tests/browser/ tests/js/

# The benchmark scripts (docs/performance.md) on a small generated log, so that they keep
# working; it fails if slo and the numpy reference disagree on it. The figures mean nothing.
step "benchmark scripts on 20,000 requests (slo and the numpy/pandas reference agree)"
BENCH_ROWS=20000 BENCH_RUNS=1 BENCH_BROWSER_RUNS=1 BENCH_SKIP=criterion \
  BENCH_OUT=target/bench-smoke BENCH_DIST_BUILT=1 bash scripts/bench.sh
