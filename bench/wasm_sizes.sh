#!/usr/bin/env bash
# Where the app's wasm bytes are (docs/performance.md, twenty-first round): builds the app's
# wasm as trunk does, keeps its function names through wasm-bindgen and wasm-opt (-Oz, as
# index.html asks of trunk), and prints bench/wasm_sizes.py's breakdown of it.
#
#   bash bench/wasm_sizes.sh [OUT_DIR]     # OUT_DIR: target/wasm-sizes
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
out=${1:-target/wasm-sizes}
mkdir -p "$out"
cargo build --release --target wasm32-unknown-unknown --bin slo-workbench
wasm-bindgen --target web --keep-debug --out-dir "$out" --out-name app \
  target/wasm32-unknown-unknown/release/slo-workbench.wasm
wasm-opt -Oz -g --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext \
  --enable-mutable-globals --enable-reference-types --enable-multivalue \
  -o "$out/app.wasm" "$out/app_bg.wasm"
python3 bench/wasm_sizes.py "$out/app.wasm"
