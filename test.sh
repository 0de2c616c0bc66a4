#!/usr/bin/env bash
# Runs pagelab's tests: the Rust workspace (unit, property, CLI and seed tests) in release
# mode, then the Python package's tests against a freshly built wheel, inside pagelab's own
# virtual environment (.venv/, made and reused by scripts/venv.sh; nothing is installed
# outside the checkout).
set -euo pipefail
cd "$(dirname "$0")"
command -v cargo >/dev/null 2>&1 || export PATH="$HOME/.cargo/bin:$PATH"
. scripts/venv.sh

mkdir -p target
log=$(mktemp -d target/test-log.XXXXXX)
trap 'rm -rf "$log"' EXIT
echo "[test] cargo test (release)" >&2
status=0
cargo test --workspace --exclude pagelab-python --release --locked 2>&1 | tee "$log/rust" || status=$?
if [ "$status" = 0 ]; then
  echo "[test] the id-keyed LRU in a debug build (its unchecked indexing is debug-asserted)" >&2
  cargo test -p pagelab-cachesim --locked keyed 2>&1 | tee -a "$log/rust" || status=$?
fi
# One line for the whole workspace, summed over cargo's per-binary "test result:" lines.
awk '/^test result:/ { for (i = 1; i <= NF; i++) { if ($(i) ~ /^passed;?$/) p += $(i-1); if ($(i) ~ /^failed;?$/) f += $(i-1); if ($(i) ~ /^ignored;?$/) s += $(i-1) } }
     END { printf "rust: %d passed, %d failed, %d skipped\n", p, f, s }' "$log/rust"
[ "$status" = 0 ] || exit "$status"

echo "[test] python package" >&2
rm -f target/wheels/pagelab-*.whl
maturin build --release --locked -o target/wheels >&2
python3 -m pip install -q --disable-pip-version-check --force-reinstall --no-deps target/wheels/pagelab-*.whl
# pytest's temporary directories go under target/ (it clears them at the start of each run).
python3 -m pytest -q -p no:cacheprovider --basetemp="$PWD/target/pytest-tmp" tests/python
