#!/usr/bin/env bash
# Builds the single-file edition, dist-single/slo-workbench.html: the app with its wasm, JS glue,
# plotly.js and stylesheet inline, to open by double-click from disk (file://), offline.
# See docs/single-file.md.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
cargo build -p slo-workbench --target wasm32-unknown-unknown --release
out=target/single
rm -rf "$out"
# no-modules: a classic script that defines a global `wasm_bindgen`, so it can be inlined
# (an ES module cannot import an inline module, and the page has no URL to load one from).
wasm-bindgen --target no-modules --no-typescript --out-dir "$out" \
  target/wasm32-unknown-unknown/release/slo-workbench.wasm
# The same feature flags as scripts/build-pkg.sh: what rustc's wasm32 target emits.
wasm-opt -Oz --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext \
  --enable-mutable-globals -o "$out/slo-workbench_bg.opt.wasm" "$out/slo-workbench_bg.wasm"
node scripts/inline.mjs \
  --css www/style.css \
  --plotly node_modules/plotly.js-cartesian-dist-min/plotly-cartesian.min.js \
  --glue "$out/slo-workbench.js" \
  --wasm "$out/slo-workbench_bg.opt.wasm" \
  --out dist-single/slo-workbench.html
# The limit in docs/single-file.md: one file a wiki or mail attachment still takes.
limit=3000000
size=$(wc -c < dist-single/slo-workbench.html)
if (( size > limit )); then
  echo "dist-single/slo-workbench.html is $size bytes, over the $limit-byte limit" >&2
  exit 1
fi
