#!/usr/bin/env bash
# Installs what this project needs and is missing; a second run is fast (it only checks).
# Everything comes from the package registries (crates.io, npm, PyPI, Debian): nothing downloads
# binaries from elsewhere. Versions are pinned here and in package-lock.json / Cargo.lock.
set -euo pipefail
cd "$(dirname "$0")/.."

TRUNK_VERSION=0.21.14
# wasm-bindgen-cli must equal the wasm-bindgen crate in Cargo.lock.
WASM_BINDGEN_VERSION=$(awk '/^name = "wasm-bindgen"$/ {getline; gsub(/version = |"/, ""); print; exit}' Cargo.lock)

say() { printf '\033[1msetup:\033[0m %s\n' "$*"; }

if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  say "adding the wasm32-unknown-unknown target"
  rustup target add wasm32-unknown-unknown
fi
for component in rustfmt clippy; do
  if ! rustup component list --installed | grep -q "^$component"; then
    rustup component add "$component"
  fi
done

if [ "$(trunk --version 2>/dev/null | awk '{print $2}')" != "$TRUNK_VERSION" ]; then
  say "installing trunk $TRUNK_VERSION (about 6 minutes on 2 cores)"
  cargo install trunk --version "$TRUNK_VERSION" --locked
fi

if [ "$(wasm-bindgen --version 2>/dev/null | awk '{print $2}')" != "$WASM_BINDGEN_VERSION" ]; then
  say "installing wasm-bindgen-cli $WASM_BINDGEN_VERSION (about 2 minutes)"
  # Without --locked: a dependency version locked upstream is missing from the registry mirror.
  cargo install wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION" --force
fi

if [ ! -x /usr/bin/chromium ]; then
  say "installing Debian's chromium for the browser tests"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq chromium >/dev/null
fi

# The fuzz targets' check builds libFuzzer, which is C++ (the libfuzzer-sys crate).
if ! command -v c++ >/dev/null; then
  say "installing g++ for the fuzz targets' build check"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq g++ >/dev/null
fi

# The test of the SQL export runs it in DuckDB. (numpy and scipy in the same file are only for
# regenerating reference data: `pip install -r tests/reference/requirements.txt`.)
if ! python3 -c 'import duckdb' 2>/dev/null; then
  say "installing duckdb (Python, pinned) for the SQL export test"
  python3 -m pip install --quiet "$(grep '^duckdb==' tests/reference/requirements.txt)"
fi

# npm packages: playwright-core (drives chromium), binaryen (wasm-opt), plotly.js bundle.
if ! npm ls --silent >/dev/null 2>&1; then
  say "installing pinned npm packages (package-lock.json)"
  npm ci --no-audit --no-fund --loglevel=error
fi
say "ready"
