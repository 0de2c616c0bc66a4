#!/usr/bin/env bash
# Runs every fuzz target of fuzz/ (cargo-fuzz, libFuzzer) from its committed corpus: the
# scenario loader, the --set/--vary parser and every trace reader must not panic, hang (10 s
# an input; FUZZ_TIMEOUT) or grow past 2 GiB of RSS on any input. The limit is wall-clock
# time: on a machine shared with builds, a long run may want 30 s (access_text's slowest
# known input, 5.9 MB of newlines from a 419-byte zstd frame, takes 0.7 s alone in the
# instrumented build and passed 10 s with three simulations on the same two cores).
#
#   scripts/fuzz-smoke.sh                    # CI's smoke run: 8 s a target, about a minute
#   scripts/fuzz-smoke.sh 600                # ten minutes a target
#   scripts/fuzz-smoke.sh -runs 1000000      # a million inputs a target
#   scripts/fuzz-smoke.sh --asan [...]       # with AddressSanitizer (about 15x slower)
#   FUZZ_TARGETS="dense iolog" scripts/fuzz-smoke.sh ...   # only these targets
#   FUZZ_TIMEOUT=30 scripts/fuzz-smoke.sh -runs 1000000    # an input's limit (default 10 s)
#
# Without --asan the targets are built without a sanitizer: pagelab is safe Rust but for a
# few unsafe blocks in the trace readers and the keyed caches, so panics, hangs and memory
# growth are what fuzzing finds, at ~9000 inputs/s instead of ~600. New inputs that reach
# new code go to a scratch copy of the corpus; copy the interesting ones into
# fuzz/corpus/<target>/ by hand. Installs the nightly toolchain and cargo-fuzz if missing.
set -euo pipefail
cd "$(dirname "$0")/../fuzz"
command -v cargo >/dev/null 2>&1 || export PATH="$HOME/.cargo/bin:$PATH"
sanitizer=none
if [ "${1:-}" = --asan ]; then
  sanitizer=address
  shift
fi
limit=(-max_total_time="${1:-8}")
[ "${1:-}" = -runs ] && limit=(-runs="$2")
if ! cargo +nightly --version >/dev/null 2>&1; then
  echo "[fuzz] installing the nightly toolchain (libFuzzer's instrumentation needs it)" >&2
  rustup toolchain install nightly --profile minimal >&2
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "[fuzz] installing cargo-fuzz" >&2
  cargo install cargo-fuzz --locked --version 0.13.2 >&2
fi
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
cargo +nightly fuzz build -O -s "$sanitizer" >&2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
for target in ${FUZZ_TARGETS:-$(cargo +nightly fuzz list)}; do
  mkdir -p "$work/$target"
  start=$(date +%s)
  if cargo +nightly fuzz run -O -s "$sanitizer" "$target" "$work/$target" "corpus/$target" -- \
      "${limit[@]}" -timeout="${FUZZ_TIMEOUT:-10}" -rss_limit_mb=2048 -malloc_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix="$work/" >"$work/$target.log" 2>&1; then
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$work/$target.log" | grep -o '[0-9]*$' || echo '?')
    echo "[fuzz] $target: $runs inputs, no failure ($(($(date +%s) - start)) s)"
  else
    status=1
    echo "[fuzz] $target: FAILED" >&2
    grep -E 'panicked|ERROR|SUMMARY|Test unit written' "$work/$target.log" | head -20 >&2
    mkdir -p artifacts/"$target"
    cp "$work"/crash-* "$work"/oom-* "$work"/timeout-* "$work"/slow-unit-* artifacts/"$target"/ 2>/dev/null || true
    echo "[fuzz] the failing input is in fuzz/artifacts/$target/; replay it with" >&2
    echo "       cargo +nightly fuzz run -O -s $sanitizer $target fuzz/artifacts/$target/<file>" >&2
  fi
done
exit "$status"
