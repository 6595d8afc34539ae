#!/usr/bin/env bash
# Every test: the Rust suite, then the pages in headless Chromium.
# Needs cargo, python3, node with npm, and Chromium (/usr/bin/chromium, or CHROMIUM=path).
set -euo pipefail
cd "$(dirname "$0")/.."

cargo test --workspace --locked

if [ ! -x "${CHROMIUM:-/usr/bin/chromium}" ]; then
  echo "Chromium not found at ${CHROMIUM:-/usr/bin/chromium}: install Debian's chromium (apt-get install chromium) to run the browser tests" >&2
  exit 1
fi
# `cargo test` built target/debug/anatomy for the CLI tests; the browser tests drive that binary.
(cd tests/browser && npm ci --no-audit --no-fund --silent && ANATOMY_BIN="$PWD/../../target/debug/anatomy" node --test)
