#!/usr/bin/env bash
# Builds the JS API (crates/js) into pkg/ (ES module for pages) and pkg/node/ (for node).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
cargo build -p slo-js --target wasm32-unknown-unknown --release
wasm=target/wasm32-unknown-unknown/release/slo_js.wasm
wasm-bindgen --target web --out-dir pkg --out-name slo "$wasm"
wasm-bindgen --target nodejs --out-dir pkg/node --out-name slo "$wasm"
wasm-opt -Oz --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext --enable-mutable-globals -o pkg/slo_bg.wasm pkg/slo_bg.wasm
echo "pkg/: $(du -h pkg/slo_bg.wasm | cut -f1) wasm"
