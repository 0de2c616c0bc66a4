#!/usr/bin/env bash
# Runs pagelab's tests: the Rust workspace (unit, property and CLI tests) in release mode.
set -euo pipefail
cd "$(dirname "$0")"
command -v cargo >/dev/null 2>&1 || export PATH="$HOME/.cargo/bin:$PATH"

echo "[test] cargo test --workspace --release" >&2
cargo test --workspace --release --locked
