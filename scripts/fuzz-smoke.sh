#!/usr/bin/env bash
# Runs every fuzz target of fuzz/ (cargo-fuzz, libFuzzer with AddressSanitizer) from its
# committed corpus for a few seconds each: the scenario loader, the --set/--vary parser and
# every trace reader must not panic, hang (10 s per input) or use more than 2 GiB on any input.
#
#   scripts/fuzz-smoke.sh            # about a minute in all (8 s a target)
#   scripts/fuzz-smoke.sh 600        # ten minutes a target
#   scripts/fuzz-smoke.sh -runs 1000000   # a million inputs a target
#
# New inputs that reach new code are kept in a scratch copy of the corpus, not in the
# repository (copy the interesting ones into fuzz/corpus/<target>/ by hand). Needs the
# nightly toolchain and cargo-fuzz (bootstrap.sh --fuzz installs both).
set -euo pipefail
cd "$(dirname "$0")/../fuzz"
command -v cargo >/dev/null 2>&1 || export PATH="$HOME/.cargo/bin:$PATH"
limit=(-max_total_time="${1:-8}")
[ "${1:-}" = -runs ] && limit=(-runs="$2")
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
cargo +nightly fuzz build -O >&2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
for target in $(cargo +nightly fuzz list); do
  mkdir -p "$work/$target"
  start=$(date +%s)
  if cargo +nightly fuzz run -O "$target" "$work/$target" "corpus/$target" -- \
      "${limit[@]}" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=2048 -print_final_stats=1 \
      >"$work/$target.log" 2>&1; then
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$work/$target.log" | grep -o '[0-9]*$' || echo '?')
    echo "[fuzz] $target: $runs inputs, no failure ($(($(date +%s) - start)) s)"
  else
    status=1
    echo "[fuzz] $target: FAILED" >&2
    grep -E 'panicked|ERROR|SUMMARY|Test unit written' "$work/$target.log" | head -20 >&2
    mkdir -p artifacts && cp -r "$work/$target.log" artifacts/ 2>/dev/null || true
  fi
done
exit "$status"
