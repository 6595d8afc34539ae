#!/usr/bin/env bash
# Every test: the Rust suite, then the pages in headless Chromium. It installs or checks what the
# tests need first (scripts/setup.sh), so on a fresh machine this one command is enough; and since
# everything is there, a test reported as ignored (a missing resource) fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."

command -v cargo >/dev/null || { echo "cargo is required (the machine's Rust toolchain)" >&2; exit 1; }
eval "$(scripts/setup.sh)"

log=$(mktemp)
trap 'rm -f "$log"' EXIT
cargo test --workspace --locked 2>&1 | tee "$log"
# The benchmarks compile too, so a change cannot leave them broken.
cargo check --workspace --locked --benches --quiet
# A CPU without a kernel path's instructions cannot be given them: those tests say so and pass.
grep -E '^test .* \.\.\. ignored, this CPU' "$log" || true
if grep -E '^test .* \.\.\. ignored' "$log" | grep -v 'ignored, this CPU'; then
  echo "test.sh: the tests above were ignored although setup.sh provided their resources" >&2
  exit 1
fi

# The browser tests drive the binary `cargo test` built (honouring CARGO_TARGET_DIR).
export ANATOMY_BIN="${ANATOMY_BIN:-$(cd "${CARGO_TARGET_DIR:-target}" && pwd)/debug/anatomy}"
(cd tests/browser && npm ci --no-audit --no-fund --loglevel=error && node --test)
