#!/usr/bin/env bash
# Runs pagelab's tests: the Rust workspace (unit, property, CLI and seed tests) in release
# mode, then the Python package's tests against a freshly built wheel.
set -euo pipefail
cd "$(dirname "$0")"
command -v cargo >/dev/null 2>&1 || export PATH="$HOME/.cargo/bin:$PATH"

echo "[test] cargo test (release)" >&2
cargo test --workspace --exclude pagelab-python --release --locked
echo "[test] the id-keyed LRU in a debug build (its unchecked indexing is debug-asserted)" >&2
cargo test -p pagelab-cachesim --locked keyed

echo "[test] python package" >&2
python3 -m pip install -q --disable-pip-version-check maturin pytest matplotlib numpy libcachesim "dask[distributed]" 2>&1 | grep -v "Running pip as the 'root' user" || true
python3 -m maturin build --release --locked -o target/wheels >&2
python3 -m pip install -q --force-reinstall --no-deps target/wheels/pagelab-*.whl 2>&1 | grep -v "Running pip as the 'root' user" || true
python3 -m pytest -q tests/python
