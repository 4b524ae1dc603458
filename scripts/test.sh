#!/usr/bin/env bash
# The one test command (README: `make test`; .ci/run calls it). Installs what is missing, then:
# format, lint, native tests, the wasm builds (app and pkg/), budgets, and the browser tests.
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
